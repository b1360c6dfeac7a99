//! The OpenAI chat completions wire format (also spoken by Ollama, llama.cpp,
//! vLLM and others): request bodies and stream chunks. Nothing here knows
//! SkillKit's own types.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The body of `POST /chat/completions`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct ChatRequest {
    /// The model name.
    pub model: String,
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// The callable tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ChatTool>,
    /// The most tokens in the answer (the field most servers know).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The most tokens in the answer (the field newer OpenAI models require).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-K sampling (an extension of vLLM, llama.cpp, Ollama; OpenAI rejects it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Stop sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// Always `true` here.
    pub stream: bool,
    /// Ask for a final chunk with token counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// `stream_options`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(super) struct StreamOptions {
    /// Send usage in a last chunk.
    pub include_usage: bool,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub(super) enum ChatMessage {
    /// Instructions.
    System {
        /// The text.
        content: String,
    },
    /// The user.
    User {
        /// The text.
        content: String,
    },
    /// The model.
    Assistant {
        /// The text; `null` when the model only called tools.
        content: Option<String>,
        /// The tool calls.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallParam>,
    },
    /// A tool's result.
    Tool {
        /// The id of the call answered.
        tool_call_id: String,
        /// The result text.
        content: String,
    },
}

/// A tool call in an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct ToolCallParam {
    /// The call's id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The function and its arguments.
    pub function: FunctionCall,
}

/// A function call: name and arguments as a JSON string.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct FunctionCall {
    /// The function's name.
    pub name: String,
    /// The arguments, JSON-encoded.
    pub arguments: String,
}

/// A callable tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct ChatTool {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The function.
    pub function: FunctionDefinition,
}

/// A function's name, description and parameter schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct FunctionDefinition {
    /// The name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: Value,
}

/// One server-sent event of a streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum StreamEvent {
    /// A `chat.completion.chunk`.
    Chunk(ChatChunk),
    /// `data: [DONE]`: the stream is complete.
    Done,
}

/// A `chat.completion.chunk` (or an error object some servers send mid-stream).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct ChatChunk {
    /// The completion's id (the same in every chunk).
    #[serde(default)]
    pub id: String,
    /// The model that answers.
    #[serde(default)]
    pub model: String,
    /// The choices; SkillKit reads choice 0.
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    /// Token counts, in the last chunk when asked for.
    #[serde(default)]
    pub usage: Option<ChunkUsage>,
    /// An error instead of a chunk.
    #[serde(default)]
    pub error: Option<ChunkError>,
}

/// One choice of a chunk.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct ChunkChoice {
    /// The choice's number.
    #[serde(default)]
    pub index: u32,
    /// What this chunk adds.
    #[serde(default)]
    pub delta: ChunkDelta,
    /// Why the model stopped, in the choice's last chunk.
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// What a chunk adds to a choice.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct ChunkDelta {
    /// Text.
    #[serde(default)]
    pub content: Option<String>,
    /// A refusal, as text.
    #[serde(default)]
    pub refusal: Option<String>,
    /// Tool-call fragments.
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A fragment of a tool call, keyed by `index`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct ToolCallDelta {
    /// Which call of the answer this fragment belongs to.
    #[serde(default)]
    pub index: Option<usize>,
    /// The call's id, in its first fragment.
    #[serde(default)]
    pub id: Option<String>,
    /// Name and argument fragments.
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

/// Name and argument fragments of a tool call.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct FunctionDelta {
    /// The function's name, in the first fragment.
    #[serde(default)]
    pub name: Option<String>,
    /// A piece of the JSON arguments.
    #[serde(default)]
    pub arguments: Option<String>,
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(super) struct ChunkUsage {
    /// Prompt tokens, cached ones included.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Answer tokens.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Details of the prompt tokens.
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

/// Details of the prompt tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(super) struct PromptTokensDetails {
    /// Tokens read from the prompt cache.
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// An error object.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct ChunkError {
    /// What happened.
    #[serde(default)]
    pub message: String,
    /// The error's type, when given.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}
