//! [`History`]: a conversation as plain serde data, to persist and resume.

use serde::{Deserialize, Serialize};

use crate::llm::Message;

/// The whole conversation of an agent: every message, tool call and result,
/// in order. Tool calls name the skills' full names (`files:read`), not the
/// wire names, so a history stays valid when the catalog changes.
///
/// Serialise it to persist a conversation; seed a new agent with it
/// ([`AgentOptions::history`](crate::agent::AgentOptions::history)) to resume.
///
/// ```
/// use skillkit::agent::History;
/// use skillkit::llm::Message;
/// let history = History { session_id: "s1".into(), messages: vec![Message::user("Hi")] };
/// let json = serde_json::to_string(&history).unwrap();
/// assert_eq!(serde_json::from_str::<History>(&json).unwrap(), history);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The session id, handed to tools and to `$SESSION_ID` in skill bodies.
    pub session_id: String,
    /// The messages, oldest first. The system prompt is not part of it: it is
    /// rebuilt on every turn from the definition and the catalog.
    pub messages: Vec<Message>,
}
