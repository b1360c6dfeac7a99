//! Requests of an initialized HTTP session, answered in the task of the
//! HTTP request that carries them.
//!
//! rmcp serves a session on a worker task of its own: a request goes from
//! the HTTP handler to that worker, on to the service loop, to a task
//! spawned for the handler, and its answer back the same way as an event
//! stream. Each hop is a task wake-up (on a small machine, a thread
//! wake-up): most of what a `tools/call` costs over HTTP (about 0.6 ms,
//! against 0.08 ms for a bare HTTP round trip). A request that asks nothing
//! of the session but that it exists (the tools, prompts, resources and
//! skills of the catalog, and `ping`) is dispatched here instead, to the
//! same [`ServerHandler`](rmcp::ServerHandler) rmcp would call, with the
//! session's peer, and answered as `application/json`.
//!
//! Everything else stays rmcp's: the handshake, notifications, the event
//! streams (`GET`, `subscriptions/listen`), subscriptions, log levels, a
//! request that negotiates its protocol version in its `_meta`, one that
//! carries MCP's standard headers (rmcp checks them against the body), and
//! any request of a session whose `notifications/initialized` has not been
//! handled yet. A session whose requests are all answered here would look
//! idle to its rmcp worker, which ends a session idle for its keep-alive
//! (5 minutes): so once half of that has passed since a message of the
//! session last went to rmcp, the next request goes there.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetExtensions, GetMeta, JsonRpcMessage, JsonRpcRequest,
    ProtocolVersion, ServerJsonRpcMessage,
};
use rmcp::service::RequestContext;
use rmcp::transport::common::http_header::{
    HEADER_MCP_METHOD, HEADER_MCP_NAME, HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID,
};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{Peer, RoleServer, Service};

use super::McpServer;

/// The initialized sessions of the HTTP transport, by session id: their
/// peers, and when a message of theirs last went to rmcp's worker.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    ready: Mutex<HashMap<String, Ready>>,
    /// Requests answered here (what the tests check).
    #[cfg(test)]
    answered: std::sync::atomic::AtomicUsize,
}

#[derive(Debug)]
struct Ready {
    peer: Peer<RoleServer>,
    worker_seen: Instant,
}

impl Sessions {
    /// Session `id` (its `notifications/initialized` handled) talks to
    /// `peer`. Sessions whose connection closed are forgotten here.
    pub(super) fn ready(&self, id: &str, peer: Peer<RoleServer>) {
        let mut ready = self.lock();
        ready.retain(|_, session| !session.peer.is_transport_closed());
        ready.insert(
            id.to_owned(),
            Ready {
                peer,
                worker_seen: Instant::now(),
            },
        );
    }

    /// Session `id` ended.
    pub(super) fn end(&self, id: &str) {
        self.lock().remove(id);
    }

    /// A message of session `id` went to rmcp's worker.
    fn worker_saw(&self, id: &str) {
        if let Some(session) = self.lock().get_mut(id) {
            session.worker_seen = Instant::now();
        }
    }

