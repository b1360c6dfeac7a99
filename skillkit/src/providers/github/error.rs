//! [`GitHubError`]: why a GitHub import, refresh or removal failed, in words a
//! model and a person can act on.

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Which import limit an archive broke (see
/// [`Limits`](super::Limits)).
///
/// ```
/// use skillkit::providers::github::Limit;
/// assert_eq!(Limit::Files.to_string(), "its number of files and folders");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// [`Limits::max_total_bytes`](super::Limits::max_total_bytes), on the
    /// download and on the unpacked archive.
    TotalBytes,
    /// [`Limits::max_file_bytes`](super::Limits::max_file_bytes), on the named
    /// file.
    FileBytes(String),
    /// [`Limits::max_files`](super::Limits::max_files).
    Files,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::TotalBytes => f.write_str("its size (downloaded or unpacked)"),
            Limit::FileBytes(file) => write!(f, "the size of file `{file}`"),
            Limit::Files => f.write_str("its number of files and folders"),
        }
    }
}

/// Why the GitHub provider could not do what it was asked.
///
/// Every message says what happened and what to do about it; none ever holds
/// the API token.
///
/// ```
/// let err = skillkit::providers::github::Reference::parse("obra").unwrap_err();
/// assert!(err.to_string().starts_with("invalid source `obra`"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitHubError {
    /// The source is not `owner/repo[/path][@ref]`.
    #[error(
        "invalid source `{input}`: {reason}; write it as `owner/repo[/path][@ref]`, for example \
         `obra/superpowers` or `anthropics/skills/document-skills@main`"
    )]
    InvalidSource {
        /// The source as given (control characters escaped).
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The repository matches no `allowed_sources` pattern.
    #[error("`{reference}` is not an allowed source; {}", allowed_text(.allowed))]
    NotAllowed {
        /// The source.
        reference: String,
        /// The `allowed_sources` patterns.
        allowed: Vec<String>,
    },
    /// `remove` or `refresh` of a source that was never imported.
    #[error(
        "`{reference}` is not imported; import it first (`github:list` shows what is imported)"
    )]
    NotImported {
        /// The source.
        reference: String,
    },
    /// GitHub answered 404 (or 422 for an unknown ref).
    #[error(
        "{what} was not found on GitHub; check the spelling of the owner, repository and ref \
         (a private repository is also \"not found\" without an API token that can read it)"
    )]
    NotFound {
        /// `repository `o/r`` or `ref `x` of `o/r``.
        what: String,
    },
    /// The subpath does not exist in the repository at that commit.
    #[error(
        "folder `{path}` was not found in `{repository}` at commit {sha}; the path is relative \
         to the repository root, check its spelling"
    )]
    PathNotFound {
        /// `owner/repo`.
        repository: String,
        /// The subpath.
        path: String,
        /// The commit.
        sha: String,
    },
    /// GitHub's rate limit is exhausted.
    #[error("GitHub's API rate limit is reached{}; {}", reset_text(.resets_at), rate_hint(*.has_token))]
    RateLimited {
        /// When the limit resets, if GitHub said.
        resets_at: Option<SystemTime>,
        /// Whether a token was sent.
        has_token: bool,
    },
    /// GitHub answered 401.
    #[error("{}", if *.has_token {
        "GitHub rejected the API token (HTTP 401): it is invalid, expired or revoked; replace it"
    } else {
        "GitHub requires authentication (HTTP 401); configure an API token (the provider's `api_token` setting)"
    })]
    Unauthorized {
        /// Whether a token was sent.
        has_token: bool,
    },
    /// GitHub answered 403 for another reason than the rate limit.
    #[error("GitHub refused access to `{reference}` (HTTP 403); {}", if *.has_token {
        "the API token lacks permission to read this repository's contents; use a token that can"
    } else {
        "configure an API token that can read this repository (the provider's `api_token` setting)"
    })]
    Forbidden {
        /// The source.
        reference: String,
        /// Whether a token was sent.
        has_token: bool,
    },
    /// GitHub answered with a server error (5xx).
    #[error("GitHub answered HTTP {status} (a server error) while {during}; try again in a moment")]
    Server {
        /// The status code.
        status: u16,
        /// What was being done.
        during: String,
    },
    /// GitHub answered with a status this provider does not expect.
    #[error(
        "GitHub answered HTTP {status} while {during}; check that `base_url` points at the GitHub \
         API, then try again"
    )]
    UnexpectedStatus {
        /// The status code.
        status: u16,
        /// What was being done.
        during: String,
    },
    /// GitHub's answer was not what the API promises.
    #[error(
        "GitHub's answer could not be understood while {during} ({detail}); check that \
         `base_url` points at the GitHub API"
    )]
    BadResponse {
        /// What was being done.
        during: String,
        /// What was wrong.
        detail: String,
    },
    /// The server could not be reached.
    #[error(
        "cannot reach {host} ({detail}); check the network connection. Kits already imported \
         keep working offline"
    )]
    Network {
        /// The host asked.
        host: String,
        /// The cause, without URLs.
        detail: String,
    },
    /// The connection broke while the archive was downloading.
    #[error(
        "the download of `{reference}` was interrupted ({detail}); check the network connection \
         and try again"
    )]
    Interrupted {
        /// The source.
        reference: String,
        /// The cause, without URLs.
        detail: String,
    },
    /// The archive is not a valid gzip-compressed tar file.
    #[error(
        "the archive of `{reference}` is damaged ({detail}); try again, and if it persists \
         the repository cannot be imported"
    )]
    Corrupt {
        /// The source.
        reference: String,
        /// What is wrong.
        detail: String,
    },
    /// The archive broke an import limit; nothing was imported.
    #[error(
        "`{reference}` is too large to import: {limit} exceeds the limit of {}; nothing was \
         imported. If you trust this repository, raise the limit (the provider's `limits` \
         setting) or import a smaller folder of it (`owner/repo/path`)",
        amount(.limit, *.max)
    )]
    TooLarge {
        /// The source.
        reference: String,
        /// The limit broken.
        limit: Limit,
        /// Its value.
        max: u64,
    },
    /// The repository (or folder) holds no skill or agent.
    #[error(
        "no skills found in `{reference}`{}; nothing was imported. Expected \
         `skills/<name>/SKILL.md`, `<name>/SKILL.md` or a `SKILL.md` at the root of the \
         repository (or of the folder given after `owner/repo/`)",
        failed_text(*.failed)
    )]
    NoSkills {
        /// The source.
        reference: String,
        /// How many skill or agent files failed to parse.
        failed: usize,
    },
    /// The cache directory could not be read or written.
    #[error(
        "cannot use the cache at `{}`: {error}; check that it is writable, or set another \
         directory (the provider's `cache_dir` setting)",
        path.display()
    )]
    Cache {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        error: std::io::Error,
    },
    /// An `allowed_sources` pattern is malformed.
    #[error(
        "invalid allowed_sources pattern `{pattern}`: {reason}; use `*`, `owner/*` or `owner/repo`"
    )]
    InvalidPattern {
        /// The pattern.
        pattern: String,
        /// What is wrong.
        reason: String,
    },
    /// `base_url` is not an http(s) URL.
    #[error(
        "invalid base_url `{url}`: {reason}; give the API root, such as `https://api.github.com` \
         or `https://github.example.com/api/v3`"
    )]
    InvalidBaseUrl {
        /// The URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// No cache directory was given and the system has none.
    #[error(
        "this system has no user cache directory; set one with \
         `GitHub::builder().cache_dir(..)`"
    )]
    NoCacheDir,
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

