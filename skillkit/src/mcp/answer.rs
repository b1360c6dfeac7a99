//! The answer to a POSTed request, sent whole. rmcp answers each request of
//! a session with an event stream: the response when the handler is done
//! (after a reconnection hint, unless told not to make one, as `http` does),
//! then the end of the stream. Sent as it comes, that is two or three writes
//! for one answer, and the second waits on the client's delayed
//! acknowledgement of the first (tens of milliseconds a call). The stream of a request ends with its response (rmcp closes it
//! then), so it is read to its end here and sent in one write: as
//! `application/json` when it holds one message and the client accepts
//! JSON (MCP lets the server choose), else as the same event stream, whole.
//! A request's answer is sent when it is complete, so this server sends no
//! progress before it (it sends none).

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

/// The content type of an event stream.
const EVENT_STREAM: &str = "text/event-stream";

/// `response` (to a request whose client accepts a JSON answer when
/// `json`, see [`accepts_json`]), sent whole.
pub(super) async fn whole(json: bool, response: Response) -> Response {
    let streamed = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(EVENT_STREAM.as_bytes()));
    if response.status() != StatusCode::OK || !streamed {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::warn!("the answer to a request could not be read: {e}");
            return Response::from_parts(parts, Body::empty());
        }
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut messages = messages(&bytes);
    let body = match (messages.pop(), messages.is_empty() && json) {
        (Some(message), true) => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            parts.headers.remove(header::CACHE_CONTROL);
            parts.headers.remove("x-accel-buffering");
            Body::from(message)
        }
        _ => Body::from(bytes),
    };
    Response::from_parts(parts, body)
}

/// Whether a request with headers `asked` accepts a JSON answer.
pub(super) fn accepts_json(asked: &HeaderMap) -> bool {
    asked.get_all(header::ACCEPT).iter().any(|value| {
        value.to_str().is_ok_and(|value| {
            value.split(',').any(|item| {
                let kind = item.split(';').next().unwrap_or("").trim();
                kind.eq_ignore_ascii_case("application/json") || kind == "*/*"
            })
        })
    })
}

/// The data of each event of an event stream that carries data (retry
/// hints and comments carry none), its `data:` lines joined by newlines.
fn messages(stream: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(stream);
    let mut messages = Vec::new();
    let mut event: Option<String> = None;
    let mut end_event = |event: &mut Option<String>| {
        if let Some(data) = event.take().filter(|data| !data.is_empty()) {
            messages.push(data);
        }
    };
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            end_event(&mut event);
        } else if let Some(data) = line.strip_prefix("data:") {
            let data = data.strip_prefix(' ').unwrap_or(data);
            match &mut event {
                Some(joined) => {
                    joined.push('\n');
                    joined.push_str(data);
                }
                None => event = Some(data.to_owned()),
            }
        }
    }
    end_event(&mut event);
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event_stream(body: &'static str) -> Response {
        Response::builder()
            .header(header::CONTENT_TYPE, EVENT_STREAM)
            .body(Body::from(body))
            .unwrap()
    }

    fn accepting(accept: &'static str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
        accepts_json(&headers)
    }

    async fn read(response: Response) -> (String, String) {
        let kind = response.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .to_owned();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (kind, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn one_message_is_sent_as_json_when_json_is_accepted() {
        let stream = "retry: 3000\n\n:\n\ndata: {\"id\":1}\n\n";
        let both = accepting("application/json, text/event-stream");
        let (kind, body) = read(whole(both, event_stream(stream)).await).await;
        assert_eq!(
            (kind.as_str(), body.as_str()),
            ("application/json", "{\"id\":1}")
        );
        // A client that takes only the stream gets it, whole.
        let sse = accepting("text/event-stream");
        let (kind, body) = read(whole(sse, event_stream(stream)).await).await;
        assert_eq!((kind.as_str(), body.as_str()), (EVENT_STREAM, stream));
    }

    #[tokio::test]
    async fn several_messages_stay_an_event_stream() {
        let stream = "data: {\"method\":\"n\"}\n\ndata: {\"id\":1}\n\n";
        let both = accepting("application/json, text/event-stream");
        let (kind, body) = read(whole(both, event_stream(stream)).await).await;
        assert_eq!((kind.as_str(), body.as_str()), (EVENT_STREAM, stream));
    }

    #[test]
    fn data_lines_of_an_event_are_one_message() {
        assert_eq!(
            messages(b"id: 0\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nretry: 5\n\n"),
            ["{\"a\":\n1}"]
        );
    }

    #[test]
    fn hints_and_comments_are_no_message_and_the_last_event_needs_no_blank_line() {
        assert!(messages(b"id: 0\nretry: 3000\ndata:\n\n: ping\n\n").is_empty());
        assert_eq!(
            messages(b"retry: 3000\n\ndata: {\"id\":1}\ndata: 2"),
            ["{\"id\":1}\n2"]
        );
    }
}
