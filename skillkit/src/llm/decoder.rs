//! [`Decoder`]: network bytes → server-sent events → vendor events →
//! universal [`Event`]s, for any vendor whose events are [`FromSse`] and
//! [`Streamable`].

use crate::llm::sse::{Frame, SseDecoder};
use crate::llm::{Accumulator, Event, LlmError, Streamable};

/// A vendor event that arrives as one server-sent event.
///
/// ```
/// use skillkit::llm::{FromSse, LlmError, sse::Frame};
/// struct Text(String);
/// impl FromSse for Text {
///     fn from_sse(frame: Frame<'_>) -> Result<Option<Self>, LlmError> {
///         Ok((frame.event != "ping").then(|| Text(frame.data.to_owned())))
///     }
/// }
/// let ping = Frame { event: "ping", data: "" };
/// assert!(Text::from_sse(ping).unwrap().is_none());
/// ```
pub trait FromSse: Sized {
    /// The vendor event in `frame`; `None` for frames that carry nothing
    /// (pings, unknown event types); an error for a frame that cannot be read.
    fn from_sse(frame: Frame<'_>) -> Result<Option<Self>, LlmError>;
}

/// Decodes one response's bytes, fed in whatever pieces the network gives,
/// into universal events.
///
/// After the first [`Event::Error`] or [`Event::Done`] it yields nothing more.
///
/// ```
/// use skillkit::llm::{Event, anthropic};
/// let body = concat!(
///     "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
///     "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
///     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
/// );
/// let mut decoder = anthropic::Decoder::new();
/// let mut events = Vec::new();
/// decoder.feed(body.as_bytes(), &mut events);
/// assert_eq!(events, [Event::delta("Hi")]);
/// decoder.finish(&mut events); // no message_stop: the answer is incomplete
/// assert!(matches!(events[1], Event::Error(_)));
/// ```
pub struct Decoder<E: Streamable> {
    sse: SseDecoder,
    acc: E::Accumulator,
    ended: bool,
}

impl<E: Streamable + FromSse> Default for Decoder<E> {
    fn default() -> Self {
        Decoder {
            sse: SseDecoder::new(),
            acc: E::Accumulator::default(),
            ended: false,
        }
    }
}

impl<E: Streamable + FromSse> std::fmt::Debug for Decoder<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("vendor_event", &std::any::type_name::<E>())
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl<E: Streamable + FromSse> Decoder<E> {
    /// A decoder at the start of a response.
    ///
    /// ```
    /// let decoder = skillkit::llm::openai::Decoder::new();
    /// assert!(!decoder.has_ended());
    /// ```
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Decodes `bytes`, appending the events they complete to `events`.
    ///
    /// ```
    /// let mut decoder = skillkit::llm::openai::Decoder::new();
    /// let mut events = Vec::new();
    /// decoder.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n", &mut events);
    /// assert_eq!(events, [skillkit::llm::Event::delta("Hi")]);
    /// ```
    pub fn feed(&mut self, bytes: &[u8], events: &mut Vec<Event>) {
        if self.ended {
            return;
        }
        let Decoder { sse, acc, ended } = self;
        sse.feed(bytes, |frame| on_frame::<E>(frame, acc, ended, events));
    }

    /// Ends the response: appends an [`Event::Error`] when it stopped before
    /// the vendor marked the answer complete.
    ///
    /// ```
    /// let mut decoder = skillkit::llm::anthropic::Decoder::new();
    /// let mut events = Vec::new();
    /// decoder.finish(&mut events);
    /// assert!(matches!(events[..], [skillkit::llm::Event::Error(skillkit::llm::LlmError::Truncated { .. })]));
    /// ```
    pub fn finish(&mut self, events: &mut Vec<Event>) {
        if self.ended {
            return;
        }
        let Decoder { sse, acc, ended } = self;
        sse.finish(|frame| on_frame::<E>(frame, acc, ended, events));
        if !*ended {
            self.ended = true;
            self.acc.finish(events);
        }
    }

    /// Whether the response is over: complete, failed, or finished.
    ///
    /// ```
    /// assert!(!skillkit::llm::anthropic::Decoder::new().has_ended());
    /// ```
    pub fn has_ended(&self) -> bool {
        self.ended
    }
}

fn on_frame<E: Streamable + FromSse>(
    frame: Frame<'_>,
    acc: &mut E::Accumulator,
    ended: &mut bool,
    events: &mut Vec<Event>,
) {
    if *ended {
        return;
    }
    let start = events.len();
    match E::from_sse(frame) {
        Ok(Some(event)) => event.stream(acc, events),
        Ok(None) => {}
        Err(error) => events.push(Event::Error(error)),
    }
    if let Some(at) = events[start..].iter().position(Event::is_terminal) {
        events.truncate(start + at + 1);
        *ended = true;
    } else if acc.is_complete() {
        *ended = true;
    }
}
