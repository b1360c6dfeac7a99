//! `McpServer` through its public API: rmcp's client over an in-process
//! byte pipe and over Streamable HTTP on 127.0.0.1, on a catalog of
//! `Memory` skills, some with Rust tools.
#![cfg(feature = "mcp")]

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, PaginatedRequestParams};
use rmcp::service::{NotificationContext, RoleClient, RunningService, Service};
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Value, json};
use skillkit::mcp::{HttpOptions, McpServer};
use skillkit::{Catalog, Memory, Skill, Tool, ToolExecution, ToolOutcome};

struct Echo;
#[skillkit::async_trait]
impl Tool for Echo {
    async fn execute(&self, e: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(format!("{} got {}", e.skill.name, e.arguments()))
    }
}

struct Faulty;
#[skillkit::async_trait]
impl Tool for Faulty {
    async fn execute(&self, e: ToolExecution) -> ToolOutcome {
        match e.input.get("arguments").and_then(Value::as_str) {
            Some("panic") => panic!("tool bug"),
            _ => ToolOutcome::error("the disk is full; free some space"),
        }
    }
}

/// `server` served on one end of a pipe, and `client` connected to the other.
async fn connect<C: rmcp::ClientHandler>(
    server: McpServer,
    client: C,
) -> RunningService<RoleClient, C> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_end).await.unwrap()
}

async fn call<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let mut request = CallToolRequestParams::new(tool.to_owned());
    request.arguments = arguments.as_object().cloned();
    client.call_tool(request).await.unwrap()
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().unwrap().text
}

#[tokio::test]
async fn executable_skills_are_tools_of_their_own() {
    let memory = Memory::new();
    memory.put_tool(Skill::new("util:echo", "Echo."), Echo);
    memory.put_tool(Skill::new("util:faulty", "Fails."), Faulty);
    memory.put(Skill::new("util:guide", "How to echo.").with_body("Use echo."));
    let server = McpServer::new(Catalog::builder().provider(memory.clone()).build());
    let client = connect(server, ()).await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "activate_skill",
            "list_skills",
            "read_skill_file",
            "util_echo",
            "util_faulty"
        ]
    );
    let echo = tools.iter().find(|t| t.name == "util_echo").unwrap();
    assert_eq!(echo.title.as_deref(), Some("util:echo"));
    assert_eq!(echo.description.as_deref(), Some("Echo."));
    assert_eq!(
        echo.input_schema["properties"]["arguments"]["type"],
        "string"
    );

    let done = call(&client, "util_echo", json!({"arguments": "hi"})).await;
    assert_eq!(done.is_error, Some(false));
    assert_eq!(text(&done), "util:echo got hi");
    let listed: Value =
        serde_json::from_str(text(&call(&client, "list_skills", json!({})).await)).unwrap();
    assert_eq!(
        listed[0],
        json!({"name": "util:echo", "description": "Echo.", "tool": "util_echo"})
    );
    assert_eq!(
        listed[2],
        json!({"name": "util:guide", "description": "How to echo."})
    );

    // Input that does not fit the schema, a tool's error and a tool's panic:
    // error results, and the server goes on.
    let bad = call(&client, "util_echo", json!({"arguments": 5})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text(&bad).contains("property `arguments` must be of type string"),
        "{}",
        text(&bad)
    );
    let failed = call(&client, "util_faulty", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), "the disk is full; free some space");
    let panicked = call(&client, "util_faulty", json!({"arguments": "panic"})).await;
    assert_eq!(panicked.is_error, Some(true));
    assert!(text(&panicked).contains("tool bug"), "{}", text(&panicked));

    // Fresh on every request: a tool put now is listed and callable now, one
    // deleted is gone.
    memory.put_tool(Skill::new("util:shout", "Shout."), Echo);
    memory.delete("util:faulty");
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"util_shout".to_owned()), "{names:?}");
    assert!(!names.contains(&"util_faulty".to_owned()), "{names:?}");
    assert_eq!(
        text(&call(&client, "util_shout", json!({})).await),
        "util:shout got "
    );
    let gone = client
        .call_tool(CallToolRequestParams::new("util_faulty"))
        .await;
    assert!(matches!(gone, Err(ServiceError::McpError(_))), "{gone:?}");
    // A knowledge skill activates to the agent runtime's text.
    let guide = call(&client, "activate_skill", json!({"name": "util:guide"})).await;
    assert_eq!(
        text(&guide),
        "<skill_content name=\"util:guide\">\nUse echo.\n</skill_content>"
    );
}

