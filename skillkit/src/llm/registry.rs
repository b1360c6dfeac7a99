//! [`Registry`]: model URIs (`scheme://model?params`) → adapters.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use percent_encoding::percent_decode_str;

#[cfg(feature = "llm")]
use crate::llm::anthropic::Anthropic;
#[cfg(feature = "llm")]
use crate::llm::openai::OpenAi;
use crate::llm::{Adapter, EventStream, LlmError, Options, Request};

/// Maps URI schemes to adapters, with a default for bare model names.
///
/// [`Registry::new`] knows `anthropic` (the default) and `openai` (with the
/// `llm` feature, on by default); add your own (a local server, the
/// [`Scripted`](crate::llm::Scripted) adapter) with [`with`](Registry::with).
///
/// ```
/// # #[cfg(feature = "llm")] {
/// use skillkit::llm::{openai::OpenAi, Registry};
/// let registry = Registry::new()
///     .with("ollama", OpenAi::builder().base_url("http://localhost:11434/v1").build())
///     .with_default("ollama");
/// assert_eq!(registry.schemes(), ["anthropic", "ollama", "openai"]);
/// let (adapter, uri) = registry.resolve("llama3:8b?temperature=0.2").unwrap();
/// assert_eq!((adapter.name(), uri.model.as_str()), ("openai", "llama3:8b"));
/// # }
/// ```
#[derive(Clone)]
pub struct Registry {
    adapters: BTreeMap<String, Arc<dyn Adapter>>,
    default: String,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("schemes", &self.schemes())
            .field("default", &self.default)
            .finish()
    }
}

impl Registry {
    /// The built-in adapters: `anthropic` (the default) and `openai`, both
    /// configured from the environment. Without the `llm` feature there is no
    /// HTTP adapter to build in: the registry is [`empty`](Self::empty).
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Registry::new().default_scheme(), "anthropic");
    /// ```
    pub fn new() -> Self {
        #[cfg(feature = "llm")]
        return Registry::empty()
            .with("anthropic", Anthropic::new())
            .with("openai", OpenAi::new())
            .with_default("anthropic");
        #[cfg(not(feature = "llm"))]
        Registry::empty()
    }

    /// A registry with no adapter; its default scheme is `anthropic` until set.
    ///
    /// ```
    /// assert!(skillkit::llm::Registry::empty().schemes().is_empty());
    /// ```
    pub fn empty() -> Self {
        Registry {
            adapters: BTreeMap::new(),
            default: "anthropic".into(),
        }
    }

    /// The registered schemes for an [`LlmError::UnknownScheme`] about
    /// `scheme`; without the `llm` feature, a built-in scheme says which
    /// feature brings it.
    fn known_schemes(&self, scheme: &str) -> String {
        let known = match self.adapters.is_empty() {
            true => "none".to_owned(),
            false => self.schemes().join(", "),
        };
        #[cfg(not(feature = "llm"))]
        if ["anthropic", "openai"]
            .iter()
            .any(|built_in| scheme.eq_ignore_ascii_case(built_in))
        {
            return format!("{known} (the `{scheme}` adapter needs skillkit's `llm` feature)");
        }
        let _ = scheme; // read only without the `llm` feature
        known
    }

    /// The same registry with `adapter` serving `scheme` (case-insensitive),
    /// replacing any adapter it had.
    ///
    /// ```
    /// let registry = skillkit::llm::Registry::empty().with("Test", skillkit::llm::Scripted::new());
    /// assert_eq!(registry.schemes(), ["test"]);
    /// ```
    pub fn with(mut self, scheme: &str, adapter: impl Adapter + 'static) -> Self {
        self.register(scheme, Arc::new(adapter));
        self
    }

    /// Makes `adapter` serve `scheme` (case-insensitive).
    ///
    /// ```
    /// use std::sync::Arc;
    /// let mut registry = skillkit::llm::Registry::empty();
    /// registry.register("test", Arc::new(skillkit::llm::Scripted::new()));
    /// assert!(registry.get("test").is_some());
    /// ```
    pub fn register(&mut self, scheme: &str, adapter: Arc<dyn Adapter>) {
        self.adapters.insert(scheme.to_ascii_lowercase(), adapter);
    }

    /// The same registry with `scheme` serving bare model names.
    ///
    /// ```
    /// let registry = skillkit::llm::Registry::new().with_default("openai");
    /// assert_eq!(registry.default_scheme(), "openai");
    /// ```
    pub fn with_default(mut self, scheme: &str) -> Self {
        self.default = scheme.to_ascii_lowercase();
        self
    }

    /// The scheme serving bare model names.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Registry::empty().default_scheme(), "anthropic");
    /// ```
    pub fn default_scheme(&self) -> &str {
        &self.default
    }

    /// The registered schemes, sorted.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Registry::new().schemes(), ["anthropic", "openai"]);
    /// ```
    pub fn schemes(&self) -> Vec<&str> {
        self.adapters.keys().map(String::as_str).collect()
    }

    /// The adapter serving `scheme`.
    ///
    /// ```
    /// assert!(skillkit::llm::Registry::new().get("nope").is_none());
    /// ```
    pub fn get(&self, scheme: &str) -> Option<Arc<dyn Adapter>> {
        self.adapters.get(&scheme.to_ascii_lowercase()).cloned()
    }

    /// The adapter and the parsed URI for `model_uri`; the URI's model is the
    /// adapter's default model when the URI names none.
    ///
    /// ```
    /// let registry = skillkit::llm::Registry::new();
    /// let (_, uri) = registry.resolve("anthropic://").unwrap();
    /// assert_eq!(uri.model, "claude-sonnet-4-6");
    /// let err = registry.resolve("mistral://large").unwrap_err();
    /// assert!(err.to_string().contains("known schemes: anthropic, openai"));
    /// ```
    pub fn resolve(&self, model_uri: &str) -> Result<(Arc<dyn Adapter>, ModelUri), LlmError> {
        let mut uri: ModelUri = model_uri.parse()?;
        let scheme = uri.scheme.as_deref().unwrap_or(&self.default);
        let adapter = self.get(scheme).ok_or_else(|| LlmError::UnknownScheme {
            scheme: scheme.to_owned(),
            known: self.known_schemes(scheme),
        })?;
        if uri.model.is_empty() {
            uri.model = adapter
                .default_model()
                .ok_or_else(|| LlmError::MissingModel {
                    provider: scheme.to_owned(),
                })?
                .to_owned();
        }
        Ok((adapter, uri))
    }

    /// Streams `request` from the model `model_uri` names. Options set on the
    /// request override the URI's parameters, which override the adapter's
    /// defaults.
    ///
    /// ```no_run
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::llm::{Message, Registry, Request, Response};
    /// let events = Registry::new()
    ///     .stream("anthropic://claude-sonnet-4-6?max_tokens=1024", Request::new(vec![Message::user("Hi")]))
    ///     .await?;
    /// println!("{}", Response::collect(events).await?.message.text);
    /// # Ok::<(), skillkit::llm::LlmError>(())
    /// # });
    /// ```
    pub async fn stream(
        &self,
        model_uri: &str,
        mut request: Request,
    ) -> Result<EventStream, LlmError> {
        let (adapter, uri) = self.resolve(model_uri)?;
        request.model = uri.model;
        request.options = request.options.or(&uri.options);
        adapter.stream(request).await
    }
}

