//! [`Session`]: a connection to one MCP server that stays up. It connects in
//! the background, keeps the server's tool list (listed again only when the
//! server says it changed), and when the server dies (its program exits, its
//! URL refuses connections or answers 5xx) it restarts or reconnects with
//! exponential backoff while calls meanwhile fail at once, saying so.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool};
use rmcp::service::{NotificationContext, Peer, RoleClient, ServiceError};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::mcp_client::Endpoint;
use crate::retry::RetryPolicy;

/// How long connecting (and the first listing of tools) may take, unless set.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to one MCP server, kept up: a cheap handle, cloned freely;
/// the connection closes (a started program is killed) when the last clone
/// is dropped.
///
/// It connects when first [started](Session::start) (an agent starts the
/// sessions of its servers), in the background. The server's tools are
/// listed once per connection and again only after the server sends
/// `notifications/tools/list_changed`. When the connection breaks, the
/// session restarts the program (or reconnects to the URL) after a delay
/// growing exponentially with each failed attempt ([`RetryPolicy::delay`];
/// there is no limit on attempts); calls made meanwhile fail at once with
/// [`CallError::Down`].
///
/// ```no_run
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::time::Duration;
/// use skillkit::mcp_client::{Endpoint, Session};
///
/// let session = Session::new(Endpoint::command("npx", ["-y", "@modelcontextprotocol/server-everything"]));
/// session.start();
/// assert!(session.wait_connected(Duration::from_secs(30)).await);
/// let tools = session.tools().await.unwrap();
/// let echo = serde_json::json!({"message": "hi"});
/// let result = session.call_tool("echo", echo.as_object().cloned()).await.unwrap();
/// # let _ = (tools, result);
/// # });
/// ```
#[derive(Clone)]
pub struct Session(Arc<Handle>);

/// What [`Session::call_tool`] could not do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The server is not connected: it died, or is being (re)started.
    #[error(
        "the MCP server {server} is down ({reason}); it is being restarted or reconnected \
         in the background: try the call again shortly"
    )]
    Down {
        /// The server's endpoint, as displayed.
        server: String,
        /// Why it is down.
        reason: String,
    },
    /// The server answered the call with a JSON-RPC error (an unknown tool,
    /// invalid arguments).
    #[error("the MCP server {server} refused the call: {message}")]
    Refused {
        /// The server's endpoint, as displayed.
        server: String,
        /// What it said.
        message: String,
    },
}

/// Whether a session is connected, as [`Session::status`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// Not started yet.
    Idle,
    /// Connecting (`attempt` counts from 0 since the last connection).
    Connecting {
        /// The attempt.
        attempt: u32,
    },
    /// Connected.
    Up,
    /// Not connected; the next attempt comes after a delay.
    Down {
        /// Why.
        reason: String,
    },
}

/// The clones' shared part: dropping the last one stops the background task.
struct Handle {
    inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.inner.shutdown.cancel();
    }
}

struct Inner {
    endpoint: Endpoint,
    retry: RetryPolicy,
    connect_timeout: Duration,
    state: watch::Sender<State>,
    started: AtomicBool,
    /// Set by `notifications/tools/list_changed`: list again on next use.
    stale: AtomicBool,
    /// The last list (kept across reconnections), `None` until listed once.
    tools: Mutex<Option<Arc<[Tool]>>>,
    /// One `tools/list` at a time.
    listing: tokio::sync::Mutex<()>,
    /// Numbers connections, so a late failure of an old one is ignored.
    generation: AtomicU64,
    shutdown: CancellationToken,
}

#[derive(Clone)]
enum State {
    Idle,
    Connecting {
        attempt: u32,
    },
    Up {
        peer: Peer<RoleClient>,
        generation: u64,
        /// Cancelled when a call finds the connection broken: the
        /// background task drops it and reconnects.
        broken: CancellationToken,
    },
    Down {
        reason: String,
    },
}

impl Session {
    /// A session with `endpoint`, not connected until [started](Self::start).
    ///
    /// ```
    /// use skillkit::mcp_client::{Endpoint, Session, Status};
    /// let session = Session::new(Endpoint::url("http://127.0.0.1:9/mcp"));
    /// assert_eq!(session.status(), Status::Idle);
    /// ```
    pub fn new(endpoint: Endpoint) -> Self {
        Session::build(endpoint, RetryPolicy::default(), DEFAULT_CONNECT_TIMEOUT)
    }

    fn build(endpoint: Endpoint, retry: RetryPolicy, connect_timeout: Duration) -> Self {
        let inner = Inner {
            endpoint,
            retry,
            connect_timeout,
            state: watch::Sender::new(State::Idle),
            started: AtomicBool::new(false),
            stale: AtomicBool::new(false),
            tools: Mutex::new(None),
            listing: tokio::sync::Mutex::new(()),
            generation: AtomicU64::new(0),
            shutdown: CancellationToken::new(),
        };
        Session(Arc::new(Handle {
            inner: Arc::new(inner),
        }))
    }

