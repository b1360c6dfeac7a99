//! [`LlmError`]: everything that can go wrong between SkillKit and a model.

use std::time::Duration;

/// Why a model request failed, before streaming (the `Err` of
/// [`Adapter::stream`](crate::llm::Adapter::stream)) or during it
/// (inside [`Event::Error`](crate::llm::Event::Error)).
///
/// Values are plain data (`Clone`, `PartialEq`) so they travel inside events.
/// No variant ever holds an API key.
///
/// ```
/// let err = skillkit::llm::LlmError::MissingApiKey {
///     provider: "anthropic".into(),
///     variable: "ANTHROPIC_API_KEY".into(),
/// };
/// assert!(err.to_string().contains("ANTHROPIC_API_KEY"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The model URI names a scheme no adapter is registered for.
    #[error(
        "unknown model scheme `{scheme}`; known schemes: {known}; register an adapter for it or fix the URI"
    )]
    UnknownScheme {
        /// The scheme in the URI.
        scheme: String,
        /// The registered schemes, comma separated.
        known: String,
    },
    /// The model URI cannot be read.
    #[error("invalid model URI `{uri}`: {reason}; write it as `scheme://model?max_tokens=4096`")]
    InvalidUri {
        /// The URI as given.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A model URI parameter has a value of the wrong type or range.
    #[error("model URI parameter `{name}` has bad value `{value}`: expected {expected}")]
    InvalidParameter {
        /// The parameter name.
        name: String,
        /// The value as given.
        value: String,
        /// What a valid value looks like.
        expected: String,
    },
    /// The model URI names no model and the adapter has no default model.
    #[error("no model given for provider `{provider}`; name one, as in `{provider}://model-name`")]
    MissingModel {
        /// The provider's name.
        provider: String,
    },
    /// No API key in the options, the adapter's configuration or the environment.
    #[error(
        "no API key for `{provider}`; set {variable}, configure the adapter with `api_key`, or pass one in the request options"
    )]
    MissingApiKey {
        /// The provider's name.
        provider: String,
        /// The environment variable read last.
        variable: String,
    },
    /// The API key cannot be sent in an HTTP header.
    #[error(
        "the API key for `{provider}` is not a valid HTTP header value; check it for stray whitespace, quotes or line breaks"
    )]
    InvalidApiKey {
        /// The provider's name.
        provider: String,
    },
    /// The request could not be sent or its answer not read (connection refused,
    /// reset, TLS, a body that is not UTF-8…).
    #[error(
        "request to `{provider}` failed: {message}; check `base_url` and that the server is reachable"
    )]
    Transport {
        /// The provider's name.
        provider: String,
        /// What failed.
        message: String,
    },
    /// The server answered with an HTTP error status.
    #[error("`{provider}` answered HTTP {status}: {message}{}", status_hint(*status))]
    Status {
        /// The provider's name.
        provider: String,
        /// The HTTP status code.
        status: u16,
        /// The error message from the body, or the body itself.
        message: String,
    },
    /// Nothing arrived for too long: connecting, or between two pieces of the stream.
    #[error(
        "`{provider}` sent nothing for {after:?} while {during}; retry, or raise the adapter's timeouts"
    )]
    Timeout {
        /// The provider's name.
        provider: String,
        /// What was being waited for (`connecting`, `streaming`).
        during: String,
        /// How long was waited.
        after: Duration,
    },
    /// The vendor reported an error inside the stream.
    #[error("`{provider}` reported `{kind}` mid-stream: {message}; retry the request")]
    Api {
        /// The provider's name.
        provider: String,
        /// The vendor's error type (`overloaded_error`, `api_error`, …).
        kind: String,
        /// The vendor's message.
        message: String,
    },
    /// The stream ended before the vendor marked the answer complete.
    #[error("the stream from `{provider}` ended before the answer was complete; retry the request")]
    Truncated {
        /// The provider's name.
        provider: String,
    },
    /// The answer stopped (at `max_tokens`, or by a cut stream) inside a tool
    /// call's JSON input, so the call cannot be made.
    #[error(
        "the answer stopped ({stop_reason}) inside the input of tool call `{name}` ({id}); raise `max_tokens` and retry"
    )]
    IncompleteToolInput {
        /// The tool call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// Why the answer stopped.
        stop_reason: String,
    },
    /// The model wrote a tool input that is not valid JSON.
    #[error(
        "the model wrote invalid JSON for tool call `{name}` ({id}): {message}; retry the request"
    )]
    InvalidToolInput {
        /// The tool call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The parser's complaint.
        message: String,
    },
    /// A stream event could not be decoded.
    #[error(
        "cannot decode an event from `{provider}`: {message}; the server may not speak this API"
    )]
    Decode {
        /// The provider's name.
        provider: String,
        /// What could not be decoded.
        message: String,
    },
    /// The [`Scripted`](crate::llm::Scripted) adapter was asked for more
    /// responses than were queued.
    #[error(
        "the scripted adapter has no response left for request {request}; queue one more response"
    )]
    ScriptExhausted {
        /// The 1-based number of the request that found the queue empty.
        request: usize,
    },
    /// Any other failure of a user-written adapter.
    #[error("`{provider}` failed: {message}")]
    Other {
        /// The provider's name.
        provider: String,
        /// What failed.
        message: String,
    },
}