#[tokio::test]
async fn lists_are_paginated_by_the_page_size() {
    let memory = Memory::new();
    for i in 0..5 {
        memory.put(Skill::new(format!("kit:s{i}"), "d"));
    }
    let server = McpServer::new(Catalog::builder().provider(memory).build()).page_size(2);
    let client = connect(server, ()).await;
    let first = client.list_prompts(None).await.unwrap();
    assert_eq!(first.prompts.len(), 2);
    let second = client
        .list_prompts(Some(
            PaginatedRequestParams::default().with_cursor(first.next_cursor.clone()),
        ))
        .await
        .unwrap();
    assert_eq!(second.prompts[0].name, "kit:s2");
    assert_eq!(client.list_all_prompts().await.unwrap().len(), 5);
    assert_eq!(client.list_all_tools().await.unwrap().len(), 3);
    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://kit/s0/SKILL.md",
            "skill://kit/s1/SKILL.md",
            "skill://kit/s2/SKILL.md",
            "skill://kit/s3/SKILL.md",
            "skill://kit/s4/SKILL.md"
        ]
    );
}

/// A client that forwards each list-changed notification it receives.
#[derive(Clone)]
struct Notified(tokio::sync::mpsc::UnboundedSender<&'static str>);

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

type Notifications = tokio::sync::mpsc::UnboundedReceiver<&'static str>;

fn notified() -> (Notified, Notifications) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (Notified(tx), rx)
}

/// Waits until each of `lists` was notified (a hang guard, not a timing
/// assertion: the server has minutes to send them).
async fn expect(notifications: &mut Notifications, lists: &[&str]) {
    let mut missing: BTreeSet<&str> = lists.iter().copied().collect();
    while !missing.is_empty() {
        let got = tokio::time::timeout(Duration::from_secs(120), notifications.recv())
            .await
            .unwrap_or_else(|_| panic!("no notification of {missing:?}"))
            .expect("the client is connected");
        missing.remove(got);
    }
}

#[tokio::test]
async fn a_query_that_finds_the_catalog_changed_notifies_the_client() {
    let memory = Memory::new();
    memory.put(Skill::new("kit:first", "First."));
    let server = McpServer::new(Catalog::builder().provider(memory.clone()).build()).watch(None);
    let info = serde_json::to_value(rmcp::ServerHandler::get_info(&server)).unwrap();
    for list in ["tools", "prompts", "resources"] {
        assert_eq!(info["capabilities"][list]["listChanged"], true, "{info}");
    }
    let (handler, mut notifications) = notified();
    let client = connect(server, handler).await;
    client.list_all_tools().await.unwrap();

    // An executable skill put: a tool, a prompt and a resource more.
    memory.put_tool(Skill::new("kit:echo", "Echo."), Echo);
    client.list_all_prompts().await.unwrap();
    expect(&mut notifications, &["tools", "prompts", "resources"]).await;
    // A description edited: the prompts and resources show it.
    memory.put(Skill::new("kit:first", "First, edited."));
    client.list_all_resources().await.unwrap();
    expect(&mut notifications, &["prompts", "resources"]).await;
}

#[tokio::test]
async fn an_idle_client_is_told_of_a_change_by_the_poll() {
    let memory = Memory::new();
    let server = McpServer::new(Catalog::builder().provider(memory.clone()).build())
        .watch(Some(Duration::from_millis(20)));
    let (handler, mut notifications) = notified();
    let client = connect(server, handler).await;
    client.list_all_tools().await.unwrap();
    memory.put_tool(Skill::new("kit:echo", "Echo."), Echo);
    // No request: the poll finds it.
    expect(&mut notifications, &["tools", "prompts", "resources"]).await;
}

