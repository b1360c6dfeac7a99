//! The GitHub REST API, as far as imports need it: resolve a ref to a commit
//! SHA, and open the tarball of a commit. Every failure becomes a
//! [`GitHubError`] a person can act on.

use std::time::{Duration, SystemTime};

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap};
use reqwest::{Response, StatusCode, Url, redirect};

use super::error::{GitHubError, describe};
use super::reference::Reference;
use super::token::ApiToken;
use crate::retry::RetryPolicy;
use crate::retry::requested_wait;

/// The public GitHub API.
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.github.com";

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// The longest SHA answer read (a SHA is 40 or 64 hex digits).
const MAX_SHA_ANSWER: usize = 1024;

/// Timeouts of the HTTP client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub connect: Duration,
    pub read: Duration,
    pub total: Duration,
}

/// An HTTP client bound to one API root and token.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    http: reqwest::Client,
    base: Url,
    /// `host[:port]` of the API, for messages.
    host: String,
    token: Option<ApiToken>,
    /// How a 5xx answer is retried (4xx answers never are).
    retry: RetryPolicy,
}

impl Client {
    pub(crate) fn new(
        base_url: &str,
        token: Option<ApiToken>,
        timeouts: Timeouts,
        retry: RetryPolicy,
    ) -> Result<Client, GitHubError> {
        let base = parse_base(base_url)?;
        let host = match (base.host_str(), base.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            (None, _) => base_url.to_owned(),
        };
        let http = reqwest::Client::builder()
            .user_agent(concat!("skillkit/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(timeouts.connect)
            .read_timeout(timeouts.read)
            .timeout(timeouts.total)
            .redirect(redirect::Policy::custom(follow_safely))
            .build()
            .map_err(|e| GitHubError::Client(describe(e)))?;
        Ok(Client {
            http,
            base,
            host,
            token,
            retry,
        })
    }

    /// The token configured, if any.
    pub(crate) fn token(&self) -> Option<&ApiToken> {
        self.token.as_ref()
    }

    /// `{base}/repos/{owner}/{repo}/{endpoint}/{ref…}`, each part
    /// percent-encoded.
    fn url(&self, reference: &Reference, endpoint: &str, git_ref: &str) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments
                .pop_if_empty()
                .extend(["repos", reference.owner(), reference.repo(), endpoint])
                .extend(git_ref.split('/'));
        }
        url
    }

    /// GETs `url`; a 5xx answer is sent again after the policy's backoff
    /// (or the wait its `retry-after` asks for), a 4xx answer is final.
    async fn get(&self, url: Url, accept: &str) -> Result<(Response, bool), GitHubError> {
        let authorization = self.token.as_ref().and_then(ApiToken::header);
        let has_token = authorization.is_some();
        let mut retry = 0;
        loop {
            let mut request = self
                .http
                .get(url.clone())
                .header(ACCEPT, accept)
                .header("X-GitHub-Api-Version", "2022-11-28");
            if let Some(value) = &authorization {
                request = request.header(AUTHORIZATION, value.clone());
            }
            let response = request.send().await.map_err(|e| GitHubError::Network {
                host: self.host.clone(),
                detail: describe(e),
            })?;
            if !response.status().is_server_error() || retry >= self.retry.max_retries {
                return Ok((response, has_token));
            }
            let wait = requested_wait(response.headers(), SystemTime::now());
            let delay = self.retry.delay(retry, wait);
            tracing::info!(
                provider = "github",
                status = response.status().as_u16(),
                retry = retry + 1,
                delay_ms = delay.as_millis() as u64,
                "server error, retrying"
            );
            drop(response);
            self.retry.sleep(delay).await;
            retry += 1;
        }
    }

