//! What every HTTP adapter is configured with, and how it resolves a request
//! against that configuration (key, model, options).

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::HeaderValue;

use crate::llm::transport::HttpSettings;
use crate::llm::{ApiKey, LlmError, Options, Request, RetryPolicy};

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
