//! The OpenAI-compatible chat completions adapter: OpenAI itself, and local
//! servers that speak the same API (Ollama, llama.cpp, vLLM) through
//! `base_url`.
//!
//! Written by following `docs/llm-providers.md`: `wire` holds the API's
//! types, `encode` builds the request, the [`Streamable`](crate::llm::Streamable)
//! impl of `wire::StreamEvent` assembles tool calls from fragments keyed by
//! `index`, and [`OpenAi`] is the glue.

mod encode;
mod streamable;
mod wire;

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};

use crate::llm::endpoint::{Endpoint, EndpointConfig, json_body, secret_header};
use crate::llm::transport::{self, HttpRequest};
use crate::llm::{Adapter, EventStream, LlmError, Options, Request};

/// Decodes an OpenAI-compatible response body into universal events.
#[cfg(test)]
type Decoder = crate::llm::sse::Decoder<wire::StreamEvent>;

/// The environment variable read for the API key when none is configured.
pub const API_KEY_VARIABLE: &str = "OPENAI_API_KEY";
/// The API's address.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The model used when a request names none.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// Which request field carries `max_tokens`.
///
/// ```
/// let b = skillkit::llm::openai::OpenAi::builder()
///     .max_tokens_field(skillkit::llm::openai::MaxTokensField::MaxCompletionTokens);
/// # let _ = b;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_tokens`: understood by every compatible server (the default).
    #[default]
    MaxTokens,
    /// `max_completion_tokens`: required by OpenAI's reasoning models.
    MaxCompletionTokens,
}

/// The OpenAI-compatible adapter: `POST {base_url}/chat/completions` with
/// `stream: true`.
///
/// The API key comes from the request options, else the adapter's
/// configuration, else `OPENAI_API_KEY`; with none, no `Authorization`
/// header is sent (local servers need none).
///
/// ```
/// use skillkit::llm::{Adapter, openai::OpenAi};
/// let ollama = OpenAi::builder()
///     .base_url("http://localhost:11434/v1")
///     .default_model("llama3.1:8b")
///     .build();
/// assert_eq!(ollama.default_model(), Some("llama3.1:8b"));
/// ```
#[derive(Debug, Clone)]
pub struct OpenAi {
    endpoint: Endpoint,
    max_tokens_field: MaxTokensField,
    include_usage: bool,
}

impl Default for OpenAi {
    fn default() -> Self {
        OpenAi::builder().build()
    }
}

impl OpenAi {
    /// The adapter with default settings: `OPENAI_BASE_URL` or the public
    /// API, the key from `OPENAI_API_KEY`.
    ///
    /// ```
    /// let adapter = skillkit::llm::openai::OpenAi::new();
    /// # let _ = adapter;
    /// ```
    pub fn new() -> Self {
        OpenAi::default()
    }

    /// A builder to set the address, key, defaults, retries and timeouts.
    ///
    /// ```
    /// let adapter = skillkit::llm::openai::OpenAi::builder().api_key("sk-…").build();
    /// # let _ = adapter;
    /// ```
    pub fn builder() -> OpenAiBuilder {
        OpenAiBuilder::default()
    }

    /// The events of a recorded chat completions answer: its server-sent
    /// events body, in the pieces it came in, decoded exactly as
    /// [`stream`](Adapter::stream) decodes a live one. For tests and offline
    /// demos that replay real answers, and for bodies fetched by an HTTP
    /// client of your own.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use futures::StreamExt;
    /// use skillkit::llm::{Event, StopReason, openai::OpenAi};
    /// let body = concat!(
    ///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n",
    ///     "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    ///     "data: [DONE]\n\n",
    /// );
    /// let events: Vec<Event> = OpenAi::replay([body]).collect().await;
    /// assert_eq!(events[0], Event::delta("Hi"));
    /// assert_eq!(events.last(), Some(&Event::Done { stop_reason: StopReason::EndTurn }));
    /// # });
    /// ```
    pub fn replay<I>(body: I) -> EventStream
    where
        I: IntoIterator,
        I::IntoIter: Send + 'static,
        I::Item: AsRef<[u8]>,
    {
        crate::llm::replay::replay::<wire::StreamEvent, I>(body)
    }
}

