//! What the `McpServer` tests share: a tool, rmcp's client calls and
//! notifications, the server on HTTP, and requests with wrong params.
#![allow(dead_code)] // each test file uses some of it

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RoleClient, RunningService, Service};
use serde_json::{Value, json};
use skillkit::mcp::{HttpOptions, McpServer};
use skillkit::{Catalog, Memory, Skill, Tool, ToolExecution, ToolOutcome};

pub struct Echo;
#[skillkit::async_trait]
impl Tool for Echo {
    async fn execute(&self, e: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(format!("{} got {}", e.skill.name, e.arguments()))
    }
}

pub async fn call<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let mut request = CallToolRequestParams::new(tool.to_owned());
    request.arguments = arguments.as_object().cloned();
    client.call_tool(request).await.unwrap()
}

pub fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().unwrap().text
}

/// A client that forwards each list-changed notification it receives.
#[derive(Clone)]
pub struct Notified(pub tokio::sync::mpsc::UnboundedSender<&'static str>);

impl rmcp::ClientHandler for Notified {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send("tools");
    }
    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send("prompts");
    }
    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send("resources");
    }
}

pub type Notifications = tokio::sync::mpsc::UnboundedReceiver<&'static str>;

pub fn notified() -> (Notified, Notifications) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (Notified(tx), rx)
}

/// Waits until each of `lists` was notified (a hang guard, not a timing
/// assertion: the server has minutes to send them).
pub async fn expect(notifications: &mut Notifications, lists: &[&str]) {
    let mut missing: BTreeSet<&str> = lists.iter().copied().collect();
    while !missing.is_empty() {
        let got = tokio::time::timeout(Duration::from_secs(120), notifications.recv())
            .await
            .unwrap_or_else(|_| panic!("no notification of {missing:?}"))
            .expect("the client is connected");
        missing.remove(got);
    }
}

/// Serves `server` over HTTP on 127.0.0.1, any free port; its URL.
pub async fn serve_http(server: McpServer, options: HttpOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(server.serve_http(listener, options));
    url
}

/// Requests of known methods with wrong params, each with what its error
/// message must name.
pub fn wrong_params() -> Vec<(Value, &'static [&'static str])> {
    let request = |id: u32, method: &str, params: Value| {
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            request["params"] = params;
        }
        request
    };
    vec![
        (
            request(
                1,
                "tools/call",
                json!({"name": "activate_skill", "arguments": "kit:s0"}),
            ),
            &["tools/call", "\"arguments\""],
        ),
        (
            request(2, "tools/call", Value::Null),
            &["tools/call", "\"name\""],
        ),
        (
            request(3, "prompts/get", json!({"arguments": {}})),
            &["prompts/get", "\"name\""],
        ),
        (
            request(4, "resources/read", json!({})),
            &["resources/read", "\"uri\""],
        ),
        (
            request(5, "tools/call", json!({"name": 7})),
            &["tools/call", "invalid type: integer"],
        ),
        (
            request(6, "prompts/list", json!({"cursor": "bogus"})),
            &["cursor", "nextCursor"],
        ),
        (
            request(
                7,
                "resources/list",
                json!({"cursor": "skill://kit/s0/SKILL.md"}),
            ),
            &["cursor", "nextCursor"],
        ),
        (
            request(8, "tools/list", json!({"cursor": ""})),
            &["cursor", "nextCursor"],
        ),
        (
            request(9, "tools/list", json!({"cursor": 7})),
            &["tools/list", "invalid type: integer", "nextCursor"],
        ),
        (
            request(10, "skills/get", json!({})),
            &["skills/get", "\"uri\""],
        ),
        (
            request(11, "skills/list", json!({"cursor": 7})),
            &["skills/list", "invalid type: integer", "nextCursor"],
        ),
        (
            request(12, "skills/list", json!({"cursor": "bogus"})),
            &["cursor", "nextCursor"],
        ),
        (
            request(13, "resources/directory/read", json!({"cursor": "c1.YQ"})),
            &["resources/directory/read", "\"uri\""],
        ),
    ]
}

/// Checks each answer to [`wrong_params`]: `-32602`, saying what to send.
pub fn assert_invalid_params(request: &Value, answer: &Value, says: &[&str]) {
    assert_eq!(answer["error"]["code"], -32602, "{request} -> {answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    for word in says {
        assert!(
            message.contains(word),
            "{request}: `{word}` not in {message}"
        );
    }
}

pub fn five_skills() -> McpServer {
    let memory = Memory::new();
    for i in 0..5 {
        memory.put(Skill::new(format!("kit:s{i}"), "d"));
    }
    McpServer::new(Catalog::builder().provider(memory).build()).page_size(2)
}

/// The `initialize` request of a raw client.
pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

/// A session opened by reqwest alone on the server at `url`, past the
/// handshake.
pub struct Session {
    pub http: reqwest::Client,
    pub url: String,
    pub id: String,
}

impl Session {
    pub async fn open(url: &str) -> Session {
        let http = reqwest::Client::new();
        let started = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(initialize().to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(started.status(), 200);
        let id = started.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = started.text().await.unwrap();
        let session = Session {
            http,
            url: url.to_owned(),
            id,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(session.post(&initialized).await.status(), 202);
        session
    }

    /// `message` posted in the session.
    pub async fn post(&self, message: &Value) -> reqwest::Response {
        self.http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-06-18")
            .body(message.to_string())
            .send()
            .await
            .unwrap()
    }
}