fn allowed_text(allowed: &[String]) -> String {
    if allowed.is_empty() {
        return "no source is allowed (`allowed_sources` is empty); ask whoever configures this \
                agent to add a pattern such as `owner/*`"
            .to_owned();
    }
    let list: Vec<String> = allowed.iter().map(|p| format!("`{p}`")).collect();
    format!(
        "the allowed sources are {}; import one of those, or ask whoever configures this agent \
         to add the repository to `allowed_sources`",
        list.join(", ")
    )
}

fn reset_text(resets_at: &Option<SystemTime>) -> String {
    let Some(at) = resets_at else {
        return String::new();
    };
    let wait = at
        .duration_since(SystemTime::now())
        .unwrap_or(Duration::ZERO);
    let minutes = wait.as_secs().div_ceil(60);
    let relative = match minutes {
        1 => "1 minute".to_owned(),
        0..120 => format!("{minutes} minutes"),
        120..2880 => format!("{} hours", minutes.div_ceil(60)),
        _ => format!("{} days", minutes.div_ceil(1440)),
    };
    format!(
        " until {} (in about {relative})",
        httpdate::fmt_http_date(*at)
    )
}

fn rate_hint(has_token: bool) -> &'static str {
    if has_token {
        "wait until then and try again"
    } else {
        "configure a GitHub API token for a much higher limit (the provider's `api_token` \
         setting, for example from the GITHUB_TOKEN environment variable), or wait until then"
    }
}

fn amount(limit: &Limit, max: u64) -> String {
    match limit {
        Limit::Files => format!("{max} entries"),
        _ if max >= 1 << 20 => format!("{} MiB ({max} bytes)", max >> 20),
        _ => format!("{max} bytes"),
    }
}

fn failed_text(failed: usize) -> String {
    match failed {
        0 => String::new(),
        1 => " (1 file failed to parse; the log names it)".to_owned(),
        n => format!(" ({n} files failed to parse; the log names them)"),
    }
}

/// `error`'s message and its causes, joined, without any URL (URLs can hold
/// signed query strings).
pub(crate) fn describe(error: reqwest::Error) -> String {
    chain(&error.without_url())
}

/// An error's message followed by those of its causes (each once).
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_names_the_reset_time_and_the_token() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(4_000_000_000);
        let text = GitHubError::RateLimited {
            resets_at: Some(at),
            has_token: false,
        }
        .to_string();
        assert!(
            text.contains("until Tue, 02 Oct 2096 07:06:40 GMT"),
            "{text}"
        );
        assert!(text.contains("API token"), "{text}");
    }

    #[test]
    fn limits_are_named_with_their_value() {
        let text = GitHubError::TooLarge {
            reference: "o/r".into(),
            limit: Limit::TotalBytes,
            max: 8 << 20,
        }
        .to_string();
        assert!(text.contains("8 MiB (8388608 bytes)"), "{text}");
    }
}
