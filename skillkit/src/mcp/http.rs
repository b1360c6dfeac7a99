//! MCP's Streamable HTTP transport (rmcp's server, on axum), behind the
//! checks MCP asks of it: the `Origin` of browser requests (403), an
//! optional bearer token (401), a request size limit (413), and a body that
//! is one JSON-RPC message (400 with the JSON-RPC error, see `jsonrpc`).
//! Then rmcp checks the `Host` (loopback names unless others are allowed)
//! and serves the session, with its event stream for notifications; the
//! requests of an initialized session that ask nothing of it but that it
//! exists are answered here, after the same `Host` check (see `direct`).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use secrecy::{ExposeSecret, SecretString};

use super::jsonrpc::{self, Read};
use super::origin_header::{self, Allowed};
use super::{McpServer, ServeError};
use super::{answer, direct};

/// The path the server answers on (`http://127.0.0.1:8080/mcp`).
///
/// ```
/// assert_eq!(skillkit::mcp::HTTP_PATH, "/mcp");
/// ```
pub const HTTP_PATH: &str = "/mcp";

/// The largest request body accepted unless
/// [`HttpOptions::max_request_bytes`] says otherwise: 4 MiB.
///
/// ```
/// assert_eq!(skillkit::mcp::DEFAULT_MAX_REQUEST_BYTES, 4 << 20);
/// ```
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// How the HTTP transport guards itself: see [`McpServer::router`]. The
/// token is never shown (`Debug` prints `[redacted]`).
///
/// ```
/// use skillkit::mcp::HttpOptions;
/// let options = HttpOptions::new()
///     .bearer_token("s3cret")
///     .max_request_bytes(1 << 20)
///     .allow_origin("https://app.example.com")
///     .unwrap()
///     .allow_host("mcp.example.com");
/// let shown = format!("{options:?}");
/// assert!(shown.contains("[redacted]") && !shown.contains("s3cret"));
/// ```
#[derive(Clone)]
pub struct HttpOptions {
    token: Option<SecretString>,
    unauthenticated: bool,
    max_request_bytes: usize,
    origins: Vec<Allowed>,
    hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> HttpOptions {
        HttpOptions {
            token: None,
            unauthenticated: false,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            origins: origin_header::loopback(),
            hosts: ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec(),
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .field("unauthenticated", &self.unauthenticated)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("origins", &self.origins)
            .field("hosts", &self.hosts)
            .finish()
    }
}

impl HttpOptions {
    /// No token, [`DEFAULT_MAX_REQUEST_BYTES`], loopback origins and hosts.
    ///
    /// ```
    /// let options = skillkit::mcp::HttpOptions::new();
    /// assert!(format!("{options:?}").contains("token: None"));
    /// ```
    pub fn new() -> HttpOptions {
        HttpOptions::default()
    }

    /// Requires `Authorization: Bearer <token>` on every request (else 401).
    ///
    /// ```
    /// let options = skillkit::mcp::HttpOptions::new().bearer_token(std::env::var("MY_TOKEN").unwrap_or_default());
    /// # let _ = options;
    /// ```
    pub fn bearer_token(mut self, token: impl Into<String>) -> HttpOptions {
        self.token = Some(SecretString::from(token.into()));
        self
    }

    /// Serves without a bearer token on an address other machines reach
    /// (`0.0.0.0`, a LAN address), which [`McpServer::serve_http`] refuses
    /// otherwise ([`ServeError::NoToken`]): anyone who reaches the address
    /// is served. Not needed on loopback.
    ///
    /// ```
    /// let options = skillkit::mcp::HttpOptions::new().allow_unauthenticated();
    /// # let _ = options;
    /// ```
    pub fn allow_unauthenticated(mut self) -> HttpOptions {
        self.unauthenticated = true;
        self
    }

    /// Whether a listener bound to `addr` may serve with these options: not
    /// when `addr` is reachable from other machines (not loopback) and there
    /// is no bearer token, unless [`allow_unauthenticated`](Self::allow_unauthenticated)
    /// said so. [`McpServer::serve_http`] checks it; call it yourself to
    /// check before you announce the address.
    ///
    /// ```
    /// use skillkit::mcp::{HttpOptions, ServeError};
    /// let everywhere = "0.0.0.0:8080".parse().unwrap();
    /// assert!(matches!(HttpOptions::new().check_bind(everywhere), Err(ServeError::NoToken { .. })));
    /// assert!(HttpOptions::new().bearer_token("t").check_bind(everywhere).is_ok());
    /// assert!(HttpOptions::new().check_bind("127.0.0.1:8080".parse().unwrap()).is_ok());
    /// ```
    pub fn check_bind(&self, addr: std::net::SocketAddr) -> Result<(), ServeError> {
        match addr.ip().is_loopback() || self.token.is_some() || self.unauthenticated {
            true => Ok(()),
            false => Err(ServeError::NoToken { addr }),
        }
    }

