//! `skillkit serve`: rmcp's client over stdio and over Streamable HTTP on
//! 127.0.0.1 against the real binary, on kit folders in temp dirs. Every bad request is answered with an error
//! saying what to do, and the server answers the next request.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorCode, GetPromptRequestParams,
    PaginatedRequestParams, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService, Service};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A kit `notes` with two skills, files beside one of them, a file outside
/// the skills and a symlink to it from inside one.
fn kit() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    let search = notes.join("skills/search");
    write(
        &search.join("SKILL.md"),
        "---\nname: search\ndescription: Search the notes.\n---\nSearch the notes for $ARGUMENTS.\n",
    );
    write(&search.join("scripts/find.sh"), "echo find\n");
    write(&search.join("data.bin"), [0x00, 0xff, 0x10]);
    write(
        &notes.join("skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: Tidy the notes.\n---\nTidy up.\n",
    );
    write(&notes.join("secret.txt"), "do not serve me");
    #[cfg(unix)]
    std::os::unix::fs::symlink(notes.join("secret.txt"), search.join("escape.txt")).unwrap();
    dir
}

async fn serve(args: &[&Path]) -> Client {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillkit")).configure(|c| {
        c.arg("serve").args(args);
    });
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .expect("skillkit serve answers the handshake")
}

async fn call<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let mut request = CallToolRequestParams::new(tool.to_owned());
    request.arguments = arguments.as_object().cloned();
    client.call_tool(request).await.expect("a tool result")
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("text content").text
}

/// The text of a tool result that is an error.
fn failure(result: &CallToolResult) -> &str {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    text(result)
}

