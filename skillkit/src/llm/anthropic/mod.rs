//! The Anthropic Messages API adapter.
//!
//! Layers, as for every adapter: `wire` holds the API's own types (they know
//! nothing of SkillKit); `encode` turns SkillKit messages into a request body;
//! the [`Streamable`](crate::llm::Streamable) impl of `wire::StreamEvent`
//! turns the API's events into universal events (`delta` reads the bulk of
//! them fast); [`Anthropic`] is the glue.

mod delta;
mod encode;
mod streamable;
mod wire;

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};

use crate::llm::endpoint::{Endpoint, EndpointConfig, json_body, secret_header};
use crate::llm::transport::{self, HttpRequest};
use crate::llm::{Adapter, ApiKey, EventStream, LlmError, Options, Request};

/// Decodes an Anthropic response body into universal events.
#[cfg(test)]
type Decoder = crate::llm::sse::Decoder<wire::StreamEvent>;

/// The environment variable read for the API key when none is configured.
pub const API_KEY_VARIABLE: &str = "ANTHROPIC_API_KEY";
/// The API's address.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The model used when a request names none.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-6";
/// `max_tokens` when neither the request nor the URI sets it (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
const API_VERSION: &str = "2023-06-01";
/// The beta that lets the API edit the context (`context_management`).
const CONTEXT_MANAGEMENT: &str = "context-management-2025-06-27";

/// The Anthropic adapter: `POST {base_url}/v1/messages` with `stream: true`.
///
/// The API key comes from the request options, else the adapter's
/// configuration, else `ANTHROPIC_API_KEY` (read at request time); with none,
/// [`stream`](Adapter::stream) fails before sending anything.
///
/// ```
/// use skillkit::llm::{LlmError, Adapter, Message, Request, anthropic::Anthropic};
/// let adapter = Anthropic::builder().base_url("http://127.0.0.1:9").api_key("sk-test").build();
/// assert_eq!(adapter.default_model(), Some("claude-sonnet-4-6"));
/// assert!(!format!("{adapter:?}").contains("sk-test"));
/// ```
#[derive(Debug, Clone)]
pub struct Anthropic {
    endpoint: Endpoint,
}

impl Default for Anthropic {
    fn default() -> Self {
        Anthropic::builder().build()
    }
}

impl Anthropic {
    /// The adapter with default settings: `ANTHROPIC_BASE_URL` or the public
    /// API, the key from `ANTHROPIC_API_KEY`.
    ///
    /// ```
    /// let adapter = skillkit::llm::anthropic::Anthropic::new();
    /// # let _ = adapter;
    /// ```
    pub fn new() -> Self {
        Anthropic::default()
    }

    /// A builder to set the address, key, defaults, retries and timeouts.
    ///
    /// ```
    /// use std::time::Duration;
    /// let adapter = skillkit::llm::anthropic::Anthropic::builder()
    ///     .default_model("claude-haiku-4-5")
    ///     .max_tokens(1024)
    ///     .idle_timeout(Duration::from_secs(60))
    ///     .build();
    /// # let _ = adapter;
    /// ```
    pub fn builder() -> AnthropicBuilder {
        AnthropicBuilder::default()
    }

    /// The events of a recorded Messages API answer: its server-sent events
    /// body, in the pieces it came in, decoded exactly as [`stream`](Adapter::stream)
    /// decodes a live one. For tests and offline demos that replay real
    /// answers, and for bodies fetched by an HTTP client of your own.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use skillkit::llm::{Response, anthropic::Anthropic};
    /// let body = concat!(
    ///     "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
    ///     "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    ///     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
    ///     "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    ///     "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
    ///     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    /// );
    /// // Split anywhere, as a network splits it.
    /// let events = Anthropic::replay(body.as_bytes().chunks(7));
    /// let response = Response::collect(events).await.unwrap();
    /// assert_eq!(response.message.text, "Hi");
    /// assert_eq!(response.usage.output_tokens, 2);
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

/// Configures an [`Anthropic`] adapter.
///
/// ```
/// let adapter = skillkit::llm::anthropic::Anthropic::builder()
///     .retry(skillkit::RetryPolicy::none())
///     .build();
/// # let _ = adapter;
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicBuilder {
    config: EndpointConfig,
}

impl Default for AnthropicBuilder {
    fn default() -> Self {
        let defaults = Options {
            max_tokens: Some(DEFAULT_MAX_TOKENS),
            ..Default::default()
        };
        AnthropicBuilder {
            config: EndpointConfig::new(DEFAULT_MODEL, defaults, Duration::from_secs(120)),
        }
    }
}

impl AnthropicBuilder {
    crate::llm::endpoint::endpoint_builder_methods!(
        adapter: "skillkit::llm::anthropic::Anthropic",
        base_url: "`ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`",
        example_url: "http://127.0.0.1:8080",
        model: "claude-opus-4-1",
        idle: "120 s"
    );

    /// `max_tokens` when neither the request nor the model URI sets it.
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder().max_tokens(8192);
    /// # let _ = b;
    /// ```
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.config.defaults.max_tokens = Some(max_tokens);
        self
    }

    /// The adapter.
    ///
    /// ```
    /// let adapter = skillkit::llm::anthropic::Anthropic::builder().build();
    /// # let _ = adapter;
    /// ```
    pub fn build(self) -> Anthropic {
        Anthropic {
            endpoint: self.config.build("ANTHROPIC_BASE_URL", DEFAULT_BASE_URL),
        }
    }
}

#[async_trait::async_trait]
impl Adapter for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn default_model(&self) -> Option<&str> {
        Some(&self.endpoint.default_model)
    }

    fn base_url(&self) -> Option<&str> {
        Some(&self.endpoint.base_url)
    }

    fn check(&self, options: &Options) -> Result<(), LlmError> {
        match options.api_key.is_some()
            || self.endpoint.api_key.is_some()
            || ApiKey::from_env(API_KEY_VARIABLE).is_some()
        {
            true => Ok(()),
            false => Err(LlmError::MissingApiKey {
                provider: self.name().into(),
                variable: API_KEY_VARIABLE.into(),
            }),
        }
    }

    async fn stream(&self, mut request: Request) -> Result<EventStream, LlmError> {
        let provider = self.name();
        let key = self
            .endpoint
            .resolve(&mut request, API_KEY_VARIABLE)
            .ok_or_else(|| LlmError::MissingApiKey {
                provider: provider.into(),
                variable: API_KEY_VARIABLE.into(),
            })?;
        let Request {
            model,
            messages,
            tools,
            options,
        } = request;
        let max_tokens = options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let body = encode::encode(&model, &messages, &tools, &options, max_tokens);
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", secret_header(provider, key.expose())?);
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        if body.context_management.is_some() {
            headers.insert(
                "anthropic-beta",
                HeaderValue::from_static(CONTEXT_MANAGEMENT),
            );
        }
        let request = HttpRequest {
            provider: "anthropic",
            model,
            url: format!("{}/v1/messages", self.endpoint.base_url),
            headers,
            body: json_body(provider, &body)?,
        };
        transport::stream::<wire::StreamEvent>(self.endpoint.http.clone(), request).await
    }
}
