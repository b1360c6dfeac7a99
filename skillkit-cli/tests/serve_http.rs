//! `skillkit serve --http`: rmcp's Streamable HTTP client and raw HTTP
//! requests against the real binary on 127.0.0.1.

mod serve_support;

use rmcp::ServiceExt;
use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};
use serve_support::*;

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
        "--allow-unauthenticated",
        "--watch-interval",
    ] {
        assert!(help.contains(says), "{says}: {help}");
    }
}

/// A child process, killed when dropped (a failed assertion included).
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `skillkit serve NOTES ARGS` with the token variable set to `token` (or
/// unset), and its stderr, line by line (ending when it exits).
fn start(
    notes: &std::path::Path,
    args: &[&str],
    token: Option<&str>,
) -> (Running, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .arg("serve")
        .arg(notes)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .env_remove("SKILLKIT_MCP_TOKEN");
    if let Some(token) = token {
        command.env("SKILLKIT_MCP_TOKEN", token);
    }
    let mut child = command.spawn().unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (lines, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (Running(child), receiver)
}

/// The next line of stderr (a hang guard, not a timing assertion).
fn next_line(lines: &std::sync::mpsc::Receiver<String>) -> Option<String> {
    match lines.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(line) => Some(line),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
        Err(e) => panic!("skillkit serve said nothing more: {e}"),
    }
}

#[test]
fn all_interfaces_without_a_token_is_refused_naming_the_variable() {
    let dir = kit();
    let (mut child, lines) = start(&dir.path().join("notes"), &["--http", "0.0.0.0:0"], None);
    let mut said = Vec::new();
    while let Some(line) = next_line(&lines) {
        assert!(
            !line.contains("MCP on"),
            "served on all interfaces without a token: {line}"
        );
        said.push(line);
    }
    assert_eq!(child.0.wait().unwrap().code(), Some(2), "{said:?}");
    let said = said.join("\n");
    assert!(said.contains("SKILLKIT_MCP_TOKEN"), "{said}");
    assert!(said.contains("--allow-unauthenticated"), "{said}");
}

#[tokio::test]
async fn all_interfaces_prints_a_url_that_works() {
    let dir = kit();
    let notes = dir.path().join("notes");
    for (token, flag) in [
        (Some("t0ken"), None),
        (None, Some("--allow-unauthenticated")),
    ] {
        let mut args = vec!["--http", "0.0.0.0:0"];
        args.extend(flag);
        let (child, lines) = start(&notes, &args, token);
        let first = next_line(&lines).expect("the URL");
        let second = next_line(&lines).expect("where it listens");
        let url = first
            .strip_prefix("skillkit serve: MCP on ")
            .unwrap_or_else(|| panic!("no URL: {first:?}"))
            .to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        assert!(second.contains("all interfaces"), "{second}");
        if token.is_none() {
            assert!(second.contains("without a token"), "{second}");
        }
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let mut post = reqwest::Client::new()
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(initialize.to_string());
        if let Some(token) = token {
            post = post.bearer_auth(token);
        }
        let answer = post.send().await.unwrap();
        assert_eq!(answer.status(), 200, "{url}");
        drop(child);
    }
}
