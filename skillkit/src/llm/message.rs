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
    /// Where a compacted conversation starts again: a summary of what came
    /// before, the skills still in use, and the tool results cleared. An
    /// agent sends the model the history from the last compaction with a
    /// summary on; adapters send its [`text`](Compaction::text) as a user
    /// message.
    Compaction(Compaction),
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

/// A compaction point of a conversation: what an agent keeps when its
/// history passes the model's context budget.
///
/// With a [`summary`](Self::summary), it replaces everything before it but
/// its last [`kept`](Self::kept) messages: the model is sent the summary and
/// the skills re-attached, then those messages, then what follows. Without
/// one, it only clears the results of the tool calls named in
/// [`cleared`](Self::cleared) from what the model is sent. The history keeps
/// every message either way.
///
/// ```
/// use skillkit::llm::{Compaction, KeptSkill};
/// let compaction = Compaction {
///     summary: Some("The user is planning a trip to Lisbon.".into()),
///     skills: vec![KeptSkill { name: "travel:plan".into(), content: "Plan day by day.".into(), cut: false }],
///     left_out: vec!["travel:visa".into()],
///     ..Compaction::default()
/// };
/// let text = compaction.text();
/// assert!(text.contains("trip to Lisbon") && text.contains("Plan day by day."));
/// assert!(text.contains("travel:visa"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// The model's summary of the conversation before this point; `None`
    /// when this compaction only cleared tool results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The skills still in use, re-attached after the summary, latest
    /// activation first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<KeptSkill>,
    /// Skills in use that did not fit the re-attachment budget: the model is
    /// told their names, to activate them again if it needs them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// How many messages right before this one stay as they are after the
    /// summary (the message being answered and its turns so far).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kept: usize,
    /// The tool calls whose results are cleared from what the model is sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<String>,
    /// The estimated size of the model's context before, in tokens.
    #[serde(default)]
    pub tokens_before: u64,
    /// The estimated size after, in tokens.
    #[serde(default)]
    pub tokens_after: u64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A skill re-attached at a compaction: the text its latest activation
/// returned.
///
/// ```
/// let kept = skillkit::llm::KeptSkill { name: "a:b".into(), content: "Do it.".into(), cut: false };
/// assert_eq!(kept.name, "a:b");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptSkill {
    /// The skill's full name.
    pub name: String,
    /// What its activation returned, whole or cut to the budget of one
    /// skill.
    pub content: String,
    /// Whether `content` was cut to the budget (the text then says so).
    #[serde(default)]
    pub cut: bool,
}

impl Compaction {
    /// What the model is sent in place of the conversation before this
    /// point: the summary, the skills re-attached, and a line naming any
    /// skill in use left out. Empty for a compaction without a summary.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Compaction::default().text(), "");
    /// ```
    pub fn text(&self) -> String {
        let Some(summary) = &self.summary else {
            return String::new();
        };
        let mut text = format!(
            "This conversation was compacted to fit the context window. A summary of it \
             so far:\n\n<conversation_summary>\n{}\n</conversation_summary>",
            summary.trim()
        );
        if !self.skills.is_empty() {
            text.push_str(
                "\n\nThese skills were activated before and are still in use; their \
                 instructions, as their latest activation returned them, still apply:",
            );
            for skill in &self.skills {
                text.push_str("\n\n");
                text.push_str(&skill.content);
            }
        }
        if !self.left_out.is_empty() {
            text.push_str(&format!(
                "\n\n[Skills in use left out of this compaction for lack of room: {}. \
                 Call activate_skill again for any of them you still need.]",
                self.left_out.join(", ")
            ));
        }
        text
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
