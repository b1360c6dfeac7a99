//! `skillkit run` and `skillkit show`, through the real binary: a model
//! script (`--model scripted://FILE`), the offline model, a local model
//! server reached through `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`, and the
//! one-line errors.

use skillkit_tests::llm as llm_support;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// An agent folder: `helper/AGENT.md` and the skill `helper:greet`, plus a
/// model script; the binary run with a cache and a home of its own and no
/// model settings from the environment.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join("helper/AGENT.md"),
            "---\nname: helper\ndescription: Greets people.\n---\nYou greet people.\n",
        );
        write(
            &dir.path().join("helper/skills/greet/SKILL.md"),
            "---\nname: greet\ndescription: Greet someone by name.\nlicense: MIT\n---\nSay hello to $ARGUMENTS.\n",
        );
        write(&dir.path().join("helper/skills/greet/phrases.txt"), "Hi\n");
        Fixture { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn script(&self, json: &str) -> String {
        let file = self.path("script.json");
        write(&file, json);
        format!("scripted://{}", file.display())
    }

    fn skillkit(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
        command
            .current_dir(self.dir.path())
            .env("HOME", self.path("home"))
            .env("SKILLKIT_CACHE_DIR", self.path("cache"))
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("SKILLKIT_MODEL");
        command
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const GREETING: &str = r#"[
    {"tool_calls": [{"name": "activate_skill", "input": {"name": "helper:greet", "arguments": "Ada"}}]},
    {"text": "Hello, Ada!"}
]"#;

#[test]
fn run_prints_the_answer_on_stdout_and_tool_calls_on_stderr() {
    let fixture = Fixture::new();
    let model = fixture.script(GREETING);
    let out = fixture
        .skillkit()
        .args(["run", "helper", "Greet Ada", "--model", &model])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "Hello, Ada!\n");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(r#"-> activate_skill {"arguments":"Ada","name":"helper:greet"}"#),
        "{stderr}"
    );
    // The skill was rendered with its arguments for the model.
    assert!(
        stderr.contains(
            "<- activate_skill ok: <skill_content name=\"helper:greet\"> Say hello to Ada."
        ),
        "{stderr}"
    );
}

#[test]
fn run_json_prints_the_events_as_json_lines() {
    let fixture = Fixture::new();
    let model = fixture.script(GREETING);
    let out = fixture
        .skillkit()
        .args(["run", "helper", "Greet Ada", "--json", "--model", &model])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"tool_call_complete"), "{types:?}");
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["name"], "activate_skill");
    assert_eq!(result["is_error"], false);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "finished");
    assert_eq!(last["text"], "Hello, Ada!");
    assert_eq!(last["agent"], serde_json::json!([]));
}

