//! `terminal:ask`, the tool `run` and `chat` give every agent: a yes/no
//! question for the person at the terminal. The call pauses (a pending tool
//! result) until the person answers y or n; y resumes it with the answer
//! "yes", n denies it, and the model sees "the user said no".

use serde_json::{Value, json};
use skillkit::ToolDefinition;
use skillkit::{Memory, Skill, Tool, ToolExecution, ToolOutcome};

/// The tool's full name (`terminal_ask` on the wire).
pub const NAME: &str = "terminal:ask";

/// A provider holding `terminal:ask` and its tool.
pub fn provider() -> Memory {
    let memory = Memory::new();
    let skill = Skill::new(
        NAME,
        "Ask the person at the terminal a yes/no question and wait for the answer. \
         Use it before an action they may not want, or for a choice only they can make.",
    );
    memory.put_tool(skill, Ask);
    memory
}

/// The tool of `terminal:ask`.
struct Ask;

#[skillkit::async_trait]
impl Tool for Ask {
    fn definition(&self, skill: &Skill) -> ToolDefinition {
        ToolDefinition::new(
            skill.name.as_ref(),
            skill.description.as_ref(),
            json!({
                "type": "object",
                "properties": {
                    "question": {
                        "type": "string",
                        "description": "The yes/no question, in one sentence."
                    }
                },
                "required": ["question"]
            }),
        )
    }

    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        match execution.input.get("question").and_then(Value::as_str) {
            Some(question) if !question.trim().is_empty() => {
                ToolOutcome::pending(json!({ "question": question.trim() }))
            }
            _ => ToolOutcome::error("give the question to ask as `question`, a non-empty string"),
        }
    }

    async fn resume(&self, _: ToolExecution, _: Value, decision: Value) -> ToolOutcome {
        match decision {
            Value::Bool(true) => ToolOutcome::ok("yes"),
            other => ToolOutcome::ok(other),
        }
    }
}

/// The question a pending call puts to the person, when its state asks one
/// (`{"question": …}`, as `terminal:ask` does).
pub fn question_of(state: &Value) -> Option<&str> {
    state.get("question").and_then(Value::as_str)
}
