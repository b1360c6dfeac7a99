//! OpenAI-compatible stream chunks → universal events.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::llm::openai::wire::{ChatChunk, ChunkUsage, StreamEvent, ToolCallDelta};
use crate::llm::sse::Frame;
use crate::llm::sse::FromSse;
use crate::llm::{Event, LlmError, StopReason, Streamable, Usage};

const PROVIDER: &str = "openai";

/// What one OpenAI-compatible response has shown so far: tool calls being
/// assembled, keyed by their `index` (so parallel calls never share a
/// buffer), the finish reason and usage.
#[derive(Debug, Default)]
pub(super) struct Accumulator {
    calls: BTreeMap<usize, Call>,
    /// The index of the latest fragment, for servers that omit `index`.
    last_index: Option<usize>,
    finish_reason: Option<String>,
    called_tools: bool,
    usage: Usage,
    complete: bool,
    /// Whether the answer's id and model were told.
    began: bool,
}

#[derive(Debug, Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

impl crate::llm::Accumulator for Accumulator {
    fn finish(&mut self, events: &mut Vec<Event>) {
        match self.finish_reason {
            // The server closed after the last chunk without `[DONE]`.
            Some(_) => self.done(events),
            None => events.push(Event::Error(LlmError::Truncated {
                provider: PROVIDER.into(),
            })),
        }
    }

    fn is_complete(&self) -> bool {
        self.complete
    }
}

impl FromSse for StreamEvent {
    fn from_sse(frame: Frame<'_>) -> Result<Option<Self>, LlmError> {
        match frame.data.trim() {
            "" => Ok(None),
            "[DONE]" => Ok(Some(StreamEvent::Done)),
            data => serde_json::from_str(data)
                .map(|chunk| Some(StreamEvent::Chunk(chunk)))
                .map_err(|error| LlmError::Decode {
                    provider: PROVIDER.into(),
                    message: format!("chunk: {error}"),
                }),
        }
    }
}

impl Streamable for StreamEvent {
    type Accumulator = Accumulator;

    fn stream(self, acc: &mut Accumulator, events: &mut Vec<Event>) {
        match self {
            StreamEvent::Chunk(chunk) => acc.chunk(chunk, events),
            StreamEvent::Done => {
                let start = events.len();
                if acc.finish_reason.is_none() {
                    acc.complete_calls(events);
                }
                if !events[start..].iter().any(Event::is_terminal) {
                    acc.done(events);
                }
            }
        }
    }
}

