//! `skillkit chat` in a real pseudo-terminal, as a person uses it, on a
//! model script: streamed text, a tool call and its result on one line each,
//! an approval answered y, `/skills`, `/help` and `/<skill>` (and an unknown one), Ctrl-C stopping an
//! answer that is still streaming (the script's `stall` reply never ends by
//! itself, so no timing is involved) while the conversation goes on, `/quit`
//! exiting 0, `--resume` showing and continuing the earlier turns (also
//! through a symlink, which stays one), a pending tool (`terminal:ask`)
//! answered y and n, a terminal resize after a stopped answer not taken for
//! a Ctrl-C, and a failed save warning while the conversation goes on.
#![cfg(unix)]

use std::path::Path;
use std::process::Command;

use rexpect::process::Signal;
use rexpect::process::wait::WaitStatus;
use rexpect::session::{PtySession, spawn_command};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `skillkit chat helper --model scripted://<script> --resume session.json`
/// in a pty.
fn chat(dir: &Path, script: &str) -> PtySession {
    chat_resuming(dir, script, "session.json")
}

/// `skillkit chat helper --model scripted://<script> --resume <session>` in
/// a pty.
fn chat_resuming(dir: &Path, script: &str, session: &str) -> PtySession {
    let script_file = dir.join("script.json");
    write(&script_file, script);
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir)
        .args(["chat", "helper", "--resume", session, "--model"])
        .arg(format!("scripted://{}", script_file.display()))
        .env("TERM", "xterm")
        .env("HOME", dir.join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.join("cache"));
    // A failing expectation gives up after 30 s instead of hanging.
    spawn_command(command, Some(30_000)).expect("start skillkit chat in a pty")
}

fn quit(mut session: PtySession) {
    session.send_line("/quit").unwrap();
    session.exp_eof().unwrap();
    match session.process.wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 0),
        other => panic!("skillkit chat ended with {other:?}"),
    }
}

/// `/compact` summarises the conversation and says what it kept; the
/// context use shows after each answer and at `/context`; the conversation
/// goes on from the summary.
#[test]
fn compact_and_context_in_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Greets people.\n---\nYou greet people.\n",
    );
    write(
        &dir.path().join("helper/skills/trip/SKILL.md"),
        "---\nname: trip\ndescription: Plan a trip.\n---\nPlan day by day.\n",
    );
    let script = r#"[
        {"tool_calls": [{"name": "activate_skill", "input": {"name": "helper:trip"}}]},
        {"text": "Noted: Lisbon."},
        {"text": "SUMMARY: the user goes to Lisbon."},
        {"text": "Still Lisbon."}
    ]"#;
    let mut session = chat(dir.path(), script);
    session.exp_string("/compact [WHAT TO KEEP]").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("I go to Lisbon").unwrap();
    session.exp_string("Noted: Lisbon.").unwrap();
    session
        .exp_string("(context: 0% of 128,000 tokens (")
        .unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/compact keep the city").unwrap();
    session
        .exp_string("compacted: the conversation summarised (")
        .unwrap();
    session.exp_string("skills kept: helper:trip").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/context").unwrap();
    session.exp_string("context: 0% of 128,000 tokens").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("where do I go?").unwrap();
    session.exp_string("Still Lisbon.").unwrap();
    quit(session);

    // The compaction is in the saved conversation: resumed, it shows.
    let mut session = chat(dir.path(), r#"[{"text": "Yes."}]"#);
    session
        .exp_string("~~ compacted: the conversation summarised")
        .unwrap();
    quit(session);
}