    /// The peer of session `id`, when it is ready and its worker saw a
    /// message within `keep_alive / 2`.
    fn peer(&self, id: &str, keep_alive: Option<Duration>) -> Option<Peer<RoleServer>> {
        let ready = self.lock();
        let session = ready.get(id)?;
        let fresh = keep_alive.is_none_or(|k| session.worker_seen.elapsed() < k / 2);
        fresh.then(|| session.peer.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Ready>> {
        self.ready.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The session id of `parts`, when it names one (once).
pub(super) fn session_id(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(HEADER_SESSION_ID).iter();
    let id = values.next()?.to_str().ok()?;
    values.next().is_none().then_some(id)
}

/// Answers `message` (the body of the POST `parts`) here when it is a
/// request this module answers, of a session ready for it, sent to one of
/// `hosts`; else `Err` gives it back for rmcp, the session's worker told it
/// is coming.
pub(super) async fn answer(
    server: &McpServer,
    manager: &LocalSessionManager,
    hosts: &[String],
    parts: &Parts,
    message: Box<ClientJsonRpcMessage>,
) -> Result<Response, Box<ClientJsonRpcMessage>> {
    let Some(id) = session_id(&parts.headers) else {
        return Err(message);
    };
    let sessions = &server.http_sessions;
    let keep_alive = manager.session_config.keep_alive;
    let ready = match *message {
        JsonRpcMessage::Request(request)
            if answered_here(&request, &parts.headers) && host_allowed(&parts.headers, hosts) =>
        {
            match sessions.peer(id, keep_alive) {
                Some(peer) if version_agrees(&parts.headers, &peer) => Ok((request, peer)),
                _ => Err(Box::new(JsonRpcMessage::Request(request))),
            }
        }
        other => Err(Box::new(other)),
    };
    let (request, peer) = match ready {
        Ok(ready) => ready,
        Err(message) => {
            sessions.worker_saw(id);
            return Err(message);
        }
    };
    // The session may have ended since (rmcp answers 404 for it).
    if !manager.has_session(&id.into()).await.unwrap_or(false) {
        sessions.end(id);
        return Err(Box::new(JsonRpcMessage::Request(request)));
    }
    let JsonRpcRequest {
        id: request_id,
        mut request,
        ..
    } = request;
    let mut context = RequestContext::new(request_id.clone(), peer);
    context.meta = std::mem::take(request.get_meta_mut());
    request.extensions_mut().insert(parts.clone());
    context.extensions = std::mem::take(request.extensions_mut());
    #[cfg(test)]
    sessions
        .answered
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let answer: ServerJsonRpcMessage = match server.handle_request(request, context).await {
        Ok(result) => JsonRpcMessage::response(result, request_id),
        Err(error) => JsonRpcMessage::error(error, Some(request_id)),
    };
    // Room for a typical answer (an activated skill is a few KB) from the
    // start, where `to_vec` grows from 128 bytes, copying at each doubling.
    let mut body = Vec::with_capacity(ANSWER_CAPACITY);
    Ok(match serde_json::to_writer(&mut body, &answer) {
        Ok(()) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response(),
        Err(e) => {
            tracing::warn!("the answer to a request could not be serialized: {e}");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    })
}

/// The bytes set aside for an answer before it is serialized.
const ANSWER_CAPACITY: usize = 16 << 10;

/// Whether `request` is answered here, sent as rmcp would take
/// it (JSON, accepting both JSON and an event stream), without anything
/// rmcp would check beyond the session.
fn answered_here(request: &JsonRpcRequest<ClientRequest>, headers: &HeaderMap) -> bool {
    let catalog_request = matches!(
        request.request,
        ClientRequest::PingRequest(_)
            | ClientRequest::ListToolsRequest(_)
            | ClientRequest::CallToolRequest(_)
            | ClientRequest::ListPromptsRequest(_)
            | ClientRequest::GetPromptRequest(_)
            | ClientRequest::ListResourcesRequest(_)
            | ClientRequest::ListResourceTemplatesRequest(_)
            | ClientRequest::ReadResourceRequest(_)
            | ClientRequest::ListSkillsRequest(_)
            | ClientRequest::GetSkillRequest(_)
            | ClientRequest::ReadResourceDirectoryRequest(_)
    );
    // A progress token asks for progress, of which this server sends none;
    // any other key (a protocol version, client information) is rmcp's.
    let plain_meta = request
        .request
        .get_meta()
        .keys()
        .all(|key| key == "progressToken");
    catalog_request
        && plain_meta
        && accepts_both(headers)
        && is_json(headers)
        && !headers.contains_key(HEADER_MCP_METHOD)
        && !headers.contains_key(HEADER_MCP_NAME)
}

/// Whether the request's `MCP-Protocol-Version` (when it sends one) is the
/// session's, and one without MCP's standard headers.
fn version_agrees(headers: &HeaderMap, peer: &Peer<RoleServer>) -> bool {
    let Some(negotiated) = peer.peer_info().map(|info| info.protocol_version.clone()) else {
        return false;
    };
    if negotiated.as_str() >= ProtocolVersion::STANDARD_HEADERS.as_str() {
        return false;
    }
    let mut sent = headers.get_all(HEADER_MCP_PROTOCOL_VERSION).iter();
    match (sent.next(), sent.next()) {
        (None, _) => true,
        (Some(version), None) => version.as_bytes() == negotiated.as_str().as_bytes(),
        (Some(_), Some(_)) => false,
    }
}

/// Whether the request's `Host` is plainly one of `hosts` (a name, or
/// `name:port`), as rmcp checks it on every request against DNS
/// rebinding; any other form goes to rmcp, which decides.
fn host_allowed(headers: &HeaderMap, hosts: &[String]) -> bool {
    /// The host and port of an authority, lowercased, IPv6 without its
    /// brackets.
    fn split(authority: &str) -> (String, Option<&str>) {
        let (host, port) = match authority.strip_prefix('[') {
            Some(rest) => match rest.split_once(']') {
                Some((host, rest)) => (host, rest.strip_prefix(':')),
                None => (authority, None),
            },
            None => match authority.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => (host, Some(port)),
                _ => (authority, None),
            },
        };
        (host.to_ascii_lowercase(), port)
    }
    if hosts.is_empty() {
        return true;
    }
    let mut sent = headers.get_all(header::HOST).iter();
    let (Some(host), None) = (sent.next(), sent.next()) else {
        return false;
    };
    let Ok(host) = host.to_str() else {
        return false;
    };
    let (host, port) = split(host.trim());
    hosts.iter().any(|allowed| {
        let (allowed, allowed_port) = split(allowed);
        allowed == host && allowed_port.is_none_or(|p| Some(p) == port)
    })
}

/// Whether the request accepts both `application/json` and
/// `text/event-stream` (rmcp answers 406 otherwise).
fn accepts_both(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let kind = item.split(';').next().unwrap_or("").trim();
            json |= kind.eq_ignore_ascii_case("application/json");
            events |= kind.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && events
}

/// Whether the body is declared JSON (rmcp answers 415 otherwise).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use serde_json::{Value, json};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::mcp::HttpOptions;
    use crate::{Catalog, Memory, Skill};

    /// An HTTP/1.1 exchange on a connection of its own: the status, the
    /// headers (lowercased names) and the body.
    async fn exchange(
        addr: std::net::SocketAddr,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Vec<(String, String)>, String) {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nconnection: close\r\n\
             accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n",
            body.len()
        );
        if !headers.iter().any(|(name, _)| *name == "host") {
            request.push_str(&format!("host: {addr}\r\n"));
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        let mut lines = head.lines();
        let status = lines.next().unwrap()[9..12].parse().unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        (status, headers, body.to_owned())
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    #[tokio::test]
    async fn requests_of_an_initialized_session_are_answered_here_and_the_rest_by_rmcp() {
        let memory = Memory::new();
        memory.put(Skill::new("kit:guide", "A guide.").with_body("Read $ARGUMENTS."));
        let server = McpServer::new(Catalog::builder().provider(memory).build());
        let sessions = Arc::clone(&server.http_sessions);
        let answered = || sessions.answered.load(Ordering::Relaxed);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let router = server.router(HttpOptions::new());
        tokio::spawn(async move { axum::serve(listener, router).await });

        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let (status, headers, _) = exchange(addr, "POST", &[], &initialize.to_string()).await;
        assert_eq!(status, 200);
        let id = header(&headers, "mcp-session-id").unwrap().to_owned();
        let in_session = [
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", "2025-06-18"),
        ];
        // Not before the session's `notifications/initialized` is handled.
        assert!(sessions.peer(&id, None).is_none());
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, ..) = exchange(addr, "POST", &in_session, &initialized.to_string()).await;
        assert_eq!(status, 202);
        let started = Instant::now();
        while sessions.peer(&id, None).is_none() {
            assert!(started.elapsed() < Duration::from_secs(10), "never ready");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }

        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "activate_skill", "arguments": {"name": "kit:guide", "arguments": "it"}}})
        .to_string();
        let (status, headers, body) = exchange(addr, "POST", &in_session, &call).await;
        assert_eq!(status, 200);
        assert_eq!(header(&headers, "content-type"), Some("application/json"));
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["id"], 7);
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("Read it."), "{text}");
        assert_eq!(answered(), 1);

        // MCP's standard headers are rmcp's to check: the same call goes
        // there, and is answered the same.
        let with_method = [in_session[0], in_session[1], ("mcp-method", "tools/call")];
        let (status, _, body) = exchange(addr, "POST", &with_method, &call).await;
        assert_eq!(status, 200);
        assert!(body.contains("Read it."), "{body}");
        // So is a request whose `_meta` says more than a progress token.
        let meta = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/logLevel": "debug"}}});
        let (status, ..) = exchange(addr, "POST", &in_session, &meta.to_string()).await;
        assert_eq!(status, 200);
        // And one naming a protocol version the session did not agree on.
        let other = [in_session[0], ("mcp-protocol-version", "2025-03-26")];
        let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}).to_string();
        exchange(addr, "POST", &other, &ping).await;
        assert_eq!(answered(), 1);
        // A `Host` that is not the server's is rmcp's to refuse (DNS
        // rebinding), in a session too.
        let rebound = [in_session[0], in_session[1], ("host", "evil.example")];
        let (status, ..) = exchange(addr, "POST", &rebound, &ping).await;
        assert_eq!((status, answered()), (403, 1));
        let uppercase = [in_session[0], in_session[1], ("host", "LOCALHOST:1")];
        let (status, ..) = exchange(addr, "POST", &uppercase, &ping).await;
        assert_eq!((status, answered()), (200, 2));
        let (status, ..) = exchange(addr, "POST", &in_session, &ping).await;
        assert_eq!((status, answered()), (200, 3));

        // Well within its keep-alive, the session's worker has seen it.
        assert!(
            sessions
                .peer(&id, Some(Duration::from_secs(3600)))
                .is_some()
        );
        assert!(sessions.peer(&id, Some(Duration::ZERO)).is_none());

        // An ended session is answered neither here nor by rmcp.
        let (status, ..) = exchange(addr, "DELETE", &in_session, "").await;
        assert_eq!(status, 204);
        assert!(sessions.peer(&id, None).is_none());
        let (status, ..) = exchange(addr, "POST", &in_session, &call).await;
        assert_eq!((status, answered()), (404, 3));
    }
}

#[cfg(test)]
mod host_tests {
    use super::*;

    fn allowed(host: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, host.parse().unwrap());
        let hosts = ["localhost", "127.0.0.1", "::1", "mcp.example.com:8443"].map(String::from);
        host_allowed(&headers, &hosts)
    }

    #[test]
    fn a_host_is_matched_by_name_and_by_port_when_one_is_given() {
        assert!(allowed("localhost:8080") && allowed("LocalHost") && allowed("127.0.0.1:1"));
        assert!(allowed("[::1]:8080") && allowed("[::1]"));
        assert!(allowed("mcp.example.com:8443"));
        assert!(!allowed("mcp.example.com:8080") && !allowed("mcp.example.com"));
        assert!(!allowed("evil.example") && !allowed("localhost.evil.example:80"));
        assert!(!allowed("127.0.0.2:8080") && !allowed("[::2]:1"));
    }
}
