//! [`Request`]: what an adapter sends, and its [`Options`].

use std::fmt;
use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};

use crate::llm::Message;
use crate::tool::ToolDefinition;

/// One request to a model: which model, the conversation, the callable tools
/// and the sampling options.
///
/// ```
/// use skillkit::llm::{Message, Options, Request};
/// let request = Request::new(vec![Message::user("Hi")])
///     .with_model("claude-sonnet-4-6")
///     .with_options(Options { max_tokens: Some(256), ..Default::default() });
/// assert_eq!(request.options.max_tokens, Some(256));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Request {
    /// The model name, as the vendor spells it. Empty means the adapter's
    /// default model. Set by the [`Registry`](crate::llm::Registry) from the
    /// model URI.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call. Names must match `[a-zA-Z0-9_-]{1,64}`;
    /// adapters send them as given. Shared, so an agent sends the same list on
    /// every turn without copying it.
    pub tools: Arc<[ToolDefinition]>,
    /// Sampling options and credentials. Set in code, they override the model
    /// URI's parameters, which override the adapter's defaults.
    pub options: Options,
}

impl Request {
    /// A request for `messages`, with no tools, the default model and no options.
    ///
    /// ```
    /// let r = skillkit::llm::Request::new(vec![skillkit::llm::Message::user("Hi")]);
    /// assert!(r.model.is_empty() && r.tools.is_empty());
    /// ```
    pub fn new(messages: Vec<Message>) -> Self {
        Request {
            messages,
            ..Default::default()
        }
    }

    /// The same request for `model`.
    ///
    /// ```
    /// let r = skillkit::llm::Request::new(vec![]).with_model("gpt-4o");
    /// assert_eq!(r.model, "gpt-4o");
    /// ```
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The same request with `tools` callable.
    ///
    /// ```
    /// let tool = skillkit::ToolDefinition::new("clock", "Tell the time.", serde_json::json!({"type": "object"}));
    /// let r = skillkit::llm::Request::new(vec![]).with_tools(vec![tool]);
    /// assert_eq!(r.tools[0].name, "clock");
    /// ```
    pub fn with_tools(mut self, tools: impl Into<Arc<[ToolDefinition]>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// The same request with `options`.
    ///
    /// ```
    /// let r = skillkit::llm::Request::new(vec![])
    ///     .with_options(skillkit::llm::Options { temperature: Some(0.0), ..Default::default() });
    /// assert_eq!(r.options.temperature, Some(0.0));
    /// ```
    pub fn with_options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }
}

/// Sampling options and credentials of a request. `None` means "not set
/// here": a lower layer (the model URI, then the adapter) decides.
///
/// ```
/// use skillkit::llm::Options;
/// let code = Options { temperature: Some(0.0), ..Default::default() };
/// let uri = Options { temperature: Some(0.7), max_tokens: Some(100), ..Default::default() };
/// let merged = code.or(&uri);
/// assert_eq!((merged.temperature, merged.max_tokens), (Some(0.0), Some(100)));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// The most tokens the answer may have (URI `max_tokens`).
    pub max_tokens: Option<u32>,
    /// Sampling temperature, 0 to 2 (URI `temperature`).
    pub temperature: Option<f64>,
    /// Nucleus sampling mass, 0 to 1 (URI `top_p`).
    pub top_p: Option<f64>,
    /// Sample only from the top K tokens (URI `top_k`; vendors that support it).
    pub top_k: Option<u32>,
    /// Texts that stop the answer when the model writes them.
    pub stop_sequences: Option<Vec<String>>,
    /// Ask the vendor to cache the prompt (URI `cache`; Anthropic marks the
    /// system block and the last message with `cache_control`).
    pub prompt_caching: Option<bool>,
    /// The API key, overriding the adapter's and the environment's.
    pub api_key: Option<ApiKey>,
    /// Ask the vendor to clear old tool results from the context itself
    /// (Anthropic's `clear_tool_uses` context edit); adapters without such
    /// an edit ignore it.
    pub clear_tool_uses: Option<ClearToolUses>,
}

/// Old tool results the vendor clears from the context itself, once the
/// input passes `trigger_tokens`, keeping the latest `keep` tool uses and
/// every use of `exclude_tools` (Anthropic's `clear_tool_uses_20250919`
/// context edit).
///
/// ```
/// use skillkit::llm::{ClearToolUses, Options};
/// let options = Options {
///     clear_tool_uses: Some(ClearToolUses { trigger_tokens: 100_000, keep: 3, exclude_tools: vec!["activate_skill".into()] }),
///     ..Default::default()
/// };
/// assert_eq!(options.clear_tool_uses.unwrap().keep, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearToolUses {
    /// Input tokens past which results are cleared.
    pub trigger_tokens: u64,
    /// How many of the latest tool uses keep their results.
    pub keep: u32,
    /// Tools whose results are never cleared.
    pub exclude_tools: Vec<String>,
}

impl Options {
    /// These options, with every unset field taken from `lower`.
    ///
    /// ```
    /// use skillkit::llm::Options;
    /// let merged = Options::default().or(&Options { top_k: Some(5), ..Default::default() });
    /// assert_eq!(merged.top_k, Some(5));
    /// ```
    pub fn or(self, lower: &Options) -> Options {
        Options {
            max_tokens: self.max_tokens.or(lower.max_tokens),
            temperature: self.temperature.or(lower.temperature),
            top_p: self.top_p.or(lower.top_p),
            top_k: self.top_k.or(lower.top_k),
            stop_sequences: self.stop_sequences.or_else(|| lower.stop_sequences.clone()),
            prompt_caching: self.prompt_caching.or(lower.prompt_caching),
            api_key: self.api_key.or_else(|| lower.api_key.clone()),
            clear_tool_uses: self
                .clear_tool_uses
                .or_else(|| lower.clear_tool_uses.clone()),
        }
    }
}

/// An API key, held as a [`secrecy::SecretString`] (wiped from memory when
/// dropped). Its `Debug` and `Display` never show it.
///
/// ```
/// let key = skillkit::llm::ApiKey::new("sk-secret");
/// assert_eq!(format!("{key:?} {key}"), "ApiKey(<redacted>) <redacted>");
/// assert_eq!(key.expose(), "sk-secret");
/// ```
#[derive(Clone)]
pub struct ApiKey(SecretString);

impl ApiKey {
    /// Wraps a key.
    ///
    /// ```
    /// let key = skillkit::llm::ApiKey::new("k");
    /// assert_eq!(key.expose(), "k");
    /// ```
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(SecretString::from(key.into()))
    }

    /// The key from environment variable `variable`, when it is set and not blank.
    ///
    /// ```
    /// assert!(skillkit::llm::ApiKey::from_env("SKILLKIT_SURELY_UNSET_VARIABLE").is_none());
    /// ```
    pub fn from_env(variable: &str) -> Option<Self> {
        std::env::var(variable)
            .ok()
            .filter(|key| !key.trim().is_empty())
            .map(ApiKey::new)
    }

    /// The key itself, to put in a request header. Never log it.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::ApiKey::from("k").expose(), "k");
    /// ```
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        ApiKey::new(key)
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        ApiKey::new(key)
    }
}

impl PartialEq for ApiKey {
    fn eq(&self, other: &Self) -> bool {
        self.expose() == other.expose()
    }
}

impl Eq for ApiKey {}
