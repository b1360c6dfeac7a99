//! What every HTTP adapter is configured with, and how it resolves a request
//! against that configuration (key, model, options).

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::HeaderValue;

use crate::llm::transport::HttpSettings;
use crate::llm::{ApiKey, LlmError, Options, Request};
use crate::retry::RetryPolicy;

/// The settings an adapter's builder collects.
#[derive(Debug, Clone)]
pub(crate) struct EndpointConfig {
    pub base_url: Option<String>,
    pub api_key: Option<ApiKey>,
    pub default_model: String,
    pub defaults: Options,
    pub retry: RetryPolicy,
    pub connect_timeout: Duration,
    pub idle_timeout: Duration,
}

impl EndpointConfig {
    pub(crate) fn new(default_model: &str, defaults: Options, idle_timeout: Duration) -> Self {
        EndpointConfig {
            base_url: None,
            api_key: None,
            default_model: default_model.into(),
            defaults,
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout,
        }
    }

    /// The endpoint; without a configured base URL, the one in
    /// `base_url_variable`, else `default_base_url`.
    pub(crate) fn build(self, base_url_variable: &str, default_base_url: &str) -> Endpoint {
        let base_url = self
            .base_url
            .or_else(|| std::env::var(base_url_variable).ok())
            .filter(|url| !url.trim().is_empty())
            .unwrap_or_else(|| default_base_url.into());
        Endpoint {
            base_url: base_url.trim().trim_end_matches('/').to_owned(),
            api_key: self.api_key,
            default_model: self.default_model,
            defaults: self.defaults,
            http: HttpSettings::new(self.connect_timeout, self.idle_timeout, self.retry),
        }
    }
}

/// A built adapter's configuration.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub default_model: String,
    pub defaults: Options,
    pub http: HttpSettings,
}

impl Endpoint {
    /// Completes `request`: the default model when it names none, its options
    /// over the adapter's defaults. Returns the key: the request's, else the
    /// adapter's, else the one in `key_variable`.
    pub(crate) fn resolve(&self, request: &mut Request, key_variable: &str) -> Option<ApiKey> {
        if request.model.is_empty() {
            request.model = self.default_model.clone();
        }
        request.options = std::mem::take(&mut request.options).or(&self.defaults);
        request
            .options
            .api_key
            .clone()
            .or_else(|| self.api_key.clone())
            .or_else(|| ApiKey::from_env(key_variable))
    }
}

/// The JSON bytes of a request body.
pub(crate) fn json_body(provider: &str, body: &impl serde::Serialize) -> Result<Bytes, LlmError> {
    serde_json::to_vec(body)
        .map(Bytes::from)
        .map_err(|error| LlmError::Other {
            provider: provider.into(),
            message: format!("cannot encode the request: {error}"),
        })
}

/// A header value holding a credential, marked sensitive so HTTP tooling
/// never prints it.
pub(crate) fn secret_header(provider: &str, value: &str) -> Result<HeaderValue, LlmError> {
    let mut header = HeaderValue::from_str(value).map_err(|_| LlmError::InvalidApiKey {
        provider: provider.into(),
    })?;
    header.set_sensitive(true);
    Ok(header)
}

/// The builder methods every HTTP adapter shares, for a builder holding its
/// settings in a `config: EndpointConfig` field; the adapter's own methods
/// (and `build`) sit beside them. `adapter` is the adapter's path (for the
/// examples), `base_url` and `idle` say its defaults.
macro_rules! endpoint_builder_methods {
    (adapter: $adapter:literal, base_url: $base_url:literal, example_url: $example_url:literal, model: $model:literal, idle: $idle:literal) => {
        #[doc = concat!("Where the API is (default: ", $base_url, ").")]
        ///
        /// ```
        #[doc = concat!("let b = ", $adapter, "::builder().base_url(\"", $example_url, "\");")]
        /// # let _ = b;
        /// ```
        pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
            self.config.base_url = Some(base_url.into());
            self
        }

        /// The API key, used when the request options carry none.
        ///
        /// ```
        #[doc = concat!("let b = ", $adapter, "::builder().api_key(\"sk-…\");")]
        /// # let _ = b;
        /// ```
        pub fn api_key(mut self, key: impl Into<$crate::llm::ApiKey>) -> Self {
            self.config.api_key = Some(key.into());
            self
        }

        /// The model used when a request names none.
        ///
        /// ```
        #[doc = concat!("let b = ", $adapter, "::builder().default_model(\"", $model, "\");")]
        /// # let _ = b;
        /// ```
        pub fn default_model(mut self, model: impl Into<String>) -> Self {
            self.config.default_model = model.into();
            self
        }

        /// Options used where neither the request nor the model URI sets them.
        ///
        /// ```
        #[doc = concat!("let b = ", $adapter, "::builder()")]
        ///     .defaults(skillkit::llm::Options { max_tokens: Some(2048), ..Default::default() });
        /// # let _ = b;
        /// ```
        pub fn defaults(mut self, defaults: $crate::llm::Options) -> Self {
            self.config.defaults = defaults.or(&self.config.defaults);
            self
        }

        /// How failed requests are retried.
        ///
        /// ```
        #[doc = concat!("let b = ", $adapter, "::builder().retry(skillkit::RetryPolicy::none());")]
        /// # let _ = b;
        /// ```
        pub fn retry(mut self, retry: $crate::retry::RetryPolicy) -> Self {
            self.config.retry = retry;
            self
        }

        /// The longest wait for a connection (default 10 s).
        ///
        /// ```
        #[doc = concat!("let b = ", $adapter, "::builder().connect_timeout(std::time::Duration::from_secs(3));")]
        /// # let _ = b;
        /// ```
        pub fn connect_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.config.connect_timeout = timeout;
            self
        }

        /// The longest silence while waiting for the response or between two
        #[doc = concat!("pieces of the stream (default ", $idle, ").")]
        ///
        /// ```
        #[doc = concat!("let b = ", $adapter, "::builder().idle_timeout(std::time::Duration::from_secs(30));")]
        /// # let _ = b;
        /// ```
        pub fn idle_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.config.idle_timeout = timeout;
            self
        }
    };
}
pub(crate) use endpoint_builder_methods;