/// A tool that runs code (here `github:list`) asks first; with no terminal
/// to ask, `run` denies it and says how to allow it; `--allow` lets it run.
#[test]
fn run_asks_before_tools_and_allow_lets_them_run() {
    let fixture = Fixture::new();
    let script = r#"[
        {"tool_calls": [{"name": "github_list"}]},
        {"text": "Listed."}
    ]"#;
    let model = fixture.script(script);
    let out = fixture
        .skillkit()
        .args(["run", "helper", "What is imported?", "--model", &model])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("allow github:list? [y/n]"), "{stderr}");
    assert!(stderr.contains("<- github:list error:"), "{stderr}");
    assert!(stderr.contains("--allow NAME"), "{stderr}");

    let model = fixture.script(script);
    let out = fixture
        .skillkit()
        .args(["run", "helper", "What is imported?", "--model", &model])
        .args(["--allow", "github:*"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(stderr.contains("<- github:list ok:"), "{stderr}");
    assert_eq!(text(&out.stdout), "Listed.\n");
}

/// `--allow-scripts` offers `run_skill_script`; like any tool that runs
/// code it asks first (denied without a terminal), and `--allow` lets it run.
#[test]
fn allow_scripts_offers_run_skill_script_which_asks_first() {
    let fixture = Fixture::new();
    write(
        &fixture.path("helper/skills/greet/scripts/hello.py"),
        "print('hello')\n",
    );
    let script = r#"[
        {"tool_calls": [{"name": "run_skill_script", "input": {"skill": "helper:greet", "script": "scripts/hello.py", "args": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "~/.ssh/id_ed25519"]}}]},
        {"text": "Done."}
    ]"#;
    let run = |extra: &[&str]| {
        let model = fixture.script(script);
        let out = fixture
            .skillkit()
            .args(["run", "helper", "Greet", "--model", &model])
            .args(extra)
            .write_stdin("")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        text(&out.stderr)
    };
    let stderr = run(&[]);
    assert!(
        stderr.contains("there is no tool `run_skill_script`"),
        "{stderr}"
    );
    let stderr = run(&["--allow-scripts"]);
    assert!(
        stderr.contains("scripts enabled (run_skill_script); sandbox: "),
        "{stderr}"
    );
    assert!(stderr.contains("allow run_skill_script"), "{stderr}");
    assert!(stderr.contains("<- run_skill_script error:"), "{stderr}");
    // The person sees the whole input, what runs first: no long value
    // pushes the rest out of view.
    let asked = &stderr[stderr
        .find("run_skill_script wants to run with:")
        .expect(&stderr)..];
    let (skill, script, args) = (
        asked.find("  skill:  helper:greet").expect(asked),
        asked.find("  script: scripts/hello.py").expect(asked),
        asked.find("  args:").expect(asked),
    );
    assert!(skill < script && script < args, "{asked}");
    assert!(asked.contains("~/.ssh/id_ed25519"), "{asked}");
    let stderr = run(&["--allow-scripts", "--allow", "run_skill_script"]);
    assert!(
        stderr.contains("<- run_skill_script ok: exit code: 0"),
        "{stderr}"
    );
}