    /// The commit SHA that `reference`'s ref (or the default branch) points
    /// at now.
    pub(crate) async fn resolve(&self, reference: &Reference) -> Result<String, GitHubError> {
        let git_ref = reference.git_ref().unwrap_or("HEAD");
        let during = format!("resolving `{reference}` to a commit");
        let url = self.url(reference, "commits", git_ref);
        tracing::debug!(provider = "github", source = %reference, "resolving commit");
        let (response, has_token) = self.get(url, "application/vnd.github.sha").await?;
        let mut response = check(response, reference, has_token, &during)?;
        let mut answer = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| GitHubError::Network {
            host: self.host.clone(),
            detail: describe(e),
        })? {
            answer.extend_from_slice(&chunk);
            if answer.len() > MAX_SHA_ANSWER {
                break;
            }
        }
        let sha = String::from_utf8_lossy(&answer).trim().to_ascii_lowercase();
        if !is_sha(&sha) {
            return Err(GitHubError::BadResponse {
                during,
                detail: "the answer is not a commit SHA".into(),
            });
        }
        Ok(sha)
    }

    /// The response whose body is the gzip-compressed tarball of commit
    /// `sha`, after redirects.
    pub(crate) async fn tarball(
        &self,
        reference: &Reference,
        sha: &str,
    ) -> Result<Response, GitHubError> {
        let during = format!("downloading `{reference}`");
        let url = self.url(reference, "tarball", sha);
        tracing::debug!(provider = "github", source = %reference, sha, "downloading tarball");
        let (response, has_token) = self.get(url, "application/vnd.github+json").await?;
        check(response, reference, has_token, &during)
    }
}