    /// The same session with another backoff between (re)connection attempts
    /// (its `base_delay` and `max_delay`; attempts are never limited). Only
    /// before [`start`](Self::start).
    ///
    /// ```
    /// use std::time::Duration;
    /// use skillkit::mcp_client::{Endpoint, Session};
    /// let mut quick = skillkit::RetryPolicy::default();
    /// quick.base_delay = Duration::from_millis(100);
    /// let session = Session::new(Endpoint::url("http://127.0.0.1:9/mcp")).retry(quick);
    /// # let _ = session;
    /// ```
    pub fn retry(self, policy: RetryPolicy) -> Self {
        let inner = &self.0.inner;
        Session::build(inner.endpoint.clone(), policy, inner.connect_timeout)
    }

    /// The same session with another limit on connecting and listing the
    /// tools ([`DEFAULT_CONNECT_TIMEOUT`] unless set): an attempt that takes
    /// longer fails and is retried. Only before [`start`](Self::start).
    ///
    /// ```
    /// use std::time::Duration;
    /// use skillkit::mcp_client::{Endpoint, Session};
    /// let session = Session::new(Endpoint::url("http://127.0.0.1:9/mcp")).connect_timeout(Duration::from_secs(3));
    /// # let _ = session;
    /// ```
    pub fn connect_timeout(self, timeout: Duration) -> Self {
        let inner = &self.0.inner;
        Session::build(inner.endpoint.clone(), inner.retry.clone(), timeout)
    }

    /// The server's endpoint.
    ///
    /// ```
    /// use skillkit::mcp_client::{Endpoint, Session};
    /// let session = Session::new(Endpoint::url("http://127.0.0.1:9/mcp"));
    /// assert_eq!(session.endpoint().to_string(), "http://127.0.0.1:9/mcp");
    /// ```
    pub fn endpoint(&self) -> &Endpoint {
        &self.0.inner.endpoint
    }

    /// How long an attempt to connect may take.
    pub fn connect_timeout_value(&self) -> Duration {
        self.0.inner.connect_timeout
    }

    /// Starts connecting in the background, on the current Tokio runtime
    /// (again: nothing). Must be called inside a Tokio runtime.
    pub fn start(&self) {
        let inner = &self.0.inner;
        if inner.started.swap(true, Ordering::SeqCst) {
            return;
        }
        // Connecting from now on, so no one takes the session for idle
        // before the task runs.
        inner.state.send_replace(State::Connecting { attempt: 0 });
        tokio::spawn(supervise(Arc::clone(inner)));
    }

    /// Whether the session is connected now.
    ///
    /// ```
    /// use skillkit::mcp_client::{Endpoint, Session, Status};
    /// assert_eq!(Session::new(Endpoint::url("http://127.0.0.1:9/mcp")).status(), Status::Idle);
    /// ```
    pub fn status(&self) -> Status {
        match &*self.0.inner.state.borrow() {
            State::Idle => Status::Idle,
            State::Connecting { attempt } => Status::Connecting { attempt: *attempt },
            State::Up { .. } => Status::Up,
            State::Down { reason } => Status::Down {
                reason: reason.clone(),
            },
        }
    }

    /// Waits until the session is connected, up to `timeout`; whether it is.
    pub async fn wait_connected(&self, timeout: Duration) -> bool {
        let mut state = self.0.inner.state.subscribe();
        let up = state.wait_for(|state| matches!(state, State::Up { .. }));
        matches!(tokio::time::timeout(timeout, up).await, Ok(Ok(_)))
    }

    /// Waits while the session connects, up to `timeout`: it returns once the
    /// session is up or an attempt has failed.
    pub async fn wait_settled(&self, timeout: Duration) {
        let mut state = self.0.inner.state.subscribe();
        let settled =
            state.wait_for(|state| matches!(state, State::Up { .. } | State::Down { .. }));
        let _ = tokio::time::timeout(timeout, settled).await;
    }