#[test]
fn a_conversation_in_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Greets people.\n---\nYou greet people.\n",
    );
    write(
        &dir.path().join("helper/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greet someone by name.\n---\nSay hello to $ARGUMENTS.\n",
    );
    let script = r#"[
        {"text": "Hello there, how can I help?"},
        {"tool_calls": [{"name": "github_list"}]},
        {"text": "Nothing is imported yet."},
        {"text": "Once upon a time", "stall": true},
        {"text": "Yes, still here."},
        {"text": "Hello, Ada, as the skill says."}
    ]"#;
    let mut session = chat(dir.path(), script);
    session.exp_string("agent helper: Greets people.").unwrap();

    // Streamed text.
    session.exp_string("> ").unwrap();
    session.send_line("hi").unwrap();
    session.exp_string("Hello there, how can I help?").unwrap();

    // A tool call line, its approval answered y, its result line.
    session.exp_string("> ").unwrap();
    session.send_line("what is imported?").unwrap();
    session.exp_string("-> github:list {}").unwrap();
    session
        .exp_string("github:list wants to run with:")
        .unwrap();
    session.exp_string("allow github:list? [y/n]").unwrap();
    session.send_line("y").unwrap();
    session
        .exp_string(r#"<- github:list ok: {"allowed_sources":["*"]"#)
        .unwrap();
    session.exp_string("Nothing is imported yet.").unwrap();

    // Ctrl-C stops an answer mid-stream; the conversation goes on.
    session.exp_string("> ").unwrap();
    session.send_line("tell me a long story").unwrap();
    session.exp_string("Once upon a time").unwrap();
    session.send_control('c').unwrap();
    session
        .exp_string("(stopped; the conversation goes on)")
        .unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("still there?").unwrap();
    session.exp_string("Yes, still here.").unwrap();

    // The skills, and one used by the person.
    session.exp_string("> ").unwrap();
    session.send_line("/skills").unwrap();
    session
        .exp_string("helper:greet: Greet someone by name.")
        .unwrap();
    session.send_line("/help").unwrap();
    session
        .exp_string("/<skill> ARGS uses one, /help shows this")
        .unwrap();
    session.send_line("/nope").unwrap();
    session
        .exp_string("no skill `nope`; /skills lists them, /help shows the commands")
        .unwrap();
    session.send_line("/greet Ada").unwrap();
    session.exp_string("(using helper:greet)").unwrap();
    session
        .exp_string("Hello, Ada, as the skill says.")
        .unwrap();
    quit(session);

    // The conversation was saved after each turn: resumed, it shows the
    // earlier turns and the model gets them.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("session.json")).unwrap())
            .unwrap();
    let messages = saved["messages"].as_array().unwrap();
    assert_eq!(messages[0]["text"], "hi");
    assert!(messages.iter().any(|m| {
        m["text"]
            .as_str()
            .unwrap_or("")
            .contains("Say hello to Ada.")
    }));
    let mut session = chat(dir.path(), r#"[{"text": "Welcome back."}]"#);
    session.exp_string("earlier messages)").unwrap();
    session.exp_string("> hi").unwrap();
    session.exp_string("Hello there, how can I help?").unwrap();
    session.exp_string("Yes, still here.").unwrap();
    session.send_line("and now?").unwrap();
    session.exp_string("Welcome back.").unwrap();
    quit(session);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("session.json")).unwrap())
            .unwrap();
    let resumed = saved["messages"].as_array().unwrap();
    assert_eq!(resumed[..messages.len()], messages[..]);
    assert_eq!(resumed.last().unwrap()["text"], "Welcome back.");
}

/// Ctrl-C twice at an empty prompt ends the chat (exit 0).
#[test]
fn two_ctrl_c_at_the_prompt_exit() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greet.\n---\nSay hello.\n",
    );
    let mut session = chat(dir.path(), "[]");
    session.exp_string("> ").unwrap();
    // Each Ctrl-C once the prompt reads keys: one typed while no line is
    // read (the editor of the next line not in raw mode yet) is a SIGINT,
    // not a key at the prompt.
    until_reading_keys(&session);
    session.send_control('c').unwrap();
    session
        .exp_string("(Ctrl-C again or /quit to leave)")
        .unwrap();
    until_reading_keys(&session);
    session.send_control('c').unwrap();
    session.exp_eof().unwrap();
    match session.process.wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 0),
        other => panic!("skillkit chat ended with {other:?}"),
    }
}

