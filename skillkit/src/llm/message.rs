//! Conversation messages, the same for every vendor: the encoders of each
//! adapter turn them into the vendor's wire format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a conversation.
///
/// ```
/// use skillkit::llm::{Message, ToolCall};
/// let conversation = vec![
///     Message::system("You are terse."),
///     Message::user("Read notes.txt"),
///     Message::assistant("", vec![ToolCall::new("call_1", "files_read", serde_json::json!({"path": "notes.txt"}))]),
///     Message::tool_result("call_1", "buy milk"),
/// ];
/// assert!(matches!(conversation[3], Message::ToolResult(_)));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions for the model. Adapters send every system message's text
    /// the way their vendor expects (Anthropic: the `system` parameter).
    System {
        /// The instructions.
        text: String,
    },
    /// What the user said.
    User {
        /// The user's text.
        text: String,
    },
    /// What the model answered.
    Assistant(AssistantMessage),
    /// The result of one tool call.
    ToolResult(ToolResult),
}

impl Message {
    /// A system message.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Message::system("Be brief."), skillkit::llm::Message::System { text: "Be brief.".into() });
    /// ```
    pub fn system(text: impl Into<String>) -> Self {
        Message::System { text: text.into() }
    }

    /// A user message.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Message::user("Hi"), skillkit::llm::Message::User { text: "Hi".into() });
    /// ```
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// An assistant message: its text (may be empty) and tool calls.
    ///
    /// ```
    /// let m = skillkit::llm::Message::assistant("Hello!", vec![]);
    /// assert!(matches!(m, skillkit::llm::Message::Assistant(a) if a.text == "Hello!"));
    /// ```
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant(AssistantMessage {
            text: text.into(),
            tool_calls,
        })
    }

    /// A successful tool result answering call `id`.
    ///
    /// ```
    /// let m = skillkit::llm::Message::tool_result("call_1", "42");
    /// assert!(matches!(m, skillkit::llm::Message::ToolResult(r) if !r.is_error));
    /// ```
    pub fn tool_result(id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::ToolResult(ToolResult {
            tool_call_id: id.into(),
            content: content.into(),
            is_error: false,
        })
    }

    /// A failed tool result answering call `id`: `content` says what went wrong.
    ///
    /// ```
    /// let m = skillkit::llm::Message::tool_error("call_1", "no such file");
    /// assert!(matches!(m, skillkit::llm::Message::ToolResult(r) if r.is_error));
    /// ```
    pub fn tool_error(id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::ToolResult(ToolResult {
            tool_call_id: id.into(),
            content: content.into(),
            is_error: true,
        })
    }
}

/// The model's answer: text and tool calls.
///
/// ```
/// let a = skillkit::llm::AssistantMessage::default();
/// assert!(a.text.is_empty() && a.tool_calls.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The answer's text; may be empty when the model only calls tools.
    pub text: String,
    /// The tool calls, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
}

/// A tool call the model made.
///
/// ```
/// let call = skillkit::llm::ToolCall::new("call_1", "files_read", serde_json::json!({"path": "a"}));
/// assert_eq!(call.input["path"], "a");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the model gave the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The input, as decoded JSON.
    pub input: Value,
}

impl ToolCall {
    /// A tool call from its parts.
    ///
    /// ```
    /// let call = skillkit::llm::ToolCall::new("1", "t", serde_json::json!({}));
    /// assert_eq!(call.name, "t");
    /// ```
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            input,
        }
    }
}

/// The result of one tool call, sent back to the model.
///
/// ```
/// let r = skillkit::llm::ToolResult { tool_call_id: "1".into(), content: "ok".into(), is_error: false };
/// assert_eq!(r.tool_call_id, "1");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// The result, as text.
    pub content: String,
    /// Whether the call failed (`content` then says why).
    pub is_error: bool,
}