    /// The server's tools: the list of the last connection, listed again
    /// first when the server said it changed; `None` until it was listed
    /// once.
    pub async fn tools(&self) -> Option<Arc<[Tool]>> {
        let inner = &self.0.inner;
        if inner.stale.load(Ordering::SeqCst)
            && let Some((peer, generation)) = inner.peer()
        {
            let _one = inner.listing.lock().await;
            if inner.stale.swap(false, Ordering::SeqCst)
                && let Err(reason) = inner.list(&peer).await
            {
                inner.stale.store(true, Ordering::SeqCst);
                inner.broke(generation, reason);
            }
        }
        inner
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Calls tool `name` of the server with `arguments`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, CallError> {
        let inner = &self.0.inner;
        let Some((peer, generation)) = inner.peer() else {
            return Err(inner.down(inner.reason()));
        };
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        match peer.call_tool(params).await {
            Ok(result) => Ok(result),
            Err(ServiceError::McpError(error)) => Err(CallError::Refused {
                server: inner.endpoint.to_string(),
                message: error.message.to_string(),
            }),
            Err(error @ (ServiceError::TransportSend(_) | ServiceError::TransportClosed)) => {
                let reason = format!("the connection failed: {error}");
                inner.broke(generation, reason.clone());
                Err(inner.down(reason))
            }
            Err(error) => Err(CallError::Refused {
                server: inner.endpoint.to_string(),
                message: error.to_string(),
            }),
        }
    }
}

impl From<Endpoint> for Session {
    fn from(endpoint: Endpoint) -> Self {
        Session::new(endpoint)
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("endpoint", &self.0.inner.endpoint.to_string())
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Inner {
    fn peer(&self) -> Option<(Peer<RoleClient>, u64)> {
        match &*self.state.borrow() {
            State::Up {
                peer, generation, ..
            } => Some((peer.clone(), *generation)),
            _ => None,
        }
    }

    fn reason(&self) -> String {
        match &*self.state.borrow() {
            State::Down { reason } => reason.clone(),
            State::Connecting { .. } => "connecting".to_owned(),
            _ => "not started".to_owned(),
        }
    }

    fn down(&self, reason: String) -> CallError {
        CallError::Down {
            server: self.endpoint.to_string(),
            reason,
        }
    }

    /// Connection `generation` is broken: down now (so no call waits on
    /// it), and the background task reconnects.
    fn broke(&self, generation: u64, reason: String) {
        self.state.send_if_modified(|state| match state {
            State::Up {
                generation: g,
                broken,
                ..
            } if *g == generation => {
                broken.cancel();
                *state = State::Down { reason };
                true
            }
            _ => false,
        });
    }

    /// Lists the tools on `peer` into the cache.
    async fn list(&self, peer: &Peer<RoleClient>) -> Result<(), String> {
        let listed = tokio::time::timeout(self.connect_timeout, peer.list_all_tools()).await;
        match listed {
            Ok(Ok(tools)) => {
                *self.tools.lock().unwrap_or_else(PoisonError::into_inner) = Some(tools.into());
                Ok(())
            }
            Ok(Err(error)) => Err(format!("listing its tools failed: {error}")),
            Err(_) => Err(format!(
                "listing its tools took longer than {:?}",
                self.connect_timeout
            )),
        }
    }
}

/// Receives the server's notifications.
struct Notified(Weak<Inner>);

impl ClientHandler for Notified {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        if let Some(inner) = self.0.upgrade() {
            tracing::debug!(server = %inner.endpoint, "the MCP server's tools changed");
            inner.stale.store(true, Ordering::SeqCst);
        }
    }
}

/// The background task: connects, waits for the connection to end, and
/// connects again after a backoff, until the session is dropped.
async fn supervise(inner: Arc<Inner>) {
    let mut attempt = 0u32;
    loop {
        inner.state.send_replace(State::Connecting { attempt });
        let connected = tokio::select! {
            connected = connect(&inner) => connected,
            () = inner.shutdown.cancelled() => return,
        };
        let reason = match connected {
            Ok((client, generation, broken)) => {
                tracing::info!(server = %inner.endpoint, "connected to the MCP server");
                let reason = tokio::select! {
                    _ = client.waiting() => "the server closed the connection".to_owned(),
                    () = broken.cancelled() => inner.reason(),
                    () = inner.shutdown.cancelled() => return,
                };
                inner.broke(generation, reason.clone());
                // The first attempt after a connection ends waits the base delay.
                attempt = 1;
                reason
            }
            Err(reason) => {
                attempt = attempt.saturating_add(1);
                reason
            }
        };
        let delay = inner.retry.delay(attempt.saturating_sub(1), None);
        tracing::warn!(server = %inner.endpoint, %reason, ?delay, "the MCP server is down; trying again");
        inner.state.send_replace(State::Down { reason });
        tokio::select! {
            () = inner.retry.sleep(delay) => {}
            () = inner.shutdown.cancelled() => return,
        }
    }
}

/// One attempt: connect and list the tools, within the connect timeout.
async fn connect(
    inner: &Arc<Inner>,
) -> Result<
    (
        rmcp::service::RunningService<RoleClient, Notified>,
        u64,
        CancellationToken,
    ),
    String,
> {
    let attempt = async {
        let handler = Notified(Arc::downgrade(inner));
        let client = inner
            .endpoint
            .connect(handler)
            .await
            .map_err(|e| e.to_string())?;
        inner.stale.store(false, Ordering::SeqCst);
        inner.list(client.peer()).await?;
        Ok::<_, String>(client)
    };
    let client = match tokio::time::timeout(inner.connect_timeout, attempt).await {
        Ok(client) => client?,
        Err(_) => {
            return Err(format!(
                "connecting took longer than {:?}",
                inner.connect_timeout
            ));
        }
    };
    let generation = inner.generation.fetch_add(1, Ordering::SeqCst) + 1;
    let broken = CancellationToken::new();
    inner.state.send_replace(State::Up {
        peer: client.peer().clone(),
        generation,
        broken: broken.clone(),
    });
    Ok((client, generation, broken))
}
