//! A skill's script run from `skillkit chat` in a real pseudo-terminal (the
//! chat's controlling terminal, as a person's is) cannot reach that
//! terminal: it runs in a session of its own, so `/dev/tty` names nothing.
//! Else it could type into the terminal (`TIOCSTI`: a `y` for the next
//! approval, or a command for the shell after the chat ends), read what the
//! person types, or take the terminal over; Landlock's device-ioctl rule
//! (ABI 5, Linux 6.10) refuses those ioctls, but only on kernels that have
//! it, and opening `/dev/tty` for reading is allowed even there.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;

use rexpect::process::wait::WaitStatus;
use rexpect::session::spawn_command;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_script_run_from_chat_finds_no_terminal() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Runs scripts.\n---\nYou run scripts.\n",
    );
    write(
        &dir.path().join("helper/skills/probe/SKILL.md"),
        "---\nname: probe\ndescription: Probes.\n---\nRun scripts/tty.py.\n",
    );
    write(
        &dir.path().join("helper/skills/probe/scripts/tty.py"),
        skillkit_tests::terminal::ATTACKER,
    );
    let script = dir.path().join("script.json");
    write(
        &script,
        r#"[
            {"tool_calls": [{"name": "run_skill_script", "input": {"skill": "helper:probe", "script": "scripts/tty.py"}}]},
            {"text": "Probed."},
            {"text": "Still here."}
        ]"#,
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir.path())
        .args([
            "chat",
            "helper",
            "--allow-scripts",
            "--allow",
            "run_skill_script",
        ])
        .args(["--resume", "session.json"])
        .arg("--model")
        .arg(format!("scripted://{}", script.display()))
        .env("TERM", "xterm")
        .env("HOME", dir.path().join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.path().join("cache"));
    let mut session = spawn_command(command, Some(30_000)).expect("start skillkit chat in a pty");
    session.exp_string("> ").unwrap();
    session.send_line("probe the terminal").unwrap();
    session
        .exp_string("<- run_skill_script ok: exit code: 0")
        .unwrap();
    session.exp_string("Probed.").unwrap();
    // Nothing was typed at the prompt: the next line is the person's.
    session.exp_string("> ").unwrap();
    session.send_line("still there?").unwrap();
    session.exp_string("Still here.").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/quit").unwrap();
    let rest = session.exp_eof().unwrap();
    assert!(!rest.contains("PWNED"), "{rest}");
    match session.process.wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 0),
        other => panic!("skillkit chat ended with {other:?}"),
    }
    // What the script printed, as the model was given it.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("session.json")).unwrap())
            .unwrap();
    let verdict = lines(&saved)
        .into_iter()
        .find(|line| line.starts_with("terminal: "))
        .unwrap_or_else(|| panic!("no verdict in {saved}"));
    assert!(verdict.starts_with("terminal: held ("), "{verdict}");
}

/// Every line of every text in `value`.
fn lines(value: &serde_json::Value) -> Vec<String> {
    match value {
        serde_json::Value::String(text) => text.lines().map(str::to_owned).collect(),
        serde_json::Value::Array(items) => items.iter().flat_map(lines).collect(),
        serde_json::Value::Object(map) => map.values().flat_map(lines).collect(),
        _ => Vec::new(),
    }
}
