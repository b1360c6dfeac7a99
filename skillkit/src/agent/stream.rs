//! One model answer, streamed: its events forwarded as they come, the
//! assistant message assembled with full tool names.

use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::EventKind;
use crate::agent::run::{AgentRun, Outcome};
use crate::agent::spans::Chat;
use crate::dispatch::toolset::ToolSet;
use crate::llm::{AssistantMessage, Event, Request, ToolCall};

impl AgentRun {
    /// Streams one answer, forwarding its events; the assistant message with
    /// full tool names.
    pub(super) async fn stream(
        &mut self,
        request: Request,
        tools: &ToolSet,
        cancel: &CancellationToken,
    ) -> Result<AssistantMessage, Outcome> {
        let span = self.chat_span(&request);
        let chat = Chat::new(span.clone(), self.model.adapter.name(), &request);
        let streamed = self
            .stream_in(request, tools, cancel, &chat)
            .instrument(span)
            .await;
        match &streamed {
            Ok(message) => chat.answered(message),
            Err(Outcome::Failed(error)) => chat.failed(&error.kind()),
            Err(_) => chat.failed("cancelled"),
        }
        streamed
    }

    async fn stream_in(
        &mut self,
        request: Request,
        tools: &ToolSet,
        cancel: &CancellationToken,
        chat: &Chat,
    ) -> Result<AssistantMessage, Outcome> {
        let adapter = Arc::clone(&self.model.adapter);
        let started = tokio::select! {
            started = adapter.stream(request) => started,
            () = cancel.cancelled() => return Err(Outcome::Cancelled),
        };
        let mut events = started.map_err(|e| Outcome::Failed(e.into()))?;
        let mut message = AssistantMessage::default();
        // The ids of the calls in the order the model began them.
        let mut began: Vec<String> = Vec::new();
        let full = |wire: &str| {
            tools
                .find(wire)
                .map_or(wire, |found| found.display())
                .to_owned()
        };
        loop {
            let event = tokio::select! {
                event = events.next() => event,
                // Dropping the stream closes the connection.
                () = cancel.cancelled() => return Err(Outcome::Cancelled),
            };
            chat.observe(event.as_ref());
            match event {
                Some(Event::Started { .. }) => {}
                Some(Event::Delta { text }) => {
                    message.text.push_str(&text);
                    self.emit(EventKind::Delta { text });
                }
                Some(Event::ToolCallStart { id, name }) => {
                    began.push(id.clone());
                    let name = full(&name);
                    self.emit(EventKind::ToolCallStart { id, name });
                }
                Some(Event::ToolCallComplete { id, name, input }) => {
                    // History keeps full names (sub-agent tools as `agent:<name>`).
                    let stored = tools
                        .find(&name)
                        .map_or(name.clone(), |found| found.full.to_owned());
                    self.emit(EventKind::ToolCallComplete {
                        id: id.clone(),
                        name: full(&name),
                        input: input.clone(),
                    });
                    // Calls keep the model's order, though parallel calls
                    // may complete out of it (Anthropic blocks stop in any order).
                    let rank = |id: &str| began.iter().position(|b| b == id).unwrap_or(usize::MAX);
                    let at = message
                        .tool_calls
                        .partition_point(|call| rank(&call.id) <= rank(&id));
                    message
                        .tool_calls
                        .insert(at, ToolCall::new(id, stored, input));
                }
                Some(Event::Usage(usage)) => {
                    self.total += usage;
                    self.last_usage = Some(usage);
                    self.emit(EventKind::Usage {
                        request: usage,
                        total: self.total,
                    });
                }
                Some(Event::Done { .. }) | None => return Ok(message),
                Some(Event::Error(error)) => return Err(Outcome::Failed(error.into())),
            }
        }
    }
}
