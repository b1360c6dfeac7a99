//! Anthropic stream events → universal events.

use serde_json::Value;

use crate::llm::anthropic::wire::{self, ContentBlock, Delta, StreamEvent};
use crate::llm::sse::Frame;
use crate::llm::sse::FromSse;
use crate::llm::{Event, LlmError, StopReason, Streamable, Usage};

const PROVIDER: &str = "anthropic";

/// What one Anthropic response has shown so far: the open content blocks by
/// index (so parallel tool calls never share a JSON buffer), usage, the stop
/// reason.
#[derive(Debug, Default)]
pub(super) struct Accumulator {
    /// Open blocks by index, in start order. A handful at most (blocks close
    /// as the next begins, tool calls may overlap): a list beats a map on the
    /// per-delta lookup.
    blocks: Vec<(usize, Block)>,
    usage: Usage,
    stop_reason: Option<String>,
    /// A tool call whose JSON failed to parse at `content_block_stop`; whether
    /// that is `max_tokens` or bad JSON is known only at `message_delta`.
    broken: Option<BrokenCall>,
    complete: bool,
}

#[derive(Debug)]
enum Block {
    Text,
    Tool {
        id: String,
        name: String,
        input: Value,
        json: String,
    },
    Ignored,
}

#[derive(Debug)]
struct BrokenCall {
    id: String,
    name: String,
    message: String,
    cut_short: bool,
}

impl crate::llm::Accumulator for Accumulator {
    fn finish(&mut self, events: &mut Vec<Event>) {
        if !self.complete {
            events.push(Event::Error(LlmError::Truncated {
                provider: PROVIDER.into(),
            }));
        }
    }

    fn is_complete(&self) -> bool {
        self.complete
    }
}

impl FromSse for StreamEvent {
    fn from_sse(frame: Frame<'_>) -> Result<Option<Self>, LlmError> {
        if frame.data.is_empty() || frame.event == "ping" {
            return Ok(None);
        }
        // The hot path: nearly every event is a delta (see `delta`).
        if frame.event == "content_block_delta" {
            return match wire::ContentBlockDelta::from_json(frame.data) {
                Ok(delta) => Ok(Some(StreamEvent::ContentBlockDelta(delta))),
                Err(error) => Err(decode_error(frame, &error)),
            };
        }
        match serde_json::from_str(frame.data) {
            Ok(StreamEvent::Ping) => Ok(None),
            Ok(StreamEvent::Unknown) => {
                tracing::debug!(
                    provider = PROVIDER,
                    event = frame.event,
                    "ignoring unknown event type"
                );
                Ok(None)
            }
            Ok(event) => Ok(Some(event)),
            Err(error) => Err(decode_error(frame, &error)),
        }
    }
}

fn decode_error(frame: Frame<'_>, error: &serde_json::Error) -> LlmError {
    LlmError::Decode {
        provider: PROVIDER.into(),
        message: format!("`{}` event: {error}", frame.event),
    }
}

impl Streamable for StreamEvent {
    type Accumulator = Accumulator;

    fn stream(self, acc: &mut Accumulator, events: &mut Vec<Event>) {
        match self {
            StreamEvent::MessageStart(start) => {
                if !start.message.id.is_empty() || !start.message.model.is_empty() {
                    events.push(Event::Started {
                        id: start.message.id,
                        model: start.message.model,
                    });
                }
                acc.add_usage(start.message.usage);
            }
            StreamEvent::ContentBlockStart(start) => acc.start_block(start, events),
            StreamEvent::ContentBlockDelta(delta) => acc.delta(delta, events),
            StreamEvent::ContentBlockStop(stop) => acc.stop_block(stop.index, events),
            StreamEvent::MessageDelta(delta) => {
                acc.stop_reason = delta.delta.stop_reason;
                acc.add_usage(delta.usage);
                if let Some(broken) = acc.broken.take() {
                    events.push(Event::Error(broken.into_error(acc.stop_reason.as_deref())));
                }
            }
            StreamEvent::MessageStop => acc.stop(events),
            StreamEvent::Error(error) => events.push(Event::Error(LlmError::Api {
                provider: PROVIDER.into(),
                kind: error.error.kind,
                message: error.error.message,
            })),
            StreamEvent::Ping | StreamEvent::Unknown => {}
        }
    }
}

impl Accumulator {
    /// Counts are cumulative: a present count replaces the one before.
    fn add_usage(&mut self, usage: wire::UsageDelta) {
        let u = &mut self.usage;
        u.input_tokens = usage.input_tokens.unwrap_or(u.input_tokens);
        u.output_tokens = usage.output_tokens.unwrap_or(u.output_tokens);
        u.cache_creation_input_tokens = usage
            .cache_creation_input_tokens
            .unwrap_or(u.cache_creation_input_tokens);
        u.cache_read_input_tokens = usage
            .cache_read_input_tokens
            .unwrap_or(u.cache_read_input_tokens);
    }

    fn start_block(&mut self, start: wire::ContentBlockStart, events: &mut Vec<Event>) {
        let block = match start.content_block {
            ContentBlock::Text { text } => {
                if !text.is_empty() {
                    events.push(Event::Delta { text });
                }
                Block::Text
            }
            ContentBlock::ToolUse { id, name, input } => {
                events.push(Event::ToolCallStart {
                    id: id.clone(),
                    name: name.clone(),
                });
                Block::Tool {
                    id,
                    name,
                    input,
                    json: String::new(),
                }
            }
            ContentBlock::ServerToolUse { id, name } => {
                tracing::debug!(
                    provider = PROVIDER,
                    id,
                    name,
                    "server tool call, run by the API"
                );
                Block::Ignored
            }
            ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking
            | ContentBlock::Other => Block::Ignored,
        };
        match self
            .blocks
            .iter_mut()
            .find(|(index, _)| *index == start.index)
        {
            Some((_, open)) => *open = block,
            None => self.blocks.push((start.index, block)),
        }
    }

