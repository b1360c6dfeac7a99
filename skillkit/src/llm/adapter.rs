//! [`Adapter`]: what every adapter implements.

use std::pin::Pin;

use futures::Stream;

use crate::llm::{Event, LlmError, Options, Request};

/// The events of one answer. A failure after streaming began arrives as an
/// [`Event::Error`], the last event. Dropping the stream cancels the request.
pub type EventStream = Pin<Box<dyn Stream<Item = Event> + Send>>;

/// A model vendor's adapter: encodes a [`Request`] for the vendor, sends it,
/// and turns the answer into universal [`Event`]s.
///
/// Object-safe: a [`Registry`](crate::llm::Registry) holds `Arc<dyn Adapter>`.
///
/// ```
/// use futures::StreamExt;
/// use skillkit::llm::{Event, EventStream, LlmError, Adapter, Request, StopReason, Usage};
///
/// /// Answers every request with "pong".
/// struct Pong;
///
/// #[skillkit::async_trait]
/// impl Adapter for Pong {
///     fn name(&self) -> &str { "pong" }
///     async fn stream(&self, _request: Request) -> Result<EventStream, LlmError> {
///         let events = vec![
///             Event::delta("pong"),
///             Event::Usage(Usage::default()),
///             Event::Done { stop_reason: StopReason::EndTurn },
///         ];
///         Ok(Box::pin(futures::stream::iter(events)))
///     }
/// }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let events: Vec<Event> = Pong.stream(Request::default()).await.unwrap().collect().await;
/// assert_eq!(events[0], Event::delta("pong"));
/// # });
/// ```
#[async_trait::async_trait]
pub trait Adapter: Send + Sync {
    /// A short name for logs and errors (`anthropic`, `openai`, …).
    fn name(&self) -> &str;

    /// The model used when a request names none.
    fn default_model(&self) -> Option<&str> {
        None
    }

    /// Where requests go (`https://api.anthropic.com`), for traces'
    /// `server.address`; `None` for an adapter that sends nothing over a
    /// network.
    fn base_url(&self) -> Option<&str> {
        None
    }

    /// Whether a request with `options` could be sent at all (for example:
    /// an API key is configured), checked before any request so an agent
    /// says what is missing at start. `Ok` by default.
    ///
    /// ```
    /// use skillkit::llm::{Adapter, Options, anthropic::Anthropic};
    /// let keyed = Options { api_key: Some("sk-test".into()), ..Default::default() };
    /// assert!(Anthropic::new().check(&keyed).is_ok());
    /// ```
    fn check(&self, options: &Options) -> Result<(), LlmError> {
        let _ = options;
        Ok(())
    }

    /// Sends `request` and streams the answer. An `Err` means nothing was
    /// streamed: no key, a bad request, retries exhausted.
    async fn stream(&self, request: Request) -> Result<EventStream, LlmError>;
}

/// Shows the adapter's name, so results holding a provider can be printed.
impl std::fmt::Debug for dyn Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Adapter")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}
