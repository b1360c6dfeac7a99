//! [`Tool`]: the Rust code that executes a skill.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::skill::{Metadata, Skill};

/// The default definition of an executable skill, as [`Tool::definition`]
/// gives it: the skill's full name and description, and as input schema the
/// skill's `input_schema` frontmatter key when it has one, else
/// `{"arguments": string}`. (The agent turns the full name into a wire-safe
/// tool name.)
///
/// ```
/// let skill = skillkit::Skill::new("files:read", "Read a file.");
/// let def = skillkit::tool::skill_definition(&skill);
/// assert_eq!(def.name, "files:read");
/// assert_eq!(def.input_schema["properties"]["arguments"]["type"], "string");
/// ```
pub fn skill_definition(skill: &Skill) -> ToolDefinition {
    let input_schema = match skill.extra().get("input_schema") {
        Some(schema @ Value::Object(_)) => schema.clone(),
        _ => json!({
            "type": "object",
            "properties": {
                "arguments": {
                    "type": "string",
                    "description": "Arguments for the skill, as text."
                }
            }
        }),
    };
    ToolDefinition::new(
        skill.name.as_ref(),
        skill.description.as_ref(),
        input_schema,
    )
}

/// Where a tool call happens: which agent, which session, the kit's metadata.
///
/// ```
/// let ctx = skillkit::tool::ToolContext { agent: Some("helper".into()), ..Default::default() };
/// assert_eq!(ctx.agent.as_deref(), Some("helper"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolContext {
    /// The agent making the call.
    pub agent: Option<String>,
    /// The conversation's session id.
    pub session_id: Option<String>,
    /// The id the model gave this tool call.
    pub call_id: Option<String>,
    /// The metadata of the kit the skill belongs to.
    pub kit_metadata: Metadata,
}

/// One call of a skill's tool: the full skill, the input and the context.
///
/// ```
/// use std::sync::Arc;
/// let execution = skillkit::ToolExecution::new(
///     Arc::new(skillkit::Skill::new("files:read", "Read.")),
///     serde_json::json!({"arguments": "notes.txt"}),
/// );
/// assert_eq!(execution.skill.bare_name(), "read");
/// assert_eq!(execution.arguments(), "notes.txt");
/// ```
#[derive(Debug, Clone)]
pub struct ToolExecution {
    /// The skill being executed, with all its fields, so one tool can serve
    /// many skills and tell them apart.
    pub skill: Arc<Skill>,
    /// The input the model gave, as JSON.
    pub input: Value,
    /// Who is calling, and from where.
    pub context: ToolContext,
}

impl ToolExecution {
    /// An execution of `skill` with `input` and an empty context.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// let e = skillkit::ToolExecution::new(Arc::new(skillkit::Skill::new("a:b", "d")), serde_json::json!({}));
    /// assert!(e.context.agent.is_none());
    /// ```
    pub fn new(skill: Arc<Skill>, input: Value) -> Self {
        ToolExecution {
            skill,
            input,
            context: ToolContext::default(),
        }
    }

    /// The same execution with `context`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// let e = skillkit::ToolExecution::new(Arc::new(skillkit::Skill::new("a:b", "d")), serde_json::json!({}))
    ///     .with_context(skillkit::tool::ToolContext { session_id: Some("s1".into()), ..Default::default() });
    /// assert_eq!(e.context.session_id.as_deref(), Some("s1"));
    /// ```
    pub fn with_context(mut self, context: ToolContext) -> Self {
        self.context = context;
        self
    }

    /// The `arguments` text of the input (or the input itself when it is a
    /// string); empty when there is none.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// let skill = Arc::new(skillkit::Skill::new("a:b", "d"));
    /// let e = skillkit::ToolExecution::new(skill, serde_json::json!("x y"));
    /// assert_eq!(e.arguments(), "x y");
    /// ```
    pub fn arguments(&self) -> &str {
        match &self.input {
            Value::String(s) => s,
            Value::Object(map) => map.get("arguments").and_then(Value::as_str).unwrap_or(""),
            _ => "",
        }
    }
}

