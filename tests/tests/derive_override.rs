//! `#[derive(Kit)]`: every generated behaviour can be overridden through
//! `EmbeddedKit`, an override can still use the generated data (the embedded
//! kit), and what a derive user overrides is what every consumer sees.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use skillkit::{
    AgentDefinition, Catalog, EmbeddedKit, Kit, KitProvider, ProviderError, Skill, ToolDefinition,
    ToolExecution, ToolOutcome,
};

/// Text tools compiled in, plus skills added at run time.
#[derive(Kit)]
#[kit(path = "fixtures/kits/flat", name = "text")]
struct Text {
    runtime: Mutex<Vec<Arc<Skill>>>,
    agent: Arc<AgentDefinition>,
}

impl Text {
    fn new() -> Self {
        Text {
            runtime: Mutex::new(Vec::new()),
            agent: Arc::new(AgentDefinition::new(
                "text",
                "Works with text; configured at run time.",
            )),
        }
    }

    fn add(&self, name: &str, description: &str) {
        let skill = Skill::new(format!("text:{name}"), description.to_owned());
        self.runtime.lock().unwrap().push(Arc::new(skill));
    }
}

// Importing `EmbeddedKit` beside `KitProvider` makes no call ambiguous.
impl EmbeddedKit for Text {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        let text = execution.arguments();
        match execution.skill.bare_name() {
            "upper" => ToolOutcome::ok(text.to_uppercase()),
            "lower" => ToolOutcome::ok(text.to_lowercase()),
            other => ToolOutcome::error(format!("`{other}` does nothing here")),
        }
    }

    async fn resume(&self, _: ToolExecution, state: Value, decision: Value) -> ToolOutcome {
        ToolOutcome::ok(json!({"state": state, "decision": decision}))
    }

    fn definition(&self, skill: &Skill) -> ToolDefinition {
        let mut definition = skillkit::tool::skill_definition(skill);
        definition.description = format!("[text] {}", definition.description);
        definition
    }

    fn provider_name(&self) -> Cow<'_, str> {
        Cow::Borrowed("text-tools")
    }

    async fn kits(&self) -> Result<Vec<Kit>, ProviderError> {
        let mut kit = Self::embedded_kit().clone();
        kit.agent = self.agent_definition();
        for skill in self.runtime.lock().unwrap().iter() {
            kit.insert_skill(Arc::clone(skill));
        }
        Ok(vec![kit])
    }

    fn agent_definition(&self) -> Option<Arc<AgentDefinition>> {
        Some(Arc::clone(&self.agent))
    }
}

/// A kit whose overrides refuse everything, to show each one is called.
#[derive(Kit)]
#[kit(path = "fixtures/kits/flat", name = "closed")]
struct Closed;

impl EmbeddedKit for Closed {
    async fn execute(&self, _: ToolExecution) -> ToolOutcome {
        ToolOutcome::error("closed")
    }

    fn executes(&self, skill: &Skill) -> bool {
        skill.bare_name() == "count"
    }
}

#[tokio::test]
async fn runtime_skills_join_the_embedded_ones() {
    let text = Arc::new(Text::new());
    let catalog = Catalog::builder().shared(text.clone()).build();
    assert_eq!(catalog.list_skills().await.len(), 3);

    text.add("lower", "Turn text into lower case.");
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        ["text:count", "text:lower", "text:reverse", "text:upper"]
    );
    // `get_kit`, the legacy `load_kits` and the catalog's `get_kit` all follow `kits`.
    let kit = text.get_kit("text").await.unwrap().unwrap();
    assert!(kit.skill("text:lower").is_some());
    #[allow(deprecated)]
    let legacy = text.load_kits().await.unwrap();
    assert_eq!(legacy[0].skills.len(), 4);
    assert!(
        catalog
            .get_kit("text")
            .await
            .unwrap()
            .skill("text:lower")
            .is_some()
    );
    // The runtime skill is executed by the same kit.
    let snapshot = catalog.snapshot().await;
    let skill = Arc::clone(snapshot.skill("text:lower").unwrap());
    let tool = snapshot.tool("text:lower").unwrap();
    let execution = ToolExecution::new(skill, json!({"arguments": "QUIET"}));
    assert_eq!(tool.execute(execution).await, ToolOutcome::ok("quiet"));
}

#[tokio::test]
async fn tool_overrides_reach_the_catalog() {
    let text = Text::new();
    assert_eq!(text.name(), "text-tools");
    let catalog = Catalog::builder().provider(text).build();
    let snapshot = catalog.snapshot().await;
    let skill = snapshot.skill("text:upper").unwrap();
    let tool = snapshot.tool("text:upper").unwrap();
    assert!(tool.definition(skill).description.starts_with("[text] "));
    let execution = ToolExecution::new(Arc::clone(skill), json!({}));
    assert_eq!(
        tool.resume(execution, json!({"step": 1}), json!("yes"))
            .await,
        ToolOutcome::ok(json!({"state": {"step": 1}, "decision": "yes"}))
    );
}

#[tokio::test]
async fn the_catalog_serves_the_overridden_root_agent() {
    let text = Text::new();
    assert_eq!(
        text.agent_definition().unwrap().description,
        "Works with text; configured at run time."
    );
    assert!(Text::embedded_kit().agent.is_none());
    let catalog = Catalog::builder().provider(text).build();
    let root = catalog.root_agent().await.unwrap();
    assert_eq!(root.description, "Works with text; configured at run time.");
    let kit = catalog.get_kit("text").await.unwrap();
    assert_eq!(kit.agent.unwrap().name, "text");
}

#[tokio::test]
async fn executes_decides_which_skills_are_tools() {
    let catalog = Catalog::builder().provider(Closed).build();
    let snapshot = catalog.snapshot().await;
    let executable: Vec<String> = snapshot
        .entries()
        .filter(|e| e.tool.is_some())
        .map(|e| e.skill.name.to_string())
        .collect();
    assert_eq!(executable, ["closed:count"]);
    assert!(snapshot.tool("closed:upper").is_none());
    assert_eq!(Closed.name(), "embedded:closed");
}
