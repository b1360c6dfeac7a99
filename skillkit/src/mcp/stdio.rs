//! [`JsonLines`]: MCP's stdio framing (one JSON-RPC message a line) over
//! any byte reader and writer, answering a malformed line with the
//! protocol's error (see `jsonrpc`) instead of dropping it as rmcp's own
//! stdio transport does, and going on with the next line.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::jsonrpc::{self, Read};

/// The longest line read (16 MiB, as rmcp's stdio transport); a longer one
/// is refused as not JSON and skipped to its end.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The server's end of MCP's stdio transport over any reader and writer: a
/// message a line, each malformed line answered with `-32700 Parse error`
/// or `-32600 Invalid Request` (id null) and the next line read as usual.
/// [`McpServer::serve_stdio`](super::McpServer::serve_stdio) serves it on
/// stdin and stdout; serve it on a pipe or a socket with
/// [`ServiceExt::serve`](rmcp::ServiceExt::serve).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::mcp::{JsonLines, McpServer};
/// use skillkit::mcp::rmcp::ServiceExt;
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// let server = McpServer::new(skillkit::Catalog::builder().build());
/// let (ours, theirs) = tokio::io::duplex(4096);
/// let (read, write) = tokio::io::split(theirs);
/// tokio::spawn(async move {
///     if let Ok(running) = server.serve(JsonLines::new(read, write)).await {
///         let _ = running.waiting().await;
///     }
/// });
/// let (read, mut write) = tokio::io::split(ours);
/// write.write_all(b"not json\n").await.unwrap();
/// let mut line = String::new();
/// BufReader::new(read).read_line(&mut line).await.unwrap();
/// assert!(line.contains("-32700"), "{line}");
/// # });
/// ```
pub struct JsonLines<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    write: Arc<Mutex<W>>,
}

impl<R, W> std::fmt::Debug for JsonLines<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonLines").finish_non_exhaustive()
    }
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> JsonLines<R, W> {
    /// The transport reading messages from `read` and writing to `write`.
    ///
    /// ```
    /// let lines = skillkit::mcp::JsonLines::new(tokio::io::empty(), tokio::io::sink());
    /// # let _ = lines;
    /// ```
    pub fn new(read: R, write: W) -> JsonLines<R, W> {
        JsonLines {
            read: BufReader::new(read),
            line: Vec::new(),
            write: Arc::new(Mutex::new(write)),
        }
    }

    /// The next line, without its line end; `None` at the end of input or
    /// on a read error. A line over [`MAX_LINE_BYTES`] comes back cut there
    /// (so it reads as malformed) and the rest of it is skipped.
    ///
    /// Cancel-safe: `receive` is polled in a `select!`, and a partial line
    /// stays in `self.line` for the next call.
    async fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            let available = match self.read.fill_buf().await {
                Ok([]) if self.line.is_empty() => return None,
                Ok([]) => return Some(std::mem::take(&mut self.line)),
                Ok(available) => available,
                Err(e) => {
                    tracing::warn!("cannot read from the MCP client: {e}");
                    return None;
                }
            };
            let end = memchr::memchr(b'\n', available);
            let take = end.map_or(available.len(), |i| i + 1);
            let room = (MAX_LINE_BYTES + 1).saturating_sub(self.line.len());
            self.line
                .extend_from_slice(&available[..take.min(room).min(available.len())]);
            self.read.consume(take);
            if end.is_some() {
                let mut line = std::mem::take(&mut self.line);
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                return Some(line);
            }
        }
    }
}

impl<R, W> Transport<RoleServer> for JsonLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let line = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            write_line(&write, line).await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let line = self.next_line().await?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match jsonrpc::read(&line) {
                Read::Message(message) => return Some(*message),
                Read::Malformed {
                    answer,
                    notification: true,
                } => tracing::debug!("dropped a malformed notification: {answer}"),
                Read::Malformed { answer, .. } | Read::InvalidParams { answer } => {
                    tracing::debug!("refused a malformed message: {answer}");
                    if write_line(&self.write, answer).await.is_err() {
                        return None;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}

/// Writes `line` and a line end, and flushes.
async fn write_line<W: AsyncWrite + Unpin>(
    write: &Mutex<W>,
    mut line: String,
) -> std::io::Result<()> {
    line.push('\n');
    let mut write = write.lock().await;
    write.write_all(line.as_bytes()).await?;
    write.flush().await
}
