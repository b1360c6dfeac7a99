//! The Anthropic Messages API wire format: request bodies and stream events,
//! as the API spells them. Nothing here knows SkillKit's own types.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The body of `POST /v1/messages`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct MessagesRequest {
    /// The model name.
    pub model: String,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// The conversation, alternating user and assistant turns.
    pub messages: Vec<MessageParam>,
    /// System prompt blocks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<ContentBlockParam>,
    /// The callable tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-K sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Stop sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Always `true` here: the answer comes as server-sent events.
    pub stream: bool,
    /// Edits the API makes to the context (beta `context-management-2025-06-27`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_management: Option<serde_json::Value>,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct MessageParam {
    /// `user` or `assistant`.
    pub role: Role,
    /// The turn's content blocks.
    pub content: Vec<ContentBlockParam>,
}

/// Who speaks a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Role {
    /// The user (tool results are user turns too).
    User,
    /// The model.
    Assistant,
}

/// A content block of a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ContentBlockParam {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Prompt-cache breakpoint.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// A tool call the model made earlier.
    ToolUse {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The input object.
        input: Value,
        /// Prompt-cache breakpoint.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// The result of a tool call.
    ToolResult {
        /// The id of the call answered.
        tool_use_id: String,
        /// The result text.
        content: String,
        /// Whether the call failed.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        /// Prompt-cache breakpoint.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl ContentBlockParam {
    /// Sets this block's prompt-cache breakpoint.
    pub(super) fn set_cache_control(&mut self, control: CacheControl) {
        match self {
            ContentBlockParam::Text { cache_control, .. }
            | ContentBlockParam::ToolUse { cache_control, .. }
            | ContentBlockParam::ToolResult { cache_control, .. } => *cache_control = Some(control),
        }
    }
}

/// A prompt-cache breakpoint: `{"type": "ephemeral"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum CacheControl {
    /// The default five-minute cache.
    Ephemeral,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Tool {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON schema of its input.
    pub input_schema: Value,
}

/// One server-sent event of a streamed answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum StreamEvent {
    /// The answer begins; carries the input token counts.
    MessageStart(MessageStart),
    /// A content block begins.
    ContentBlockStart(ContentBlockStart),
    /// A piece of a content block.
    ContentBlockDelta(ContentBlockDelta),
    /// A content block ends.
    ContentBlockStop(ContentBlockStop),
    /// The stop reason and cumulative usage.
    MessageDelta(MessageDelta),
    /// The answer is complete.
    MessageStop,
    /// Keep-alive.
    Ping,
    /// The API failed mid-stream.
    Error(ErrorEvent),
    /// An event type newer than this code.
    #[serde(other)]
    Unknown,
}

/// `message_start`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct MessageStart {
    /// The message as begun.
    pub message: MessageSnapshot,
}

/// The message in `message_start`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct MessageSnapshot {
    /// The message id.
    #[serde(default)]
    pub id: String,
    /// The model that answers.
    #[serde(default)]
    pub model: String,
    /// Token counts so far.
    #[serde(default)]
    pub usage: UsageDelta,
}

/// Token counts; every field may be absent or null.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(super) struct UsageDelta {
    /// Input tokens.
    #[serde(default)]
    pub input_tokens: Option<u64>,
    /// Output tokens (cumulative).
    #[serde(default)]
    pub output_tokens: Option<u64>,
    /// Tokens written to the prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    /// Tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}

/// `content_block_start`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct ContentBlockStart {
    /// The block's position in the message.
    pub index: usize,
    /// The block as begun.
    pub content_block: ContentBlock,
}

/// A content block of an answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ContentBlock {
    /// Text.
    Text {
        /// Text already present (usually empty).
        #[serde(default)]
        text: String,
    },
    /// A call of one of the request's tools.
    ToolUse {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The input so far (usually `{}`; the rest comes as JSON deltas).
        #[serde(default)]
        input: Value,
    },
    /// A call of a tool the API runs itself (web search, code execution…).
    ServerToolUse {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// Extended thinking.
    Thinking {
        /// Thinking text already present.
        #[serde(default)]
        thinking: String,
    },
    /// Encrypted thinking.
    RedactedThinking,
    /// Any other block (server tool results, newer block types).
    #[serde(other)]
    Other,
}

/// `content_block_delta`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct ContentBlockDelta {
    /// The block's position in the message.
    pub index: usize,
    /// The piece.
    pub delta: Delta,
}

/// A piece of a content block.
// The variants are named as the API names the delta types (`text_delta`, …).
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "RawDelta")]
pub(super) enum Delta {
    /// Text to append.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A fragment of a tool call's JSON input.
    InputJsonDelta {
        /// The fragment, not valid JSON on its own.
        partial_json: String,
    },
    /// Thinking text to append (not kept: SkillKit passes no thinking on).
    ThinkingDelta,
    /// The thinking block's signature (not kept).
    SignatureDelta,
    /// Any other delta (citations, newer types).
    Other,
}

/// The flat shape of every delta. Deltas are most of a stream: reading them
/// through this struct avoids the buffering of an internally tagged enum.
#[derive(Deserialize)]
struct RawDelta {
    #[serde(rename = "type")]
    kind: DeltaKind,
    #[serde(default)]
    text: String,
    #[serde(default)]
    partial_json: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum DeltaKind {
    TextDelta,
    InputJsonDelta,
    ThinkingDelta,
    SignatureDelta,
    #[serde(other)]
    Other,
}

impl From<RawDelta> for Delta {
    fn from(raw: RawDelta) -> Self {
        match raw.kind {
            DeltaKind::TextDelta => Delta::TextDelta { text: raw.text },
            DeltaKind::InputJsonDelta => Delta::InputJsonDelta {
                partial_json: raw.partial_json,
            },
            DeltaKind::ThinkingDelta => Delta::ThinkingDelta,
            DeltaKind::SignatureDelta => Delta::SignatureDelta,
            DeltaKind::Other => Delta::Other,
        }
    }
}

/// `content_block_stop`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(super) struct ContentBlockStop {
    /// The block's position in the message.
    pub index: usize,
}

/// `message_delta`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct MessageDelta {
    /// The stop reason.
    pub delta: MessageDeltaBody,
    /// Cumulative token counts.
    #[serde(default)]
    pub usage: UsageDelta,
}

/// The body of `message_delta`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(super) struct MessageDeltaBody {
    /// Why the model stopped.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// The stop sequence met, if any.
    #[serde(default)]
    pub stop_sequence: Option<String>,
}

/// `error`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(super) struct ErrorEvent {
    /// The error.
    pub error: ApiError,
}

/// An API error: its type and message.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(super) struct ApiError {
    /// `overloaded_error`, `api_error`, `invalid_request_error`, …
    #[serde(rename = "type", default)]
    pub kind: String,
    /// What happened.
    #[serde(default)]
    pub message: String,
}