impl Accumulator {
    fn chunk(&mut self, chunk: ChatChunk, events: &mut Vec<Event>) {
        if let Some(error) = chunk.error {
            events.push(Event::Error(LlmError::Api {
                provider: PROVIDER.into(),
                kind: error.kind.unwrap_or_else(|| "error".into()),
                message: error.message,
            }));
            return;
        }
        if !self.began && (!chunk.id.is_empty() || !chunk.model.is_empty()) {
            self.began = true;
            events.push(Event::Started {
                id: chunk.id,
                model: chunk.model,
            });
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage_of(usage);
        }
        let Some(choice) = chunk.choices.into_iter().find(|c| c.index == 0) else {
            return;
        };
        for text in [choice.delta.content, choice.delta.refusal]
            .into_iter()
            .flatten()
        {
            if !text.is_empty() {
                events.push(Event::Delta { text });
            }
        }
        for fragment in choice.delta.tool_calls.into_iter().flatten() {
            self.fragment(fragment, events);
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason);
            self.complete_calls(events);
        }
    }

    fn fragment(&mut self, fragment: ToolCallDelta, events: &mut Vec<Event>) {
        let index = fragment.index.unwrap_or_else(|| {
            // No index: a fragment with a new id starts a new call.
            let last = self
                .last_index
                .and_then(|i| self.calls.get(&i).map(|c| (i, c)));
            match (last, &fragment.id) {
                (Some((i, call)), Some(id)) if call.id != *id => i + 1,
                (Some((i, _)), _) => i,
                (None, _) => self.calls.keys().next_back().map_or(0, |i| i + 1),
            }
        });
        self.last_index = Some(index);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = fragment.id.filter(|id| !id.is_empty())
            && call.id.is_empty()
        {
            call.id = id;
        }
        if let Some(function) = fragment.function {
            if let Some(name) = function.name.filter(|name| !name.is_empty())
                && call.name.is_empty()
            {
                call.name = name;
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
        if !call.announced && !call.id.is_empty() && !call.name.is_empty() {
            call.announced = true;
            events.push(Event::ToolCallStart {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
    }

    /// Emits every assembled call, in index order; an error for the first
    /// whose arguments are not JSON.
    fn complete_calls(&mut self, events: &mut Vec<Event>) {
        for (index, call) in std::mem::take(&mut self.calls) {
            let id = match call.id.is_empty() {
                true => format!("call_{index}"),
                false => call.id,
            };
            if !call.announced {
                events.push(Event::ToolCallStart {
                    id: id.clone(),
                    name: call.name.clone(),
                });
            }
            let input = match call.arguments.trim() {
                "" => Ok(Value::Object(Default::default())),
                arguments => serde_json::from_str(arguments),
            };
            match input {
                Ok(input) => {
                    self.called_tools = true;
                    events.push(Event::ToolCallComplete {
                        id,
                        name: call.name,
                        input,
                    })
                }
                Err(error) => {
                    let reason = self.finish_reason.as_deref().unwrap_or("[DONE]");
                    events.push(Event::Error(
                        match error.is_eof() && reason != "tool_calls" {
                            true => LlmError::IncompleteToolInput {
                                id,
                                name: call.name,
                                stop_reason: StopReason::from_openai(reason).as_str().to_owned(),
                            },
                            false => LlmError::InvalidToolInput {
                                id,
                                name: call.name,
                                message: error.to_string(),
                            },
                        },
                    ));
                    return;
                }
            }
        }
    }

    fn done(&mut self, events: &mut Vec<Event>) {
        self.complete = true;
        let reason = self.finish_reason.as_deref().unwrap_or("stop");
        let stop_reason = match StopReason::from_openai(reason) {
            // Some servers (older Ollama) say `stop` after tool calls.
            StopReason::EndTurn if self.called_tools => StopReason::ToolUse,
            other => other,
        };
        events.push(Event::Usage(self.usage));
        events.push(Event::Done { stop_reason });
    }
}

/// OpenAI counts cached tokens inside `prompt_tokens`; SkillKit, like
/// Anthropic, counts them apart.
fn usage_of(usage: ChunkUsage) -> Usage {
    let cached = usage
        .prompt_tokens_details
        .and_then(|details| details.cached_tokens)
        .unwrap_or(0)
        .min(usage.prompt_tokens);
    Usage {
        input_tokens: usage.prompt_tokens - cached,
        output_tokens: usage.completion_tokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cached,
    }
}

impl StopReason {
    /// The reason for an OpenAI `finish_reason`: `stop`, `tool_calls`,
    /// `function_call`, `length`, or any other word as given.
    pub(crate) fn from_openai(reason: &str) -> StopReason {
        match reason {
            "stop" => StopReason::EndTurn,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            "length" => StopReason::MaxTokens,
            other => StopReason::Other(other.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::openai::Decoder;
    use serde_json::json;

    fn decode(body: &str) -> Vec<Event> {
        let mut decoder = Decoder::new();
        let mut events = Vec::new();
        decoder.feed(body.as_bytes(), &mut events);
        decoder.finish(&mut events);
        events
    }

    #[test]
    fn calls_without_index_are_told_apart_by_id() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\":1}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n",
        );
        let events = decode(body);
        let complete: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallComplete { id, input, .. } => Some((id.as_str(), input.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(complete, [("a", json!({"x": 1})), ("b", json!({}))]);
        assert_eq!(
            events.last(),
            Some(&Event::Done {
                stop_reason: StopReason::ToolUse
            })
        );
    }

    #[test]
    fn a_finished_stream_without_done_marker_still_completes() {
        let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n";
        let events = decode(body);
        assert_eq!(events[0], Event::delta("Hi"));
        assert!(matches!(events.last(), Some(Event::Done { .. })));
    }

    #[test]
    fn cached_tokens_are_counted_apart() {
        let usage = usage_of(ChunkUsage {
            prompt_tokens: 100,
            completion_tokens: 5,
            prompt_tokens_details: Some(crate::llm::openai::wire::PromptTokensDetails {
                cached_tokens: Some(60),
            }),
        });
        assert_eq!(
            (usage.input_tokens, usage.cache_read_input_tokens),
            (40, 60)
        );
    }
}
