//! `#[derive(Kit)]`: every generated method can be overridden, and an override
//! can still use the generated behaviour (the embedded kit).

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use skillkit::{
    AgentDefinition, Catalog, Handler, Kit, KitProvider, ProviderError, Skill, Tool,
    ToolDefinition, ToolExecution, ToolOutcome,
};

/// Text tools compiled in, plus skills added at run time.
#[derive(Kit)]
#[kit(path = "fixtures/kits/flat", name = "text")]
struct Text {
    runtime: Mutex<Vec<Arc<Skill>>>,
    agent: AgentDefinition,
}

impl Text {
    fn new() -> Self {
        Text {
            runtime: Mutex::new(Vec::new()),
            agent: AgentDefinition::new("text", "Works with text; configured at run time."),
        }
    }

    fn add(&self, name: &str, description: &str) {
        let mut skill = Skill::new(format!("text:{name}"), description.to_owned());
        skill.handler = Handler::Provider;
        self.runtime.lock().unwrap().push(Arc::new(skill));
    }
}

impl skillkit::EmbeddedKit for Text {
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
        let mut definition = ToolDefinition::for_skill(skill);
        definition.name = definition.name.replace(':', "_");
        definition
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("text-tools")
    }

    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        let mut kit = Self::embedded_kit().clone();
        for skill in self.runtime.lock().unwrap().iter() {
            kit = kit.with_skill(Arc::clone(skill));
        }
        Ok(vec![kit])
    }

    fn agent_definition(&self) -> Option<&AgentDefinition> {
        Some(&self.agent)
    }
}

/// A kit whose overrides refuse everything, to show each one is called.
#[derive(Kit)]
#[kit(path = "fixtures/kits/flat", name = "closed")]
struct Closed;

impl skillkit::EmbeddedKit for Closed {
    async fn execute(&self, _: ToolExecution) -> ToolOutcome {
        ToolOutcome::error("closed")
    }

    async fn get_kit(&self, _: &str) -> Result<Option<Kit>, ProviderError> {
        Err(ProviderError::other("get_kit is closed"))
    }

    #[allow(deprecated)]
    async fn load_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        Err(ProviderError::other("load_kits is closed"))
    }

    fn tool(self: Arc<Self>) -> Option<Arc<dyn Tool>> {
        None
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
    // The default `get_kit` follows the overridden `list_kits`.
    let kit = text.get_kit("text").await.unwrap().unwrap();
    assert!(kit.skill("text:lower").is_some());
    #[allow(deprecated)]
    let legacy = text.load_kits().await.unwrap();
    assert_eq!(legacy[0].skills.len(), 4);
    // The runtime skill is executed by the same kit.
    let found = catalog.snapshot().await.tool("text:lower").unwrap();
    let execution = ToolExecution::new(found.skill, json!({"arguments": "QUIET"}));
    assert_eq!(
        found.tool.execute(execution).await,
        ToolOutcome::ok("quiet")
    );
}

#[tokio::test]
async fn tool_overrides_reach_the_catalog() {
    let text = Text::new();
    assert_eq!(text.name(), "text-tools");
    let catalog = Catalog::builder().provider(text).build();
    let found = catalog.snapshot().await.tool("text:upper").unwrap();
    assert_eq!(found.definition.name, "text_upper");
    let execution = ToolExecution::new(found.skill, json!({}));
    assert_eq!(
        found
            .tool
            .resume(execution, json!({"step": 1}), json!("yes"))
            .await,
        ToolOutcome::ok(json!({"state": {"step": 1}, "decision": "yes"}))
    );
}

#[test]
fn agent_definition_override_wins_over_the_missing_agent_md() {
    let text = Text::new();
    assert_eq!(
        text.agent_definition().unwrap().description,
        "Works with text; configured at run time."
    );
    assert!(Text::embedded_kit().agent.is_none());
}

#[tokio::test]
async fn provider_overrides_are_called() {
    let closed = Arc::new(Closed);
    assert!(closed.get_kit("closed").await.is_err());
    #[allow(deprecated)]
    let legacy = closed.load_kits().await;
    assert!(legacy.is_err());
    // `list_kits` keeps the generated behaviour.
    assert_eq!(closed.list_kits().await.unwrap()[0].name, "closed");
    assert!(closed.clone().tool().is_none());
    let catalog = Catalog::builder().shared(closed).build();
    assert!(catalog.snapshot().await.tool("closed:upper").is_none());
}