/// What a tool call produced.
///
/// ```
/// use skillkit::ToolOutcome;
/// assert!(matches!(ToolOutcome::ok("done"), ToolOutcome::Ok(_)));
/// assert!(matches!(ToolOutcome::error("no such file"), ToolOutcome::Error(_)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// It worked; the output goes back to the model.
    Ok(Value),
    /// It failed; the message goes back to the model as an error result.
    Error(String),
    /// It needs a decision first (a confirmation, a choice); the state is kept
    /// and handed to [`Tool::resume`] with the decision.
    Pending(Value),
}

impl ToolOutcome {
    /// A successful outcome.
    ///
    /// ```
    /// assert_eq!(skillkit::ToolOutcome::ok(3), skillkit::ToolOutcome::Ok(3.into()));
    /// ```
    pub fn ok(output: impl Into<Value>) -> Self {
        ToolOutcome::Ok(output.into())
    }

    /// A failed outcome.
    ///
    /// ```
    /// assert_eq!(skillkit::ToolOutcome::error("x"), skillkit::ToolOutcome::Error("x".into()));
    /// ```
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutcome::Error(message.into())
    }

    /// An outcome waiting for a decision.
    ///
    /// ```
    /// let pending = skillkit::ToolOutcome::pending(serde_json::json!({"step": 1}));
    /// assert!(matches!(pending, skillkit::ToolOutcome::Pending(_)));
    /// ```
    pub fn pending(state: impl Into<Value>) -> Self {
        ToolOutcome::Pending(state.into())
    }
}

/// The code that executes skills.
///
/// Implement [`execute`](Tool::execute); [`definition`](Tool::definition) and
/// [`resume`](Tool::resume) have defaults. One tool may serve many skills: the
/// execution carries the skill.
///
/// ```
/// use skillkit::{Tool, ToolExecution, ToolOutcome};
///
/// struct Shout;
///
/// #[skillkit::async_trait]
/// impl Tool for Shout {
///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
///         ToolOutcome::ok(execution.arguments().to_uppercase())
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// What the model is told about `skill` when this tool executes it.
    ///
    /// ```
    /// use skillkit::{Skill, Tool, ToolExecution, ToolOutcome};
    /// struct Shout;
    /// #[skillkit::async_trait]
    /// impl Tool for Shout {
    ///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
    ///         ToolOutcome::ok(execution.arguments().to_uppercase())
    ///     }
    /// }
    /// // By default, the skill's own definition: its name and description,
    /// // and one `arguments` text.
    /// let definition = Shout.definition(&Skill::new("text:shout", "Shout the text."));
    /// assert_eq!(definition, skillkit::tool::skill_definition(&Skill::new("text:shout", "Shout the text.")));
    /// assert_eq!(definition.description, "Shout the text.");
    /// ```
    fn definition(&self, skill: &Skill) -> ToolDefinition {
        skill_definition(skill)
    }

    /// Executes one call.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use skillkit::{Skill, Tool, ToolExecution, ToolOutcome};
    /// struct Shout;
    /// #[skillkit::async_trait]
    /// impl Tool for Shout {
    ///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
    ///         ToolOutcome::ok(execution.arguments().to_uppercase())
    ///     }
    /// }
    /// let skill = Arc::new(Skill::new("text:shout", "Shout the text."));
    /// let call = ToolExecution::new(skill, serde_json::json!({"arguments": "hi"}));
    /// assert_eq!(Shout.execute(call).await, ToolOutcome::ok("HI"));
    /// # });
    /// ```
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome;

    /// Continues a call that returned [`ToolOutcome::Pending`], with the kept
    /// state and the decision. By default tools do not pause, so this is an error.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use serde_json::{Value, json};
    /// use skillkit::{Skill, Tool, ToolExecution, ToolOutcome};
    /// // Deletes only once the user said yes.
    /// struct Delete;
    /// #[skillkit::async_trait]
    /// impl Tool for Delete {
    ///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
    ///         ToolOutcome::Pending(json!({"file": execution.arguments()}))
    ///     }
    ///     async fn resume(&self, _: ToolExecution, state: Value, decision: Value) -> ToolOutcome {
    ///         match decision.as_str() {
    ///             Some("yes") => ToolOutcome::ok(format!("deleted {}", state["file"].as_str().unwrap_or(""))),
    ///             _ => ToolOutcome::error("kept: the user said no"),
    ///         }
    ///     }
    /// }
    /// let skill = Arc::new(Skill::new("files:delete", "Delete a file."));
    /// let call = ToolExecution::new(skill, json!({"arguments": "old.txt"}));
    /// let ToolOutcome::Pending(state) = Delete.execute(call.clone()).await else { panic!() };
    /// assert_eq!(Delete.resume(call, state, "yes".into()).await, ToolOutcome::ok("deleted old.txt"));
    /// # });
    /// ```
    async fn resume(&self, execution: ToolExecution, state: Value, decision: Value) -> ToolOutcome {
        let _ = (state, decision);
        cannot_resume(&execution.skill)
    }
}

