//! The LLM layer: adapters turn a vendor's streamed answer into universal
//! [`Event`]s, and a [`Registry`] picks the adapter from a model URI such as
//! `anthropic://claude-sonnet-4-6?max_tokens=4096`.
//!
//! The layers, for every vendor: the vendor's own wire types (they know
//! nothing of SkillKit) → [`Streamable`] (one vendor event + an
//! [`Accumulator`] → universal events) → [`Event`]. An adapter
//! ([`anthropic::Anthropic`], [`openai::OpenAi`], [`Scripted`], your own
//! [`Adapter`]) is the thin glue: it encodes [`Message`]s for the vendor, sends
//! them, and wires the answer through `Streamable`. To write your own for a
//! vendor that streams server-sent events, [`sse`] reads the stream.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use skillkit::llm::{Message, Registry, Request, Response, Scripted};
//!
//! let script = Scripted::new().text("Hello!");
//! let registry = Registry::new().with("scripted", script.clone());
//! let events = registry
//!     .stream("scripted://any-model?temperature=0", Request::new(vec![Message::user("Hi")]))
//!     .await
//!     .unwrap();
//! let response = Response::collect(events).await.unwrap();
//! assert_eq!(response.message.text, "Hello!");
//! assert_eq!(script.requests()[0].options.temperature, Some(0.0));
//! # });
//! ```

mod adapter;
#[cfg(feature = "llm")]
#[cfg_attr(docsrs, doc(cfg(feature = "llm")))]
pub mod anthropic;
mod decoder;
#[cfg(feature = "llm")]
mod endpoint;
mod error;
mod event;
mod message;
#[cfg(feature = "llm")]
#[cfg_attr(docsrs, doc(cfg(feature = "llm")))]
pub mod openai;
mod registry;
#[cfg(feature = "llm")]
mod replay;
mod request;
mod response;
mod scripted;
pub mod sse;
#[cfg(feature = "llm")]
mod transport;

/// Retries of a request, shared with the GitHub client: [`crate::retry`].
#[cfg(feature = "llm")]
#[cfg_attr(docsrs, doc(cfg(feature = "llm")))]
pub use crate::retry::RetryPolicy;
pub use adapter::{Adapter, EventStream};
pub use error::LlmError;
pub use event::{Accumulator, Event, StopReason, Streamable, Usage};
pub use message::{AssistantMessage, Compaction, KeptSkill, Message, ToolCall, ToolResult};
pub use registry::{ModelUri, Registry};
pub use request::{ApiKey, ClearToolUses, Options, Request};
pub use response::Response;
pub use scripted::{Reply, Rule, Scripted};

/// Names that left the LLM layer's public API; each must fail to compile.
///
/// ```compile_fail
/// use skillkit::llm::LlmProvider; // now `skillkit::llm::Adapter`
/// ```
///
/// ```compile_fail
/// use skillkit::llm::anthropic::wire; // the API's own types are the adapter's business
/// ```
///
/// ```compile_fail
/// use skillkit::llm::openai::wire;
/// ```
///
/// ```compile_fail
/// use skillkit::llm::anthropic::Decoder; // `Anthropic::replay` decodes a recorded body
/// ```
///
/// ```compile_fail
/// use skillkit::llm::openai::Decoder; // `OpenAi::replay` decodes a recorded body
/// ```
///
/// ```compile_fail
/// use skillkit::llm::anthropic::Accumulator; // one `Accumulator`: the trait
/// ```
///
/// ```compile_fail
/// use skillkit::llm::openai::Accumulator;
/// ```
///
/// ```compile_fail
/// use skillkit::llm::Decoder; // now `skillkit::llm::sse::Decoder`
/// ```
///
/// ```compile_fail
/// use skillkit::llm::FromSse; // now `skillkit::llm::sse::FromSse`
/// ```
///
/// ```compile_fail
/// use skillkit::llm::sse::SseDecoder; // the framing inside `sse::Decoder`
/// ```
///
/// ```compile_fail
/// let _ = skillkit::llm::StopReason::from_openai("stop"); // the OpenAI adapter's own vocabulary
/// ```
#[cfg(doctest)]
pub struct RemovedNames;
