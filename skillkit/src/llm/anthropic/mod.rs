//! The Anthropic Messages API adapter.
//!
//! Layers, as for every adapter: [`wire`] holds the API's own types (they know
//! nothing of SkillKit); `encode` turns SkillKit messages into a request body;
//! the [`Streamable`](crate::llm::Streamable) impl of [`wire::StreamEvent`]
//! turns the API's events into universal events; [`Anthropic`] is the glue.

mod encode;
mod streamable;
pub mod wire;

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};

pub use streamable::Accumulator;

use crate::llm::transport::{self, HttpRequest, HttpSettings};
use crate::llm::{ApiKey, EventStream, LlmError, LlmProvider, Options, Request, RetryPolicy};

/// Decodes an Anthropic response body into universal events.
pub type Decoder = crate::llm::Decoder<wire::StreamEvent>;

/// The environment variable read for the API key when none is configured.
pub const API_KEY_VARIABLE: &str = "ANTHROPIC_API_KEY";
/// The API's address.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The model used when a request names none.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-6";
/// `max_tokens` when neither the request nor the URI sets it (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
const API_VERSION: &str = "2023-06-01";

/// The Anthropic adapter: `POST {base_url}/v1/messages` with `stream: true`.
///
/// The API key comes from the request options, else the adapter's
/// configuration, else `ANTHROPIC_API_KEY` (read at request time); with none,
/// [`stream`](LlmProvider::stream) fails before sending anything.
///
/// ```
/// use skillkit::llm::{LlmError, LlmProvider, Message, Request, anthropic::Anthropic};
/// let adapter = Anthropic::builder().base_url("http://127.0.0.1:9").api_key("sk-test").build();
/// assert_eq!(adapter.default_model(), Some("claude-sonnet-4-6"));
/// assert!(!format!("{adapter:?}").contains("sk-test"));
/// ```
#[derive(Debug, Clone)]
pub struct Anthropic {
    base_url: String,
    api_key: Option<ApiKey>,
    default_model: String,
    defaults: Options,
    http: HttpSettings,
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
}

/// Configures an [`Anthropic`] adapter.
///
/// ```
/// let adapter = skillkit::llm::anthropic::Anthropic::builder()
///     .retry(skillkit::llm::RetryPolicy::none())
///     .build();
/// # let _ = adapter;
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicBuilder {
    base_url: Option<String>,
    api_key: Option<ApiKey>,
    default_model: String,
    defaults: Options,
    retry: RetryPolicy,
    connect_timeout: Duration,
    idle_timeout: Duration,
}

impl Default for AnthropicBuilder {
    fn default() -> Self {
        AnthropicBuilder {
            base_url: None,
            api_key: None,
            default_model: DEFAULT_MODEL.into(),
            defaults: Options {
                max_tokens: Some(DEFAULT_MAX_TOKENS),
                ..Default::default()
            },
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
        }
    }
}

impl AnthropicBuilder {
    /// Where the API is (default: `ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`).
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder().base_url("http://127.0.0.1:8080");
    /// # let _ = b;
    /// ```
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// The API key, used when the request options carry none.
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder().api_key("sk-ant-…");
    /// # let _ = b;
    /// ```
    pub fn api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The model used when a request names none.
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder().default_model("claude-opus-4-1");
    /// # let _ = b;
    /// ```
    pub fn default_model(mut self, model: impl Into<String>) -> Self {
        self.default_model = model.into();
        self
    }

    /// `max_tokens` when neither the request nor the model URI sets it.
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder().max_tokens(8192);
    /// # let _ = b;
    /// ```
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.defaults.max_tokens = Some(max_tokens);
        self
    }

    /// Options used where neither the request nor the model URI sets them.
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder()
    ///     .defaults(skillkit::llm::Options { prompt_caching: Some(true), ..Default::default() });
    /// # let _ = b;
    /// ```
    pub fn defaults(mut self, defaults: Options) -> Self {
        self.defaults = defaults.or(&self.defaults);
        self
    }

    /// How failed requests are retried.
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder().retry(skillkit::llm::RetryPolicy::none());
    /// # let _ = b;
    /// ```
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The longest wait for a connection (default 10 s).
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder().connect_timeout(std::time::Duration::from_secs(3));
    /// # let _ = b;
    /// ```
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The longest silence while waiting for the response or between two
    /// pieces of the stream (default 120 s).
    ///
    /// ```
    /// let b = skillkit::llm::anthropic::Anthropic::builder().idle_timeout(std::time::Duration::from_secs(30));
    /// # let _ = b;
    /// ```
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The adapter.
    ///
    /// ```
    /// let adapter = skillkit::llm::anthropic::Anthropic::builder().build();
    /// # let _ = adapter;
    /// ```
    pub fn build(self) -> Anthropic {
        let base_url = self
            .base_url
            .or_else(|| std::env::var("ANTHROPIC_BASE_URL").ok())
            .unwrap_or_else(|| DEFAULT_BASE_URL.into());
        Anthropic {
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: self.api_key,
            default_model: self.default_model,
            defaults: self.defaults,
            http: HttpSettings::new(self.connect_timeout, self.idle_timeout, self.retry),
        }
    }
}

#[async_trait::async_trait]
impl LlmProvider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn default_model(&self) -> Option<&str> {
        Some(&self.default_model)
    }

    async fn stream(&self, request: Request) -> Result<EventStream, LlmError> {
        let options = request.options.or(&self.defaults);
        let key = options
            .api_key
            .clone()
            .or_else(|| self.api_key.clone())
            .or_else(|| ApiKey::from_env(API_KEY_VARIABLE))
            .ok_or_else(|| LlmError::MissingApiKey {
                provider: self.name().into(),
                variable: API_KEY_VARIABLE.into(),
            })?;
        let model = match request.model.is_empty() {
            true => self.default_model.clone(),
            false => request.model,
        };
        let max_tokens = options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let body = encode::encode(
            &model,
            &request.messages,
            &request.tools,
            &options,
            max_tokens,
        );
        let body = serde_json::to_vec(&body).map_err(|error| LlmError::Other {
            provider: self.name().into(),
            message: format!("cannot encode the request: {error}"),
        })?;
        let mut headers = HeaderMap::new();
        let mut key = HeaderValue::from_str(key.expose()).map_err(|_| LlmError::InvalidApiKey {
            provider: self.name().into(),
        })?;
        key.set_sensitive(true);
        headers.insert("x-api-key", key);
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        let request = HttpRequest {
            provider: "anthropic",
            model,
            url: format!("{}/v1/messages", self.base_url),
            headers,
            body: body.into(),
        };
        transport::stream::<wire::StreamEvent>(self.http.clone(), request).await
    }
}
