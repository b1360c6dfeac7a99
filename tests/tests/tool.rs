//! Tools: the execution carries the whole skill and its context; pending calls
//! resume; a panicking tool is an error outcome, not a crash.

use std::sync::Arc;

use serde_json::{Value, json};
use skillkit::tool::ToolContext;
use skillkit::{Skill, Tool, ToolExecution, ToolOutcome, tool};

/// Asks for confirmation before deleting, then deletes on "yes".
struct Delete;

#[skillkit::async_trait]
impl Tool for Delete {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::pending(
            json!({"path": execution.input["path"], "asked_by": execution.context.agent}),
        )
    }

    async fn resume(
        &self,
        _execution: ToolExecution,
        state: Value,
        decision: Value,
    ) -> ToolOutcome {
        match decision.as_str() {
            Some("yes") => {
                ToolOutcome::ok(format!("deleted {}", state["path"].as_str().unwrap_or("?")))
            }
            _ => ToolOutcome::error("the user declined"),
        }
    }
}

struct Panics;

#[skillkit::async_trait]
impl Tool for Panics {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        let index: usize = execution.arguments().len() + 10;
        let list = [1, 2, 3];
        ToolOutcome::ok(list[index])
    }
}

fn execution(input: Value) -> ToolExecution {
    let mut skill = Skill::new("files:delete", "Delete a file.").with_body("Delete $0.");
    skill.metadata_mut().insert("danger".into(), "high".into());
    ToolExecution::new(Arc::new(skill), input).with_context(ToolContext {
        agent: Some("janitor".into()),
        session_id: Some("s-42".into()),
        call_id: Some("call-1".into()),
        kit_metadata: serde_json::Map::new(),
    })
}

#[tokio::test]
async fn pending_then_resume() {
    let first = tool::call(&Delete, execution(json!({"path": "/tmp/x"}))).await;
    let ToolOutcome::Pending(state) = first else {
        panic!("expected pending, got {first:?}")
    };
    assert_eq!(state, json!({"path": "/tmp/x", "asked_by": "janitor"}));
    let yes = tool::resume(&Delete, execution(json!({})), state.clone(), json!("yes")).await;
    assert_eq!(yes, ToolOutcome::ok("deleted /tmp/x"));
    let no = tool::resume(&Delete, execution(json!({})), state, json!("no")).await;
    assert_eq!(no, ToolOutcome::error("the user declined"));
}

#[tokio::test]
async fn the_execution_carries_the_whole_skill() {
    struct Inspect;
    #[skillkit::async_trait]
    impl Tool for Inspect {
        async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
            let skill = &execution.skill;
            ToolOutcome::ok(json!({
                "name": skill.name,
                "metadata": skill.metadata(),
                "rendered": skill.render(execution.arguments(), execution.context.session_id.as_deref()).unwrap_or_default(),
                "session": execution.context.session_id,
            }))
        }
    }
    let outcome = tool::call(&Inspect, execution(json!({"arguments": "notes.txt"}))).await;
    assert_eq!(
        outcome,
        ToolOutcome::ok(json!({
            "name": "files:delete",
            "metadata": {"danger": "high"},
            "rendered": "Delete notes.txt.",
            "session": "s-42",
        }))
    );
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_outcome() {
    let outcome = tool::call(&Panics, execution(json!({}))).await;
    let ToolOutcome::Error(message) = outcome else {
        panic!("expected an error, got {outcome:?}")
    };
    assert!(message.contains("files:delete"), "{message}");
    assert!(message.contains("index out of bounds"), "{message}");
}

#[tokio::test]
async fn a_tool_without_resume_says_so() {
    let outcome = tool::resume(&Panics, execution(json!({})), Value::Null, json!("yes")).await;
    assert!(matches!(outcome, ToolOutcome::Error(m) if m.contains("cannot resume")));
}
