//! Agreement with the official Python MCP SDK (PyPI `mcp`): as a second,
//! independent client of the real `skillkit serve`, over stdio and over
//! Streamable HTTP on 127.0.0.1, it lists the same tools, prompts and
//! resources and gets the same results as rmcp's client; and its 2.x
//! `Client` in its default mode (revision 2026-07-28 through
//! `server/discover`) and its legacy mode gets the skills extension, checks
//! every digest itself, and learns of an edit through `subscriptions/listen`
//! (`bench/peers/mcp_skills_client.py`).
//!
//! Needs Python with `mcp` importable: `bench/peers/setup.sh` installs it into
//! `bench/peers/.venv`, which this test prefers; else `$SKILLKIT_PYTHON`, else
//! `python3`. Without it the test says loudly that it SKIPPED, unless
//! `SKILLKIT_REQUIRE_PEERS=1` (as in CI), where that is a failure.

mod serve_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use rmcp::ServiceExt;
use rmcp::model::{
    GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{RoleClient, RunningService, Service};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use serve_support::*;

const SKILL: &str = "notes:search";
const ARGUMENTS: &str = "rust \"and more\"";
const FILE: &str = "scripts/find.sh";
const RESOURCE: &str = "skill://notes/search/SKILL.md";
const TOKEN: &str = "py-t0ken";

/// A Python that can import `mcp`, or why there is none.
fn python() -> Result<PathBuf, String> {
    skillkit_tests::peers::python_with("mcp.client.stdio")
}

/// What `bench/peers/mcp_client.py` saw, connected as `how`.
async fn python_side(python: &Path, how: &[&str]) -> Value {
    let mut command = Command::new(python);
    command
        .arg(skillkit_tests::peers::dir().join("mcp_client.py"))
        .args(["--skill", SKILL, "--arguments", ARGUMENTS, "--file", FILE])
        .args(["--resource", RESOURCE])
        .args(how)
        .env("SKILLKIT_MCP_TOKEN", TOKEN);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python SDK client failed: {stderr}"
    );
    // Its DELETE ending the session is answered 200 or 204, as it expects.
    assert!(
        !stderr.contains("Session termination failed"),
        "the Python SDK says: {stderr}"
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn tool_text(result: &rmcp::model::CallToolResult) -> Value {
    json!({"is_error": result.is_error == Some(true), "text": text(result)})
}

/// The same, seen by rmcp's client, in the script's shape.
async fn rust_side<S: Service<RoleClient>>(client: &RunningService<RoleClient, S>) -> Value {
    let mut tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    tools.sort();
    let prompts: Vec<Value> = client
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| {
            let arguments: Vec<String> = p
                .arguments
                .iter()
                .flatten()
                .map(|a| a.name.clone())
                .collect();
            json!({"name": p.name, "description": p.description, "arguments": arguments})
        })
        .collect();
    let mut resources = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .list_resources(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .unwrap();
        resources.extend(page.resources.into_iter().map(|r| r.uri.clone()));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let listed = call(client, "list_skills", json!({})).await;
    let mut prompt = GetPromptRequestParams::new(SKILL);
    prompt.arguments = json!({"arguments": ARGUMENTS}).as_object().cloned();
    let prompt: Vec<Value> = client
        .get_prompt(prompt)
        .await
        .unwrap()
        .messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap()["content"]["text"].clone())
        .collect();
    let read = client
        .read_resource(ReadResourceRequestParams::new(RESOURCE))
        .await
        .unwrap();
    let resource: Vec<Value> = read
        .contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => json!(text),
            _ => Value::Null,
        })
        .collect();
    json!({
        "tools": tools,
        "prompts": prompts,
        "resources": resources,
        "list_skills": serde_json::from_str::<Value>(text(&listed)).unwrap(),
        "activate_skill": tool_text(&call(client, "activate_skill", json!({"name": SKILL, "arguments": ARGUMENTS})).await),
        "read_skill_file": tool_text(&call(client, "read_skill_file", json!({"name": SKILL, "path": FILE})).await),
        "unknown_skill": tool_text(&call(client, "activate_skill", json!({"name": "no:such"})).await),
        "prompt": prompt,
        "resource": resource,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agrees_with_the_python_mcp_sdk_over_stdio_and_http_or_skips_loudly_without_it() {
    let python = match python() {
        Ok(python) => python,
        Err(why) if std::env::var("SKILLKIT_REQUIRE_PEERS").as_deref() != Ok("1") => {
            eprintln!("\n*** SKIPPED: Python MCP SDK agreement NOT CHECKED: {why} ***\n");
            return;
        }
        Err(why) => panic!("SKILLKIT_REQUIRE_PEERS=1 but {why}"),
    };
    let dir = kit();
    let notes = dir.path().join("notes");

    // stdio: each client starts its own `skillkit serve`.
    let binary = env!("CARGO_BIN_EXE_skillkit");
    let notes_arg = notes.to_str().unwrap();
    let over_stdio = python_side(&python, &["--stdio", binary, "serve", notes_arg]).await;
    let client = serve(&[&notes]).await;
    let ours = rust_side(&client).await;
    client.cancel().await.unwrap();
    assert_eq!(over_stdio, ours, "stdio: the Python SDK and rmcp disagree");
    assert_eq!(ours["activate_skill"]["is_error"], false);
    assert_eq!(ours["unknown_skill"]["is_error"], true);
    assert_eq!(ours["tools"].as_array().unwrap().len(), 3);

    // Streamable HTTP: one server, both clients, with the token.
    let http = HttpServe::start(&[notes.as_os_str()], Some(TOKEN));
    let over_http = python_side(&python, &["--http", &http.url]).await;
    let config = StreamableHttpClientTransportConfig::with_uri(http.url.clone()).auth_header(TOKEN);
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let ours_http = rust_side(&client).await;
    client.cancel().await.unwrap();
    assert_eq!(
        over_http, ours_http,
        "HTTP: the Python SDK and rmcp disagree"
    );
    assert_eq!(ours_http, ours, "HTTP and stdio serve the same");
}

/// What `bench/peers/mcp_skills_client.py` saw, connected as `how`, after
/// editing `edit`.
async fn python_skills_side(python: &Path, edit: &Path, how: &[&std::ffi::OsStr]) -> Value {
    let mut command = Command::new(python);
    command
        .arg(skillkit_tests::peers::dir().join("mcp_skills_client.py"))
        .arg("--edit")
        .arg(edit)
        .args([
            "--edit-text",
            "---\nname: search\ndescription: Search, edited.\n---\nEdited.\n",
        ])
        .args(how)
        .env("SKILLKIT_MCP_TOKEN", TOKEN);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python SDK client failed: {stderr}"
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// What the Python SDK must see of the skills extension and revision
/// 2026-07-28, over either transport.
fn assert_standard(seen: &Value, notes: &Path) {
    let modern = &seen["default"];
    // The 2.x client's default mode settles on 2026-07-28.
    assert_eq!(modern["version"], "2026-07-28", "{seen}");
    assert_eq!(modern["extension"], json!({"directoryRead": true}));
    let skills = modern["skills"].as_array().unwrap();
    let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://notes/search/SKILL.md",
            "skill://notes/tidy/SKILL.md"
        ]
    );
    assert_eq!(
        skills[0]["frontmatter"],
        json!({"name": "search", "description": "Search the notes.", "license": "MIT", "argument-hint": "[query]"})
    );
    // Every file of every manifest, read and checked by the Python side.
    let verified = modern["verified"].as_array().unwrap();
    let files = skills
        .iter()
        .map(|s| s["resources"].as_array().unwrap().len())
        .sum::<usize>();
    assert_eq!(verified.len(), files);
    assert!(files >= 4, "{seen}");
    assert!(verified.iter().all(|v| v["ok"] == true), "{verified:?}");
    assert_eq!(modern["get_matches"], true);
    assert!(
        modern["directory"]
            .as_array()
            .unwrap()
            .contains(&json!("skill://notes/search/scripts")),
        "{seen}"
    );
    for (method, hints) in modern["cache_hints"].as_object().unwrap() {
        assert_eq!(hints, &json!([0, "private"]), "{method}");
    }
    assert_eq!(modern["cache_hints"].as_object().unwrap().len(), 6);
    assert_eq!(
        modern["errors"],
        json!({"unknown_skill": -32602, "no_uri": -32602, "bogus_cursor": -32602, "unknown_method": -32601})
    );
    assert_eq!(modern["prompts"], json!(["notes_search", "notes_tidy"]));
    // subscriptions/listen: the edit made while connected is told.
    assert_eq!(
        modern["honored"],
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
    );
    assert_eq!(
        modern["events"],
        json!(["PromptsListChanged", "ResourcesListChanged"]),
        "{seen}"
    );
    // The old handshake keeps working, the extension with it.
    let legacy = &seen["legacy"];
    assert_eq!(legacy["version"], "2025-11-25");
    assert_eq!(legacy["skills"].as_array().unwrap().len(), 2);
    assert_eq!(
        legacy["tools"],
        json!(["activate_skill", "list_skills", "read_skill_file"])
    );
    assert_eq!(legacy["unknown_method"], -32601);
    let edited = std::fs::read_to_string(notes.join("skills/search/SKILL.md")).unwrap();
    assert!(edited.contains("Search, edited."));
}

/// A kit `notes` for the skills extension: `search` with files, `tidy`.
fn skills_kit() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    write(
        &notes.join("skills/search/SKILL.md"),
        "---\nname: search\ndescription: Search the notes.\nlicense: MIT\nargument-hint: \"[query]\"\n---\nSearch for $ARGUMENTS.\n",
    );
    write(&notes.join("skills/search/scripts/find.sh"), "echo find\n");
    write(&notes.join("skills/search/data.bin"), [0x00, 0xff, 0x10]);
    write(
        &notes.join("skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: Tidy the notes.\n---\nTidy up.\n",
    );
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_gets_the_skills_extension_and_listen_in_its_default_mode() {
    let python = match python() {
        Ok(python) => python,
        Err(why) if std::env::var("SKILLKIT_REQUIRE_PEERS").as_deref() != Ok("1") => {
            eprintln!("\n*** SKIPPED: Python MCP SDK skills extension NOT CHECKED: {why} ***\n");
            return;
        }
        Err(why) => panic!("SKILLKIT_REQUIRE_PEERS=1 but {why}"),
    };
    // stdio: the client starts `skillkit serve` itself.
    let dir = skills_kit();
    let notes = dir.path().join("notes");
    let edit = notes.join("skills/search/SKILL.md");
    let binary = std::ffi::OsStr::new(env!("CARGO_BIN_EXE_skillkit"));
    let stdio = python_skills_side(
        &python,
        &edit,
        &[
            "--stdio".as_ref(),
            binary,
            "serve".as_ref(),
            notes.as_os_str(),
            "--watch-interval".as_ref(),
            "0.05".as_ref(),
        ],
    )
    .await;
    assert_standard(&stdio, &notes);

    // Streamable HTTP on 127.0.0.1, with the token.
    let dir = skills_kit();
    let notes = dir.path().join("notes");
    let edit = notes.join("skills/search/SKILL.md");
    let http = HttpServe::start(
        &[
            notes.as_os_str(),
            "--watch-interval".as_ref(),
            "0.05".as_ref(),
        ],
        Some(TOKEN),
    );
    let over_http =
        python_skills_side(&python, &edit, &["--http".as_ref(), http.url.as_ref()]).await;
    assert_standard(&over_http, &notes);
}

/// A change made right after `subscriptions/listen` is acknowledged, on a
/// server the client has asked nothing else (the official Python SDK's 2.x
/// client in its default mode, over stdio): told every time, in 50 fresh
/// servers in a row (it was lost when the server had not queried its
/// catalog before the acknowledgement).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_after_the_listen_acknowledgement_is_told_every_time() {
    let python = match python() {
        Ok(python) => python,
        Err(why) if std::env::var("SKILLKIT_REQUIRE_PEERS").as_deref() != Ok("1") => {
            eprintln!("\n*** SKIPPED: listen race NOT CHECKED: {why} ***\n");
            return;
        }
        Err(why) => panic!("SKILLKIT_REQUIRE_PEERS=1 but {why}"),
    };
    let dir = skills_kit();
    let notes = dir.path().join("notes");
    let mut command = Command::new(python);
    command
        .arg(skillkit_tests::peers::dir().join("mcp_listen_race.py"))
        .arg("--kit")
        .arg(&notes)
        .args(["--runs", "50", "--wait", "15", "--stdio"])
        .arg(env!("CARGO_BIN_EXE_skillkit"))
        .arg("serve")
        .arg(&notes);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        output.status.success(),
        "the Python SDK client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["runs"], 50, "{seen}");
    assert_eq!(seen["missed"], 0, "{seen}");
}