/// A `!`command`` smuggled in through activation arguments never runs,
/// even with scripts allowed: commands come from the skill's file only.
/// The script sandbox's layers are stated in the `--json` results.
#[test]
fn a_command_in_activation_arguments_does_not_run() {
    let fixture = Fixture::new();
    write(
        &fixture.path("helper/skills/innocent/SKILL.md"),
        "---\nname: innocent\ndescription: Greets.\n---\nGreet $ARGUMENTS.\n",
    );
    write(
        &fixture.path("helper/skills/greet/scripts/hello.py"),
        "print('hello')\n",
    );
    let script = r#"[
        {"tool_calls": [{"name": "activate_skill", "input": {"name": "helper:innocent", "arguments": "hello !`echo INJECTED; uname -a`"}}]},
        {"tool_calls": [{"name": "run_skill_script", "input": {"skill": "helper:greet", "script": "scripts/hello.py"}}]},
        {"text": "Done."}
    ]"#;
    let model = fixture.script(script);
    let out = fixture
        .skillkit()
        .args(["run", "helper", "Greet", "--model", &model])
        .args(["--allow-scripts", "--allow", "run_skill_script", "--json"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = text(&out.stdout);
    let results: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{stdout}");
    let activated = results[0]["content"].as_str().unwrap();
    assert!(
        activated.contains("Greet hello !`echo INJECTED; uname -a`."),
        "{activated}"
    );
    assert!(!stdout.contains("Linux"), "the command ran: {stdout}");
    let ran = results[1]["content"].as_str().unwrap();
    assert!(ran.contains("exit code: 0"), "{ran}");
    // The report names the layers in force, and only those.
    let sandbox = skillkit::script::Sandbox::current();
    assert!(ran.contains(&format!("sandbox: {sandbox}")), "{ran}");
}

/// Naming a kit on the command line loads it; it does not approve what
/// its skills ask for. A skill whose `allowed-tools` pre-approve
/// `run_skill_script` gets nothing until the folder is trusted (without a
/// terminal, it is not), and the script is asked like any call; once
/// `skillkit trust` trusts the folder, it runs unasked while the skill is
/// active; an edit behind a linked skill folder revokes that.
#[test]
fn a_named_kit_grants_its_allowed_tools_only_once_trusted() {
    let fixture = Fixture::new();
    write(
        &fixture.path("ext/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploys.\nallowed-tools: run_skill_script\n---\nRun scripts/go.sh.\n",
    );
    write(&fixture.path("ext/deploy/scripts/go.sh"), "echo deployed\n");
    std::os::unix::fs::symlink("../../ext/deploy", fixture.path("helper/skills/deploy")).unwrap();
    let script = r#"[
        {"tool_calls": [{"name": "activate_skill", "input": {"name": "helper:deploy"}}]},
        {"tool_calls": [{"name": "run_skill_script", "input": {"skill": "helper:deploy", "script": "scripts/go.sh"}}]},
        {"text": "Done."}
    ]"#;
    let run = || {
        let model = fixture.script(script);
        let out = fixture
            .skillkit()
            .args([
                "run",
                "helper",
                "Deploy",
                "--model",
                &model,
                "--allow-scripts",
            ])
            .write_stdin("")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        text(&out.stderr)
    };
    let stderr = run();
    assert!(
        stderr.contains(
            "is not trusted, and its skills pre-approve tools: helper:deploy (run_skill_script)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("skillkit trust"), "{stderr}");
    assert!(stderr.contains("<- run_skill_script error:"), "{stderr}");
    assert!(!stderr.contains("deployed"), "{stderr}");

    let trusted = fixture
        .skillkit()
        .args(["trust", "helper"])
        .output()
        .unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{trusted:?}");
    let stderr = run();
    assert!(!stderr.contains("is not trusted"), "{stderr}");
    assert!(
        stderr.contains("<- run_skill_script ok: exit code: 0"),
        "{stderr}"
    );

    // An edit behind the link: trusted no more.
    write(&fixture.path("ext/deploy/scripts/go.sh"), "echo changed\n");
    let stderr = run();
    assert!(stderr.contains("is not trusted"), "{stderr}");
    assert!(stderr.contains("<- run_skill_script error:"), "{stderr}");
}

#[test]
fn without_a_key_run_is_offline_and_says_so() {
    let fixture = Fixture::new();
    let out = fixture
        .skillkit()
        .args(["run", "helper", "Hello there"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text(&out.stderr).contains("offline: no API key for anthropic://"),
        "{out:?}"
    );
    assert!(text(&out.stderr).contains("set ANTHROPIC_API_KEY"));
    assert_eq!(text(&out.stdout), "(offline) You said: Hello there\n");
}

#[test]
fn errors_are_one_line_saying_what_to_do() {
    let fixture = Fixture::new();
    let cases: [(&[&str], i32, &str); 4] = [
        (
            &["run", "helper", "hi", "--model", "mistral://large"],
            1,
            "unknown model scheme `mistral`",
        ),
        (
            &[
                "run",
                "helper",
                "hi",
                "--model",
                "anthropic://claude-sonnet-4-6",
            ],
            1,
            "set ANTHROPIC_API_KEY",
        ),
        (
            &["run", "no-such-dir", "hi"],
            2,
            "no-such-dir: cannot read it",
        ),
        (
            &["show", "nothing-like-it", "helper"],
            1,
            "no skill `nothing-like-it`; `skillkit list` shows the skills",
        ),
    ];
    for (args, code, message) in cases {
        let out = fixture.skillkit().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {out:?}");
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn a_bad_model_script_is_named() {
    let fixture = Fixture::new();
    let model = fixture.script(r#"[{"txt": "typo"}]"#);
    let out = fixture
        .skillkit()
        .args(["run", "helper", "hi", "--model", &model])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        text(&out.stderr).contains("not a model script: unknown field `txt`"),
        "{out:?}"
    );
}

#[test]
fn show_prints_fields_location_files_and_body() {
    let fixture = Fixture::new();
    // By bare name, in the kit given.
    let out = fixture
        .skillkit()
        .args(["show", "greet", "helper"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let shown = text(&out.stdout);
    let location = std::fs::canonicalize(fixture.path("helper/skills/greet/SKILL.md")).unwrap();
    let expected = format!(
        "name: helper:greet\ndescription: Greet someone by name.\nlicense: MIT\n\
         location: {}\nfiles:\n  phrases.txt\n\nSay hello to $ARGUMENTS.\n",
        location.display()
    );
    assert_eq!(shown, expected);
    // By full name, from the standard locations.
    write(
        &fixture.path(".claude/skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Take notes.\n---\nWrite it down.\n",
    );
    let out = fixture
        .skillkit()
        .args(["show", "skills:notes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out.stdout).ends_with("\nWrite it down.\n"), "{out:?}");
}

/// The adapters' base URLs follow `ANTHROPIC_BASE_URL` and `OPENAI_BASE_URL`,
/// as the official SDKs do: the answer comes from a model server on
/// 127.0.0.1.
#[test]
fn base_url_variables_reach_a_local_model_server() {
    let fixture = Fixture::new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/llm");
    let cases = [
        (
            "anthropic",
            "ANTHROPIC",
            "anthropic://claude-sonnet-4-6",
            "",
        ),
        ("openai", "OPENAI", "openai://gpt-4o-mini", "/v1"),
    ];
    for (vendor, prefix, model, path) in cases {
        let sse = std::fs::read(format!("{fixtures}/{vendor}/text.sse")).unwrap();
        let server = runtime.block_on(llm_support::Server::start(vec![llm_support::Reply::sse(
            sse,
        )]));
        let out = fixture
            .skillkit()
            .args(["run", "helper", "Bonjour ?", "--model", model])
            .env(
                format!("{prefix}_BASE_URL"),
                format!("{}{path}", server.base_url),
            )
            .env(format!("{prefix}_API_KEY"), "test-key")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{vendor}: {out:?}");
        assert!(
            text(&out.stdout).starts_with("Bonjour, ça va ?"),
            "{vendor}: {out:?}"
        );
        assert_eq!(server.received().len(), 1, "{vendor}");
    }
}

/// Without a terminal, `chat` reads lines from stdin and ends quietly (exit
/// 0) when it closes; the conversation is saved.
#[test]
fn chat_reads_piped_lines_and_ends_at_their_end() {
    let fixture = Fixture::new();
    let model = fixture.script(r#"[{"text": "First."}, {"text": "Second."}]"#);
    let session = fixture.path("session.json");
    let out = fixture
        .skillkit()
        .args(["chat", "helper", "--model", &model, "--resume"])
        .arg(&session)
        .write_stdin("one\ntwo\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let shown = text(&out.stdout);
    assert!(shown.contains("First.\n"), "{shown}");
    assert!(shown.contains("Second.\n"), "{shown}");
    assert!(!text(&out.stderr).contains("panicked"), "{out:?}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&session).unwrap()).unwrap();
    assert_eq!(saved["messages"].as_array().unwrap().len(), 4);
}

/// `chat --allow-scripts` says at start that scripts are on and what the
/// kernel enforces on them; without the flag it says nothing of scripts.
#[test]
fn chat_says_when_scripts_are_enabled_and_how_they_are_sandboxed() {
    let fixture = Fixture::new();
    let chat = |extra: &[&str]| {
        let model = fixture.script(r#"[{"text": "Hi."}]"#);
        let out = fixture
            .skillkit()
            .args(["chat", "helper", "--model", &model])
            .args(extra)
            .write_stdin("hello\n")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        text(&out.stdout)
    };
    assert!(!chat(&[]).contains("scripts"));
    let shown = chat(&["--allow-scripts", "--allow-weaker-sandbox"]);
    // Exactly the layers this kernel puts up, and nothing claimed beyond.
    let sandbox = skillkit::script::Sandbox::current();
    assert!(
        shown.contains(&format!(
            "scripts enabled (run_skill_script); sandbox: {sandbox}\n"
        )),
        "{shown}"
    );
}

#[test]
fn run_skill_sends_the_skill_a_person_runs() {
    let fixture = Fixture::new();
    write(
        &fixture.path("helper/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploy to production.\n\
         disable-model-invocation: true\n---\nDeploy $ARGUMENTS to production.\n",
    );
    write(
        &fixture.path("helper/skills/context/SKILL.md"),
        "---\nname: context\ndescription: Background.\nuser-invocable: false\n---\nBackground.\n",
    );
    let model = fixture.script(r#"[{"text": "Deployed."}]"#);
    let out = fixture
        .skillkit()
        .args([
            "run", "helper", "--skill", "deploy", "v2", "--json", "--model", &model,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Deployed."));

    // Offline, the model echoes its message: the rendered body.
    let out = fixture
        .skillkit()
        .args(["run", "helper", "--skill", "deploy", "v2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out.stderr).contains("(using helper:deploy)"));
    assert_eq!(
        text(&out.stdout),
        "(offline) You said: Deploy v2 to production.\n"
    );

    let refused = fixture
        .skillkit()
        .args(["run", "helper", "--skill", "context", "--model", &model])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("`helper:context` is for the agent to use"),
        "{}",
        text(&refused.stderr)
    );
}

/// A damaged session file (a torn or hand-edited line) does not hide the
/// other sessions: `sessions list` lists them, says of the damaged one why
/// it cannot be read (`"error"` in `--json`), and exits 2; `sessions rm`
/// removes it, and the list is whole again.
#[test]
fn a_damaged_session_is_listed_with_why_beside_the_others() {
    let fixture = Fixture::new();
    let sessions = fixture.path("sessions");
    let model = fixture.script(GREETING);
    let run = fixture
        .skillkit()
        .args(["run", "helper", "Greet Ada", "--model", &model])
        .args(["--session", "greetings", "--sessions"])
        .arg(&sessions)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    std::fs::write(sessions.join("broken.jsonl"), "{\"seq\": 1, \"mess\n").unwrap();
    let list = |json: bool| {
        let mut command = fixture.skillkit();
        command
            .args(["sessions", "list", "--sessions"])
            .arg(&sessions);
        if json {
            command.arg("--json");
        }
        command.output().unwrap()
    };

    let listed = list(false);
    assert_eq!(listed.status.code(), Some(2), "{listed:?}");
    let stdout = text(&listed.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("broken  cannot be read: its last line"),
        "{stdout}"
    );
    assert!(lines[1].starts_with("greetings  4 items"), "{stdout}");
    let stderr = text(&listed.stderr);
    assert!(
        stderr.contains("1 of the sessions cannot be read (broken)")
            && stderr.contains("`skillkit sessions rm NAME`"),
        "{stderr}"
    );

    let listed = list(true);
    assert_eq!(listed.status.code(), Some(2), "{listed:?}");
    let entries: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(entries[0]["name"], "broken");
    assert!(
        entries[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("its last line")
    );
    assert_eq!(entries[1]["name"], "greetings");
    assert_eq!(entries[1]["items"], 4);
    assert!(entries[1]["error"].is_null());

    let rm = fixture
        .skillkit()
        .args(["sessions", "rm", "broken", "--sessions"])
        .arg(&sessions)
        .output()
        .unwrap();
    assert_eq!(rm.status.code(), Some(0), "{rm:?}");
    let listed = list(false);
    assert_eq!(listed.status.code(), Some(0), "{listed:?}");
    assert!(text(&listed.stdout).starts_with("greetings  4 items"));
}

/// `run --session NAME` keeps the conversation in the sessions folder: a
/// second run goes on with it, and `skillkit sessions` lists, shows, forks
/// and removes it; a name that is not one is refused (exit 2), a session
/// that does not exist is exit 1.
#[test]
fn run_session_keeps_the_conversation_and_sessions_shows_it() {
    let fixture = Fixture::new();
    let sessions = fixture.path("sessions");
    let sessions = sessions.to_str().unwrap();
    let model = fixture.script(GREETING);
    let first = fixture
        .skillkit()
        .args(["run", "helper", "Greet Ada", "--model", &model])
        .args(["--session", "greetings", "--sessions", sessions])
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let model = fixture.script(r#"[{"text": "Done before."}]"#);
    let second = fixture
        .skillkit()
        .args(["run", "helper", "Again?", "--model", &model])
        .args(["--session", "greetings"])
        .env("SKILLKIT_SESSIONS_URL", sessions)
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(0), "{second:?}");

    let show = fixture
        .skillkit()
        .args(["sessions", "show", "greetings", "--sessions", sessions])
        .output()
        .unwrap();
    assert_eq!(show.status.code(), Some(0), "{show:?}");
    let lines: Vec<String> = text(&show.stdout)
        .lines()
        .map(|l| l.trim().to_owned())
        .collect();
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert_eq!(lines[0], "1  user: Greet Ada");
    assert!(lines[1].contains("[calls activate_skill]"), "{lines:?}");
    assert!(
        lines[2].starts_with("3  tool result: <skill_content"),
        "{lines:?}"
    );
    assert_eq!(lines[3], "4  assistant: Hello, Ada!");
    assert_eq!(lines[4], "5  user: Again?");
    assert_eq!(lines[5], "6  assistant: Done before.");

    let list = fixture
        .skillkit()
        .args(["sessions", "list", "--json", "--sessions", sessions])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(listed[0]["name"], "greetings");
    assert_eq!(listed[0]["items"], 6);

    let fork = fixture
        .skillkit()
        .args([
            "sessions",
            "fork",
            "greetings",
            "short",
            "--at",
            "4",
            "--sessions",
            sessions,
        ])
        .output()
        .unwrap();
    assert_eq!(fork.status.code(), Some(0), "{fork:?}");
    let rm = fixture
        .skillkit()
        .args(["sessions", "rm", "greetings", "--sessions", sessions])
        .output()
        .unwrap();
    assert_eq!(rm.status.code(), Some(0), "{rm:?}");
    let list = fixture
        .skillkit()
        .args(["sessions", "--sessions", sessions])
        .output()
        .unwrap();
    assert_eq!(text(&list.stdout).trim(), "short  4 items");

    let missing = fixture
        .skillkit()
        .args(["sessions", "show", "greetings", "--sessions", sessions])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    let bad = fixture
        .skillkit()
        .args([
            "run",
            "helper",
            "Hi",
            "--model",
            &model,
            "--session",
            "../escape",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(
        text(&bad.stderr).contains("is not a session id"),
        "{}",
        text(&bad.stderr)
    );
}

/// `--sessions sqlite://FILE` keeps sessions in a SQLite database (the SQL
/// provider's), read back by `skillkit sessions`.
#[test]
fn sessions_can_live_in_a_sqlite_database() {
    let fixture = Fixture::new();
    let url = format!(
        "sqlite://{}?mode=rwc",
        fixture.path("sessions.db").display()
    );
    let model = fixture.script(GREETING);
    let first = fixture
        .skillkit()
        .args(["run", "helper", "Greet Ada", "--model", &model])
        .args(["--session", "greetings", "--sessions", &url])
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let show = fixture
        .skillkit()
        .args(["sessions", "show", "greetings"])
        .env("SKILLKIT_SESSIONS_URL", &url)
        .output()
        .unwrap();
    assert_eq!(show.status.code(), Some(0), "{show:?}");
    let shown = text(&show.stdout);
    assert_eq!(shown.lines().count(), 4, "{shown}");
    assert!(shown.contains("4  assistant: Hello, Ada!"), "{shown}");
}

/// A process killed in the middle of a turn loses that turn and nothing
/// else: the session holds the turns before it, whole, and the next run
/// goes on from them.
#[test]
fn a_run_killed_mid_turn_loses_only_that_turn() {
    let fixture = Fixture::new();
    let sessions = fixture.path("sessions");
    let sessions = sessions.to_str().unwrap().to_owned();
    let model = fixture.script(GREETING);
    let first = fixture
        .skillkit()
        .args(["run", "helper", "Greet Ada", "--model", &model])
        .args(["--session", "k", "--sessions", &sessions])
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{first:?}");

    // A model server that starts its answer and never ends it.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/llm");
    let sse = std::fs::read(format!("{fixtures}/anthropic/text.sse")).unwrap();
    let half = sse[..sse.len() / 2].to_vec();
    let server = runtime.block_on(llm_support::Server::start(vec![
        llm_support::Reply::sse(half).hold_open(),
    ]));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .current_dir(fixture.dir.path())
        .env("HOME", fixture.path("home"))
        .env("SKILLKIT_CACHE_DIR", fixture.path("cache"))
        .env_remove("SKILLKIT_MODEL")
        .args([
            "run",
            "helper",
            "Second task",
            "--model",
            "anthropic://claude-sonnet-4-6",
        ])
        .args(["--session", "k", "--sessions", &sessions])
        .env("ANTHROPIC_BASE_URL", &server.base_url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while server.received().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(server.received().len(), 1, "the turn started");
    child.kill().unwrap();
    child.wait().unwrap();

    let show = |fixture: &Fixture| {
        let out = fixture
            .skillkit()
            .args(["sessions", "show", "k", "--sessions", &sessions])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        text(&out.stdout)
    };
    let kept = show(&fixture);
    assert_eq!(
        kept.lines().count(),
        4,
        "the first run's turns, whole: {kept}"
    );
    let model = fixture.script(r#"[{"text": "Third, done."}]"#);
    let third = fixture
        .skillkit()
        .args(["run", "helper", "Third task", "--model", &model])
        .args(["--session", "k", "--sessions", &sessions])
        .output()
        .unwrap();
    assert_eq!(third.status.code(), Some(0), "{third:?}");
    let now = show(&fixture);
    assert_eq!(now.lines().count(), 6, "{now}");
    assert!(now.contains("5  user: Third task"), "{now}");
}

/// Attacks on the sessions folder, through the binary: a session file
/// that is a symbolic link to another file (run as root here, it would
/// overwrite whatever it names) is refused and its target left as it was;
/// and a stored message that carries terminal escapes is shown inert.
#[cfg(unix)]
#[test]
fn a_linked_session_file_is_refused_and_stored_text_is_shown_inert() {
    let fixture = Fixture::new();
    let sessions = fixture.path("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let victim = fixture.path("victim.txt");
    write(&victim, "");
    std::os::unix::fs::symlink(&victim, sessions.join("s.jsonl")).unwrap();
    let model = fixture.script(r#"[{"text": "Hi."}]"#);
    let out = fixture
        .skillkit()
        .args(["run", "helper", "Hello", "--model", &model])
        .args(["--session", "s", "--sessions", sessions.to_str().unwrap()])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text(&out.stderr).contains("symbolic link"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "",
        "the link's target is untouched"
    );

    let line = r#"{"seq":1,"message":{"role":"user","text":"\u001b]0;PWNED\u0007 hi"}}"#;
    write(&sessions.join("t.jsonl"), &format!("{line}\n"));
    let show = fixture
        .skillkit()
        .args([
            "sessions",
            "show",
            "t",
            "--sessions",
            sessions.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(show.status.code(), Some(0), "{show:?}");
    assert!(!show.stdout.contains(&0x1b), "{:?}", text(&show.stdout));
    assert!(
        text(&show.stdout).contains("PWNED"),
        "{}",
        text(&show.stdout)
    );
}
