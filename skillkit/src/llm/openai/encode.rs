//! SkillKit messages → the chat completions request body.

use crate::llm::openai::MaxTokensField;
use crate::llm::openai::wire::{
    ChatMessage, ChatRequest, ChatTool, FunctionCall, FunctionDefinition, StreamOptions,
    ToolCallParam,
};
use crate::llm::{Message, Options};
use crate::tool::ToolDefinition;

/// How the encoder fills the fields that differ between servers.
pub(crate) struct Dialect {
    pub max_tokens_field: MaxTokensField,
    pub include_usage: bool,
}

/// The request body for `model` with `messages`, `tools` and `options`
/// (already merged with the adapter's defaults).
///
/// Every message maps to one chat message; a failed tool result is sent with
/// its content prefixed `Error: `, since the format has no error flag.
pub(crate) fn encode(
    model: &str,
    messages: &[Message],
    tools: &[ToolDefinition],
    options: &Options,
    dialect: &Dialect,
) -> ChatRequest {
    let messages = messages
        .iter()
        // A compaction that only cleared tool results sends nothing.
        .filter(|message| !matches!(message, Message::Compaction(c) if c.summary.is_none()))
        .map(|message| match message {
            Message::System { text } => ChatMessage::System {
                content: text.clone(),
            },
            Message::User { text } => ChatMessage::User {
                content: text.clone(),
            },
            Message::Compaction(compaction) => ChatMessage::User {
                content: compaction.text(),
            },
            Message::Assistant(assistant) => ChatMessage::Assistant {
                content: match assistant.text.is_empty() && !assistant.tool_calls.is_empty() {
                    true => None,
                    false => Some(assistant.text.clone()),
                },
                tool_calls: assistant
                    .tool_calls
                    .iter()
                    .map(|call| ToolCallParam {
                        id: call.id.clone(),
                        kind: "function",
                        function: FunctionCall {
                            name: call.name.clone(),
                            arguments: call.input.to_string(),
                        },
                    })
                    .collect(),
            },
            Message::ToolResult(result) => ChatMessage::Tool {
                tool_call_id: result.tool_call_id.clone(),
                content: match result.is_error {
                    true => format!("Error: {}", result.content),
                    false => result.content.clone(),
                },
            },
        })
        .collect();
    let (max_tokens, max_completion_tokens) = match dialect.max_tokens_field {
        MaxTokensField::MaxTokens => (options.max_tokens, None),
        MaxTokensField::MaxCompletionTokens => (None, options.max_tokens),
    };
    ChatRequest {
        model: model.to_owned(),
        messages,
        tools: tools
            .iter()
            .map(|tool| ChatTool {
                kind: "function",
                function: FunctionDefinition {
                    name: tool.name.clone(),
                    description: tool.description.clone(),
                    parameters: tool.input_schema.clone(),
                },
            })
            .collect(),
        max_tokens,
        max_completion_tokens,
        temperature: options.temperature,
        top_p: options.top_p,
        top_k: options.top_k,
        stop: options.stop_sequences.clone(),
        stream: true,
        stream_options: dialect.include_usage.then_some(StreamOptions {
            include_usage: true,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use serde_json::json;

    #[test]
    fn encodes_every_message_kind() {
        let messages = vec![
            Message::system("Be terse."),
            Message::user("Weather?"),
            Message::assistant(
                "",
                vec![ToolCall::new("c1", "weather", json!({"city": "Oslo"}))],
            ),
            Message::tool_error("c1", "timeout"),
        ];
        let tool = ToolDefinition::new("weather", "Weather.", json!({"type": "object"}));
        let options = Options {
            max_tokens: Some(50),
            ..Default::default()
        };
        let dialect = Dialect {
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            include_usage: true,
        };
        let body =
            serde_json::to_value(encode("gpt", &messages, &[tool], &options, &dialect)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "gpt",
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_completion_tokens": 50,
                "messages": [
                    {"role": "system", "content": "Be terse."},
                    {"role": "user", "content": "Weather?"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "Error: timeout"}
                ],
                "tools": [{"type": "function", "function": {"name": "weather", "description": "Weather.", "parameters": {"type": "object"}}}]
            })
        );
    }
}