/// A pending tool (`terminal:ask`, a yes/no question for the person) asks
/// in the terminal: y resumes it with "yes", n denies it, and the model is
/// told either way.
#[test]
fn a_pending_question_is_answered_y_or_n() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greet.\n---\nSay hello.\n",
    );
    let script = r#"[
        {"tool_calls": [{"name": "terminal_ask", "input": {"question": "Shall I greet Ada?"}}]},
        {"text": "Greeting Ada."},
        {"tool_calls": [{"name": "terminal_ask", "input": {"question": "Shall I greet Bob?"}}]},
        {"text": "Not greeting Bob."}
    ]"#;
    let mut session = chat(dir.path(), script);
    session.exp_string("> ").unwrap();
    session.send_line("greet Ada").unwrap();
    session
        .exp_string("terminal:ask asks: Shall I greet Ada? [y/n]")
        .unwrap();
    session.send_line("y").unwrap();
    session.exp_string("<- terminal:ask ok: yes").unwrap();
    session.exp_string("Greeting Ada.").unwrap();

    session.exp_string("> ").unwrap();
    session.send_line("greet Bob").unwrap();
    session
        .exp_string("terminal:ask asks: Shall I greet Bob? [y/n]")
        .unwrap();
    session.send_line("n").unwrap();
    session.exp_string("<- terminal:ask error:").unwrap();
    session.exp_string("the user said no").unwrap();
    session.exp_string("Not greeting Bob.").unwrap();
    quit(session);

    // What the model was told, as saved: "yes" for Ada, the refusal for Bob.
    let saved = std::fs::read_to_string(dir.path().join("session.json")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let results: Vec<&serde_json::Value> = saved["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m.get("tool_call_id").is_some())
        .collect();
    assert_eq!(results.len(), 2, "{saved:#}");
    assert_eq!(results[0]["is_error"], false);
    assert!(results[0]["content"].to_string().contains("yes"));
    assert_eq!(results[1]["is_error"], true);
    assert!(
        results[1]["content"]
            .to_string()
            .contains("the user said no")
    );
}

/// The messages' texts in the saved conversation `file`.
fn saved_texts(file: &Path) -> Vec<String> {
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    saved["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn greeter(dir: &Path) {
    write(
        &dir.join("helper/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greet.\n---\nSay hello.\n",
    );
}

/// Waits (bounded) until the chat's main thread is blocked reading keys
/// from the terminal with no signal pending, so that a signal sent now
/// interrupts that read, and what is typed after it comes after the signal
/// was handled. Linux only (`/proc/PID/syscall` and `status`); elsewhere it
/// returns at once, and the resize test may miss the defect it guards.
fn until_reading_keys(session: &PtySession) {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    const READ_STDIN: Option<&str> = Some("0 0x0 ");
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "aarch64", target_arch = "riscv64")
    ))]
    const READ_STDIN: Option<&str> = Some("63 0x0 ");
    #[cfg(not(all(
        target_os = "linux",
        any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "riscv64"
        )
    )))]
    const READ_STDIN: Option<&str> = None;
    let Some(read_stdin) = READ_STDIN else {
        return;
    };
    let proc = format!("/proc/{}", session.process.child_pid);
    let pending = |status: &str| {
        status.lines().any(|line| {
            (line.starts_with("SigPnd:") || line.starts_with("ShdPnd:"))
                && !line[7..].trim().trim_start_matches('0').is_empty()
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let syscall = std::fs::read_to_string(format!("{proc}/syscall")).unwrap_or_default();
        let status = std::fs::read_to_string(format!("{proc}/status")).unwrap_or_default();
        if syscall.starts_with(read_stdin) && !pending(&status) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the chat never waited for keys: {syscall}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// After Ctrl-C stopped an answer, a terminal resize at the prompt is not a
/// Ctrl-C: one Ctrl-C after it asks for a second one, and the chat goes on.
#[test]
fn a_resize_after_a_stopped_answer_is_not_a_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    greeter(dir.path());
    let script = r#"[
        {"text": "Once upon a time", "stall": true},
        {"text": "Yes, still here."}
    ]"#;
    let mut session = chat(dir.path(), script);
    session.exp_string("Ctrl-C stops an answer").unwrap();
    session.send_line("tell me a long story").unwrap();
    session.exp_string("Once upon a time").unwrap();
    session.send_control('c').unwrap();
    session
        .exp_string("(stopped; the conversation goes on)")
        .unwrap();

    // The terminal is resized (SIGWINCH) at the prompt, then Ctrl-C once.
    until_reading_keys(&session);
    session.process.signal(Signal::SIGWINCH).unwrap();
    until_reading_keys(&session);
    session.send_control('c').unwrap();
    session
        .exp_string("(Ctrl-C again or /quit to leave)")
        .unwrap();
    session.send_line("still there?").unwrap();
    session.exp_string("Yes, still here.").unwrap();
    quit(session);
}

/// `--resume` through a symlink continues and saves the file it points at
/// (also one that does not exist yet) and keeps the link.
#[test]
fn resume_through_a_symlink_saves_its_target() {
    let dir = tempfile::tempdir().unwrap();
    greeter(dir.path());
    let real = dir.path().join("sessions/real.json");
    let mut session = chat_resuming(dir.path(), r#"[{"text": "First."}]"#, "sessions/real.json");
    session.exp_string("> ").unwrap();
    session.send_line("one").unwrap();
    session.exp_string("First.").unwrap();
    quit(session);

    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("sessions/real.json", &link).unwrap();
    let mut session = chat_resuming(dir.path(), r#"[{"text": "Second."}]"#, "link.json");
    session.exp_string("(resumed: 2 earlier messages)").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("two").unwrap();
    session.exp_string("Second.").unwrap();
    quit(session);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(saved_texts(&real), ["one", "First.", "two", "Second."]);

    // A link to a conversation not started yet.
    let dangling = dir.path().join("next.json");
    std::os::unix::fs::symlink("sessions/next-real.json", &dangling).unwrap();
    let mut session = chat_resuming(dir.path(), r#"[{"text": "Third."}]"#, "next.json");
    session.exp_string("> ").unwrap();
    session.send_line("three").unwrap();
    session.exp_string("Third.").unwrap();
    quit(session);
    assert!(
        dangling
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        saved_texts(&dir.path().join("sessions/next-real.json")),
        ["three", "Third."]
    );
}

/// A conversation that cannot be saved goes on: a warning names the file
/// and the error, the next turn still has the history, and the next save
/// that works writes all of it.
#[test]
fn a_failed_save_warns_and_keeps_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    greeter(dir.path());
    let script = r#"[{"text": "First."}, {"text": "Second."}, {"text": "Third."}]"#;
    let mut session = chat(dir.path(), script);
    session.exp_string("> ").unwrap();
    // A folder where the session file goes: saving it fails.
    let file = dir.path().join("session.json");
    std::fs::create_dir(&file).unwrap();
    session.send_line("one").unwrap();
    session.exp_string("First.").unwrap();
    session
        .exp_string("warning: cannot save the conversation to session.json: ")
        .unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("two").unwrap();
    session.exp_string("Second.").unwrap();
    session.exp_string("warning: cannot save").unwrap();
    session.exp_string("> ").unwrap();
    std::fs::remove_dir(&file).unwrap();
    session.send_line("three").unwrap();
    session.exp_string("Third.").unwrap();
    quit(session);
    assert_eq!(
        saved_texts(&file),
        ["one", "First.", "two", "Second.", "three", "Third."]
    );
}

/// Skills as Claude Code's documentation writes them: a deploy skill only
/// people run, background knowledge only the agent uses, one with an
/// argument hint.
fn claude_code_agent(dir: &Path) {
    write(
        &dir.join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Ships things.\n---\nYou ship things.\n",
    );
    write(
        &dir.join("helper/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploy the application to production\n\
         disable-model-invocation: true\n---\nDeploy $ARGUMENTS to production.\n",
    );
    write(
        &dir.join("helper/skills/legacy-system-context/SKILL.md"),
        "---\nname: legacy-system-context\ndescription: How the legacy billing system works\n\
         user-invocable: false\n---\nInvoices live in one table.\n",
    );
    write(
        &dir.join("helper/skills/fix-issue/SKILL.md"),
        "---\nname: fix-issue\ndescription: Fix a GitHub issue\nargument-hint: [issue-number]\n\
         ---\nFix GitHub issue $ARGUMENTS.\n",
    );
}

#[test]
fn a_person_runs_the_skills_that_are_theirs() {
    let dir = tempfile::tempdir().unwrap();
    claude_code_agent(dir.path());
    let script = r#"[{"text": "Deployed, as the skill says."}]"#;
    let mut session = chat(dir.path(), script);
    session.exp_string("> ").unwrap();
    session.send_line("/skills").unwrap();
    session
        .exp_string("/helper:deploy: Deploy the application to production (yours only: the agent does not see it)")
        .unwrap();
    session
        .exp_string("/helper:fix-issue [issue-number]: Fix a GitHub issue")
        .unwrap();
    session
        .exp_string("the agent uses these when a task needs them:")
        .unwrap();
    session
        .exp_string("helper:legacy-system-context: How the legacy billing system works")
        .unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/legacy-system-context").unwrap();
    session
        .exp_string("`helper:legacy-system-context` is for the agent to use, not to run yourself")
        .unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/deploy v2").unwrap();
    session.exp_string("(using helper:deploy)").unwrap();
    session.exp_string("Deployed, as the skill says.").unwrap();
    quit(session);

    // The model got the rendered body as the person's message, and never a
    // listing with the deploy skill in it.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("session.json")).unwrap())
            .unwrap();
    assert!(
        saved["messages"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Deploy v2 to production.")
    );
}

#[test]
fn tab_completes_a_skill_and_shows_its_argument_hint() {
    let dir = tempfile::tempdir().unwrap();
    claude_code_agent(dir.path());
    let script = r#"[{"text": "Fixed, as the skill says."}]"#;
    let mut session = chat(dir.path(), script);
    session.exp_string("> ").unwrap();
    // Tab after `/fix` completes the command; its argument hint follows.
    session.send("/fix\t").unwrap();
    session.flush().unwrap();
    session.exp_string("[issue-number]").unwrap();
    session.send_line("42").unwrap();
    session.exp_string("(using helper:fix-issue)").unwrap();
    session.exp_string("Fixed, as the skill says.").unwrap();
    // The background skill is no command: Tab completes nothing.
    session.exp_string("> ").unwrap();
    session.send("/legacy\t").unwrap();
    session.flush().unwrap();
    session.send_line("").unwrap();
    // The terminal's bell: no completion, the line stays as typed.
    session.exp_string("/legacy\u{7}").unwrap();
    session
        .exp_string("no skill `legacy`; /skills lists them")
        .unwrap();
    quit(session);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("session.json")).unwrap())
            .unwrap();
    assert_eq!(saved["messages"][0]["text"], "Fix GitHub issue 42.\n");
}

/// The first time a kit folder named on the command line is used and its
/// skills pre-approve tools, chat asks whether to trust it; `y` trusts it
/// (in the store, with its digest), and the next start asks no more.
#[test]
fn a_named_kit_that_pre_approves_tools_is_trusted_only_when_the_person_says_so() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Greets people.\n---\nYou greet people.\n",
    );
    write(
        &dir.path().join("helper/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploys.\nallowed-tools: run_skill_script\n---\nDeploy.\n",
    );
    let mut session = chat(dir.path(), r#"[{"text": "Hi."}]"#);
    session
        .exp_string(
            "is not trusted, and its skills pre-approve tools: helper:deploy (run_skill_script)",
        )
        .unwrap();
    session.exp_string("[y/N]").unwrap();
    session.send_line("y").unwrap();
    session.exp_string("trusted ").unwrap();
    session.exp_string("> ").unwrap();
    quit(session);
    let store = dir.path().join("home/.local/share/skillkit/trust.json");
    let kept = std::fs::read_to_string(&store).unwrap();
    let folder = std::fs::canonicalize(dir.path().join("helper")).unwrap();
    assert!(kept.contains(folder.to_str().unwrap()), "{kept}");

    // Trusted now: not asked again.
    let mut session = chat(dir.path(), r#"[{"text": "Hi."}]"#);
    let before = session.exp_string("agent helper").unwrap();
    assert!(!before.contains("is not trusted"), "{before}");
    session.exp_string("> ").unwrap();
    quit(session);
}
