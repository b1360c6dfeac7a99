//! [`AgentEvent`]: what a running agent tells its caller.

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::agent::{AgentError, ContextUse};
use crate::dispatch::approval::{AgentPath, InputKind};
use crate::llm::{AssistantMessage, Compaction, Usage};

/// One event of a running agent, tagged with the agent it comes from.
///
/// Serialises as one flat JSON object, for scripts reading events as JSON
/// lines: `agent` (the path's names), `type` (the kind in snake case) and
/// the kind's fields; an error is its message.
///
/// ```
/// use skillkit::agent::{AgentEvent, EventKind};
/// use skillkit::approval::AgentPath;
/// let event = AgentEvent { agent: AgentPath::root(), kind: EventKind::Delta { text: "Hi".into() } };
/// assert!(event.agent.is_root());
/// assert_eq!(
///     serde_json::to_value(&event).unwrap(),
///     serde_json::json!({"agent": [], "type": "delta", "text": "Hi"}),
/// );
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct AgentEvent {
    /// The agent (root or sub-agent) the event comes from.
    pub agent: AgentPath,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

impl AgentEvent {
    /// Whether this event ends the root agent's work on a message
    /// ([`Finished`](EventKind::Finished), [`Error`](EventKind::Error) or
    /// [`Stopped`](EventKind::Stopped) of the root): the agent then waits for
    /// the next message.
    ///
    /// ```
    /// use skillkit::agent::{AgentEvent, EventKind};
    /// use skillkit::approval::AgentPath;
    /// let done = AgentEvent { agent: AgentPath::root(), kind: EventKind::Finished { text: "42".into() } };
    /// assert!(done.is_end_of_message());
    /// ```
    pub fn is_end_of_message(&self) -> bool {
        self.agent.is_root()
            && matches!(
                self.kind,
                EventKind::Finished { .. } | EventKind::Error(_) | EventKind::Stopped
            )
    }
}

/// What happened in an agent.
///
/// Tool names in events are the skills' full names (`files:read`), the
/// sub-agents' names, or `activate_skill`: never the wire-safe names the
/// model sees.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A piece of the model's answer text.
    Delta {
        /// The text, to append to what came before.
        text: String,
    },
    /// The model began a tool call.
    ToolCallStart {
        /// The call's id.
        id: String,
        /// The tool called.
        name: String,
    },
    /// The model finished writing a tool call.
    ToolCallComplete {
        /// The call's id.
        id: String,
        /// The tool called.
        name: String,
        /// Its input.
        input: Value,
    },
    /// A tool call's result, as the model will see it.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool called.
        name: String,
        /// The result text (or, for an error, what went wrong).
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
    /// Token counts of one model request, and the running totals of this
    /// agent.
    Usage {
        /// This request's counts.
        request: Usage,
        /// The sum over every request of this agent so far.
        total: Usage,
    },
    /// How full the context window is after a model request.
    Context(ContextUse),
    /// The conversation was compacted: before and after sizes, the skills
    /// re-attached and those left out, the tool results cleared. The
    /// compaction is in the history (and the session) from now on.
    Compacted(Compaction),
    /// The model's message of one turn (one request), with its tool calls.
    TurnComplete {
        /// The message, tool names as full names.
        message: AssistantMessage,
    },
    /// A tool call waits for the caller: answer with
    /// [`Agent::respond`](crate::agent::AgentController::respond). The other calls of
    /// the turn go on meanwhile.
    InputRequested(InputRequest),
    /// The agent answered the message: its last turn called no tool.
    Finished {
        /// The answer's text.
        text: String,
    },
    /// The work on the message stopped at [`Agent::stop`](crate::agent::AgentController::stop).
    Stopped,
    /// Something the agent went on without: an MCP server not connected, so
    /// its tools are left out of a turn.
    Warning {
        /// What happened, for a person.
        message: String,
    },
    /// The message could not be answered (the model failed, the turn limit was
    /// reached). The history is intact and the agent takes the next message.
    Error(#[serde(serialize_with = "message")] AgentError),
}

/// An error as `{"message": "…"}`: what a script shows or matches on.
fn message<S: Serializer>(error: &AgentError, serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(1))?;
    map.serialize_entry("message", &error.to_string())?;
    map.end()
}

/// A tool call that waits for a decision of the caller.
///
/// ```
/// use skillkit::agent::InputRequest;
/// use skillkit::approval::InputKind;
/// let request = InputRequest {
///     call_id: "call_1".into(),
///     name: "files:delete".into(),
///     input: serde_json::json!({"path": "a.txt"}),
///     kind: InputKind::Approval,
/// };
/// assert!(matches!(request.kind, InputKind::Approval));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputRequest {
    /// The id to pass to [`respond`](crate::agent::AgentController::respond):
    /// the model's call id, prefixed with the sub-agent's path for a
    /// sub-agent's call (`notes:editor/call_1`).
    pub call_id: String,
    /// The tool called (a full name).
    pub name: String,
    /// The call's input.
    pub input: Value,
    /// Why the call waits.
    #[serde(rename = "wait")]
    pub kind: InputKind,
}