/// The message of a protocol error.
fn protocol_error<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> (ErrorCode, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code, e.message.to_string()),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn tools_list_activate_read_and_refuse_bad_calls() {
    let dir = kit();
    let notes = dir.path().join("notes");
    let client = serve(&[&notes]).await;

    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "skillkit");
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(tools, ["activate_skill", "list_skills", "read_skill_file"]);

    let listed: Value =
        serde_json::from_str(text(&call(&client, "list_skills", json!({})).await)).unwrap();
    assert_eq!(
        listed,
        json!([
            {"name": "notes:search", "description": "Search the notes."},
            {"name": "notes:tidy", "description": "Tidy the notes."}
        ])
    );

    let activated = call(
        &client,
        "activate_skill",
        json!({"name": "notes:search", "arguments": "rust"}),
    )
    .await;
    assert_eq!(activated.is_error, Some(false));
    let body = text(&activated);
    assert!(
        body.starts_with("<skill_content name=\"notes:search\">\nSearch the notes for rust.\n"),
        "{body}"
    );
    assert!(body.contains("- scripts/find.sh"), "{body}");
    assert!(body.ends_with("</skill_content>"), "{body}");

    let file = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": "scripts/find.sh"}),
    )
    .await;
    assert_eq!(text(&file), "echo find\n");

    // Bad calls: tool results with isError, saying what to do.
    let unknown = call(&client, "activate_skill", json!({"name": "notes:nope"})).await;
    assert!(failure(&unknown).contains("there is no skill `notes:nope`; call list_skills"));
    let missing = call(&client, "activate_skill", json!({})).await;
    assert!(failure(&missing).contains("needs `name`"));
    let malformed = call(&client, "activate_skill", json!({"name": 7})).await;
    assert!(failure(&malformed).contains("`name` must be a string, not a number"));
    let malformed = call(
        &client,
        "activate_skill",
        json!({"name": "notes:search", "arguments": ["a"]}),
    )
    .await;
    assert!(failure(&malformed).contains("`arguments` must be a string"));
    let no_path = call(&client, "read_skill_file", json!({"name": "notes:search"})).await;
    assert!(failure(&no_path).contains("needs `path`"));
    let outside = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": "../../secret.txt"}),
    )
    .await;
    assert!(failure(&outside).contains("leads outside the skill's folder"));
    let secret = notes.join("secret.txt");
    let absolute = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": secret}),
    )
    .await;
    assert!(failure(&absolute).contains("is absolute"));
    #[cfg(unix)]
    {
        let link = call(
            &client,
            "read_skill_file",
            json!({"name": "notes:search", "path": "escape.txt"}),
        )
        .await;
        assert!(failure(&link).contains("leads outside the skill's folder"));
    }
    let binary = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": "data.bin"}),
    )
    .await;
    assert!(failure(&binary).contains("read it as the resource `skill://notes/search/data.bin`"));
    for result in [&outside, &absolute] {
        assert!(!text(result).contains("do not serve me"));
    }

    // An unknown tool is a protocol error.
    let (code, message) =
        protocol_error(client.call_tool(CallToolRequestParams::new("rm_rf")).await);
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert!(
        message.contains("there is no tool `rm_rf`; tools/list"),
        "{message}"
    );

    // Still serving, and fresh: a skill written now is listed now.
    write(
        &notes.join("skills/plan/SKILL.md"),
        "---\nname: plan\ndescription: Plan the week.\n---\nPlan.\n",
    );
    let listed = call(&client, "list_skills", json!({})).await;
    assert!(
        text(&listed).contains("\"notes:plan\""),
        "{}",
        text(&listed)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn one_prompt_per_skill_rendered_with_its_arguments() {
    let dir = kit();
    let client = serve(&[&dir.path().join("notes")]).await;

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["notes:search", "notes:tidy"]);
    assert_eq!(prompts[0].description.as_deref(), Some("Search the notes."));
    let arguments = prompts[0].arguments.as_ref().unwrap();
    assert_eq!(arguments.len(), 1);
    assert_eq!(arguments[0].name, "arguments");

    let mut request = GetPromptRequestParams::new("notes:search");
    request.arguments = json!({"arguments": "rust"}).as_object().cloned();
    let prompt = client.get_prompt(request).await.unwrap();
    let message = serde_json::to_value(&prompt.messages[0]).unwrap();
    assert_eq!(message["role"], "user");
    assert_eq!(message["content"]["text"], "Search the notes for rust.\n");

    let (_, message) = protocol_error(
        client
            .get_prompt(GetPromptRequestParams::new("notes:nope"))
            .await,
    );
    assert!(
        message.contains("there is no prompt `notes:nope`; prompts/list"),
        "{message}"
    );
    let mut bad = GetPromptRequestParams::new("notes:search");
    bad.arguments = json!({"arguments": 3}).as_object().cloned();
    let (code, message) = protocol_error(client.get_prompt(bad).await);
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert!(message.contains("must be a string"), "{message}");
    let mut bad = GetPromptRequestParams::new("notes:search");
    bad.arguments = json!({"query": "x"}).as_object().cloned();
    let (_, message) = protocol_error(client.get_prompt(bad).await);
    assert!(
        message.contains("takes one argument, `arguments`"),
        "{message}"
    );

    // Still serving.
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("notes:tidy"))
        .await
        .unwrap();
    assert_eq!(prompt.messages.len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn skill_files_are_resources_listed_by_page() {
    let dir = kit();
    let notes = dir.path().join("notes");
    // A second kit of 120 skills: more resources than one page holds.
    let many = dir.path().join("many");
    for i in 0..120 {
        write(
            &many.join(format!("skills/s{i:03}/SKILL.md")),
            format!("---\nname: s{i:03}\ndescription: Skill {i}.\n---\nBody {i}.\n"),
        );
    }
    let client = serve(&[&notes, &many]).await;

    let first = client.list_resources(None).await.unwrap();
    assert_eq!(first.resources.len(), 100);
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = client
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.next_cursor, None);
    let uris: Vec<String> = first
        .resources
        .iter()
        .chain(&second.resources)
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(uris.len(), 120 + 4, "{uris:?}");
    let notes_uris: Vec<&str> = uris
        .iter()
        .map(String::as_str)
        .filter(|u| u.starts_with("skill://notes/"))
        .collect();
    // Symlinks are not listed (and the one leading outside is not read).
    assert_eq!(
        notes_uris,
        [
            "skill://notes/search/SKILL.md",
            "skill://notes/search/data.bin",
            "skill://notes/search/scripts/find.sh",
            "skill://notes/tidy/SKILL.md",
        ]
    );
    let all = client.list_all_resources().await.unwrap();
    assert_eq!(all.len(), 124);

    let read = |uri: &str| client.read_resource(ReadResourceRequestParams::new(uri));
    let skill_md = read("skill://notes/search/SKILL.md").await.unwrap();
    let ResourceContents::TextResourceContents {
        text, mime_type, ..
    } = &skill_md.contents[0]
    else {
        panic!("{skill_md:?}");
    };
    assert_eq!(
        text,
        &std::fs::read_to_string(notes.join("skills/search/SKILL.md")).unwrap()
    );
    assert_eq!(mime_type.as_deref(), Some("text/markdown"));
    let binary = read("skill://notes/search/data.bin").await.unwrap();
    let ResourceContents::BlobResourceContents { blob, .. } = &binary.contents[0] else {
        panic!("{binary:?}");
    };
    assert_eq!(blob, "AP8Q");

    for (uri, says) in [
        ("skill://notes/nope/SKILL.md", "there is no resource"),
        (
            "skill://notes/search/..%2F..%2Fsecret.txt",
            "leads outside the skill's folder",
        ),
        (
            "skill://notes/search/escape.txt",
            "leads outside the skill's folder",
        ),
        ("file:///etc/passwd", "is not a skill:// URI"),
    ] {
        #[cfg(not(unix))]
        if uri.ends_with("escape.txt") {
            continue;
        }
        let (_, message) = protocol_error(read(uri).await);
        assert!(message.contains(says), "{uri}: {message}");
    }
    let (_, message) = protocol_error(
        client
            .list_resources(Some(
                PaginatedRequestParams::default().with_cursor(Some(String::new())),
            ))
            .await,
    );
    assert!(message.contains("the cursor is empty"), "{message}");

    // Still serving.
    assert!(read("skill://many/s007/SKILL.md").await.is_ok());
    client.cancel().await.unwrap();
}

