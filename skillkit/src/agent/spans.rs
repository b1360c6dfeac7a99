//! The agent's spans as the GenAI semantic conventions name them: `chat
//! {model}` around each model answer (with [`Chat`], what the answer told:
//! its id and model, the finish reason, the token counts, the time to the
//! first chunk, and the GenAI metrics), and `execute_tool {tool}` around
//! each tool call. `invoke_agent {agent}` is made in `run.rs`.

use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};
use tracing::Span;
use tracing::field::Empty;

use crate::agent::run::AgentRun;
use crate::llm::{AssistantMessage, Event, Message, Request, StopReason, Usage};
use crate::telemetry::{self, attr, capture_content};

impl AgentRun {
    /// The `chat {model}` span of `request`.
    pub(super) fn chat_span(&self, request: &Request) -> Span {
        let model = self.model.name();
        let span = tracing::info_span!(
            "chat",
            otel.name = %format_args!("chat {model}"),
            otel.kind = "client",
            otel.status_code = Empty,
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = Empty,
            gen_ai.system = Empty,
            gen_ai.request.model = %model,
            gen_ai.request.max_tokens = Empty,
            gen_ai.request.temperature = Empty,
            gen_ai.response.model = Empty,
            gen_ai.response.id = Empty,
            gen_ai.response.finish_reasons = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.usage.cache_read.input_tokens = Empty,
            gen_ai.usage.cache_creation.input_tokens = Empty,
            gen_ai.response.time_to_first_chunk = Empty,
            gen_ai.conversation.id = %self.runtime.session_id,
            gen_ai.agent.name = %self.definition.name,
            server.address = Empty,
            server.port = Empty,
            error.type = Empty,
            gen_ai.input.messages = Empty,
            gen_ai.output.messages = Empty,
            gen_ai.system_instructions = Empty,
        );
        if span.is_disabled() {
            return span;
        }
        span.record(telemetry::provider_key(), self.model.adapter.name());
        if let Some(max_tokens) = request.options.max_tokens {
            span.record(attr::REQUEST_MAX_TOKENS, i64::from(max_tokens));
        }
        if let Some(temperature) = request.options.temperature {
            span.record(attr::REQUEST_TEMPERATURE, temperature);
        }
        if let Some((host, port)) = self.model.adapter.base_url().and_then(host_and_port) {
            span.record(attr::SERVER_ADDRESS, host);
            span.record(attr::SERVER_PORT, i64::from(port));
        }
        if capture_content() {
            let (system, messages) = content(&request.messages);
            span.record(attr::INPUT_MESSAGES, messages.to_string());
            if !system.is_empty() {
                span.record(attr::SYSTEM_INSTRUCTIONS, Value::Array(system).to_string());
            }
        }
        span
    }
}

/// What one model answer told, recorded on its `chat` span as it streams,
/// and the GenAI metrics when it ends.
pub(super) struct Chat {
    span: Span,
    provider: String,
    model: String,
    began: Instant,
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    first_chunk: bool,
    response_model: Option<String>,
    usage: Option<Usage>,
}

impl Chat {
    pub(super) fn new(span: Span, provider: &str, request: &Request) -> Chat {
        // Nothing kept for a span nobody records.
        let on = !span.is_disabled();
        Chat {
            span,
            provider: if on {
                provider.to_owned()
            } else {
                String::new()
            },
            model: if on {
                request.model.clone()
            } else {
                String::new()
            },
            began: Instant::now(),
            seen: Mutex::default(),
        }
    }

    /// Records what `event` tells.
    pub(super) fn observe(&self, event: Option<&Event>) {
        if self.span.is_disabled() {
            return;
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Some(Event::Started { id, model }) => {
                if !id.is_empty() {
                    self.span.record(attr::RESPONSE_ID, id.as_str());
                }
                if !model.is_empty() {
                    self.span.record(attr::RESPONSE_MODEL, model.as_str());
                    seen.response_model = Some(model.clone());
                }
            }
            Some(Event::Delta { .. } | Event::ToolCallStart { .. }) if !seen.first_chunk => {
                seen.first_chunk = true;
                self.span.record(
                    attr::RESPONSE_TIME_TO_FIRST_CHUNK,
                    self.began.elapsed().as_secs_f64(),
                );
            }
            Some(Event::Usage(usage)) => {
                // Input as the conventions count it: cache reads and writes
                // included (Anthropic reports them apart).
                self.span
                    .record(attr::USAGE_INPUT_TOKENS, int(usage.input_with_cache()));
                self.span
                    .record(attr::USAGE_OUTPUT_TOKENS, int(usage.output_tokens));
                self.span.record(
                    attr::USAGE_CACHE_READ_INPUT_TOKENS,
                    int(usage.cache_read_input_tokens),
                );
                self.span.record(
                    attr::USAGE_CACHE_CREATION_INPUT_TOKENS,
                    int(usage.cache_creation_input_tokens),
                );
                seen.usage = Some(*usage);
            }
            Some(Event::Done { stop_reason }) => telemetry::record_strings(
                &self.span,
                attr::RESPONSE_FINISH_REASONS,
                &[finish_reason(stop_reason)],
            ),
            _ => {}
        }
    }

    /// The answer arrived: its content (when opted in) and the metrics.
    pub(super) fn answered(&self, message: &AssistantMessage) {
        if self.span.is_disabled() {
            return;
        }
        if capture_content() {
            let (_, output) = content(&[Message::Assistant(message.clone())]);
            self.span.record(attr::OUTPUT_MESSAGES, output.to_string());
        }
        self.metrics(None);
    }

