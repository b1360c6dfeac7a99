//! [`RetryPolicy`]: when and how long to wait before sending a failed request
//! again. Shared by the LLM adapters, the GitHub client and the MCP client's
//! reconnection, so it belongs to none of them.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;
#[cfg(any(feature = "github", feature = "llm"))]
use std::time::SystemTime;

use futures::future::BoxFuture;

/// How a request that failed before its first event is retried: HTTP 429,
/// 529 and 5xx, connection failures and timeouts, and (for the LLM adapters)
/// a vendor error event that arrives before any other event; the GitHub
/// client retries answers of 500 and above.
///
/// The wait is the server's `retry-after-ms` or `retry-after` (seconds or an
/// HTTP date) when it sends one, capped at `max_retry_after`; otherwise
/// exponential backoff from `base_delay`, capped at `max_delay`, less up to a
/// quarter of random jitter.
///
/// ```
/// use std::time::Duration;
/// use skillkit::RetryPolicy;
/// let policy = RetryPolicy::default();
/// assert_eq!(policy.delay(0, Some(Duration::from_secs(2))), Duration::from_secs(2));
/// let backoff = policy.delay(2, None);
/// assert!(backoff <= policy.base_delay * 4 && backoff >= policy.base_delay * 3);
/// ```
#[derive(Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 never retries.
    pub max_retries: u32,
    /// The first backoff delay; each retry doubles it.
    pub base_delay: Duration,
    /// The longest backoff delay.
    pub max_delay: Duration,
    /// The longest server-requested wait honoured.
    pub max_retry_after: Duration,
    sleep: Sleep,
}

type Sleep = Arc<dyn Fn(Duration) -> BoxFuture<'static, ()> + Send + Sync>;

impl Default for RetryPolicy {
    /// Three retries, backoff from 500 ms to 8 s, `retry-after` honoured up to 60 s.
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            sleep: Arc::new(|delay| Box::pin(tokio::time::sleep(delay))),
        }
    }
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_retries", &self.max_retries)
            .field("base_delay", &self.base_delay)
            .field("max_delay", &self.max_delay)
            .field("max_retry_after", &self.max_retry_after)
            .finish_non_exhaustive()
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    ///
    /// ```
    /// assert_eq!(skillkit::RetryPolicy::none().max_retries, 0);
    /// ```
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..Default::default()
        }
    }

    /// The same policy, waiting with `sleep` instead of `tokio::time::sleep`:
    /// tests record the delays and return at once; an application may add a
    /// metric or a log.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// let waits = Arc::new(Mutex::new(Vec::new()));
    /// let seen = waits.clone();
    /// let policy = skillkit::RetryPolicy::default().with_sleep(move |delay| {
    ///     seen.lock().unwrap().push(delay);
    ///     Box::pin(async {})
    /// });
    /// # tokio::runtime::Runtime::new().unwrap().block_on(policy.sleep(std::time::Duration::from_secs(9)));
    /// assert_eq!(waits.lock().unwrap().len(), 1);
    /// ```
    pub fn with_sleep(
        mut self,
        sleep: impl Fn(Duration) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Self {
        self.sleep = Arc::new(sleep);
        self
    }

    /// How long to wait before retry number `retry + 1` (`retry` counts from 0),
    /// given the server's requested wait, if any.
    ///
    /// ```
    /// let policy = skillkit::RetryPolicy::default();
    /// assert!(policy.delay(10, None) <= policy.max_delay);
    /// ```
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let nominal = self
            .base_delay
            .saturating_mul(1u32 << retry.min(20))
            .min(self.max_delay);
        nominal.mul_f64(1.0 - 0.25 * fastrand::f64())
    }

    /// Waits `delay` the way this policy waits.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// skillkit::RetryPolicy::default().sleep(std::time::Duration::ZERO).await;
    /// # });
    /// ```
    pub async fn sleep(&self, delay: Duration) {
        (self.sleep)(delay).await
    }
}

#[cfg(any(feature = "github", feature = "llm"))]
/// The wait a response asks for: `retry-after-ms` (milliseconds), else
/// `retry-after` as seconds or as an HTTP date (relative to `now`).
pub(crate) fn requested_wait(
    headers: &reqwest::header::HeaderMap,
    now: SystemTime,
) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let ms = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok());
    if let Some(wait) = ms.and_then(|ms| wait_of(ms / 1000.0)) {
        return Some(wait);
    }
    parse_retry_after(header("retry-after")?, now)
}

/// The wait of `seconds` a server asked for: `None` when negative or not a
/// number; more than any duration holds (`1e300`), the longest, for the
/// policy to cap ([`RetryPolicy::max_retry_after`]).
#[cfg(any(feature = "github", feature = "llm"))]
fn wait_of(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
}

#[cfg(any(feature = "github", feature = "llm"))]
/// A `retry-after` value: seconds (`"1"`, `"1.5"`) or an HTTP date; `None`
/// when it is neither. A date in the past means no wait; more seconds than
/// a [`Duration`] holds, the longest one.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use skillkit::retry::parse_retry_after;
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
/// assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
/// assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now), Some(Duration::from_secs(10)));
/// assert_eq!(parse_retry_after("soon", now), None);
/// assert_eq!(parse_retry_after("1e300", now), Some(Duration::MAX));
/// ```
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return wait_of(seconds);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(all(test, any(feature = "github", feature = "llm")))]
mod tests {
    use super::*;

    #[test]
    fn retry_after_ms_wins_over_retry_after() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "5".parse().unwrap());
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(
            requested_wait(&headers, SystemTime::now()),
            Some(Duration::from_millis(250))
        );
    }

    #[test]
    fn past_dates_and_bad_values() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("NaN", now), None);
        assert_eq!(parse_retry_after("inf", now), None);
    }

    #[test]
    fn waits_longer_than_a_duration_are_the_longest_then_capped() {
        // A server's header, not ours to trust: past what a `Duration`
        // holds it is the longest one, never a panic.
        for (name, value) in [("retry-after", "1e300"), ("retry-after-ms", "1e300")] {
            let mut headers = reqwest::header::HeaderMap::new();
            headers.insert(name, value.parse().unwrap());
            let wait = requested_wait(&headers, SystemTime::now());
            assert_eq!(wait, Some(Duration::MAX), "{name}: {value}");
            let policy = RetryPolicy::default();
            assert_eq!(policy.delay(0, wait), policy.max_retry_after);
        }
    }

    #[test]
    fn server_waits_are_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(3600))),
            policy.max_retry_after
        );
    }
}
