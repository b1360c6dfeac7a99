//! `skillkit run --mcp 'COMMAND ARGS'` and `--mcp-url URL`, through the real
//! binary and a model script: the tools of server-everything (the official
//! TypeScript SDK's example MCP server, installed by `bench/peers/setup.sh`)
//! are the agent's, as `NAME__TOOL`, and run only when `--allow`ed.

use skillkit_tests::peers;

use std::path::Path;

use assert_cmd::Command;

const ECHO: &str = r#"[
    {"tool_calls": [{"name": "mcp-server-everything__echo", "input": {"message": "hi from run"}}]},
    {"text": "Echoed."}
]"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `skillkit run` over an agent folder with `script` as its model and
/// server-everything as `--mcp`, plus `extra` arguments.
fn run(everything: &Path, script: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Uses tools.\n---\nYou use tools.\n",
    );
    let script_file = dir.path().join("script.json");
    write(&script_file, script);
    let model = format!("scripted://{}", script_file.display());
    let server = format!("'{}'", everything.display());
    Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .current_dir(dir.path())
        .env("HOME", dir.path().join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.path().join("cache"))
        .env_remove("SKILLKIT_MODEL")
        .args([
            "run",
            "helper",
            "Echo something",
            "--model",
            &model,
            "--mcp",
            &server,
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn run_calls_an_mcp_servers_tool_when_allowed_and_refuses_it_otherwise() {
    let Some(everything) = peers::or_skip("skillkit run --mcp", peers::everything()) else {
        return;
    };
    let out = run(&everything, ECHO, &["--allow", "mcp-server-everything__*"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Echoed.");
    assert!(
        stderr.contains("<- mcp-server-everything__echo ok: Echo: hi from run"),
        "{stderr}"
    );

    // Not allowed: `run` asks no one, so the call is refused and never runs.
    let out = run(&everything, ECHO, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("<- mcp-server-everything__echo error"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow"), "{stderr}");
    assert!(!stderr.contains("Echo: hi from run"), "{stderr}");
}

#[test]
fn a_bad_mcp_command_line_or_url_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Uses tools.\n---\nYou use tools.\n",
    );
    write(&dir.path().join("script.json"), r#"[{"text": "never"}]"#);
    for args in [["--mcp", "'unclosed"], ["--mcp-url", "ftp://example"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_skillkit"))
            .current_dir(dir.path())
            .env("HOME", dir.path().join("home"))
            .args(["run", "helper", "task", "--model", "scripted://script.json"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(args[0]), "{stderr}");
    }
}
