//! SkillKit messages → the Anthropic Messages API request body.

use serde_json::Value;

use crate::llm::anthropic::wire::{
    CacheControl, ContentBlockParam, MessageParam, MessagesRequest, Role, Tool,
};
use crate::llm::{Message, Options};
use crate::tool::ToolDefinition;

/// The request body for `model` with `messages`, `tools` and `options`
/// (already merged with the adapter's defaults, so `max_tokens` is set).
///
/// System messages become the `system` parameter; consecutive tool results
/// become one user turn; with prompt caching, the last system block and the
/// last block of the last message carry `cache_control`.
pub(crate) fn encode(
    model: &str,
    messages: &[Message],
    tools: &[ToolDefinition],
    options: &Options,
    max_tokens: u32,
) -> MessagesRequest {
    let mut system = Vec::new();
    let mut turns: Vec<MessageParam> = Vec::new();
    for message in messages {
        match message {
            Message::System { text } => system.push(text_block(text)),
            Message::User { text } => turns.push(MessageParam {
                role: Role::User,
                content: vec![text_block(text)],
            }),
            Message::Compaction(compaction) => {
                let text = compaction.text();
                if !text.is_empty() {
                    turns.push(MessageParam {
                        role: Role::User,
                        content: vec![text_block(&text)],
                    });
                }
            }
            Message::Assistant(assistant) => {
                let mut content = Vec::new();
                if !assistant.text.is_empty() {
                    content.push(text_block(&assistant.text));
                }
                content.extend(assistant.tool_calls.iter().map(|call| {
                    ContentBlockParam::ToolUse {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        input: object_input(&call.input),
                        cache_control: None,
                    }
                }));
                if content.is_empty() {
                    tracing::debug!("skipping an empty assistant message: the API rejects it");
                    continue;
                }
                turns.push(MessageParam {
                    role: Role::Assistant,
                    content,
                });
            }
            Message::ToolResult(result) => {
                let block = ContentBlockParam::ToolResult {
                    tool_use_id: result.tool_call_id.clone(),
                    content: result.content.clone(),
                    is_error: result.is_error,
                    cache_control: None,
                };
                match turns.last_mut() {
                    Some(last) if last.role == Role::User && is_tool_results(&last.content) => {
                        last.content.push(block)
                    }
                    _ => turns.push(MessageParam {
                        role: Role::User,
                        content: vec![block],
                    }),
                }
            }
        }
    }
    if options.prompt_caching == Some(true) {
        if let Some(block) = system.last_mut() {
            block.set_cache_control(CacheControl::Ephemeral);
        }
        if let Some(block) = turns.last_mut().and_then(|turn| turn.content.last_mut()) {
            block.set_cache_control(CacheControl::Ephemeral);
        }
    }
    MessagesRequest {
        model: model.to_owned(),
        max_tokens,
        messages: turns,
        system,
        tools: tools
            .iter()
            .map(|tool| Tool {
                name: tool.name.clone(),
                description: tool.description.clone(),
                input_schema: tool.input_schema.clone(),
            })
            .collect(),
        temperature: options.temperature,
        top_p: options.top_p,
        top_k: options.top_k,
        stop_sequences: options.stop_sequences.clone(),
        stream: true,
        context_management: options.clear_tool_uses.as_ref().map(|clear| {
            serde_json::json!({"edits": [{
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": clear.trigger_tokens},
                "keep": {"type": "tool_uses", "value": clear.keep},
                "exclude_tools": clear.exclude_tools,
            }]})
        }),
    }
}

fn text_block(text: &str) -> ContentBlockParam {
    ContentBlockParam::Text {
        text: text.to_owned(),
        cache_control: None,
    }
}

fn is_tool_results(content: &[ContentBlockParam]) -> bool {
    content
        .iter()
        .all(|block| matches!(block, ContentBlockParam::ToolResult { .. }))
}

/// The API wants an object; a model that wrote another JSON value is answered
/// with it wrapped, rather than a rejected request.
fn object_input(input: &Value) -> Value {
    match input {
        Value::Object(_) => input.clone(),
        Value::Null => Value::Object(Default::default()),
        other => serde_json::json!({ "input": other }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use serde_json::json;

    #[test]
    fn groups_tool_results_and_lifts_system_text() {
        let messages = vec![
            Message::system("Be terse."),
            Message::user("Weather in Paris and Rome?"),
            Message::assistant(
                "Checking.",
                vec![
                    ToolCall::new("t1", "weather", json!({"city": "Paris"})),
                    ToolCall::new("t2", "weather", json!({"city": "Rome"})),
                ],
            ),
            Message::tool_result("t1", "sunny"),
            Message::tool_error("t2", "timeout"),
            Message::user("Thanks"),
        ];
        let options = Options {
            prompt_caching: Some(true),
            temperature: Some(0.5),
            ..Default::default()
        };
        let body = serde_json::to_value(encode("claude", &messages, &[], &options, 1024)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude",
                "max_tokens": 1024,
                "stream": true,
                "temperature": 0.5,
                "system": [{"type": "text", "text": "Be terse.", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Checking."},
                        {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}},
                        {"type": "tool_use", "id": "t2", "name": "weather", "input": {"city": "Rome"}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
                        {"type": "tool_result", "tool_use_id": "t2", "content": "timeout", "is_error": true}
                    ]},
                    {"role": "user", "content": [
                        {"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}
                    ]}
                ]
            })
        );
    }

    #[test]
    fn tools_are_sent_as_given() {
        let tool = ToolDefinition::new("files_read", "Read.", json!({"type": "object"}));
        let body = encode("m", &[Message::user("x")], &[tool], &Options::default(), 10);
        let body = serde_json::to_value(body).unwrap();
        assert_eq!(
            body["tools"],
            json!([{"name": "files_read", "description": "Read.", "input_schema": {"type": "object"}}])
        );
        assert!(body.get("system").is_none());
    }
}