/// A line that is not JSON gets `-32700 Parse error`, JSON that is not a
/// JSON-RPC message `-32600 Invalid Request` (id null, or the request's id
/// when it has one), and the next request is answered.
#[test]
fn a_malformed_message_gets_the_protocols_error_and_the_server_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let dir = kit();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .arg("serve")
        .arg(dir.path().join("notes"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answer = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    writeln!(stdin, "{initialize}").unwrap();
    assert_eq!(answer()["id"], 1);
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    for (line, code, id) in [
        ("this is not json", -32700, Value::Null),
        (
            "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": ",
            -32700,
            Value::Null,
        ),
        ("[1, 2, 3]", -32600, Value::Null),
        ("{\"jsonrpc\": \"2.0\", \"id\": 4}", -32600, json!(4)),
    ] {
        writeln!(stdin, "{line}").unwrap();
        let error = answer();
        assert_eq!(error["jsonrpc"], "2.0", "{error}");
        assert_eq!(error["id"], id, "{line}: {error}");
        assert_eq!(error["error"]["code"], code, "{line}: {error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("send one JSON-RPC 2.0 message"),
            "{message}"
        );
    }
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    )
    .unwrap();
    let listed = answer();
    assert_eq!(listed["id"], 3, "{listed}");
    assert_eq!(listed["result"]["tools"][0]["name"], "activate_skill");
    drop(stdin);
    assert!(child.wait().unwrap().success());
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
/// assertion).
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

/// Edits the kit on disk and waits for each notification: a skill added,
/// then a description edited.
async fn edits_are_notified(notes: &Path, notifications: &mut Notifications) {
    write(
        &notes.join("skills/plan/SKILL.md"),
        "---\nname: plan\ndescription: Plan the week.\n---\nPlan.\n",
    );
    expect(notifications, &["prompts", "resources"]).await;
    write(
        &notes.join("skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: Tidy the notes, edited.\n---\nTidy up.\n",
    );
    expect(notifications, &["prompts", "resources"]).await;
}

#[tokio::test]
async fn a_skill_edited_on_disk_is_notified_over_stdio() {
    let dir = kit();
    let notes = dir.path().join("notes");
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillkit")).configure(|c| {
        c.arg("serve")
            .arg(&notes)
            .args(["--watch-interval", "0.05"]);
    });
    let (handler, mut notifications) = notified();
    let client = handler
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap();
    let capabilities = &client.peer_info().unwrap().capabilities;
    assert_eq!(
        capabilities.tools.as_ref().unwrap().list_changed,
        Some(true)
    );
    assert_eq!(
        capabilities.prompts.as_ref().unwrap().list_changed,
        Some(true)
    );
    assert_eq!(
        capabilities.resources.as_ref().unwrap().list_changed,
        Some(true)
    );
    client.list_all_prompts().await.unwrap();
    // The client asks nothing more: the server's poll finds the edits.
    edits_are_notified(&notes, &mut notifications).await;
    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "notes:plan"));
    client.cancel().await.unwrap();
}

/// `skillkit serve --http 0` (any free port on 127.0.0.1), killed when dropped.
struct HttpServe {
    child: std::process::Child,
    url: String,
}

