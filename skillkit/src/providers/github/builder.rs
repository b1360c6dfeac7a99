//! [`GitHubBuilder`]: the GitHub provider's configuration.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::allow::AllowList;
use super::builtins;
use super::cache::Cache;
use super::client::{Client, DEFAULT_BASE_URL, Timeouts};
use super::download::Progress;
use super::extract::Limits;
use super::token::ApiToken;
use super::{GitHub, GitHubError, Inner};
use crate::retry::RetryPolicy;

/// Configures a [`GitHub`] provider.
///
/// * `allowed_sources` ([`allow`](GitHubBuilder::allow)): `*`, `owner/*` or
///   `owner/repo`, case-insensitive. None by default: nothing may be imported
///   until you allow it.
/// * [`api_token`](GitHubBuilder::api_token): none by default (anonymous
///   requests have a low rate limit).
/// * [`cache_dir`](GitHubBuilder::cache_dir): `<user cache dir>/skillkit/github`
///   by default (`~/.cache/skillkit/github` on Linux).
/// * [`base_url`](GitHubBuilder::base_url): `https://api.github.com` by default.
/// * Timeouts: connect 10 s, between two reads 30 s, whole request 10 min.
/// * [`limits`](GitHubBuilder::limits): see [`Limits`].
///
/// ```
/// use std::time::Duration;
/// use skillkit::providers::github::{ApiToken, Limits};
/// # let dir = tempfile::tempdir().unwrap();
///
/// let github = skillkit::GitHub::builder()
///     .allowed_sources(["obra/*", "anthropics/skills"])
///     .api_token(ApiToken::from_env("GITHUB_TOKEN"))
///     .cache_dir(dir.path())
///     .base_url("https://github.example.com/api/v3")
///     .connect_timeout(Duration::from_secs(5))
///     .limits(Limits { max_files: 2_000, ..Limits::default() })
///     .on_progress(|p| eprintln!("{}: {} bytes", p.source, p.received))
///     .build()?;
/// # Ok::<(), skillkit::providers::github::GitHubError>(())
/// ```
#[derive(Default)]
#[must_use]
pub struct GitHubBuilder {
    allowed: Vec<String>,
    token: Option<ApiToken>,
    cache_dir: Option<PathBuf>,
    base_url: Option<String>,
    connect_timeout: Option<Duration>,
    read_timeout: Option<Duration>,
    timeout: Option<Duration>,
    limits: Limits,
    progress: Option<super::ProgressFn>,
    retry: Option<RetryPolicy>,
}

impl std::fmt::Debug for GitHubBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubBuilder")
            .field("allowed", &self.allowed)
            .field("token", &self.token)
            .field("cache_dir", &self.cache_dir)
            .field("base_url", &self.base_url)
            .field("limits", &self.limits)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl GitHubBuilder {
    /// Allows one more source pattern: `*`, `owner/*` or `owner/repo`.
    ///
    /// ```
    /// let builder = skillkit::GitHub::builder().allow("obra/*").allow("anthropics/skills");
    /// ```
    pub fn allow(mut self, pattern: impl Into<String>) -> Self {
        self.allowed.push(pattern.into());
        self
    }

    /// Allows every pattern of `patterns` (added to those already allowed).
    ///
    /// ```
    /// let builder = skillkit::GitHub::builder().allowed_sources(["obra/*", "*"]);
    /// ```
    pub fn allowed_sources<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// The API token to send.
    ///
    /// ```
    /// use skillkit::providers::github::ApiToken;
    /// let builder = skillkit::GitHub::builder().api_token(ApiToken::from_env("GITHUB_TOKEN"));
    /// ```
    pub fn api_token(mut self, token: ApiToken) -> Self {
        self.token = Some(token);
        self
    }

    /// Where imported repositories are kept. Nothing is written outside it.
    ///
    /// ```
    /// let builder = skillkit::GitHub::builder().cache_dir("/var/cache/my-agent/github");
    /// ```
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// The API root: GitHub Enterprise (`https://host/api/v3`) or a test
    /// server.
    ///
    /// ```
    /// let builder = skillkit::GitHub::builder().base_url("http://127.0.0.1:8080");
    /// ```
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The longest wait to connect.
    ///
    /// ```
    /// let builder = skillkit::GitHub::builder().connect_timeout(std::time::Duration::from_secs(3));
    /// ```
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// The longest wait between two reads of an answer.
    ///
    /// ```
    /// let builder = skillkit::GitHub::builder().read_timeout(std::time::Duration::from_secs(15));
    /// ```
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = Some(timeout);
        self
    }

    /// The longest a whole request may take, download included.
    ///
    /// ```
    /// let builder = skillkit::GitHub::builder().timeout(std::time::Duration::from_secs(120));
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The limits on what one import may unpack.
    ///
    /// ```
    /// use skillkit::providers::github::Limits;
    /// let builder = skillkit::GitHub::builder().limits(Limits { max_total_bytes: 64 << 20, ..Limits::default() });
    /// ```
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How an answer of 500 or more from GitHub is retried (default:
    /// [`RetryPolicy::default`], as the LLM adapters: three retries with
    /// exponential backoff and jitter, `retry-after` honoured). Answers in
    /// the 400s are never retried: they say something about the request.
    ///
    /// ```
    /// let builder = skillkit::GitHub::builder().retry(skillkit::RetryPolicy::none());
    /// ```
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Calls `progress` as each chunk of a download arrives (from a blocking
    /// thread: keep it quick, or send the value to a channel).
    ///
    /// ```
    /// let (tx, rx) = tokio::sync::watch::channel(None);
    /// let builder = skillkit::GitHub::builder().on_progress(move |p| {
    ///     let _ = tx.send(Some(p.clone()));
    /// });
    /// ```
    pub fn on_progress(mut self, progress: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// The provider. Fails on a malformed pattern or base URL, or when no
    /// cache directory was given and the system has none.
    ///
    /// ```
    /// let err = skillkit::GitHub::builder().allow("obra").build().unwrap_err();
    /// assert!(err.to_string().contains("`owner/*`"));
    /// ```
    pub fn build(self) -> Result<GitHub, GitHubError> {
        let allow = AllowList::parse(&self.allowed)?;
        let cache_dir = match self.cache_dir {
            Some(dir) => dir,
            None => dirs::cache_dir()
                .ok_or(GitHubError::NoCacheDir)?
                .join("skillkit")
                .join("github"),
        };
        let base_url = self.base_url.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let timeouts = Timeouts {
            connect: self.connect_timeout.unwrap_or(Duration::from_secs(10)),
            read: self.read_timeout.unwrap_or(Duration::from_secs(30)),
            total: self.timeout.unwrap_or(Duration::from_secs(600)),
        };
        let retry = self.retry.unwrap_or_default();
        let client = Client::new(&base_url, self.token, timeouts, retry)?;
        Ok(GitHub {
            inner: Arc::new(Inner {
                client,
                allow,
                cache: Cache::new(cache_dir),
                limits: self.limits,
                progress: self.progress,
                base_url,
                source_locks: Mutex::new(HashMap::new()),
                commit: tokio::sync::Mutex::new(()),
                tidied: std::sync::Once::new(),
                locals: Mutex::new(HashMap::new()),
                builtins: builtins::kit(),
            }),
        })
    }
}
