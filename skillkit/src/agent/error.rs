//! [`AgentError`]: what stops an agent before or between turns.

use crate::llm::LlmError;

/// Why an agent could not start, or could not answer a message.
///
/// Errors found before any request (no model, an unknown scheme, a missing
/// key) come from [`start_agent`](crate::agent::start_agent); errors of a
/// message (the model failed mid-turn, the turn limit) arrive as
/// [`EventKind::Error`](crate::agent::EventKind::Error), and the agent takes the
/// next message.
///
/// ```
/// let err = skillkit::agent::AgentError::MaxTurns { limit: 8 };
/// assert!(err.to_string().contains("max_turns"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model URI is wrong, names an unknown provider, or the provider
    /// cannot send a request (no API key).
    #[error("agent `{agent}` cannot use model `{model}`: {source}")]
    Model {
        /// The agent's name.
        agent: String,
        /// The model URI.
        model: String,
        /// What is wrong.
        source: Box<LlmError>,
    },
    /// The model failed while answering.
    #[error("the model failed: {0}")]
    Llm(Box<LlmError>),
    /// One message took more turns than allowed.
    #[error(
        "the agent stopped after {limit} turns without a final answer (max_turns); \
         raise `max_turns` or ask for a smaller task"
    )]
    MaxTurns {
        /// The limit.
        limit: u32,
    },
    /// The answer was stopped ([`Agent::stop`](crate::agent::AgentController::stop)).
    #[error("the answer was stopped; send the next message")]
    Stopped,
    /// [`start_agent`](crate::agent::start_agent) was called outside a Tokio
    /// runtime.
    #[error("an agent runs on Tokio: call `start_agent` inside a Tokio runtime")]
    NoRuntime,
    /// The agent is shut down (its task ended); start a new one.
    #[error(
        "the agent has shut down; start a new agent (seed it with this one's history to go on)"
    )]
    Closed,
    /// An MCP server's prefix is not one ([`AgentOptions::mcp_server`](crate::agent::AgentOptions::mcp_server)).
    #[error("`{prefix}` cannot prefix an MCP server's tools: {problem}")]
    McpPrefix {
        /// The prefix given.
        prefix: String,
        /// What is wrong.
        problem: String,
    },
    /// The session store could not be read or written
    /// ([`AgentOptions::session`](crate::agent::AgentOptions::session)); the
    /// conversation goes on, and the next turn writes what is missing.
    #[error("the session could not be saved or read: {0}")]
    Session(String),
    /// The conversation could not be compacted (the model failed to
    /// summarise it, or other writers kept appending to the session); the
    /// history is as it was.
    #[error("the conversation could not be compacted: {0}")]
    Compaction(String),
    /// [`Agent::respond`](crate::agent::AgentController::respond) named a call that
    /// waits for nothing.
    #[error(
        "no tool call `{call_id}` is waiting for a decision; answer the id of an `InputRequested` event"
    )]
    NotWaiting {
        /// The id given.
        call_id: String,
    },
}

impl AgentError {
    /// What went wrong, in a few words a trace can group by (`error.type`).
    pub(crate) fn kind(&self) -> String {
        match self {
            AgentError::Model { source, .. } => source.error_type(),
            AgentError::Llm(error) => error.error_type(),
            AgentError::MaxTurns { .. } => "max_turns".into(),
            AgentError::Stopped => "stopped".into(),
            AgentError::NoRuntime => "no_runtime".into(),
            AgentError::Closed => "closed".into(),
            AgentError::McpPrefix { .. } => "mcp_prefix".into(),
            AgentError::Session(_) => "session".into(),
            AgentError::Compaction(_) => "compaction".into(),
            AgentError::NotWaiting { .. } => "not_waiting".into(),
        }
    }
}

impl From<LlmError> for AgentError {
    fn from(error: LlmError) -> Self {
        AgentError::Llm(Box::new(error))
    }
}