impl HttpServe {
    fn start(args: &[&std::ffi::OsStr], token: Option<&str>) -> HttpServe {
        use std::io::{BufRead, BufReader};
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"));
        command
            .arg("serve")
            .args(args)
            .args(["--http", "0"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .env_remove("SKILLKIT_MCP_TOKEN");
        if let Some(token) = token {
            command.env("SKILLKIT_MCP_TOKEN", token);
        }
        let mut child = command.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("skillkit serve: MCP on ")
            .unwrap_or_else(|| panic!("no URL on stderr: {line:?}"))
            .to_owned();
        // The rest of stderr, kept so the token can be looked for in it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        HttpServe { child, url }
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn streamable_http_on_loopback_with_a_token_serves_and_notifies() {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let dir = kit();
    let notes = dir.path().join("notes");
    let serve = HttpServe::start(
        &[
            notes.as_os_str(),
            "--watch-interval".as_ref(),
            "0.05".as_ref(),
            "--max-request-bytes".as_ref(),
            "4096".as_ref(),
        ],
        Some("s3cret-t0ken"),
    );
    assert!(serve.url.starts_with("http://127.0.0.1:"), "{}", serve.url);
    assert!(serve.url.ends_with("/mcp"), "{}", serve.url);

    let config = StreamableHttpClientTransportConfig::with_uri(serve.url.clone())
        .auth_header("s3cret-t0ken");
    let (handler, mut notifications) = notified();
    let client = handler
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the handshake over HTTP");
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(tools, ["activate_skill", "list_skills", "read_skill_file"]);
    let activated = call(
        &client,
        "activate_skill",
        json!({"name": "notes:search", "arguments": "rust"}),
    )
    .await;
    assert!(text(&activated).contains("Search the notes for rust."));
    let outside = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": "../../secret.txt"}),
    )
    .await;
    assert!(failure(&outside).contains("leads outside the skill's folder"));
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 2);
    let mut request = GetPromptRequestParams::new("notes:tidy");
    request.arguments = None;
    assert_eq!(client.get_prompt(request).await.unwrap().messages.len(), 1);
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 4);
    let read = client
        .read_resource(ReadResourceRequestParams::new(
            "skill://notes/search/scripts/find.sh",
        ))
        .await
        .unwrap();
    assert!(matches!(
        &read.contents[0],
        ResourceContents::TextResourceContents { text, .. } if text == "echo find\n"
    ));
    let (_, message) = protocol_error(
        client
            .read_resource(ReadResourceRequestParams::new(
                "skill://notes/nope/SKILL.md",
            ))
            .await,
    );
    assert!(message.contains("there is no resource"), "{message}");

    edits_are_notified(&notes, &mut notifications).await;

    let http = reqwest::Client::new();
    let post = |body: String| {
        http.post(&serve.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body)
    };
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    assert_eq!(post(ping.clone()).send().await.unwrap().status(), 401);
    let foreign = post(ping.clone())
        .bearer_auth("s3cret-t0ken")
        .header("origin", "http://attacker.example:8080");
    assert_eq!(foreign.send().await.unwrap().status(), 403);
    let big = post(format!("{{\"pad\": \"{}\"}}", "x".repeat(5000))).bearer_auth("s3cret-t0ken");
    assert_eq!(big.send().await.unwrap().status(), 413);
    let malformed = post("{oops".to_owned()).bearer_auth("s3cret-t0ken");
    let malformed = malformed.send().await.unwrap();
    assert_eq!(malformed.status(), 400);
    let error: Value = malformed.json().await.unwrap();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null, "{error}");

    // Still serving the session.
    let listed = call(&client, "list_skills", json!({})).await;
    assert!(text(&listed).contains("notes:plan"), "{}", text(&listed));
    client.cancel().await.unwrap();
}

#[test]
fn the_token_is_never_printed() {
    let dir = kit();
    let notes = dir.path().join("notes");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .arg("serve")
        .arg(&notes)
        .args(["--http", "127.0.0.1:0"])
        .env("SKILLKIT_MCP_TOKEN", "s3cret-t0ken")
        .env("RUST_LOG", "trace")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    // Up to the URL line, then a refused and an accepted request, then stop.
    while !seen.contains("skillkit serve: MCP on ") {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
    }
    let url = seen
        .lines()
        .find_map(|l| l.split("skillkit serve: MCP on ").nth(1))
        .expect("the URL")
        .trim()
        .to_owned();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let http = reqwest::Client::new();
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
        for token in ["wrong", "s3cret-t0ken"] {
            let _ = http
                .post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .bearer_auth(token)
                .body(ping.clone())
                .send()
                .await
                .unwrap();
        }
    });
    child.kill().unwrap();
    child.wait().unwrap();
    std::io::Read::read_to_string(&mut stderr, &mut seen).unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert!(!seen.contains("s3cret-t0ken"), "{seen}");
    assert!(!stdout.contains("s3cret-t0ken"), "{stdout}");
}

#[test]
fn http_address_help_names_the_default_and_the_token_variable() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    for says in [
        "--http <ADDR>",
        "127.0.0.1",
        "SKILLKIT_MCP_TOKEN",
        "--watch-interval",
    ] {
        assert!(help.contains(says), "{says}: {help}");
    }
}
