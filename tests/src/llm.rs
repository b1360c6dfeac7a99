//! Shared by the `llm_*` tests: fixtures, and a tiny HTTP server on
//! 127.0.0.1 with byte-level control over what it sends.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use skillkit::llm::{Event, EventStream, StopReason, Usage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// The bytes of `tests/fixtures/llm/<vendor>/<name>.sse`.
pub fn fixture(vendor: &str, name: &str) -> Vec<u8> {
    let path = fixture_path(vendor, name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

pub fn fixture_path(vendor: &str, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/llm")
        .join(vendor)
        .join(format!("{name}.sse"))
}

/// `chunks` as owned pieces, for an adapter's `replay`.
pub fn pieces(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
    chunks.iter().map(|chunk| chunk.to_vec()).collect()
}

/// Every event of a stream that needs no runtime (a replay), but the
/// answer's id and model ([`Event::Started`], asserted on its own).
pub fn collect(events: EventStream) -> Vec<Event> {
    without_started(futures::executor::block_on(events.collect()))
}

fn without_started(mut events: Vec<Event>) -> Vec<Event> {
    events.retain(|event| !matches!(event, Event::Started { .. }));
    events
}

/// A usage event with input and output tokens only.
pub fn usage(input: u64, output: u64) -> Event {
    Event::Usage(Usage {
        input_tokens: input,
        output_tokens: output,
        ..Default::default()
    })
}

/// A done event.
pub fn done(stop_reason: StopReason) -> Event {
    Event::Done { stop_reason }
}

/// Every event of a stream, but the answer's id and model
/// ([`Event::Started`], asserted on its own).
pub async fn drain(stream: EventStream) -> Vec<Event> {
    without_started(stream.collect().await)
}

/// Every event of a stream, [`Event::Started`] included.
pub async fn drain_all(stream: EventStream) -> Vec<Event> {
    stream.collect().await
}

/// One planned answer of the server.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body, written piece by piece (each piece flushed on its own).
    pub pieces: Vec<Vec<u8>>,
    /// Keep the connection open after the body, until the client closes it.
    pub hold_open: bool,
}

impl Reply {
    /// 200 with an SSE body in one piece.
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            pieces: vec![body.into()],
            hold_open: false,
        }
    }

    /// An error status with a JSON body.
    pub fn status(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            pieces: vec![body.as_bytes().to_vec()],
            hold_open: false,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The body split into pieces of `size` bytes.
    pub fn in_pieces_of(mut self, size: usize) -> Self {
        let body: Vec<u8> = self.pieces.concat();
        self.pieces = body.chunks(size).map(<[u8]>::to_vec).collect();
        self
    }

    pub fn hold_open(mut self) -> Self {
        self.hold_open = true;
        self
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// Answers each connection with the next planned reply (the last one
/// repeats), records every request, and reports when a held-open connection
/// is closed by the client.
pub struct Server {
    pub base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    closed: tokio::sync::Mutex<mpsc::UnboundedReceiver<()>>,
}

impl Server {
    pub async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let (closed_tx, closed_rx) = mpsc::unbounded_channel();
        let log = received.clone();
        tokio::spawn(async move {
            let mut next = 0;
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let reply = replies[next.min(replies.len() - 1)].clone();
                next += 1;
                let log = log.clone();
                let closed = closed_tx.clone();
                tokio::spawn(async move { serve(socket, reply, log, closed).await });
            }
        });
        Server {
            base_url,
            received,
            closed: tokio::sync::Mutex::new(closed_rx),
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits (at most 10 s, so a failing test cannot hang) until the client
    /// closes a held-open connection; `false` if it never does.
    pub async fn client_closed(&self) -> bool {
        let mut closed = self.closed.lock().await;
        matches!(
            tokio::time::timeout(Duration::from_secs(10), closed.recv()).await,
            Ok(Some(()))
        )
    }
}

async fn serve(
    mut socket: TcpStream,
    reply: Reply,
    log: Arc<Mutex<Vec<Received>>>,
    closed: mpsc::UnboundedSender<()>,
) {
    socket.set_nodelay(true).ok();
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    log.lock().unwrap().push(request);
    let mut head = format!("HTTP/1.1 {} X\r\nconnection: close\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for piece in &reply.pieces {
        if socket.write_all(piece).await.is_err() || socket.flush().await.is_err() {
            return;
        }
    }
    if reply.hold_open {
        let mut buf = [0u8; 1024];
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        closed.send(()).ok();
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Received> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Received {
        method,
        path,
        headers,
        body,
    })
}

// ---------------------------------------------------------------------------
// Anthropic SSE bodies.
// ---------------------------------------------------------------------------

/// Splits `input`'s JSON text in two, as a model streams it in pieces.
pub fn halves(input: &Value) -> (String, String) {
    let text = input.to_string();
    let (a, b) = text.split_at(text.len() / 2);
    (a.to_owned(), b.to_owned())
}

/// An Anthropic SSE body of `events`.
pub fn anthropic_sse(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect::<String>()
        .into_bytes()
}

pub fn anthropic_start() -> Vec<Value> {
    anthropic_start_counting(10)
}

/// The start of an Anthropic answer whose request counted `input_tokens`.
pub fn anthropic_start_counting(input_tokens: u64) -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1}
        }}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
    ]
}

pub fn anthropic_delta(text: &str) -> Value {
    json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": text}})
}

pub fn anthropic_end(stop_reason: &str) -> Vec<Value> {
    vec![
        json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ]
}

/// A final text answer.
pub fn anthropic_text(text: &str) -> Vec<u8> {
    let mut events = anthropic_start();
    events.push(anthropic_delta(text));
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.extend(anthropic_end("end_turn"));
    anthropic_sse(&events)
}

/// Text, then one `tool_use` block per call (indexes 1, 2, …) whose input
/// JSON arrives interleaved, as parallel calls do.
pub fn anthropic_tool_calls(text: &str, calls: &[(&str, &str, Value)]) -> Vec<u8> {
    let mut events = anthropic_start();
    events.push(anthropic_delta(text));
    events.push(json!({"type": "content_block_stop", "index": 0}));
    for (i, (id, name, _)) in calls.iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": i + 1,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
    }
    let pieces: Vec<(String, String)> = calls.iter().map(|(_, _, input)| halves(input)).collect();
    for half in [0, 1] {
        for (i, (a, b)) in pieces.iter().enumerate() {
            let partial = if half == 0 { a } else { b };
            events.push(json!({"type": "content_block_delta", "index": i + 1,
                "delta": {"type": "input_json_delta", "partial_json": partial}}));
        }
    }
    for i in (0..calls.len()).rev() {
        events.push(json!({"type": "content_block_stop", "index": i + 1}));
    }
    events.extend(anthropic_end("tool_use"));
    anthropic_sse(&events)
}

// ---------------------------------------------------------------------------
// OpenAI SSE bodies.
// ---------------------------------------------------------------------------

/// An OpenAI chat-completions SSE body of `chunks` (`delta`, `finish_reason`),
/// with a usage chunk and `[DONE]`.
pub fn openai_sse(chunks: &[(Value, Option<&str>)]) -> Vec<u8> {
    let mut body = String::new();
    for (delta, finish) in chunks {
        let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
        "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    body.into_bytes()
}

pub fn openai_text(text: &str) -> Vec<u8> {
    openai_sse(&[
        (json!({"role": "assistant", "content": ""}), None),
        (json!({"content": text}), None),
        (json!({}), Some("stop")),
    ])
}
