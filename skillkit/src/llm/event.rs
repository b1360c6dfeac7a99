//! Universal events: what every provider's stream turns into, whoever the vendor.

use std::fmt;

use serde_json::Value;

use crate::llm::LlmError;

/// One step of a model's answer, the same for every vendor.
///
/// A well-formed stream is any number of [`Delta`](Event::Delta),
/// [`ToolCallStart`](Event::ToolCallStart) and
/// [`ToolCallComplete`](Event::ToolCallComplete) events, then one
/// [`Usage`](Event::Usage) and one [`Done`](Event::Done). A stream that fails
/// ends with one [`Error`](Event::Error) instead of `Done`.
///
/// ```
/// use skillkit::llm::{Event, StopReason};
/// let events = [Event::delta("Hi"), Event::Done { stop_reason: StopReason::EndTurn }];
/// assert!(events[1].is_terminal());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The vendor began the answer: its id for the answer and the model that
    /// answers (for traces; either may be empty). A request retried before
    /// anything else arrived begins again with another.
    Started {
        /// The vendor's id of the answer.
        id: String,
        /// The model that answers, as the vendor names it.
        model: String,
    },
    /// A piece of the answer's text.
    Delta {
        /// The text, to append to what came before.
        text: String,
    },
    /// The model began a tool call; its input follows in
    /// [`ToolCallComplete`](Event::ToolCallComplete).
    ToolCallStart {
        /// The id the model gave the call; a tool result answers it.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A tool call with its whole input.
    ToolCallComplete {
        /// The id the model gave the call.
        id: String,
        /// The tool's name.
        name: String,
        /// The input, decoded from the JSON the model wrote.
        input: Value,
    },
    /// Token counts of the whole request.
    Usage(Usage),
    /// The answer is complete.
    Done {
        /// Why the model stopped.
        stop_reason: StopReason,
    },
    /// The answer failed; nothing follows.
    Error(LlmError),
}

impl Event {
    /// A [`Delta`](Event::Delta) with `text`.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Event::delta("a"), skillkit::llm::Event::Delta { text: "a".into() });
    /// ```
    pub fn delta(text: impl Into<String>) -> Self {
        Event::Delta { text: text.into() }
    }

    /// Whether nothing follows this event: [`Done`](Event::Done) or
    /// [`Error`](Event::Error).
    ///
    /// ```
    /// assert!(!skillkit::llm::Event::delta("a").is_terminal());
    /// ```
    pub fn is_terminal(&self) -> bool {
        matches!(self, Event::Done { .. } | Event::Error(_))
    }
}

/// Token counts, as the vendor reports them.
///
/// ```
/// let usage = skillkit::llm::Usage { input_tokens: 10, output_tokens: 3, ..Default::default() };
/// assert_eq!(usage.cache_read_input_tokens, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Tokens read from the request (not counting cache reads and writes, for
    /// vendors that count those apart).
    pub input_tokens: u64,
    /// Tokens the model wrote.
    pub output_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
}

/// Adds the counts of another request, for running totals.
///
/// ```
/// let mut total = skillkit::llm::Usage::default();
/// total += skillkit::llm::Usage { input_tokens: 10, output_tokens: 3, ..Default::default() };
/// total += skillkit::llm::Usage { input_tokens: 5, output_tokens: 1, ..Default::default() };
/// assert_eq!((total.input_tokens, total.output_tokens), (15, 4));
/// ```
impl std::ops::AddAssign for Usage {
    /// Each count held at `u64::MAX` rather than wrapping: the counts come
    /// from the vendor's server, which can send any number.
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(other.cache_creation_input_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(other.cache_read_input_tokens);
    }
}

impl Usage {
    /// The input tokens with the prompt cache's reads and writes: what the
    /// request took of the context window. Held at `u64::MAX` rather than
    /// wrapping (the counts come from the vendor's server).
    ///
    /// ```
    /// let usage = skillkit::llm::Usage {
    ///     input_tokens: 10,
    ///     cache_read_input_tokens: 90,
    ///     ..Default::default()
    /// };
    /// assert_eq!(usage.input_with_cache(), 100);
    /// let huge = skillkit::llm::Usage { input_tokens: u64::MAX, ..usage };
    /// assert_eq!(huge.input_with_cache(), u64::MAX);
    /// ```
    pub fn input_with_cache(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }

