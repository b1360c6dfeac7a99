//! The HTTP side every streaming adapter shares: send with retries, then turn
//! the response body into events, with an idle timeout, a retry when the
//! vendor fails before the first event, and cancellation on drop.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt, TryStreamExt};
use reqwest::header::HeaderMap;
use tracing::Instrument;

use crate::llm::decoder::{Decoder, FromSse};
use crate::llm::{Event, EventStream, LlmError, Streamable};
use crate::retry::RetryPolicy;
use crate::retry::requested_wait;

/// Connection settings shared by the HTTP adapters.
#[derive(Debug, Clone)]
pub(crate) struct HttpSettings {
    pub client: reqwest::Client,
    pub retry: RetryPolicy,
    pub connect_timeout: Duration,
    pub idle_timeout: Duration,
}

impl HttpSettings {
    pub(crate) fn new(
        connect_timeout: Duration,
        idle_timeout: Duration,
        retry: RetryPolicy,
    ) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .build()
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "cannot build the configured HTTP client; using the default one");
                reqwest::Client::new()
            });
        HttpSettings {
            client,
            retry,
            connect_timeout,
            idle_timeout,
        }
    }
}

/// One request, ready to send as many times as retries need.
pub(crate) struct HttpRequest {
    pub provider: &'static str,
    pub model: String,
    pub url: String,
    /// Headers, credentials marked sensitive.
    pub headers: HeaderMap,
    pub body: Bytes,
}

struct Call {
    settings: HttpSettings,
    request: HttpRequest,
    span: tracing::Span,
}

/// Sends `request`, retrying per the settings, and streams the answer
/// decoded as vendor events `E`.
pub(crate) async fn stream<E>(
    settings: HttpSettings,
    request: HttpRequest,
) -> Result<EventStream, LlmError>
where
    E: Streamable + FromSse + Send + 'static,
{
    let span = tracing::info_span!(
        "llm.request",
        provider = request.provider,
        model = %request.model,
        attempt = tracing::field::Empty,
        status = tracing::field::Empty,
        input_tokens = tracing::field::Empty,
        output_tokens = tracing::field::Empty,
    );
    let call = Arc::new(Call {
        settings,
        request,
        span: span.clone(),
    });
    let mut attempt = 0;
    let body = open(&call, &mut attempt).instrument(span).await?;
    let live = Live::<E> {
        call,
        body,
        decoder: Decoder::new(),
        pending: VecDeque::new(),
        attempt,
        yielded: false,
        over: false,
    };
    Ok(Box::pin(futures::stream::unfold(
        live,
        |mut live| async move {
            let span = live.call.span.clone();
            let event = live.next().instrument(span).await?;
            Some((event, live))
        },
    )))
}

/// Sends the request until it gets a success status, or the error that ends
/// the retries. `attempt` counts sends over the whole call.
async fn open(
    call: &Call,
    attempt: &mut u32,
) -> Result<BoxStream<'static, reqwest::Result<Bytes>>, LlmError> {
    let retry = &call.settings.retry;
    let mut retries = 0;
    loop {
        *attempt += 1;
        call.span.record("attempt", *attempt);
        let (error, wait) = match send(call).await {
            Ok(body) => return Ok(body),
            Err(failure) => failure,
        };
        if !error.is_retryable() || retries >= retry.max_retries {
            tracing::warn!(%error, attempt = *attempt, "model request failed");
            return Err(error);
        }
        let delay = retry.delay(retries, wait);
        tracing::info!(%error, attempt = *attempt, delay_ms = delay.as_millis() as u64, "retrying model request");
        retry.sleep(delay).await;
        retries += 1;
    }
}

type Failure = (LlmError, Option<Duration>);

async fn send(call: &Call) -> Result<BoxStream<'static, reqwest::Result<Bytes>>, Failure> {
    let HttpRequest {
        provider,
        url,
        headers,
        body,
        ..
    } = &call.request;
    let idle = call.settings.idle_timeout;
    let sending = call
        .settings
        .client
        .post(url)
        .headers(headers.clone())
        .body(body.clone())
        .send();
    let response = match tokio::time::timeout(idle, sending).await {
        Err(_) => return Err((timeout(provider, "waiting for the response", idle), None)),
        Ok(Err(error)) if error.is_timeout() => {
            let connect = call.settings.connect_timeout;
            return Err((timeout(provider, "connecting", connect), None));
        }
        Ok(Err(error)) => return Err((transport_error(provider, &error), None)),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    call.span.record("status", status.as_u16());
    if status.is_success() {
        return Ok(response.bytes_stream().boxed());
    }
    let wait = requested_wait(response.headers(), SystemTime::now());
    let text = match tokio::time::timeout(idle, response.text()).await {
        Ok(Ok(text)) => text,
        _ => String::new(),
    };
    Err((
        LlmError::Status {
            provider: (*provider).into(),
            status: status.as_u16(),
            message: error_message(&text, status.canonical_reason().unwrap_or("")),
        },
        wait,
    ))
}