    /// The largest request body accepted (else 413).
    ///
    /// ```
    /// let options = skillkit::mcp::HttpOptions::new().max_request_bytes(64 * 1024);
    /// # let _ = options;
    /// ```
    pub fn max_request_bytes(mut self, bytes: usize) -> HttpOptions {
        self.max_request_bytes = bytes;
        self
    }

    /// Also accepts requests from browser pages of `origin`
    /// (`scheme://host[:port]`, `:*` for any port; without a port, the
    /// scheme's default). Refused when it is not of that form.
    ///
    /// ```
    /// use skillkit::mcp::HttpOptions;
    /// assert!(HttpOptions::new().allow_origin("http://dev.example.com:*").is_ok());
    /// assert!(HttpOptions::new().allow_origin("dev.example.com").is_err());
    /// ```
    pub fn allow_origin(mut self, origin: &str) -> Result<HttpOptions, ServeError> {
        let allowed = Allowed::parse(origin).ok_or_else(|| {
            ServeError::Options(format!(
                "`{origin}` is not an origin; write it as scheme://host[:port], such as \
                 https://app.example.com or http://localhost:*"
            ))
        })?;
        self.origins.push(allowed);
        Ok(self)
    }

    /// Also answers requests whose `Host` is `host` (a name, or
    /// `name:port`), for a server reached by a name other than loopback.
    ///
    /// ```
    /// let options = skillkit::mcp::HttpOptions::new().allow_host("mcp.internal");
    /// # let _ = options;
    /// ```
    pub fn allow_host(mut self, host: impl Into<String>) -> HttpOptions {
        self.hosts.push(host.into());
        self
    }
}

/// The checks that run before rmcp sees a request.
struct Guard {
    token: Option<SecretString>,
    max_request_bytes: usize,
    origins: Vec<Allowed>,
    /// rmcp's sessions, so a `DELETE` of one that is not there is 404.
    sessions: Arc<LocalSessionManager>,
    /// What answers the requests of initialized sessions (see `direct`).
    server: McpServer,
    /// The `Host`s answered (rmcp checks them too).
    hosts: Vec<String>,
}

impl McpServer {
    /// The server as an axum [`Router`](axum::Router) answering MCP's
    /// Streamable HTTP transport on [`HTTP_PATH`]: merge or nest it into
    /// your application's router. Each client session is a connection of
    /// its own (with its change notifications on its event stream), ended
    /// by a `DELETE` (204; 404 for a session that ended or never began). A
    /// request is refused with 403 when its `Origin` is not allowed, 401
    /// without the bearer token (when one is set), 413 over the size limit,
    /// and 400 with a JSON-RPC error (`-32700`, `-32600`, id null) when its
    /// body is not one JSON-RPC message. The answer to a request is sent
    /// whole, in one write; serve it on connections with `TCP_NODELAY`
    /// (as [`serve_http`](Self::serve_http) does), or small answers wait on
    /// the client's delayed acknowledgements.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::mcp::{axum, HttpOptions, McpServer};
    ///
    /// let server = McpServer::new(skillkit::Catalog::builder().build());
    /// let app = axum::Router::new()
    ///     .route("/health", axum::routing::get(|| async { "ok" }))
    ///     .merge(server.router(HttpOptions::new()));
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    /// tokio::spawn(async move { axum::serve(listener, app).await });
    ///
    /// let client = reqwest::Client::new();
    /// let refused = client.post(&url).header("origin", "https://evil.example").body("{}").send().await.unwrap();
    /// assert_eq!(refused.status(), 403);
    /// let malformed = client.post(&url).body("not json").send().await.unwrap();
    /// assert_eq!(malformed.status(), 400);
    /// let error: serde_json::Value = malformed.json().await.unwrap();
    /// assert_eq!(error["error"]["code"], -32700);
    /// # });
    /// ```
    pub fn router(&self, options: HttpOptions) -> axum::Router {
        let config = StreamableHttpServerConfig::default()
            .with_max_request_body_bytes(options.max_request_bytes)
            .with_allowed_hosts(options.hosts.clone());
        let server = self.clone();
        // A request's answer is sent whole (see `answer`), so the event
        // that would open its stream (a reconnection hint with the
        // stream's event id, SEP-1699) would only ever arrive with the
        // answer itself: rmcp is told not to make one for every request.
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.sse_retry = None;
        let sessions = Arc::new(sessions);
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&sessions), config);
        let guard = Arc::new(Guard {
            token: options.token,
            max_request_bytes: options.max_request_bytes,
            origins: options.origins,
            sessions,
            server: self.for_joined(),
            hosts: options.hosts,
        });
        axum::Router::new()
            .route_service(HTTP_PATH, service)
            .layer(axum::middleware::from_fn_with_state(guard, check))
    }

    /// Serves [`router`](Self::router) on `listener` until the listener
    /// fails: bind it yourself (port 0 for any free port, and
    /// `local_addr` tells which). A listener other machines reach (not
    /// loopback) is refused without a bearer token
    /// ([`HttpOptions::check_bind`]). Accepted connections are set to
    /// `TCP_NODELAY`, so an answer is not held back waiting for the
    /// client's acknowledgement.
    ///
    /// ```no_run
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::mcp::{HttpOptions, McpServer};
    /// let catalog = skillkit::Catalog::builder().provider(skillkit::Local::new("skills")).build();
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
    /// McpServer::new(catalog).serve_http(listener, HttpOptions::new()).await.unwrap();
    /// # });
    /// ```
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
    ) -> Result<(), ServeError> {
        use axum::serve::ListenerExt;
        self.baseline().await;
        options.check_bind(listener.local_addr().map_err(ServeError::Io)?)?;
        // An answer goes out when written, not held back (Nagle) until the
        // client acknowledges the previous segment.
        let listener = listener.tap_io(|stream| {
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!("cannot set TCP_NODELAY on a connection: {e}");
            }
        });
        axum::serve(listener, self.router(options))
            .await
            .map_err(ServeError::Io)
    }
}

