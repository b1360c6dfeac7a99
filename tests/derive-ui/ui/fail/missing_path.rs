use skillkit::{Kit, ToolExecution, ToolOutcome};

#[derive(Kit)]
#[kit(name = "files")]
struct Files;

impl skillkit::EmbeddedKit for Files {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(execution.arguments())
    }
}

fn main() {
    let _catalog = skillkit::Catalog::builder().provider(Files).build();
}