    fn delta(&mut self, delta: wire::ContentBlockDelta, events: &mut Vec<Event>) {
        let block = self
            .blocks
            .iter_mut()
            .find(|(index, _)| *index == delta.index);
        match (block.map(|(_, block)| block), delta.delta) {
            (Some(Block::Text) | None, Delta::TextDelta { text }) => {
                events.push(Event::Delta { text })
            }
            (Some(Block::Tool { json, .. }), Delta::InputJsonDelta { partial_json }) => {
                json.push_str(&partial_json)
            }
            _ => {}
        }
    }

    fn stop_block(&mut self, index: usize, events: &mut Vec<Event>) {
        let Some(Block::Tool {
            id,
            name,
            input,
            json,
        }) = self.remove_block(index)
        else {
            return;
        };
        let input = if json.trim().is_empty() {
            if input.is_null() {
                Value::Object(Default::default())
            } else {
                input
            }
        } else {
            match serde_json::from_str(&json) {
                Ok(input) => input,
                Err(error) => {
                    self.broken.get_or_insert(BrokenCall {
                        id,
                        name,
                        message: error.to_string(),
                        cut_short: error.is_eof(),
                    });
                    return;
                }
            }
        };
        events.push(Event::ToolCallComplete { id, name, input });
    }

    fn remove_block(&mut self, index: usize) -> Option<Block> {
        let at = self.blocks.iter().position(|(open, _)| *open == index)?;
        Some(self.blocks.remove(at).1)
    }

    fn stop(&mut self, events: &mut Vec<Event>) {
        if let Some(broken) = self.broken.take() {
            events.push(Event::Error(broken.into_error(self.stop_reason.as_deref())));
            return;
        }
        let open_tool = self.blocks.iter().find_map(|(_, block)| match block {
            Block::Tool { id, name, .. } => Some((id.clone(), name.clone())),
            _ => None,
        });
        if let Some((id, name)) = open_tool {
            events.push(Event::Error(LlmError::IncompleteToolInput {
                id,
                name,
                stop_reason: self
                    .stop_reason
                    .clone()
                    .unwrap_or_else(|| "message_stop".into()),
            }));
            return;
        }
        self.complete = true;
        events.push(Event::Usage(self.usage));
        events.push(Event::Done {
            stop_reason: StopReason::from_wire(self.stop_reason.as_deref().unwrap_or("unknown")),
        });
    }
}

impl BrokenCall {
    fn into_error(self, stop_reason: Option<&str>) -> LlmError {
        match stop_reason {
            Some(reason) if self.cut_short && reason != "tool_use" => {
                LlmError::IncompleteToolInput {
                    id: self.id,
                    name: self.name,
                    stop_reason: reason.to_owned(),
                }
            }
            _ => LlmError::InvalidToolInput {
                id: self.id,
                name: self.name,
                message: self.message,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::anthropic::Decoder;

    /// The events of `body`, but the answer's id and model.
    fn decode(body: &str) -> Vec<Event> {
        let mut events = decode_all(body);
        events.retain(|event| !matches!(event, Event::Started { .. }));
        events
    }

    fn decode_all(body: &str) -> Vec<Event> {
        let mut decoder = Decoder::new();
        let mut events = Vec::new();
        decoder.feed(body.as_bytes(), &mut events);
        decoder.finish(&mut events);
        events
    }

    #[test]
    fn the_answer_s_id_and_model_come_first() {
        let events = decode_all(&format!(
            "{START}event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        ));
        assert_eq!(
            events[0],
            Event::Started {
                id: "m".into(),
                model: "c".into()
            }
        );
    }

    const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n";

    #[test]
    fn a_tool_block_never_stopped_at_max_tokens_is_an_error() {
        let body = format!(
            "{START}event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{\\\"a\\\": \"}}}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"max_tokens\"}},\"usage\":{{\"output_tokens\":9}}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        );
        let events = decode(&body);
        assert!(matches!(events[0], Event::ToolCallStart { .. }));
        assert!(matches!(
            &events[1],
            Event::Error(LlmError::IncompleteToolInput { stop_reason, .. }) if stop_reason == "max_tokens"
        ));
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn invalid_tool_json_at_tool_use_is_invalid_input() {
        let body = format!(
            "{START}event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{]\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"tool_use\"}},\"usage\":{{\"output_tokens\":9}}}}\n\n"
        );
        let events = decode(&body);
        assert!(
            matches!(&events[1], Event::Error(LlmError::InvalidToolInput { id, .. }) if id == "t1")
        );
    }

    #[test]
    fn unknown_events_and_blocks_are_tolerated() {
        let body = format!(
            "{START}event: brand_new\ndata: {{\"type\":\"brand_new\",\"x\":1}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"s\",\"content\":[]}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"pause_turn\"}},\"usage\":{{\"output_tokens\":2}}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        );
        let events = decode(&body);
        assert_eq!(
            events,
            [
                Event::Usage(Usage {
                    input_tokens: 5,
                    output_tokens: 2,
                    ..Default::default()
                }),
                Event::Done {
                    stop_reason: StopReason::Other("pause_turn".into())
                }
            ]
        );
    }

    #[test]
    fn undecodable_json_is_a_decode_error() {
        let events = decode(&format!("{START}event: message_delta\ndata: {{nope\n\n"));
        assert!(matches!(
            &events[..],
            [Event::Error(LlmError::Decode { .. })]
        ));
    }
}
