//! `skillkit chat --mcp 'COMMAND ARGS'` in a real pseudo-terminal: the tools
//! of server-everything (the official TypeScript SDK's example MCP server,
//! installed by `bench/peers/setup.sh`) are asked about like any tool; y runs
//! the call on the server, n refuses it.
#![cfg(unix)]

use skillkit_tests::peers;

use std::path::Path;
use std::process::Command;

use rexpect::process::wait::WaitStatus;
use rexpect::session::spawn_command;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn chat_asks_before_an_mcp_tool_runs() {
    let Some(everything) = peers::or_skip("skillkit chat --mcp", peers::everything()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Uses tools.\n---\nYou use tools.\n",
    );
    let script = dir.path().join("script.json");
    write(
        &script,
        r#"[
        {"tool_calls": [{"name": "mcp-server-everything__echo", "input": {"message": "first"}}]},
        {"text": "Echoed once."},
        {"tool_calls": [{"name": "mcp-server-everything__echo", "input": {"message": "second"}}]},
        {"text": "Not echoed."}
    ]"#,
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir.path())
        .args(["chat", "helper", "--resume", "session.json", "--model"])
        .arg(format!("scripted://{}", script.display()))
        .arg("--mcp")
        .arg(format!("'{}'", everything.display()))
        .env("TERM", "xterm")
        .env("HOME", dir.path().join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.path().join("cache"));
    let mut session = spawn_command(command, Some(60_000)).expect("start skillkit chat");

    session.exp_string("> ").unwrap();
    session.send_line("echo first").unwrap();
    session
        .exp_string("allow mcp-server-everything__echo")
        .unwrap();
    session.send_line("y").unwrap();
    session
        .exp_string("<- mcp-server-everything__echo ok: Echo: first")
        .unwrap();
    session.exp_string("Echoed once.").unwrap();

    session.exp_string("> ").unwrap();
    session.send_line("echo second").unwrap();
    session
        .exp_string("allow mcp-server-everything__echo")
        .unwrap();
    session.send_line("n").unwrap();
    session
        .exp_string("<- mcp-server-everything__echo error:")
        .unwrap();
    session.exp_string("Not echoed.").unwrap();

    session.send_line("/quit").unwrap();
    session.exp_eof().unwrap();
    match session.process.wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 0),
        other => panic!("skillkit chat ended with {other:?}"),
    }
    let saved = std::fs::read_to_string(dir.path().join("session.json")).unwrap();
    assert!(
        !saved.contains("Echo: second"),
        "the refused call never ran"
    );
}
