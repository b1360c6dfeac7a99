//! The official TypeScript MCP SDK (npm `@modelcontextprotocol/sdk`) as a
//! client of the real `skillkit serve`, over stdio and Streamable HTTP on
//! 127.0.0.1: the `initialize` handshake, tools with their annotations and
//! `list_skills`' output schema (the SDK validates the structuredContent
//! against it), prompts under slash-command-safe names, and the skills
//! extension's methods through the SDK's generic request.
//!
//! Needs `node` and the SDK in `bench/peers/node_modules` (installed by
//! `bench/peers/setup.sh`). Without them the test says loudly that it
//! SKIPPED, unless `SKILLKIT_REQUIRE_PEERS=1` (as in CI), where that is a
//! failure.

mod serve_support;

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use serve_support::*;

const TOKEN: &str = "ts-t0ken";

fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bench/peers")
}

/// Whether node and the SDK are there, or why not.
fn typescript_sdk() -> Result<(), String> {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !node {
        return Err("no `node` on the PATH".into());
    }
    let sdk = peers_dir().join("node_modules/@modelcontextprotocol/sdk/package.json");
    if !sdk.is_file() {
        return Err(format!(
            "the TypeScript MCP SDK is not in {}; run bench/peers/setup.sh",
            sdk.display()
        ));
    }
    Ok(())
}

/// What `bench/peers/mcp_client.mjs` saw, connected as `how`.
async fn typescript_side(how: &[&OsStr]) -> Value {
    let mut command = Command::new("node");
    command
        .arg(peers_dir().join("mcp_client.mjs"))
        .args(how)
        .env("SKILLKIT_MCP_TOKEN", TOKEN);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the TypeScript SDK client failed: {stderr}"
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// What the TypeScript SDK must see, over either transport.
fn assert_seen(seen: &Value) {
    assert_eq!(seen["extension"], json!({"directoryRead": true}), "{seen}");
    let tools = seen["tools"].as_object().unwrap();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(names, ["activate_skill", "list_skills", "read_skill_file"]);
    for (name, tool) in tools {
        assert_eq!(tool["readOnlyHint"], true, "{name}");
    }
    assert_eq!(
        tools["list_skills"]["outputSchema"]["required"],
        json!(["skills"])
    );
    // The SDK validated it against the outputSchema before handing it over.
    assert_eq!(
        seen["list_skills"],
        json!({"isError": false, "structuredContent": {"skills": [
            {"name": "notes:search", "description": "Search the notes."},
            {"name": "notes:tidy", "description": "Tidy the notes."}
        ]}})
    );
    assert_eq!(
        seen["prompts"],
        json!([
            {"name": "notes_search", "title": "notes:search"},
            {"name": "notes_tidy", "title": "notes:tidy"}
        ])
    );
    assert_eq!(seen["prompt"], json!(["Search the notes for rust.\n"]));
    let skills = seen["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 2, "{seen}");
    assert_eq!(skills[0]["uri"], "skill://notes/search/SKILL.md");
    assert_eq!(
        skills[0]["frontmatter"],
        json!({"name": "search", "description": "Search the notes."})
    );
    let files: Vec<&str> = skills[0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["uri"].as_str().unwrap())
        .collect();
    // The link leading outside the folder is no file of the skill.
    assert_eq!(
        files,
        [
            "skill://notes/search/SKILL.md",
            "skill://notes/search/data.bin",
            "skill://notes/search/scripts/find.sh"
        ]
    );
    assert_eq!(seen["get_matches"], true);
    assert_eq!(
        seen["directory"],
        json!([
            "skill://notes/search/SKILL.md",
            "skill://notes/search/data.bin",
            "skill://notes/search/scripts"
        ])
    );
    assert_eq!(
        seen["errors"],
        json!({"unknown_skill": -32602, "no_uri": -32602, "bogus_cursor": -32602, "unknown_method": -32601})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client_over_stdio_and_http_or_skips_loudly_without_it() {
    if let Err(why) = typescript_sdk() {
        if std::env::var("SKILLKIT_REQUIRE_PEERS").as_deref() == Ok("1") {
            panic!("SKILLKIT_REQUIRE_PEERS=1 but {why}");
        }
        eprintln!("\n*** SKIPPED: TypeScript MCP SDK client NOT CHECKED: {why} ***\n");
        return;
    }
    let dir = kit();
    let notes = dir.path().join("notes");
    let binary = OsStr::new(env!("CARGO_BIN_EXE_skillkit"));
    let over_stdio = typescript_side(&[
        "--stdio".as_ref(),
        binary,
        "serve".as_ref(),
        notes.as_os_str(),
    ])
    .await;
    assert_seen(&over_stdio);

    let http = HttpServe::start(&[notes.as_os_str()], Some(TOKEN));
    let over_http = typescript_side(&["--http".as_ref(), http.url.as_ref()]).await;
    assert_seen(&over_http);
    assert_eq!(over_http, over_stdio, "HTTP and stdio serve the same");
}