/// The message of a JSON error body (`{"error": {"message": …}}`, as both
/// Anthropic and OpenAI-compatible servers send), else the body itself.
fn error_message(body: &str, reason: &str) -> String {
    let json: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = json.as_ref().and_then(|json| {
        json.pointer("/error/message")
            .or_else(|| json.get("message"))
            .or_else(|| json.get("error"))
            .and_then(|m| m.as_str())
            .map(str::to_owned)
    });
    let message = from_json.unwrap_or_else(|| body.trim().to_owned());
    match message.is_empty() {
        true => reason.to_owned(),
        false => message.chars().take(500).collect(),
    }
}

fn timeout(provider: &str, during: &str, after: Duration) -> LlmError {
    LlmError::Timeout {
        provider: provider.into(),
        during: during.into(),
        after,
    }
}

fn transport_error(provider: &str, error: &reqwest::Error) -> LlmError {
    use std::error::Error as _;
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    LlmError::Transport {
        provider: provider.into(),
        message,
    }
}

/// A response being read.
struct Live<E: Streamable> {
    call: Arc<Call>,
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    decoder: Decoder<E>,
    pending: VecDeque<Event>,
    attempt: u32,
    /// Some event has reached the caller: no more retries.
    yielded: bool,
    /// The terminal event has been yielded.
    over: bool,
}

impl<E: Streamable + FromSse + Send + 'static> Live<E> {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                // The answer's id and model are no part of the answer: a
                // failure right after them is still retried.
                self.yielded |= !matches!(event, Event::Started { .. });
                self.over = event.is_terminal();
                self.observe(&event);
                return Some(event);
            }
            // Over, or the decoder is done without a terminal event (an
            // accumulator that completed silently): nothing more to read.
            if self.over || self.decoder.has_ended() {
                return None;
            }
            let mut events = Vec::new();
            self.read(&mut events).await;
            // A failure before any event reached the caller may be retried.
            let answer = events
                .iter()
                .position(|e| !matches!(e, Event::Started { .. }))
                .map_or(&events[..0], |at| &events[at..]);
            if let [Event::Error(error)] = answer
                && let Some(reopened) = self.reopen(error).await
            {
                match reopened {
                    Ok(()) => continue,
                    Err(error) => events = vec![Event::Error(error)],
                }
            }
            if matches!(events.last(), Some(Event::Done { .. })) {
                self.drain_ready();
            }
            self.pending.extend(events);
        }
    }

    async fn read(&mut self, events: &mut Vec<Event>) {
        let provider = self.call.request.provider;
        let idle = self.call.settings.idle_timeout;
        match tokio::time::timeout(idle, self.body.try_next()).await {
            Ok(Ok(Some(bytes))) => self.decoder.feed(&bytes, events),
            Ok(Ok(None)) => {
                self.decoder.finish(events);
                // An accumulator that says nothing at the end must not leave
                // the caller waiting on a finished body.
                if !events.iter().any(Event::is_terminal) {
                    events.push(Event::Error(LlmError::Truncated {
                        provider: provider.into(),
                    }));
                }
            }
            Ok(Err(error)) => events.push(Event::Error(transport_error(provider, &error))),
            Err(_) => events.push(Event::Error(timeout(provider, "streaming", idle))),
        }
    }

    /// Sends the request again when the vendor failed before any event
    /// reached the caller and retries remain. `None`: no retry.
    async fn reopen(&mut self, error: &LlmError) -> Option<Result<(), LlmError>> {
        let retry = &self.call.settings.retry;
        let retries = self.attempt - 1;
        if self.yielded || !error.is_retryable() || retries >= retry.max_retries {
            return None;
        }
        let delay = retry.delay(retries, None);
        tracing::info!(%error, attempt = self.attempt, delay_ms = delay.as_millis() as u64, "vendor failed before the first event; retrying");
        retry.sleep(delay).await;
        let mut attempt = self.attempt;
        let opened = open(&self.call, &mut attempt).await;
        self.attempt = attempt;
        Some(opened.map(|body| {
            self.body = body;
            self.decoder = Decoder::new();
        }))
    }

    /// After a complete answer, reads (without waiting) what the server
    /// already sent, so an HTTP/1 connection whose body reached its end can go
    /// back to the pool instead of being closed.
    fn drain_ready(&mut self) {
        for _ in 0..4 {
            match self.body.try_next().now_or_never() {
                Some(Ok(Some(_))) => continue,
                _ => return,
            }
        }
    }

    fn observe(&self, event: &Event) {
        let span = &self.call.span;
        match event {
            Event::Usage(usage) => {
                span.record("input_tokens", usage.input_tokens);
                span.record("output_tokens", usage.output_tokens);
            }
            Event::Done { stop_reason } => {
                tracing::debug!(%stop_reason, "model answer complete")
            }
            Event::Error(error) => tracing::warn!(%error, "model answer failed"),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_json_bodies() {
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(error_message(anthropic, "x"), "Overloaded");
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#, "x"),
            "model not found"
        );
        assert_eq!(error_message("", "Too Many Requests"), "Too Many Requests");
        assert_eq!(error_message("plain text", "x"), "plain text");
    }
}
