//! [`Response`]: a whole answer, gathered from its events.

use futures::{Stream, StreamExt};

use crate::llm::{AssistantMessage, Event, LlmError, StopReason, ToolCall, Usage};

/// A complete answer: the assistant message (text and tool calls, in the
/// order the calls started), the token counts and the stop reason.
///
/// ```
/// use skillkit::llm::{Event, Response, StopReason, Usage};
/// let events = vec![
///     Event::delta("Hel"),
///     Event::delta("lo"),
///     Event::Usage(Usage { input_tokens: 4, output_tokens: 2, ..Default::default() }),
///     Event::Done { stop_reason: StopReason::EndTurn },
/// ];
/// let response = Response::from_events(events).unwrap();
/// assert_eq!(response.message.text, "Hello");
/// assert_eq!(response.usage.output_tokens, 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The text and tool calls.
    pub message: AssistantMessage,
    /// Token counts.
    pub usage: Usage,
    /// Why the model stopped.
    pub stop_reason: StopReason,
}

impl Response {
    /// Reads `events` to the end. An [`Event::Error`], or an end without
    /// [`Event::Done`], is an error.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::llm::{Event, LlmError, Response};
    /// let failing = futures::stream::iter(vec![Event::delta("a"), Event::Error(LlmError::Truncated { provider: "x".into() })]);
    /// assert!(Response::collect(failing).await.is_err());
    /// # });
    /// ```
    pub async fn collect(events: impl Stream<Item = Event>) -> Result<Response, LlmError> {
        let mut builder = Builder::default();
        let mut events = std::pin::pin!(events);
        while let Some(event) = events.next().await {
            if let Some(done) = builder.push(event) {
                return done;
            }
        }
        builder.end()
    }

    /// The same as [`collect`](Response::collect), for events already at hand.
    ///
    /// ```
    /// let err = skillkit::llm::Response::from_events(vec![skillkit::llm::Event::delta("a")]).unwrap_err();
    /// assert!(matches!(err, skillkit::llm::LlmError::Truncated { .. }));
    /// ```
    pub fn from_events(events: impl IntoIterator<Item = Event>) -> Result<Response, LlmError> {
        let mut builder = Builder::default();
        for event in events {
            if let Some(done) = builder.push(event) {
                return done;
            }
        }
        builder.end()
    }
}

#[derive(Default)]
struct Builder {
    message: AssistantMessage,
    usage: Usage,
    /// Tool-call ids in the order the calls started: the order of the
    /// message, whatever order their inputs completed in.
    started: Vec<String>,
}

impl Builder {
    /// `Some` once the answer is over.
    fn push(&mut self, event: Event) -> Option<Result<Response, LlmError>> {
        match event {
            Event::Delta { text } => self.message.text.push_str(&text),
            Event::ToolCallComplete { id, name, input } => {
                self.message.tool_calls.push(ToolCall { id, name, input })
            }
            Event::Usage(usage) => self.usage = usage,
            Event::Done { stop_reason } => {
                let started = &self.started;
                self.message.tool_calls.sort_by_key(|call| {
                    started
                        .iter()
                        .position(|id| *id == call.id)
                        .unwrap_or(usize::MAX)
                });
                return Some(Ok(Response {
                    message: std::mem::take(&mut self.message),
                    usage: self.usage,
                    stop_reason,
                }));
            }
            Event::Error(error) => return Some(Err(error)),
            Event::ToolCallStart { id, .. } => self.started.push(id),
            Event::Started { .. } => {}
        }
        None
    }

    fn end(self) -> Result<Response, LlmError> {
        Err(LlmError::Truncated {
            provider: "unknown".into(),
        })
    }
}
