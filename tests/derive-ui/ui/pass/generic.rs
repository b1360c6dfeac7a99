// A generic kit: the impls carry the struct's generics.
use skillkit::{Kit, ToolExecution, ToolOutcome};

#[derive(Kit)]
#[kit(path = "fixtures/kits/flat", name = "text")]
struct TextKit<F: Fn(&str) -> String + Send + Sync + 'static> {
    transform: F,
}

impl<F: Fn(&str) -> String + Send + Sync + 'static> skillkit::EmbeddedKit for TextKit<F> {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok((self.transform)(execution.arguments()))
    }
}

fn main() {
    let kit = TextKit { transform: |s: &str| s.to_uppercase() };
    let _catalog = skillkit::Catalog::builder().provider(kit).build();
    assert_eq!(TextKit::<fn(&str) -> String>::embedded_kit().name, "text");
}