/// Serves `server` over HTTP on 127.0.0.1, any free port; its URL.
async fn serve_http(server: McpServer, options: HttpOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(server.serve_http(listener, options));
    url
}

#[tokio::test]
async fn streamable_http_serves_guards_and_notifies() {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let memory = Memory::new();
    memory.put(Skill::new("kit:guide", "A guide.").with_body("Read $ARGUMENTS."));
    let server = McpServer::new(Catalog::builder().provider(memory.clone()).build())
        .watch(Some(Duration::from_millis(20)));
    let options = HttpOptions::new()
        .bearer_token("t0ken")
        .max_request_bytes(64 * 1024);
    let url = serve_http(server, options).await;

    let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header("t0ken");
    let (handler, mut notifications) = notified();
    let client = handler
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();
    let activated = client
        .call_tool({
            let mut call = CallToolRequestParams::new("activate_skill");
            call.arguments = json!({"name": "kit:guide", "arguments": "it"})
                .as_object()
                .cloned();
            call
        })
        .await
        .unwrap();
    assert_eq!(
        text(&activated),
        "<skill_content name=\"kit:guide\">\nRead it.\n</skill_content>"
    );
    memory.put_tool(Skill::new("kit:echo", "Echo."), Echo);
    expect(&mut notifications, &["tools", "prompts", "resources"]).await;

    // The guards, before rmcp sees the request.
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let post = |body: String| {
        http.post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body)
    };
    let no_token = post(initialize.to_string()).send().await.unwrap();
    assert_eq!(no_token.status(), 401);
    assert_eq!(no_token.headers()["www-authenticate"], "Bearer");
    let body = no_token.text().await.unwrap();
    assert!(body.contains("Authorization: Bearer <token>"), "{body}");
    assert!(!body.contains("t0ken"));
    let wrong = post(initialize.to_string()).bearer_auth("guess");
    assert_eq!(wrong.send().await.unwrap().status(), 401);
    let foreign = post(initialize.to_string())
        .bearer_auth("t0ken")
        .header("origin", "https://evil.example");
    let foreign = foreign.send().await.unwrap();
    assert_eq!(foreign.status(), 403);
    assert!(foreign.text().await.unwrap().contains("evil.example"));
    let local = post(initialize.to_string())
        .bearer_auth("t0ken")
        .header("origin", "http://localhost:5173");
    assert_eq!(local.send().await.unwrap().status(), 200);
    let big = post("x".repeat(64 * 1024 + 1)).bearer_auth("t0ken");
    let big = big.send().await.unwrap();
    assert_eq!(big.status(), 413);
    assert!(big.text().await.unwrap().contains("at most 65536 bytes"));
    for (body, code) in [
        ("this is not json".to_owned(), -32700),
        (json!({"id": 7, "method": "tools/list"}).to_string(), -32600),
    ] {
        let refused = post(body).bearer_auth("t0ken").send().await.unwrap();
        assert_eq!(refused.status(), 400);
        let error: Value = refused.json().await.unwrap();
        assert_eq!(error["error"]["code"], code, "{error}");
        assert!(error.get("id").is_some(), "{error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("send one JSON-RPC 2.0 message"),
            "{message}"
        );
    }
    // Still serving.
    let listed = call(&client, "list_skills", json!({})).await;
    assert!(text(&listed).contains("kit:echo"), "{}", text(&listed));
}

/// A kit `k` on disk whose skill `s` has a `.env` beside its `SKILL.md`,
/// a link `env.txt` to it, a hidden folder `.git` with a file, a link
/// `config` to that folder, and a plain `notes.txt`.
#[cfg(unix)]
fn kit_with_hidden_files() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let skill = root.path().join("k/skills/s");
    std::fs::create_dir_all(skill.join(".git")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: s\ndescription: A skill.\n---\nBody.\n",
    )
    .unwrap();
    std::fs::write(skill.join(".env"), "TOKEN=hunter2\n").unwrap();
    std::fs::write(skill.join(".git/config"), "[core] secret=hunter2\n").unwrap();
    std::fs::write(skill.join("notes.txt"), "plain\n").unwrap();
    std::os::unix::fs::symlink(".env", skill.join("env.txt")).unwrap();
    std::os::unix::fs::symlink(".git", skill.join("config")).unwrap();
    root
}

