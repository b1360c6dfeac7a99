//! [`Decoder`]: network bytes → server-sent events → vendor events →
//! universal [`Event`]s, for any vendor whose events are [`FromSse`] and
//! [`Streamable`]. Public as [`crate::llm::sse`]: what an adapter of your own
//! needs to read a vendor's stream.

use crate::llm::sse::{Frame, SseDecoder};
use crate::llm::{Accumulator, Event, LlmError, Streamable};

/// A vendor event that arrives as one server-sent event.
///
/// ```
/// use skillkit::llm::{LlmError, sse::{Frame, FromSse}};
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

/// Decodes one response's bytes, fed in whatever pieces the network gives
/// (a line, a `\r\n` or a UTF-8 sequence may be split anywhere), into
/// universal events.
///
/// After the first [`Event::Error`] or [`Event::Done`] it yields nothing more;
/// [`finish`](Decoder::finish) says when the stream stopped before the vendor
/// marked the answer complete (through [`Accumulator::finish`]).
///
/// ```
/// use skillkit::llm::{Accumulator, Event, LlmError, StopReason, Streamable};
/// use skillkit::llm::sse::{Decoder, Frame, FromSse};
///
/// /// A vendor that sends `data: <text>` and, at the end, `event: end`.
/// enum Chunk { Text(String), End }
///
/// impl FromSse for Chunk {
///     fn from_sse(frame: Frame<'_>) -> Result<Option<Self>, LlmError> {
///         Ok(Some(match frame.event {
///             "end" => Chunk::End,
///             _ => Chunk::Text(frame.data.to_owned()),
///         }))
///     }
/// }
///
/// #[derive(Default)]
/// struct Ended(bool);
///
/// impl Accumulator for Ended {
///     fn finish(&mut self, events: &mut Vec<Event>) {
///         if !self.0 {
///             events.push(Event::Error(LlmError::Truncated { provider: "mine".into() }));
///         }
///     }
/// }
///
/// impl Streamable for Chunk {
///     type Accumulator = Ended;
///     fn stream(self, ended: &mut Ended, events: &mut Vec<Event>) {
///         match self {
///             Chunk::Text(text) => events.push(Event::delta(text)),
///             Chunk::End => {
///                 ended.0 = true;
///                 events.push(Event::Done { stop_reason: StopReason::EndTurn });
///             }
///         }
///     }
/// }
///
/// let mut decoder = Decoder::<Chunk>::new();
/// let mut events = Vec::new();
/// decoder.feed(b"data: He", &mut events); // half a line: nothing yet
/// decoder.feed(b"llo\n\nevent: end\ndata:\n\n", &mut events);
/// decoder.finish(&mut events);
/// assert_eq!(events, [Event::delta("Hello"), Event::Done { stop_reason: StopReason::EndTurn }]);
///
/// let mut cut = Decoder::<Chunk>::new();
/// let mut events = Vec::new();
/// cut.feed(b"data: Hel\n\n", &mut events);
/// cut.finish(&mut events); // no `end`: the answer is incomplete
/// assert!(matches!(events[1], Event::Error(LlmError::Truncated { .. })));
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
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Decodes `bytes`, appending the events they complete to `events`.
    pub fn feed(&mut self, bytes: &[u8], events: &mut Vec<Event>) {
        if self.ended {
            return;
        }
        let Decoder { sse, acc, ended } = self;
        sse.feed(bytes, |frame| on_frame::<E>(frame, acc, ended, events));
    }

    /// Ends the response: appends what the end means, from
    /// [`Accumulator::finish`] (an [`Event::Error`] when it stopped before the
    /// vendor marked the answer complete).
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