fn parse_base(base_url: &str) -> Result<Url, GitHubError> {
    let invalid = |reason: &str| GitHubError::InvalidBaseUrl {
        url: super::reference::printable(&without_password(base_url)),
        reason: reason.to_owned(),
    };
    let url = Url::parse(base_url).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("it is not an http or https URL"));
    }
    if url.cannot_be_a_base() || url.host_str().is_none() {
        return Err(invalid("it has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "it holds credentials; give the token with `api_token` instead",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("it has a query or fragment"));
    }
    Ok(url)
}

/// `url` with the password of its user info (`user:password@host`) shown
/// as `***`, whether the rest of it parses or not: an error may repeat the
/// URL, never a password in it.
fn without_password(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let authority = &url[start..end];
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    match authority[..at].split_once(':') {
        Some((user, _)) => format!("{}{user}:***{}", &url[..start], &url[start + at..]),
        None => url.to_owned(),
    }
}

/// Follows at most [`MAX_REDIRECTS`] redirects, never from https to http.
fn follow_safely(attempt: redirect::Attempt<'_>) -> redirect::Action {
    let downgrade = attempt.url().scheme() != "https"
        && attempt.previous().iter().any(|url| url.scheme() == "https");
    if downgrade {
        attempt.error("refused a redirect from https to http")
    } else if attempt.previous().len() > MAX_REDIRECTS {
        attempt.error("too many redirects")
    } else {
        attempt.follow()
    }
}

fn is_sha(text: &str) -> bool {
    (text.len() == 40 || text.len() == 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `response` when it succeeded, else the error its status means.
fn check(
    response: Response,
    reference: &Reference,
    has_token: bool,
    during: &str,
) -> Result<Response, GitHubError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    tracing::debug!(provider = "github", source = %reference, status = status.as_u16(), "request failed");
    let repository = reference.repository();
    Err(match status {
        StatusCode::NOT_FOUND => GitHubError::NotFound {
            what: match reference.git_ref() {
                Some(git_ref) => format!("repository `{repository}` (or its ref `{git_ref}`)"),
                None => format!("repository `{repository}`"),
            },
        },
        StatusCode::UNPROCESSABLE_ENTITY => GitHubError::NotFound {
            what: format!(
                "ref `{}` of `{repository}`",
                reference.git_ref().unwrap_or("HEAD")
            ),
        },
        StatusCode::UNAUTHORIZED => GitHubError::Unauthorized { has_token },
        StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS => {
            match rate_limit_reset(status, response.headers()) {
                Some(resets_at) => GitHubError::RateLimited {
                    resets_at,
                    has_token,
                },
                None => GitHubError::Forbidden {
                    reference: reference.to_string(),
                    has_token,
                },
            }
        }
        status if status.is_server_error() => GitHubError::Server {
            status: status.as_u16(),
            during: during.to_owned(),
        },
        status => GitHubError::UnexpectedStatus {
            status: status.as_u16(),
            during: during.to_owned(),
        },
    })
}

/// `Some(reset time)` when the answer is a rate limit: 429, or 403 with
/// `x-ratelimit-remaining: 0` or `retry-after` (GitHub's secondary limits).
fn rate_limit_reset(status: StatusCode, headers: &HeaderMap) -> Option<Option<SystemTime>> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let number = |name: &str| header(name).and_then(|v| v.trim().parse::<u64>().ok());
    // Read as every retry reads it (seconds or an HTTP date), a day at most.
    let now = SystemTime::now();
    let retry_after =
        requested_wait(headers, now).map(|wait| now + wait.min(Duration::from_secs(86_400)));
    let reset = number("x-ratelimit-reset")
        .map(|epoch| SystemTime::UNIX_EPOCH + Duration::from_secs(epoch.min(u64::from(u32::MAX))));
    let exhausted = header("x-ratelimit-remaining").is_some_and(|v| v.trim() == "0");
    if status == StatusCode::TOO_MANY_REQUESTS || exhausted || retry_after.is_some() {
        Some(retry_after.or(reset))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_encode_each_part() {
        let timeouts = Timeouts {
            connect: Duration::from_secs(1),
            read: Duration::from_secs(1),
            total: Duration::from_secs(1),
        };
        let client = Client::new(
            "https://ghe.example.com/api/v3/",
            None,
            timeouts,
            RetryPolicy::none(),
        )
        .unwrap();
        let reference = Reference::parse("o/r@feature/x+y").unwrap();
        let url = client.url(&reference, "commits", "feature/x+y");
        assert_eq!(
            url.as_str(),
            "https://ghe.example.com/api/v3/repos/o/r/commits/feature/x+y"
        );
    }

    #[test]
    fn base_urls_are_checked() {
        for bad in [
            "ftp://x",
            "not a url",
            "https://user:pw@x.com",
            "https://x.com/?q=1",
        ] {
            assert!(parse_base(bad).is_err(), "accepted {bad}");
        }
    }

    #[test]
    fn a_refused_url_never_repeats_its_password() {
        for url in [
            "http://user:secret@127.0.0.1:1/",
            "https://user:secret@x.com/api?q=1",
            "http://user:secret@bad host/",
            "user:secret@x.com",
        ] {
            let text = parse_base(url).unwrap_err().to_string();
            assert!(!text.contains("secret"), "{text}");
            assert!(text.contains("user:***@"), "{text}");
        }
        assert_eq!(without_password("https://me@x.com/"), "https://me@x.com/");
    }

    #[test]
    fn rate_limits_are_told_apart_from_forbidden() {
        let mut headers = HeaderMap::new();
        assert!(rate_limit_reset(StatusCode::FORBIDDEN, &headers).is_none());
        headers.insert("x-ratelimit-remaining", "0".parse().unwrap());
        headers.insert("x-ratelimit-reset", "1700000000".parse().unwrap());
        let reset = rate_limit_reset(StatusCode::FORBIDDEN, &headers)
            .unwrap()
            .unwrap();
        assert_eq!(
            reset,
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
        );
        // A secondary limit's `retry-after`, in seconds or as a date, wins
        // over the reset; one past all bounds is a day.
        let day = Duration::from_secs(86_400);
        for (value, at_least, at_most) in [
            ("30", Duration::from_secs(29), Duration::from_secs(31)),
            ("1e300", day - Duration::from_secs(1), day),
            (
                "Fri, 01 Jan 2100 00:00:00 GMT",
                day - Duration::from_secs(1),
                day,
            ),
        ] {
            headers.insert("retry-after", value.parse().unwrap());
            let reset = rate_limit_reset(StatusCode::FORBIDDEN, &headers)
                .unwrap()
                .unwrap();
            let wait = reset.duration_since(SystemTime::now()).unwrap_or_default();
            assert!(wait >= at_least && wait <= at_most, "{value}: {wait:?}");
        }
    }
}