impl LlmError {
    /// Whether the same request may succeed if sent again: rate limits,
    /// overload, server errors, timeouts and transport failures.
    ///
    /// ```
    /// use skillkit::llm::LlmError;
    /// let busy = LlmError::Status { provider: "anthropic".into(), status: 529, message: "Overloaded".into() };
    /// let bad = LlmError::Status { provider: "anthropic".into(), status: 400, message: "bad".into() };
    /// assert!(busy.is_retryable());
    /// assert!(!bad.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => is_retryable_status(*status),
            LlmError::Api { kind, .. } => matches!(
                kind.as_str(),
                "overloaded_error" | "api_error" | "rate_limit_error"
            ),
            LlmError::Timeout { .. } | LlmError::Transport { .. } => true,
            _ => false,
        }
    }

    /// What went wrong, in a few words a trace can group by (`error.type`):
    /// the HTTP status, the vendor's error kind, or the variant.
    #[cfg(feature = "agent")]
    pub(crate) fn error_type(&self) -> String {
        match self {
            LlmError::Status { status, .. } => status.to_string(),
            LlmError::Api { kind, .. } => kind.clone(),
            LlmError::UnknownScheme { .. } => "unknown_scheme".into(),
            LlmError::InvalidUri { .. } => "invalid_uri".into(),
            LlmError::InvalidParameter { .. } => "invalid_parameter".into(),
            LlmError::MissingModel { .. } => "missing_model".into(),
            LlmError::MissingApiKey { .. } => "missing_api_key".into(),
            LlmError::InvalidApiKey { .. } => "invalid_api_key".into(),
            LlmError::Transport { .. } => "transport".into(),
            LlmError::Timeout { .. } => "timeout".into(),
            LlmError::Truncated { .. } => "truncated".into(),
            LlmError::IncompleteToolInput { .. } => "incomplete_tool_input".into(),
            LlmError::InvalidToolInput { .. } => "invalid_tool_input".into(),
            LlmError::Decode { .. } => "decode".into(),
            LlmError::ScriptExhausted { .. } => "script_exhausted".into(),
            LlmError::Other { .. } => "_OTHER".into(),
        }
    }
}

/// 429 (rate limited), 529 (overloaded) and every 5xx.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => "; check the API key",
        404 => "; check `base_url` and the model name",
        429 | 529 => "; the service is busy: retry later or lower the request rate",
        400..=499 => "; fix the request",
        _ => "; retry later",
    }
}