/// Configures an [`OpenAi`] adapter.
///
/// ```
/// let adapter = skillkit::llm::openai::OpenAi::builder()
///     .base_url("http://localhost:8080/v1")
///     .include_usage(false)
///     .build();
/// # let _ = adapter;
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiBuilder {
    config: EndpointConfig,
    max_tokens_field: MaxTokensField,
    include_usage: bool,
}

impl Default for OpenAiBuilder {
    fn default() -> Self {
        OpenAiBuilder {
            config: EndpointConfig::new(
                DEFAULT_MODEL,
                Options::default(),
                Duration::from_secs(300),
            ),
            max_tokens_field: MaxTokensField::default(),
            include_usage: true,
        }
    }
}

impl OpenAiBuilder {
    crate::llm::endpoint::endpoint_builder_methods!(
        adapter: "skillkit::llm::openai::OpenAi",
        base_url: "`OPENAI_BASE_URL`, else `https://api.openai.com/v1`; up to and including `/v1`",
        example_url: "http://localhost:8000/v1",
        model: "qwen2.5:7b",
        idle: "300 s: a local server may load the model first"
    );

    /// Which field carries `max_tokens` (default `max_tokens`).
    ///
    /// ```
    /// let b = skillkit::llm::openai::OpenAi::builder()
    ///     .max_tokens_field(skillkit::llm::openai::MaxTokensField::MaxTokens);
    /// # let _ = b;
    /// ```
    pub fn max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = field;
        self
    }

    /// Whether to ask for token counts with `stream_options.include_usage`
    /// (default yes; turn off for servers that reject the field).
    ///
    /// ```
    /// let b = skillkit::llm::openai::OpenAi::builder().include_usage(false);
    /// # let _ = b;
    /// ```
    pub fn include_usage(mut self, include: bool) -> Self {
        self.include_usage = include;
        self
    }

    /// The adapter.
    ///
    /// ```
    /// let adapter = skillkit::llm::openai::OpenAi::builder().build();
    /// # let _ = adapter;
    /// ```
    pub fn build(self) -> OpenAi {
        OpenAi {
            endpoint: self.config.build("OPENAI_BASE_URL", DEFAULT_BASE_URL),
            max_tokens_field: self.max_tokens_field,
            include_usage: self.include_usage,
        }
    }
}

#[async_trait::async_trait]
impl Adapter for OpenAi {
    fn name(&self) -> &str {
        "openai"
    }

    fn default_model(&self) -> Option<&str> {
        Some(&self.endpoint.default_model)
    }

    fn base_url(&self) -> Option<&str> {
        Some(&self.endpoint.base_url)
    }

    async fn stream(&self, mut request: Request) -> Result<EventStream, LlmError> {
        let provider = self.name();
        let key = self.endpoint.resolve(&mut request, API_KEY_VARIABLE);
        let Request {
            model,
            messages,
            tools,
            options,
        } = request;
        let dialect = encode::Dialect {
            max_tokens_field: self.max_tokens_field,
            include_usage: self.include_usage,
        };
        let body = encode::encode(&model, &messages, &tools, &options, &dialect);
        let mut headers = HeaderMap::new();
        if let Some(key) = key {
            let bearer = format!("Bearer {}", key.expose());
            headers.insert("authorization", secret_header(provider, &bearer)?);
        }
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        let request = HttpRequest {
            provider: "openai",
            model,
            url: format!("{}/chat/completions", self.endpoint.base_url),
            headers,
            body: json_body(provider, &body)?,
        };
        transport::stream::<wire::StreamEvent>(self.endpoint.http.clone(), request).await
    }
}