    /// Every token counted: input, cache reads and writes, and output. Held
    /// at `u64::MAX` rather than wrapping.
    ///
    /// ```
    /// let usage = skillkit::llm::Usage { input_tokens: 10, output_tokens: 3, ..Default::default() };
    /// assert_eq!(usage.total(), 13);
    /// ```
    pub fn total(&self) -> u64 {
        self.input_with_cache().saturating_add(self.output_tokens)
    }
}

/// Why the model stopped.
///
/// ```
/// use skillkit::llm::StopReason;
/// assert_eq!(StopReason::from_wire("tool_use"), StopReason::ToolUse);
/// assert_eq!(StopReason::from_wire("refusal"), StopReason::Other("refusal".into()));
/// assert_eq!(StopReason::MaxTokens.as_str(), "max_tokens");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants its tool calls run.
    ToolUse,
    /// The answer hit `max_tokens`.
    MaxTokens,
    /// The model wrote one of the stop sequences.
    StopSequence,
    /// Any other reason, as the vendor gave it.
    Other(String),
}

impl StopReason {
    /// The reason for a vendor's word, in Anthropic's vocabulary
    /// (`end_turn`, `tool_use`, `max_tokens`, `stop_sequence`).
    ///
    /// ```
    /// assert_eq!(skillkit::llm::StopReason::from_wire("end_turn"), skillkit::llm::StopReason::EndTurn);
    /// ```
    pub fn from_wire(reason: &str) -> Self {
        match reason {
            "end_turn" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            other => StopReason::Other(other.to_owned()),
        }
    }

    /// The reason in Anthropic's vocabulary; [`Other`](StopReason::Other) as given.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::StopReason::ToolUse.as_str(), "tool_use");
    /// ```
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::Other(other) => other,
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Turns one vendor event into universal [`Event`]s.
///
/// This is the seam between a vendor's own event types (which know nothing of
/// SkillKit) and the rest of SkillKit: one impl per vendor event type, with an
/// accumulator for state that spans events (tool-call JSON arriving in
/// fragments, per content-block index).
///
/// ```
/// use skillkit::llm::{Accumulator, Event, Streamable};
///
/// /// A vendor's event, from its own crate.
/// enum Chunk { Text(String), End }
///
/// #[derive(Default)]
/// struct Seen { ended: bool }
///
/// impl Accumulator for Seen {
///     fn finish(&mut self, events: &mut Vec<Event>) {
///         if !self.ended {
///             events.push(Event::Error(skillkit::llm::LlmError::Truncated { provider: "mine".into() }));
///         }
///     }
/// }
///
/// impl Streamable for Chunk {
///     type Accumulator = Seen;
///     fn stream(self, seen: &mut Seen, events: &mut Vec<Event>) {
///         match self {
///             Chunk::Text(text) => events.push(Event::delta(text)),
///             Chunk::End => {
///                 seen.ended = true;
///                 events.push(Event::Done { stop_reason: skillkit::llm::StopReason::EndTurn });
///             }
///         }
///     }
/// }
///
/// let mut seen = Seen::default();
/// let mut events = Vec::new();
/// Chunk::Text("Hi".into()).stream(&mut seen, &mut events);
/// seen.finish(&mut events);
/// assert!(matches!(events[1], Event::Error(_)));
/// ```
pub trait Streamable {
    /// The state kept across one response's events.
    type Accumulator: Accumulator;

    /// Appends the universal events this vendor event yields (often none) to
    /// `events`, updating `acc`.
    fn stream(self, acc: &mut Self::Accumulator, events: &mut Vec<Event>);
}

/// State kept across one response's vendor events.
///
/// ```
/// use skillkit::llm::{Accumulator, Event};
/// #[derive(Default)]
/// struct Nothing;
/// impl Accumulator for Nothing {
///     fn finish(&mut self, _events: &mut Vec<Event>) {}
/// }
/// let mut events = Vec::new();
/// Nothing.finish(&mut events);
/// assert!(events.is_empty());
/// ```
pub trait Accumulator: Default + Send {
    /// Called once when the vendor's stream ends: appends what the end means
    /// (an [`Event::Error`] when it ended before the answer was complete).
    fn finish(&mut self, events: &mut Vec<Event>);

    /// Whether the answer is complete, so nothing more is expected.
    fn is_complete(&self) -> bool {
        false
    }
}
