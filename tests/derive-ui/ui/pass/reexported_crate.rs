// `crate = "..."`: a crate that re-exports skillkit under another path.
mod facade {
    pub use skillkit as sk;
}

use facade::sk;

#[derive(sk::Kit)]
#[kit(path = "fixtures/kits/flat", crate = "facade::sk")]
struct TextTools;

impl sk::EmbeddedKit for TextTools {
    async fn execute(&self, execution: sk::ToolExecution) -> sk::ToolOutcome {
        sk::ToolOutcome::ok(execution.arguments())
    }
}

fn main() {
    // The name defaults to the struct name in snake_case.
    assert_eq!(TextTools::embedded_kit().name, "text_tools");
    let _catalog = sk::Catalog::builder().provider(TextTools).build();
}