/// A parsed model URI: `scheme://model?max_tokens=…&temperature=…&top_p=…&top_k=…&cache=…`,
/// or a bare `model?…` for the default adapter.
///
/// ```
/// use skillkit::llm::ModelUri;
/// let uri: ModelUri = "anthropic://claude-sonnet-4-6?max_tokens=4096&temperature=0.2".parse().unwrap();
/// assert_eq!(uri.scheme.as_deref(), Some("anthropic"));
/// assert_eq!(uri.options.max_tokens, Some(4096));
/// let bare: ModelUri = "llama3:8b".parse().unwrap();
/// assert_eq!((bare.scheme, bare.model.as_str()), (None, "llama3:8b"));
/// let err = "anthropic://x?temperature=hot".parse::<ModelUri>().unwrap_err();
/// assert!(err.to_string().contains("`temperature`"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ModelUri {
    /// The scheme, lowercased; `None` for a bare model name.
    pub scheme: Option<String>,
    /// The model name (percent-decoded); empty for the adapter's default.
    pub model: String,
    /// The typed parameters.
    pub options: Options,
}

const PARAMETERS: &str = "max_tokens, temperature, top_p, top_k, cache";

impl FromStr for ModelUri {
    type Err = LlmError;

    fn from_str(text: &str) -> Result<Self, LlmError> {
        let invalid = |reason: &str| LlmError::InvalidUri {
            uri: text.to_owned(),
            reason: reason.to_owned(),
        };
        let trimmed = text.trim();
        let (location, query) = match trimmed.split_once('?') {
            Some((location, query)) => (location, Some(query)),
            None => (trimmed, None),
        };
        let (scheme, model) = match location.split_once("://") {
            Some((scheme, model)) => {
                let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-._".contains(c));
                if !valid {
                    return Err(invalid(
                        "the scheme must be a letter then letters, digits, `+`, `-`, `.` or `_`",
                    ));
                }
                (Some(scheme.to_ascii_lowercase()), model)
            }
            None if location.is_empty() => return Err(invalid("it is empty")),
            None => (None, location),
        };
        let model = decode(model)
            .ok_or_else(|| invalid("the model name is not valid percent-encoded UTF-8"))?;
        let mut options = Options::default();
        for pair in query
            .unwrap_or("")
            .split('&')
            .filter(|pair| !pair.is_empty())
        {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode(value)
                .ok_or_else(|| invalid("a parameter is not valid percent-encoded UTF-8"))?;
            let duplicate = || invalid(&format!("parameter `{name}` is given twice"));
            match name {
                "max_tokens" => set(
                    &mut options.max_tokens,
                    number(name, &value, 1.0, u32::MAX as f64, true)? as u32,
                )
                .ok_or_else(duplicate)?,
                "temperature" => set(
                    &mut options.temperature,
                    number(name, &value, 0.0, 2.0, false)?,
                )
                .ok_or_else(duplicate)?,
                "top_p" => set(&mut options.top_p, number(name, &value, 0.0, 1.0, false)?)
                    .ok_or_else(duplicate)?,
                "top_k" => set(
                    &mut options.top_k,
                    number(name, &value, 1.0, u32::MAX as f64, true)? as u32,
                )
                .ok_or_else(duplicate)?,
                "cache" | "prompt_caching" => {
                    set(&mut options.prompt_caching, boolean(name, &value)?)
                        .ok_or_else(duplicate)?
                }
                _ => {
                    return Err(invalid(&format!(
                        "unknown parameter `{name}`; known parameters: {PARAMETERS}"
                    )));
                }
            }
        }
        Ok(ModelUri {
            scheme,
            model,
            options,
        })
    }
}

