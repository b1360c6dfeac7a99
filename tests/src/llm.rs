//! Shared by the `llm_*` tests: fixtures, and a tiny HTTP server on
//! 127.0.0.1 with byte-level control over what it sends.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
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

/// Every event of a stream that needs no runtime (a replay).
pub fn collect(events: EventStream) -> Vec<Event> {
    futures::executor::block_on(events.collect())
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

/// Every event of a stream.
pub async fn drain(stream: EventStream) -> Vec<Event> {
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
