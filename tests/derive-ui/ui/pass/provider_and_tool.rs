// A kit compiled in, registered in a catalog, its skill executed by the kit;
// `EmbeddedKit` imported beside `KitProvider` makes no call ambiguous.
use std::sync::Arc;

use skillkit::{Catalog, EmbeddedKit, Kit, KitProvider, Tool, ToolExecution, ToolOutcome};

#[derive(Kit)]
#[kit(path = "fixtures/kits/flat", name = "text")]
pub struct TextKit {
    suffix: &'static str,
}

impl EmbeddedKit for TextKit {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(format!("{}{}", execution.arguments().to_uppercase(), self.suffix))
    }
}

fn provider(_: impl KitProvider) {}
fn tool(_: Arc<dyn Tool>) {}

fn main() {
    let kit = TextKit { suffix: "!" };
    assert_eq!(TextKit::embedded_kit().skills.len(), 3);
    assert!(kit.agent_definition().is_none());
    let upper = &TextKit::embedded_kit().skills[0];
    tool(Arc::new(TextKit { suffix: "?" }).tool(upper).unwrap());
    assert_eq!(kit.name(), "embedded:text");
    provider(kit);
    let _catalog = Catalog::builder().provider(TextKit { suffix: "" }).build();
}
