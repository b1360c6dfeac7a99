//! [`ApiToken`]: the GitHub API token, which is never printed.

use std::fmt;

use reqwest::header::HeaderValue;
use secrecy::{ExposeSecret, SecretString};

/// A GitHub API token: a value, or the name of an environment variable read
/// at each request (so a rotated token is picked up without a restart).
///
/// Its `Debug` never shows the value, and the provider puts it only in the
/// `Authorization` header (marked sensitive), never in a log, an error, kit
/// metadata or a file name.
///
/// ```
/// use skillkit::providers::github::ApiToken;
///
/// let token = ApiToken::new("ghp_example");
/// assert_eq!(format!("{token:?}"), "ApiToken(<redacted>)");
/// let from_env = ApiToken::from_env("GITHUB_TOKEN");
/// assert_eq!(format!("{from_env:?}"), "ApiToken(env GITHUB_TOKEN)");
/// ```
#[derive(Clone)]
pub struct ApiToken(Source);

#[derive(Clone)]
enum Source {
    Value(SecretString),
    Env(String),
}

impl ApiToken {
    /// A token given as a value.
    ///
    /// ```
    /// let token = skillkit::providers::github::ApiToken::new(String::from("ghp_example"));
    /// ```
    pub fn new(token: impl Into<String>) -> Self {
        ApiToken(Source::Value(SecretString::from(token.into())))
    }

    /// A token read from environment variable `var` whenever a request is
    /// made; an unset or empty variable means no token.
    ///
    /// ```
    /// let token = skillkit::providers::github::ApiToken::from_env("GITHUB_TOKEN");
    /// ```
    pub fn from_env(var: impl Into<String>) -> Self {
        ApiToken(Source::Env(var.into()))
    }

    /// The `Authorization` header for the token now, marked sensitive;
    /// `None` when there is no usable token.
    pub(crate) fn header(&self) -> Option<HeaderValue> {
        let secret = match &self.0 {
            Source::Value(secret) => secret.clone(),
            Source::Env(var) => match std::env::var(var) {
                Ok(value) => SecretString::from(value),
                Err(_) => {
                    tracing::debug!(provider = "github", var = %var, "token variable is not set; requests are anonymous");
                    return None;
                }
            },
        };
        let token = secret.expose_secret().trim();
        if token.is_empty() {
            return None;
        }
        match HeaderValue::from_str(&format!("Bearer {token}")) {
            Ok(mut value) => {
                value.set_sensitive(true);
                Some(value)
            }
            Err(_) => {
                tracing::warn!(
                    provider = "github",
                    "the API token holds characters not allowed in an HTTP header; it is ignored"
                );
                None
            }
        }
    }
}

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Source::Value(_) => f.write_str("ApiToken(<redacted>)"),
            Source::Env(var) => write!(f, "ApiToken(env {var})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_sensitive_and_bearer() {
        let header = ApiToken::new(" secret-value ").header().unwrap();
        assert!(header.is_sensitive());
        assert_eq!(header.to_str().unwrap(), "Bearer secret-value");
        assert!(!format!("{header:?}").contains("secret-value"));
        assert!(ApiToken::new("  ").header().is_none());
        assert!(ApiToken::new("a\nb").header().is_none());
        assert!(
            ApiToken::from_env("SKILLKIT_TEST_SURELY_UNSET_VARIABLE")
                .header()
                .is_none()
        );
    }
}