    /// The answer failed (or was stopped) with `kind`.
    pub(super) fn failed(&self, kind: &str) {
        if self.span.is_disabled() {
            return;
        }
        telemetry::fail(&self.span, kind);
        self.metrics(Some(kind));
    }

    /// `gen_ai.client.operation.duration`, and `gen_ai.client.token.usage`
    /// for input and output when the model reported them.
    fn metrics(&self, error: Option<&str>) {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let duration = self.began.elapsed().as_secs_f64();
        let response_model = seen.response_model.as_deref().unwrap_or("");
        let error = error.unwrap_or("");
        let _enter = self.span.enter();
        let (provider, model) = (self.provider.as_str(), self.model.as_str());
        metric(duration, None, provider, model, response_model, error);
        if let Some(usage) = seen.usage {
            let input = usage.input_with_cache() as f64;
            let output = usage.output_tokens as f64;
            metric(input, Some("input"), provider, model, response_model, error);
            metric(
                output,
                Some("output"),
                provider,
                model,
                response_model,
                error,
            );
        }
    }
}

/// One measurement: the duration (no `token`), or a token count of
/// `token` type. Attributes as the conventions list them; the provider
/// under its name of the release in use.
fn metric(
    value: f64,
    token: Option<&str>,
    provider: &str,
    model: &str,
    response: &str,
    error: &str,
) {
    match (token, telemetry::latest_experimental()) {
        (None, true) => tracing::info!(
            histogram.gen_ai.client.operation.duration = value,
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = provider,
            gen_ai.request.model = model,
            gen_ai.response.model = response,
            error.type = error,
        ),
        (None, false) => tracing::info!(
            histogram.gen_ai.client.operation.duration = value,
            gen_ai.operation.name = "chat",
            gen_ai.system = provider,
            gen_ai.request.model = model,
            gen_ai.response.model = response,
            error.type = error,
        ),
        (Some(token), true) => tracing::info!(
            histogram.gen_ai.client.token.usage = value,
            gen_ai.token.type = token,
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = provider,
            gen_ai.request.model = model,
            gen_ai.response.model = response,
        ),
        (Some(token), false) => tracing::info!(
            histogram.gen_ai.client.token.usage = value,
            gen_ai.token.type = token,
            gen_ai.operation.name = "chat",
            gen_ai.system = provider,
            gen_ai.request.model = model,
            gen_ai.response.model = response,
        ),
    }
}

/// The `execute_tool {tool}` span of a call of `name` (`tool_type`:
/// `function`, or `extension` for an MCP server's tool).
pub(super) fn tool_span(agent: &str, name: &str, call_id: &str, tool_type: &str) -> Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = tool_type,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        gen_ai.agent.name = agent,
        skillkit.approval.decision = Empty,
        skillkit.approval.wait = Empty,
        skillkit.script.path = Empty,
        skillkit.script.exit_code = Empty,
        skillkit.script.sandbox = Empty,
        skillkit.mcp.server = Empty,
        error.type = Empty,
    )
}

/// A count as the conventions type it (an `int`: the OTel bridge would
/// make a `u64` a string).
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A stop reason in the conventions' words.
fn finish_reason(reason: &StopReason) -> &str {
    match reason {
        StopReason::EndTurn | StopReason::StopSequence => "stop",
        StopReason::ToolUse => "tool_call",
        StopReason::MaxTokens => "length",
        StopReason::Other(other) => other,
    }
}

/// `(host, port)` of `url`, the port from the scheme when it names none.
fn host_and_port(url: &str) -> Option<(&str, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let default = if scheme == "http" { 80 } else { 443 };
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
            port.parse().ok().map(|port| (host, port))
        }
        _ => Some((authority, default)),
    }
}

/// The system instructions and the other messages of `messages`, as the
/// conventions' JSON (`{role, parts: [{type, …}]}`).
fn content(messages: &[Message]) -> (Vec<Value>, Value) {
    let mut system = Vec::new();
    let mut out = Vec::new();
    for message in messages {
        match message {
            Message::System { text } => system.push(json!({"type": "text", "content": text})),
            Message::User { text } => out.push(json!({"role": "user", "parts": [{"type": "text", "content": text}]})),
            Message::Compaction(compaction) => out.push(json!({"role": "user", "parts": [{"type": "text", "content": compaction.text()}]})),
            Message::Assistant(assistant) => {
                let mut parts = Vec::new();
                if !assistant.text.is_empty() {
                    parts.push(json!({"type": "text", "content": assistant.text}));
                }
                for call in &assistant.tool_calls {
                    parts.push(json!({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.input}));
                }
                out.push(json!({"role": "assistant", "parts": parts}));
            }
            Message::ToolResult(result) => out.push(json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": result.tool_call_id, "response": result.content}]})),
        }
    }
    (system, Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_of_a_base_url() {
        assert_eq!(
            host_and_port("https://api.anthropic.com"),
            Some(("api.anthropic.com", 443))
        );
        assert_eq!(
            host_and_port("http://127.0.0.1:8080/v1"),
            Some(("127.0.0.1", 8080))
        );
        assert_eq!(
            host_and_port("http://localhost/v1"),
            Some(("localhost", 80))
        );
        assert_eq!(host_and_port("no scheme"), None);
    }
}