/// The outcome of resuming a call of `skill` whose tool does not implement
/// `resume` (the default of [`Tool::resume`] and of embedded kits).
pub(crate) fn cannot_resume(skill: &Skill) -> ToolOutcome {
    ToolOutcome::error(format!(
        "the tool of `{}` cannot resume a pending call; it does not implement `resume`",
        skill.name
    ))
}

/// Runs `tool` on `execution`, turning a panic into an error outcome, so a
/// faulty tool never takes its caller down.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::sync::Arc;
/// use skillkit::{Tool, ToolExecution, ToolOutcome};
/// struct Faulty;
/// #[skillkit::async_trait]
/// impl Tool for Faulty {
///     async fn execute(&self, _: ToolExecution) -> ToolOutcome { panic!("boom") }
/// }
/// let execution = ToolExecution::new(Arc::new(skillkit::Skill::new("a:b", "d")), serde_json::json!({}));
/// let outcome = skillkit::tool::call(&Faulty, execution).await;
/// assert!(matches!(outcome, ToolOutcome::Error(m) if m.contains("boom")));
/// # });
/// ```
pub async fn call(tool: &dyn Tool, execution: ToolExecution) -> ToolOutcome {
    let name = execution.skill.name.clone();
    caught(&name, tool.execute(execution)).await
}

/// Like [`call`], for [`Tool::resume`].
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # use std::sync::Arc;
/// # use skillkit::{Tool, ToolExecution, ToolOutcome};
/// struct Plain;
/// #[skillkit::async_trait]
/// impl Tool for Plain {
///     async fn execute(&self, _: ToolExecution) -> ToolOutcome { ToolOutcome::ok("x") }
/// }
/// let execution = ToolExecution::new(Arc::new(skillkit::Skill::new("a:b", "d")), serde_json::json!({}));
/// let outcome = skillkit::tool::resume(&Plain, execution, serde_json::Value::Null, "yes".into()).await;
/// assert!(matches!(outcome, ToolOutcome::Error(_)));
/// # });
/// ```
pub async fn resume(
    tool: &dyn Tool,
    execution: ToolExecution,
    state: Value,
    decision: Value,
) -> ToolOutcome {
    let name = execution.skill.name.clone();
    caught(&name, tool.resume(execution, state, decision)).await
}

async fn caught(skill: &str, future: impl Future<Output = ToolOutcome>) -> ToolOutcome {
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(panic) => {
            let what = panic_message(&*panic);
            tracing::error!(skill, panic = %what, "tool panicked");
            ToolOutcome::error(format!(
                "the tool of `{skill}` failed unexpectedly (it panicked: {what})"
            ))
        }
    }
}

/// The message a panic carried (`"unknown panic"` when it was not text).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// What a model is told about a callable tool: name, description and the JSON
/// schema of its input. Vendor-neutral: every adapter encodes it for its API.
///
/// ```
/// let def = skillkit::ToolDefinition::new("files_read", "Read a file.", serde_json::json!({"type": "object"}));
/// assert_eq!(def.name, "files_read");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool name the model calls. Vendors accept `[a-zA-Z0-9_-]{1,64}`.
    pub name: String,
    /// What the tool does and when to call it.
    pub description: String,
    /// JSON schema of the input object.
    pub input_schema: Value,
}

impl ToolDefinition {
    /// A definition from its parts.
    ///
    /// ```
    /// let def = skillkit::ToolDefinition::new("t", "d", serde_json::json!({"type": "object"}));
    /// assert_eq!(def.description, "d");
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            input_schema,
        }
    }
}