/// A plain-text refusal.
fn refuse(status: StatusCode, message: String) -> Response {
    (status, message).into_response()
}

/// Runs the guard's checks, then the rest of the stack.
async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Some(value) = request.headers().get(header::ORIGIN) {
        let origin = value.to_str().unwrap_or("");
        if !origin_header::allowed(origin, &guard.origins) {
            tracing::warn!(origin, "refused a request from a page of another origin");
            return refuse(
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: requests from pages of `{origin}` are not accepted (DNS \
                     rebinding protection); the server's operator can allow that origin"
                ),
            );
        }
    }
    if let Some(token) = &guard.token
        && !bearer_matches(request.headers().get(header::AUTHORIZATION), token)
    {
        let mut response = refuse(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: send the header `Authorization: Bearer <token>` with the server's \
             token"
                .to_owned(),
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    if request.method() == Method::DELETE {
        return end_session(&guard, request, next).await;
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let limit = guard.max_request_bytes;
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: a request body may hold at most {limit} bytes"),
        )
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return too_large();
    }
    let mut bytes = Vec::new();
    let mut chunks = body.into_data_stream();
    while let Some(chunk) = chunks.next().await {
        let Ok(chunk) = chunk else {
            return refuse(
                StatusCode::BAD_REQUEST,
                "Bad Request: the request body could not be read".to_owned(),
            );
        };
        if bytes.len() + chunk.len() > limit {
            return too_large();
        }
        bytes.extend_from_slice(&chunk);
    }
    let (status, answer, stream) = match jsonrpc::read(&bytes) {
        Read::Message(message) => {
            match direct::answer(
                &guard.server,
                &guard.sessions,
                &guard.hosts,
                &parts,
                message,
            )
            .await
            {
                Ok(response) => return response,
                Err(message) => (StatusCode::OK, None, jsonrpc::is_listen(&message)),
            }
        }
        Read::Malformed { answer, .. } => (StatusCode::BAD_REQUEST, Some(answer), false),
        Read::InvalidParams { answer } => (StatusCode::OK, Some(answer), false),
    };
    if let Some(answer) = answer {
        let json = [(header::CONTENT_TYPE, "application/json")];
        return (status, json, answer).into_response();
    }
    let json = answer::accepts_json(&parts.headers);
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    // A `subscriptions/listen` stream lasts as long as the subscription: it
    // is sent as it comes, event by event.
    match stream {
        true => response,
        false => answer::whole(json, response).await,
    }
}

/// A `DELETE` ending a session: 404 when there is no such session (it
/// ended, or never began), else rmcp ends it, answered 204 (rmcp says 202,
/// which clients such as the Python SDK take for a failure: MCP's success
/// here is 200 or 204).
async fn end_session(guard: &Guard, request: Request, next: Next) -> Response {
    let id = direct::session_id(request.headers()).map(str::to_owned);
    if let Some(id) = &id
        && !guard
            .sessions
            .has_session(&id.as_str().into())
            .await
            .unwrap_or(false)
    {
        return refuse(
            StatusCode::NOT_FOUND,
            "Not Found: there is no session of that id (it ended, or never began); start one \
             with an initialize request"
                .to_owned(),
        );
    }
    let mut response = next.run(request).await;
    if response.status() == StatusCode::ACCEPTED {
        if let Some(id) = &id {
            guard.server.http_sessions.end(id);
        }
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = Body::empty();
    }
    response
}

/// Whether `value` is `Bearer <token>`, compared in constant time.
fn bearer_matches(value: Option<&HeaderValue>, token: &SecretString) -> bool {
    let Some(given) = value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let (given, expected) = (given.trim().as_bytes(), token.expose_secret().as_bytes());
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}