#[cfg(unix)]
#[tokio::test]
async fn a_link_to_a_hidden_file_is_not_served_on_either_route() {
    use rmcp::model::{ReadResourceRequestParams, ResourceContents};

    let root = kit_with_hidden_files();
    let catalog = Catalog::builder()
        .provider(skillkit::Local::new(root.path().join("k")))
        .build();
    let client = connect(McpServer::new(catalog), ()).await;

    let plain = call(
        &client,
        "read_skill_file",
        json!({"name": "k:s", "path": "notes.txt"}),
    )
    .await;
    assert_eq!(text(&plain), "plain\n");
    for path in ["env.txt", "config/config", ".env"] {
        let tool = call(
            &client,
            "read_skill_file",
            json!({"name": "k:s", "path": path}),
        )
        .await;
        assert_eq!(tool.is_error, Some(true), "{path}: {tool:?}");
        assert!(!text(&tool).contains("hunter2"), "{path}: {}", text(&tool));
        assert!(text(&tool).contains("hidden"), "{path}: {}", text(&tool));

        let uri = format!("skill://k/s/{path}");
        let resource = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await;
        let Err(ServiceError::McpError(e)) = &resource else {
            panic!("{uri} was served: {resource:?}");
        };
        assert!(e.message.contains("hidden"), "{uri}: {}", e.message);
        assert!(!e.message.contains("hunter2"), "{uri}: {}", e.message);
    }
    let read = client
        .read_resource(ReadResourceRequestParams::new("skill://k/s/notes.txt"))
        .await
        .unwrap();
    assert!(matches!(
        &read.contents[0],
        ResourceContents::TextResourceContents { text, .. } if text == "plain\n"
    ));
    let uris: Vec<String> = client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(uris, ["skill://k/s/SKILL.md", "skill://k/s/notes.txt"]);
}