/// Sets an unset option; `None` when it was already set.
fn set<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

fn decode(text: &str) -> Option<String> {
    percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(|decoded| decoded.into_owned())
}

fn number(name: &str, value: &str, min: f64, max: f64, integer: bool) -> Result<f64, LlmError> {
    let parsed = match integer {
        true => value.parse::<u64>().ok().map(|n| n as f64),
        false => value.parse::<f64>().ok(),
    };
    match parsed {
        Some(n) if n.is_finite() && n >= min && n <= max => Ok(n),
        _ => Err(LlmError::InvalidParameter {
            name: name.into(),
            value: value.into(),
            expected: match integer {
                true => format!("a whole number from {min} to {max}"),
                false => format!("a number from {min} to {max}"),
            },
        }),
    }
}

fn boolean(name: &str, value: &str) -> Result<bool, LlmError> {
    match value {
        "true" | "1" | "" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(LlmError::InvalidParameter {
            name: name.into(),
            value: value.into(),
            expected: "`true` or `false`".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ModelUri, LlmError> {
        text.parse()
    }

    #[cfg(feature = "llm")]
    #[test]
    fn the_built_in_registry_knows_the_http_adapters() {
        assert_eq!(Registry::new().schemes(), ["anthropic", "openai"]);
    }

    #[cfg(not(feature = "llm"))]
    #[test]
    fn without_the_llm_feature_the_built_in_registry_is_empty() {
        let registry = Registry::new();
        assert!(registry.schemes().is_empty());
        let error = registry.resolve("anthropic://claude").unwrap_err();
        assert!(error.to_string().contains("`llm` feature"), "{error}");
    }

    #[test]
    fn typed_parameters() {
        let uri =
            parse("openai://gpt-4o?max_tokens=10&temperature=0.2&top_p=0.9&top_k=40&cache=true")
                .unwrap();
        assert_eq!(uri.options.max_tokens, Some(10));
        assert_eq!(uri.options.temperature, Some(0.2));
        assert_eq!(uri.options.top_p, Some(0.9));
        assert_eq!(uri.options.top_k, Some(40));
        assert_eq!(uri.options.prompt_caching, Some(true));
    }

    #[test]
    fn bad_values_name_the_parameter_and_the_range() {
        for (uri, name) in [
            ("a://m?max_tokens=-1", "max_tokens"),
            ("a://m?max_tokens=1.5", "max_tokens"),
            ("a://m?max_tokens=0", "max_tokens"),
            ("a://m?max_tokens=99999999999", "max_tokens"),
            ("a://m?temperature=3", "temperature"),
            ("a://m?temperature=NaN", "temperature"),
            ("a://m?top_p=1.1", "top_p"),
            ("a://m?cache=maybe", "cache"),
        ] {
            match parse(uri) {
                Err(LlmError::InvalidParameter { name: got, .. }) => assert_eq!(got, name, "{uri}"),
                other => panic!("{uri}: {other:?}"),
            }
        }
    }

    #[test]
    fn malformed_uris() {
        for uri in [
            "",
            "   ",
            "://m",
            "1a://m",
            "a b://m",
            "a://m?foo=1",
            "a://m?top_k=1&top_k=2",
            "a://%FF",
        ] {
            assert!(
                matches!(parse(uri), Err(LlmError::InvalidUri { .. })),
                "{uri}"
            );
        }
    }

    #[test]
    fn models_may_hold_slashes_colons_and_escapes() {
        let uri = parse("openai://meta-llama/Llama-3.1-8B%20Instruct").unwrap();
        assert_eq!(uri.model, "meta-llama/Llama-3.1-8B Instruct");
        assert_eq!(parse("qwen2.5:7b").unwrap().model, "qwen2.5:7b");
        assert_eq!(
            parse("ANTHROPIC://x").unwrap().scheme.as_deref(),
            Some("anthropic")
        );
    }
}
