//! What reaches a terminal is inert: text from a skill, a provider or a
//! model is printed with its control characters made visible (`\u{1b}` for
//! ESC), through the real binary, and `--json` output carries them escaped
//! as JSON escapes them, never raw.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// OSC 0 (the window title), `ESC[2J` (clear the screen), OSC 52 (write the
/// clipboard), a right-to-left override and a C1 CSI, as YAML escapes.
const DESCRIPTION_YAML: &str = r#""\e]0;PWNED\a\e[2J \e]52;c;aGk=\a \u202Eevil \x9bX""#;

/// The same description, as the skill holds it.
const DESCRIPTION: &str = "\x1b]0;PWNED\x07\x1b[2J \x1b]52;c;aGk=\x07 \u{202e}evil \u{9b}X";

/// A body with raw escape sequences in it.
const BODY: &str = "Body line\n\x1b]52;c;aGk=\x07\x1b[2J end of \u{9b}body\rfake\n";

/// What must never be in the output: ESC, BEL, the C1 CSI, the RLO override,
/// and a carriage return that does not end a line.
fn assert_inert(bytes: &[u8], what: &str) {
    let text = String::from_utf8_lossy(bytes);
    for bad in ['\x1b', '\x07', '\u{9b}', '\u{202e}'] {
        assert!(
            !text.contains(bad),
            "{what}: raw {:?} in the output:\n{text}",
            bad
        );
    }
    assert!(!text.replace("\r\n", "\n").contains('\r'), "{what}: {text}");
}

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// The kit `k` with the skill `k:a`, whose description and body hold
    /// escape sequences.
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join("k/skills/a/SKILL.md"),
            &format!("---\nname: a\ndescription: {DESCRIPTION_YAML}\n---\n{BODY}"),
        );
        Fixture { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn skillkit(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_skillkit"))
            .current_dir(self.dir.path())
            .env("HOME", self.path("home"))
            .env("SKILLKIT_CACHE_DIR", self.path("cache"))
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("SKILLKIT_MODEL")
            .args(args)
            .output()
            .unwrap()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn list_shows_control_characters_visibly() {
    let fixture = Fixture::new();
    let out = fixture.skillkit(&["list", "k"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_inert(&out.stdout, "list");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            r"skill k:a: \u{1b}]0;PWNED\u{7}\u{1b}[2J \u{1b}]52;c;aGk=\u{7} \u{202e}evil \u{9b}X"
        ),
        "{stdout}"
    );
}

#[test]
fn show_fields_and_body_are_inert() {
    let fixture = Fixture::new();
    let out = fixture.skillkit(&["show", "a", "k"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_inert(&out.stdout, "show");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(r"description: \u{1b}]0;PWNED\u{7}\u{1b}[2J"),
        "{stdout}"
    );
    // Line ends and tabs of a body stay; a lone carriage return is shown.
    assert!(
        stdout
            .contains("Body line\n\\u{1b}]52;c;aGk=\\u{7}\\u{1b}[2J end of \\u{9b}body\\u{d}fake"),
        "{stdout}"
    );
}

#[test]
fn to_prompt_is_inert_too() {
    let fixture = Fixture::new();
    let out = fixture.skillkit(&["to-prompt", "k"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_inert(&out.stdout, "to-prompt");
    assert!(text(&out.stdout).contains(r"\u{1b}[2J"), "{out:?}");
}

#[test]
fn validate_messages_quoting_input_are_inert() {
    let fixture = Fixture::new();
    write(
        &fixture.path("v/bad/SKILL.md"),
        "---\nname: \"Bad\\e[2J\"\ndescription: d\n---\n",
    );
    let out = fixture.skillkit(&["validate", "v"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_inert(&out.stdout, "validate");
    assert!(
        text(&out.stdout).contains(r"Skill name 'Bad\u{1b}[2J' must be lowercase"),
        "{out:?}"
    );
}

#[test]
fn errors_quoting_input_are_inert() {
    let fixture = Fixture::new();
    let out = fixture.skillkit(&["show", "\x1b]0;PWNED\x07", "k"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_inert(&out.stderr, "show error");
    assert!(
        text(&out.stderr).contains(r"no skill `\u{1b}]0;PWNED\u{7}`"),
        "{out:?}"
    );
}

/// `--json` output holds the text as JSON escapes it: the value is the same,
/// the bytes carry no control character (nor C1 or bidi controls, which JSON
/// allows raw but a terminal may act on).
#[test]
fn json_output_escapes_control_characters() {
    let fixture = Fixture::new();
    let out = fixture.skillkit(&["list", "--json", "k"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_inert(&out.stdout, "list --json");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["kits"][0]["skills"][0]["description"], DESCRIPTION);
}

const SCRIPT: &str = r#"[
    {"tool_calls": [{"name": "activate_skill", "input": {"name": "k:a", "arguments": "\u001b[2J\u009b"}}]},
    {"text": "Answer \u001b]0;PWNED\u0007 and \u001b]52;c;aGk=\u0007\u202e done"}
]"#;

#[test]
fn run_shows_model_text_tool_calls_and_results_inert() {
    let fixture = Fixture::new();
    write(&fixture.path("script.json"), SCRIPT);
    let model = format!("scripted://{}", fixture.path("script.json").display());
    let out = fixture.skillkit(&["run", "k", "go", "--model", &model]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_inert(&out.stdout, "run stdout");
    assert_inert(&out.stderr, "run stderr");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(r"Answer \u{1b}]0;PWNED\u{7} and \u{1b}]52;c;aGk=\u{7}\u{202e} done"),
        "{stdout}"
    );
    let stderr = text(&out.stderr);
    // The tool call's input, and its result (the skill's body).
    assert!(stderr.contains(r"-> activate_skill"), "{stderr}");
    assert!(stderr.contains(r"\u{9b}"), "{stderr}");
    assert!(
        stderr.contains(r"Body line \u{1b}]52;c;aGk=\u{7}\u{1b}[2J end"),
        "{stderr}"
    );

    let out = fixture.skillkit(&["run", "k", "go", "--model", &model, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_inert(&out.stdout, "run --json");
    for line in text(&out.stdout).lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
}

/// Log lines (`RUST_LOG`) on a pipe carry no escape sequences, neither
/// colours nor what a skill holds.
#[test]
fn log_lines_on_a_pipe_are_plain() {
    let fixture = Fixture::new();
    write(
        &fixture.path("k/skills/broken/SKILL.md"),
        "---\nname: \"b\\e]0;PWNED\\a\"\ndescription: [\n---\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .current_dir(fixture.dir.path())
        .env("RUST_LOG", "warn")
        .args(["list", "k"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out.stderr).contains("WARN"), "{out:?}");
    assert_inert(&out.stderr, "RUST_LOG=warn list");
}

/// `chat` in a real terminal: the model's text and a question it asks
/// (which chat's line editor prints itself) show their escape sequences,
/// never send them.
#[cfg(unix)]
#[test]
fn chat_shows_model_text_and_questions_inert() {
    use rexpect::session::spawn_command;

    let fixture = Fixture::new();
    write(
        &fixture.path("script.json"),
        r#"[
            {"tool_calls": [{"name": "terminal_ask", "input": {"question": "Clear \u001b[2J\u001b]0;PWNED\u0007 now?"}}]},
            {"text": "Done \u001b]52;c;aGk=\u0007 here."}
        ]"#,
    );
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(fixture.dir.path())
        .args(["chat", "k", "--resume", "session.json", "--model"])
        .arg(format!(
            "scripted://{}",
            fixture.path("script.json").display()
        ))
        .env("TERM", "xterm")
        .env("HOME", fixture.path("home"))
        .env("SKILLKIT_CACHE_DIR", fixture.path("cache"));
    let mut session = spawn_command(command, Some(30_000)).unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("go").unwrap();
    let asked = session.exp_string("[y/n]").unwrap();
    assert!(
        asked.contains(r"asks: Clear \u{1b}[2J\u{1b}]0;PWNED\u{7} now?"),
        "{asked:?}"
    );
    session.send_line("y").unwrap();
    let answer = session.exp_string("here.").unwrap();
    assert!(
        answer.contains(r"Done \u{1b}]52;c;aGk=\u{7} "),
        "{answer:?}"
    );
    // The line editor draws with escape sequences of its own; none of the
    // model's may reach the terminal.
    for raw in ["\x1b[2J", "\x1b]0;", "\x1b]52;", "\x07"] {
        assert!(!asked.contains(raw) && !answer.contains(raw), "{raw:?}");
    }
    session.send_line("/quit").unwrap();
    session.exp_eof().unwrap();
}
