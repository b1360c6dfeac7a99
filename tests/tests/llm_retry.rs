//! Retries: which failures are retried, how long the adapter waits (read
//! through a recording sleep, never the wall clock), and never after the
//! first event reached the caller.

use skillkit_tests::llm as support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use skillkit::RetryPolicy;
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::{Adapter, Event, LlmError, Message, Request, StopReason};
use support::{Reply, Server, drain, fixture};

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

/// A policy that records each wait and returns at once.
fn recording(max_retries: u32) -> (RetryPolicy, Arc<Mutex<Vec<Duration>>>) {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let seen = waits.clone();
    let mut policy = RetryPolicy::default().with_sleep(move |delay| {
        seen.lock().unwrap().push(delay);
        Box::pin(async {})
    });
    policy.max_retries = max_retries;
    (policy, waits)
}

fn adapter(server: &Server, retry: RetryPolicy) -> Anthropic {
    Anthropic::builder()
        .base_url(&server.base_url)
        .api_key("k")
        .retry(retry)
        .build()
}

fn request() -> Request {
    Request::new(vec![Message::user("Hi")])
}

fn ok_text() -> Reply {
    Reply::sse(fixture("anthropic", "text"))
}

#[tokio::test]
async fn rate_limit_with_retry_after_seconds_waits_that_long() {
    let server = Server::start(vec![
        Reply::status(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )
        .header("retry-after", "1"),
        ok_text(),
    ])
    .await;
    let (policy, waits) = recording(3);
    let events = drain(adapter(&server, policy).stream(request()).await.unwrap()).await;
    assert_eq!(
        events.last(),
        Some(&Event::Done {
            stop_reason: StopReason::EndTurn
        })
    );
    assert_eq!(*waits.lock().unwrap(), [Duration::from_secs(1)]);
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn rate_limit_with_an_http_date_waits_until_then() {
    let at = SystemTime::now() + Duration::from_secs(30);
    let server = Server::start(vec![
        Reply::status(429, "{}").header("retry-after", &httpdate::fmt_http_date(at)),
        ok_text(),
    ])
    .await;
    let (policy, waits) = recording(3);
    drain(adapter(&server, policy).stream(request()).await.unwrap()).await;
    let waits = waits.lock().unwrap();
    assert_eq!(waits.len(), 1);
    // An HTTP date has whole seconds: the wait is the 30 s asked, less up to
    // the sub-second part lost and the time the request took.
    assert!(
        waits[0] > Duration::from_secs(27) && waits[0] <= Duration::from_secs(30),
        "{waits:?}"
    );
}

#[tokio::test]
async fn a_wait_too_long_for_a_duration_is_the_longest_honoured() {
    // A server may ask for any wait: one past what a `Duration` holds
    // (`1e300` seconds) is capped like any long one, never a panic.
    let server = Server::start(vec![
        Reply::status(429, "{}").header("retry-after", "1e300"),
        Reply::status(503, "{}").header("retry-after-ms", "1e300"),
        ok_text(),
    ])
    .await;
    let (policy, waits) = recording(3);
    let longest = policy.max_retry_after;
    let events = drain(adapter(&server, policy).stream(request()).await.unwrap()).await;
    assert_eq!(
        events.last(),
        Some(&Event::Done {
            stop_reason: StopReason::EndTurn
        })
    );
    assert_eq!(*waits.lock().unwrap(), [longest, longest]);
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn overloaded_twice_then_success() {
    let server = Server::start(vec![
        Reply::status(529, OVERLOADED),
        Reply::status(529, OVERLOADED),
        ok_text(),
    ])
    .await;
    let (policy, waits) = recording(3);
    let events = drain(
        adapter(&server, policy.clone())
            .stream(request())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(events[0], Event::delta("Bonjour"));
    assert_eq!(server.received().len(), 3);
    let waits = waits.lock().unwrap();
    assert_eq!(waits.len(), 2);
    // Exponential backoff with jitter: each wait within [¾, 1] of base·2ⁿ.
    for (n, wait) in waits.iter().enumerate() {
        let nominal = policy.base_delay * 2u32.pow(n as u32);
        assert!(
            *wait <= nominal && *wait >= nominal.mul_f64(0.75),
            "wait {n}: {wait:?}"
        );
    }
}

#[tokio::test]
async fn retries_are_bounded() {
    let server = Server::start(vec![Reply::status(503, "upstream down")]).await;
    let (policy, waits) = recording(2);
    match adapter(&server, policy).stream(request()).await {
        Err(LlmError::Status {
            status, message, ..
        }) => {
            assert_eq!((status, message.as_str()), (503, "upstream down"))
        }
        Err(other) => panic!("expected the last status, got {other:?}"),
        Ok(_) => panic!("every attempt failed"),
    }
    assert_eq!(server.received().len(), 3);
    assert_eq!(waits.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = Server::start(vec![Reply::status(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}"#,
    )])
    .await;
    let (policy, waits) = recording(3);
    match adapter(&server, policy).stream(request()).await {
        Err(error @ LlmError::Status { status: 400, .. }) => {
            assert!(
                error.to_string().contains("max_tokens: must be positive"),
                "{error}"
            )
        }
        Err(other) => panic!("expected a 400, got {other:?}"),
        Ok(_) => panic!("a 400 must fail"),
    }
    assert_eq!(server.received().len(), 1);
    assert!(waits.lock().unwrap().is_empty());
}

/// The text fixture up to its first text delta, then Anthropic's in-stream
/// 500 (`api_error`).
fn fails_after_first_delta() -> String {
    let text = String::from_utf8(fixture("anthropic", "text")).unwrap();
    let first_delta = text.find("Bonjour").unwrap();
    let end = first_delta + text[first_delta..].find("\n\n").unwrap() + 2;
    format!(
        "{}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"api_error\",\"message\":\"Internal server error\"}}}}\n\n",
        &text[..end]
    )
}

#[tokio::test]
async fn a_500_after_the_first_event_is_an_error_event_not_a_retry() {
    let server = Server::start(vec![Reply::sse(fails_after_first_delta()), ok_text()]).await;
    let (policy, waits) = recording(3);
    let events = drain(adapter(&server, policy).stream(request()).await.unwrap()).await;
    assert_eq!(events[0], Event::delta("Bonjour"));
    assert!(
        matches!(&events[1..], [Event::Error(LlmError::Api { kind, .. })] if kind == "api_error"),
        "{events:?}"
    );
    assert_eq!(server.received().len(), 1);
    assert!(waits.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_connection_cut_after_the_first_event_is_an_error_event_not_a_retry() {
    let text = fails_after_first_delta();
    let cut = text[..text.find("event: error").unwrap()].to_owned();
    let server = Server::start(vec![Reply::sse(cut), ok_text()]).await;
    let (policy, waits) = recording(3);
    let events = drain(adapter(&server, policy).stream(request()).await.unwrap()).await;
    assert_eq!(events[0], Event::delta("Bonjour"));
    assert!(
        matches!(&events[1..], [Event::Error(LlmError::Truncated { .. })]),
        "{events:?}"
    );
    assert_eq!(server.received().len(), 1);
    assert!(waits.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_error_event_before_any_event_is_retried() {
    let text = String::from_utf8(fixture("anthropic", "text")).unwrap();
    let message_start = &text[..text.find("event: content_block_start").unwrap()];
    let failing = format!(
        "{message_start}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"api_error\",\"message\":\"Internal server error\"}}}}\n\n"
    );
    let server = Server::start(vec![Reply::sse(failing), ok_text()]).await;
    let (policy, waits) = recording(3);
    let events = drain(adapter(&server, policy).stream(request()).await.unwrap()).await;
    assert_eq!(events[0], Event::delta("Bonjour"));
    assert!(matches!(events.last(), Some(Event::Done { .. })));
    assert_eq!(server.received().len(), 2);
    assert_eq!(waits.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn without_retries_the_first_failure_is_final() {
    let server = Server::start(vec![Reply::status(529, OVERLOADED), ok_text()]).await;
    let result = adapter(&server, RetryPolicy::none())
        .stream(request())
        .await;
    assert!(matches!(result, Err(LlmError::Status { status: 529, .. })));
    assert_eq!(server.received().len(), 1);
}