/// `server` on [`JsonLines`](skillkit::mcp::JsonLines) over a pipe, past the
/// handshake: a function sending one raw line and reading the answer.
struct Lines {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Lines {
    async fn open(server: McpServer) -> Lines {
        use tokio::io::AsyncBufReadExt;
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(theirs);
        tokio::spawn(async move {
            if let Ok(running) = server
                .serve(skillkit::mcp::JsonLines::new(read, write))
                .await
            {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(ours);
        let mut lines = Lines {
            write,
            read: tokio::io::BufReader::new(read).lines(),
        };
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        assert_eq!(lines.ask(&initialize).await["id"], 0);
        lines
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        lines
    }

    async fn send(&mut self, message: &Value) {
        use tokio::io::AsyncWriteExt;
        let line = format!("{message}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// Sends `request` and reads lines up to the answer of its id.
    async fn ask(&mut self, request: &Value) -> Value {
        self.send(request).await;
        loop {
            let line = self.read.next_line().await.unwrap().expect("an answer");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer.get("id") == request.get("id") {
                return answer;
            }
        }
    }
}

/// Requests of known methods with wrong params, each with what its error
/// message must name.
fn wrong_params() -> Vec<(Value, &'static [&'static str])> {
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
    ]
}

/// Checks each answer to [`wrong_params`]: `-32602`, saying what to send.
fn assert_invalid_params(request: &Value, answer: &Value, says: &[&str]) {
    assert_eq!(answer["error"]["code"], -32602, "{request} -> {answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    for word in says {
        assert!(
            message.contains(word),
            "{request}: `{word}` not in {message}"
        );
    }
}

fn five_skills() -> McpServer {
    let memory = Memory::new();
    for i in 0..5 {
        memory.put(Skill::new(format!("kit:s{i}"), "d"));
    }
    McpServer::new(Catalog::builder().provider(memory).build()).page_size(2)
}

#[tokio::test]
async fn wrong_params_of_a_known_method_are_invalid_params_on_stdio() {
    let mut lines = Lines::open(five_skills()).await;
    for (request, says) in wrong_params() {
        let answer = lines.ask(&request).await;
        assert_invalid_params(&request, &answer, says);
    }
    // An unknown method is still not found, and a cursor the server gave
    // still pages.
    let unknown = lines
        .ask(&json!({"jsonrpc": "2.0", "id": 20, "method": "tools/frobnicate"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let first = lines
        .ask(&json!({"jsonrpc": "2.0", "id": 21, "method": "prompts/list"}))
        .await;
    let cursor = first["result"]["nextCursor"].clone();
    assert!(cursor.is_string(), "{first}");
    let second = lines
        .ask(&json!({"jsonrpc": "2.0", "id": 22, "method": "prompts/list", "params": {"cursor": cursor}}))
        .await;
    assert_eq!(second["result"]["prompts"][0]["name"], "kit:s2", "{second}");
}

#[tokio::test]
async fn wrong_params_of_a_known_method_are_invalid_params_over_http() {
    let url = serve_http(five_skills(), HttpOptions::new()).await;
    let http = reqwest::Client::new();
    let post = |body: &Value, session: Option<&str>| {
        let mut post = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(session) = session {
            post = post
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        post
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let started = post(&initialize, None).send().await.unwrap();
    let session = started.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = started.text().await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = post(&initialized, Some(&session)).send().await.unwrap();
    assert_eq!(accepted.status(), 202);
    for (request, says) in wrong_params() {
        let body = post(&request, Some(&session))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        // One JSON message, as JSON or as the data of an SSE event.
        let answer: Value = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|d| !d.is_empty())
            .map_or_else(|| serde_json::from_str(&body), serde_json::from_str)
            .unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_invalid_params(&request, &answer, says);
    }
}

#[tokio::test]
async fn ending_a_session_is_204_and_ending_it_again_404() {
    let url = serve_http(five_skills(), HttpOptions::new()).await;
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let started = http
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    let session = started.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = started.text().await.unwrap();
    let end = |session: &str| {
        http.delete(&url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
    };
    let ended = end(&session).await.unwrap();
    assert!(
        matches!(ended.status().as_u16(), 200 | 204),
        "{}",
        ended.status()
    );
    for session in [session.as_str(), "never-began"] {
        let again = end(session).await.unwrap();
        assert_eq!(again.status(), 404, "{session}");
        let body = again.text().await.unwrap();
        assert!(body.contains("no session"), "{body}");
    }
    // The ended session answers nothing more.
    let after = http
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 404);
}

#[tokio::test]
async fn a_server_reachable_from_other_machines_needs_a_token_or_a_word_that_it_may_not() {
    let everywhere = || async { tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap() };
    let refused = five_skills()
        .serve_http(everywhere().await, HttpOptions::new())
        .await;
    let Err(error @ skillkit::mcp::ServeError::NoToken { .. }) = refused else {
        panic!("served without a token: {refused:?}");
    };
    let message = error.to_string();
    assert!(message.contains("bearer_token"), "{message}");
    assert!(message.contains("allow_unauthenticated"), "{message}");

    // Said so, it serves; and with a token it serves (here on loopback only
    // the token is asked for).
    for options in [
        HttpOptions::new().allow_unauthenticated(),
        HttpOptions::new().bearer_token("t0ken"),
    ] {
        let listener = everywhere().await;
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(five_skills().serve_http(listener, options));
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let answer = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .bearer_auth("t0ken")
            .body(initialize.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    }
}

#[tokio::test]
async fn a_session_request_is_answered_whole_as_json() {
    let url = serve_http(five_skills(), HttpOptions::new()).await;
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut post = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(session) = session {
            post = post
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        post.send()
    };
    let started = post(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    let session = started.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = started.text().await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(initialized, Some(&session)).await.unwrap().status(),
        202
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "activate_skill", "arguments": {"name": "kit:s1"}}});
    let answer = post(call, Some(&session)).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "application/json");
    // Its length known up front: one body, not a stream of chunks.
    assert!(
        answer.headers().get("content-length").is_some(),
        "{answer:?}"
    );
    let answer: Value = answer.json().await.unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("kit:s1"),
        "{answer}"
    );
}
