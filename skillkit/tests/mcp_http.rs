//! `McpServer` on Streamable HTTP on 127.0.0.1, through its public API:
//! rmcp's client and raw requests (reqwest).
#![cfg(feature = "mcp")]

mod mcp_support;

use std::time::Duration;

use mcp_support::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use skillkit::mcp::{HttpOptions, McpServer};
use skillkit::{Catalog, Memory, Skill};

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

#[tokio::test]
async fn wrong_params_of_a_known_method_are_invalid_params_over_http() {
    let url = serve_http(five_skills(), HttpOptions::new()).await;
    let session = Session::open(&url).await;
    for (request, says) in wrong_params() {
        let body = session.post(&request).await.text().await.unwrap();
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
    let session = Session::open(&url).await;
    let end = |id: &str| {
        session
            .http
            .delete(&url)
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
    };
    let ended = end(&session.id).await.unwrap();
    assert!(
        matches!(ended.status().as_u16(), 200 | 204),
        "{}",
        ended.status()
    );
    for id in [session.id.as_str(), "never-began"] {
        let again = end(id).await.unwrap();
        assert_eq!(again.status(), 404, "{id}");
        let body = again.text().await.unwrap();
        assert!(body.contains("no session"), "{body}");
    }
    // The ended session answers nothing more.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(session.post(&list).await.status(), 404);
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
        let answer = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .bearer_auth("t0ken")
            .body(initialize().to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    }
}

#[tokio::test]
async fn a_session_request_is_answered_whole_as_json() {
    let url = serve_http(five_skills(), HttpOptions::new()).await;
    let session = Session::open(&url).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "activate_skill", "arguments": {"name": "kit:s1"}}});
    let answer = session.post(&call).await;
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
