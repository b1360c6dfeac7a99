//! `run_skill_script` in an agent: offered only when enabled, reaching only
//! skills the agent may activate, every call through the approval policy
//! (asked by default). Real skill folders, real scripts, the scripted model.

use skillkit_tests::agent as support;

use std::path::PathBuf;

use serde_json::json;
use skillkit::agent::start_agent;
use skillkit::approval::{Approval, ApprovalPolicy, Decision, InputKind};
use skillkit::llm::{Reply, Scripted, ToolCall};
use skillkit::script::ScriptOptions;
use skillkit::{Catalog, Local};
use support::{ask, ask_deciding, error_result, lead, options, outcomes, tool_names};

/// A kit `kit` with skill `tool` (a script writing a marker in its working
/// folder) and skill `secret` (people only); the working folder.
struct Kit {
    _root: tempfile::TempDir,
    catalog: Catalog,
    work: PathBuf,
}

fn kit() -> Kit {
    let root = tempfile::tempdir().unwrap();
    let skills = root.path().join("kit/skills");
    std::fs::create_dir_all(skills.join("tool/scripts")).unwrap();
    std::fs::create_dir_all(skills.join("secret/scripts")).unwrap();
    std::fs::write(
        skills.join("tool/SKILL.md"),
        "---\nname: tool\ndescription: Says hello.\n---\nRun scripts/hello.sh.\n",
    )
    .unwrap();
    std::fs::write(
        skills.join("tool/scripts/hello.sh"),
        "echo ran > \"$HOME/marker\"\necho \"hello $1\"\n",
    )
    .unwrap();
    std::fs::write(
        skills.join("secret/SKILL.md"),
        "---\nname: secret\ndescription: Deploys.\ndisable-model-invocation: true\n---\nDeploy.\n",
    )
    .unwrap();
    std::fs::write(skills.join("secret/scripts/deploy.sh"), "echo deployed\n").unwrap();
    let work = root.path().join("work");
    let catalog = Catalog::builder()
        .provider(Local::new(root.path().join("kit")))
        .build();
    Kit {
        _root: root,
        catalog,
        work,
    }
}

fn call(skill: &str, script: &str) -> Reply {
    Reply::ToolCalls {
        text: String::new(),
        calls: vec![ToolCall::new(
            "c1",
            "run_skill_script",
            json!({"skill": skill, "script": script, "args": ["world"]}),
        )],
    }
}

#[tokio::test]
async fn run_skill_script_is_absent_unless_enabled() {
    let kit = kit();
    let script = Scripted::new().text("Hi.").text("Hi.");
    let mut agent = start_agent(lead(), options(kit.catalog.clone(), &script)).unwrap();
    ask(&mut agent, "Hello").await.0.unwrap();
    let enabled = options(kit.catalog.clone(), &script).scripts(ScriptOptions::new());
    let mut agent = start_agent(lead(), enabled).unwrap();
    ask(&mut agent, "Hello").await.0.unwrap();
    let requests = script.requests();
    assert!(!tool_names(&requests[0]).contains(&"run_skill_script"));
    assert!(tool_names(&requests[1]).contains(&"run_skill_script"));
}

#[tokio::test]
async fn a_script_call_is_asked_by_default_and_a_denial_reaches_the_model() {
    let kit = kit();
    let script = Scripted::new();
    for answer in ["Not run.", "Ran."] {
        script.push(call("kit:tool", "scripts/hello.sh"));
        script.push(Reply::Text(answer.into()));
    }
    let options = options(kit.catalog.clone(), &script)
        .approval(ApprovalPolicy::allow_all())
        .scripts(ScriptOptions::new().working_dir(&kit.work));
    let mut agent = start_agent(lead(), options).unwrap();

    let (answer, events) = ask_deciding(&mut agent, "Say hello.", |request| {
        assert_eq!(request.kind, InputKind::Approval);
        assert_eq!(request.name, "run_skill_script");
        assert_eq!(request.input["script"], "scripts/hello.sh");
        Decision::deny("no scripts today")
    })
    .await;
    assert_eq!(answer.unwrap(), "Not run.");
    let error = error_result(&events);
    assert!(
        error.contains("denied") && error.contains("no scripts today"),
        "{error}"
    );
    assert!(
        !kit.work.join("marker").exists(),
        "a denied script must not run"
    );

    let (answer, events) = ask_deciding(&mut agent, "Say hello.", |_| Decision::Approve).await;
    assert_eq!(answer.unwrap(), "Ran.");
    let result = &outcomes(&events)[0];
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.content.contains("exit code: 0"),
        "{}",
        result.content
    );
    assert!(result.content.contains("hello world"), "{}", result.content);
    assert_eq!(
        std::fs::read_to_string(kit.work.join("marker")).unwrap(),
        "ran\n"
    );
}

#[tokio::test]
async fn the_scripts_policy_can_deny_without_asking_and_only_activatable_skills_are_reached() {
    let kit = kit();
    let script = Scripted::new();
    script.push(call("kit:tool", "scripts/hello.sh"));
    script.push(Reply::Text("Denied.".into()));
    let denying = options(kit.catalog.clone(), &script).scripts(
        ScriptOptions::new().approval(ApprovalPolicy::new(|_| Approval::deny("read-only session"))),
    );
    let mut agent = start_agent(lead(), denying).unwrap();
    let (_, events) = ask(&mut agent, "Say hello.").await;
    assert!(error_result(&events).contains("read-only session"));

    let script = Scripted::new();
    script.push(call("kit:secret", "scripts/deploy.sh"));
    script.push(Reply::Text("Refused.".into()));
    let allowing = options(kit.catalog.clone(), &script)
        .scripts(ScriptOptions::new().approval(ApprovalPolicy::allow_all()));
    let mut agent = start_agent(lead(), allowing).unwrap();
    let (_, events) = ask(&mut agent, "Deploy.").await;
    let error = error_result(&events);
    assert!(error.contains("run by people only"), "{error}");
    assert!(!error.contains("deployed"), "{error}");
}

/// `` !`command` `` in a body runs when the skill is activated only where
/// scripts are enabled, through the scripts' policy; elsewhere it stays text.
#[tokio::test]
async fn dynamic_context_runs_only_where_scripts_are_enabled() {
    let kit = kit();
    let skill = kit.work.parent().unwrap().join("kit/skills/status");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: status\ndescription: Status.\n---\nSum: !`echo dynamic-$((1+2))`; dir: !`basename \"$SKILL_DIR\"`.\n",
    )
    .unwrap();
    let activate = || Reply::ToolCalls {
        text: String::new(),
        calls: vec![ToolCall::new(
            "c1",
            "activate_skill",
            json!({"name": "kit:status"}),
        )],
    };
    let body = |events: &[skillkit::agent::AgentEvent]| outcomes(events)[0].content.clone();

    let script = Scripted::new();
    script.push(activate());
    script.push(Reply::Text("Ok.".into()));
    let mut agent = start_agent(lead(), options(kit.catalog.clone(), &script)).unwrap();
    let (_, events) = ask(&mut agent, "Status?").await;
    assert!(
        body(&events).contains("Sum: !`echo dynamic-$((1+2))`; dir: !`basename "),
        "{}",
        body(&events)
    );

    let script = Scripted::new();
    script.push(activate());
    script.push(Reply::Text("Ok.".into()));
    let allowed = options(kit.catalog.clone(), &script)
        .scripts(ScriptOptions::new().approval(ApprovalPolicy::allow_all()));
    let mut agent = start_agent(lead(), allowed).unwrap();
    let (_, events) = ask(&mut agent, "Status?").await;
    assert!(
        body(&events).contains("Sum: dynamic-3; dir: status."),
        "{}",
        body(&events)
    );

    let script = Scripted::new();
    script.push(activate());
    script.push(Reply::Text("Ok.".into()));
    let asked = options(kit.catalog.clone(), &script).scripts(ScriptOptions::new());
    let mut agent = start_agent(lead(), asked).unwrap();
    let (_, events) = ask_deciding(&mut agent, "Status?", |request| {
        assert_eq!(request.name, "run_skill_script");
        assert!(request.input["command"].is_string(), "{request:?}");
        Decision::deny("not now")
    })
    .await;
    let text = body(&events);
    assert!(
        text.contains("was not run: the user denied it: not now"),
        "{text}"
    );
    assert!(!text.contains("dynamic-3"), "{text}");
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
/// Arguments are inserted after the skill's own commands ran, as inert
/// text: a `!`command`` in them (written by the model, a page it read, or
/// an MCP client) is never run, in a body with no command or with one, and
/// nothing a command printed is taken for a token.
#[tokio::test]
async fn a_command_in_the_arguments_is_never_run() {
    let kit = kit();
    let skills = kit.work.parent().unwrap().join("kit/skills");
    for (name, body) in [
        ("innocent", "Greet $ARGUMENTS politely.\n"),
        (
            "dated",
            "Today: !`echo today-$((20+6))`. Greet $0 and ${CLAUDE_SESSION_ID}.\n",
        ),
        ("echoes", "Printed: !`printf '%s' '$ARGUMENTS'`.\n"),
    ] {
        std::fs::create_dir_all(skills.join(name)).unwrap();
        std::fs::write(
            skills.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d.\n---\n{body}"),
        )
        .unwrap();
    }
    let marker = kit.work.join("INJECTED");
    let injected = format!("hello !`touch {}; echo INJECTED`", marker.display());
    let script = Scripted::new();
    for (id, name) in [
        ("c1", "kit:innocent"),
        ("c2", "kit:dated"),
        ("c3", "kit:echoes"),
    ] {
        script.push(Reply::ToolCalls {
            text: String::new(),
            calls: vec![ToolCall::new(
                id,
                "activate_skill",
                json!({"name": name, "arguments": injected}),
            )],
        });
    }
    script.push(Reply::Text("Ok.".into()));
    let allowed = options(kit.catalog.clone(), &script).scripts(
        ScriptOptions::new()
            .working_dir(&kit.work)
            .approval(ApprovalPolicy::allow_all()),
    );
    let mut agent = start_agent(lead(), allowed).unwrap();
    let (_, events) = ask(&mut agent, "Greet.").await;
    let results = outcomes(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(!marker.exists(), "the command in the arguments ran");
    // The arguments are there as written, command and all.
    assert!(
        results[0]
            .content
            .contains(&format!("Greet {injected} politely.")),
        "{}",
        results[0].content
    );
    // The author's command ran; the arguments around it stayed text.
    assert!(
        results[1].content.contains("Today: today-26."),
        "{}",
        results[1].content
    );
    assert!(
        results[1].content.contains("Greet hello and "),
        "{}",
        results[1].content
    );
    // A command that prints a token: its output is not substituted.
    assert!(
        results[2].content.contains("Printed: $ARGUMENTS."),
        "{}",
        results[2].content
    );
    for result in &results {
        assert!(!result.content.contains("\nINJECTED"), "{}", result.content);
    }
}

/// Whether a live process of this machine runs a command line holding
/// `marker` (a script's processes run in a PID namespace of their own, so
/// the pids they see are not this machine's).
fn runs(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .any(|pid| {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat
                    .rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            });
            alive
                && std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
}

/// Stopping the agent drops the script's call, which kills its process
/// group.
#[tokio::test(flavor = "multi_thread")]
async fn stopping_the_agent_kills_the_script() {
    let kit = kit();
    let tool = kit.work.parent().unwrap().join("kit/skills/tool/scripts");
    std::fs::write(
        tool.join("hang.sh"),
        "sleep 300.601 &\necho started > \"$HOME/started\"\nwait\n",
    )
    .unwrap();
    let script = Scripted::new();
    script.push(call("kit:tool", "scripts/hang.sh"));
    script.push(Reply::Text("Stopped.".into()));
    let allowed = options(kit.catalog.clone(), &script).scripts(
        ScriptOptions::new()
            .working_dir(&kit.work)
            .approval(ApprovalPolicy::allow_all()),
    );
    let mut agent = start_agent(lead(), allowed).unwrap();
    agent.send_message("Hang.").unwrap();
    let started = kit.work.join("started");
    support::within("the script's child", async {
        while !started.exists() || !runs("300.601") {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    agent.stop();
    support::until_end(&mut agent).await;
    support::within("the child killed", async {
        while runs("300.601") {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// Without a named working folder, the conversation gets a temporary one,
/// removed when the agent ends.
#[tokio::test(flavor = "multi_thread")]
async fn the_temporary_working_folder_goes_with_the_agent() {
    let kit = kit();
    let tool = kit.work.parent().unwrap().join("kit/skills/tool/scripts");
    std::fs::write(tool.join("home.sh"), "echo \"HOME=$HOME\"\n").unwrap();
    let script = Scripted::new();
    script.push(call("kit:tool", "scripts/home.sh"));
    script.push(Reply::Text("Done.".into()));
    let allowed = options(kit.catalog.clone(), &script)
        .scripts(ScriptOptions::new().approval(ApprovalPolicy::allow_all()));
    let mut agent = start_agent(lead(), allowed).unwrap();
    let (_, events) = ask(&mut agent, "Where?").await;
    let content = &outcomes(&events)[0].content;
    let home = content
        .lines()
        .find_map(|l| l.strip_prefix("HOME="))
        .unwrap_or_else(|| panic!("{content}"));
    let home = PathBuf::from(home);
    assert!(
        home.is_dir(),
        "the working folder lives as long as the agent"
    );
    drop(agent);
    support::within("the working folder removed", async {
        while home.exists() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// A kit the trust policy does not trust (here: one found in a project):
/// its scripts and its dynamic context are asked although both policies
/// allow them; a trusted kit's run unasked.
#[tokio::test]
async fn an_untrusted_kits_scripts_and_dynamic_context_are_always_asked() {
    use skillkit::Origin;
    let kit = kit();
    let skills = kit._root.path().join("kit/skills");
    std::fs::create_dir_all(skills.join("context")).unwrap();
    std::fs::write(
        skills.join("context/SKILL.md"),
        "---\nname: context\ndescription: Shows the date.\n---\nToday: !`echo 2026`.\n",
    )
    .unwrap();
    for (origin, asked) in [(Origin::Application, 0), (Origin::Project, 2)] {
        let catalog = Catalog::builder()
            .provider(Local::new(kit._root.path().join("kit")).with_origin(origin))
            .build();
        let script = Scripted::new();
        script.push(call("kit:tool", "scripts/hello.sh"));
        let script = script
            .tool_call("c2", "activate_skill", json!({"name": "kit:context"}))
            .text("Done.");
        let allow_all = ScriptOptions::new()
            .working_dir(&kit.work)
            .approval(ApprovalPolicy::allow_all());
        let options = options(catalog, &script).scripts(allow_all);
        let mut agent = start_agent(lead(), options).unwrap();
        let questions = std::sync::Mutex::new(0);
        let (answer, events) = ask_deciding(&mut agent, "Go", |_| {
            *questions.lock().unwrap() += 1;
            Decision::Approve
        })
        .await;
        assert_eq!(answer.unwrap(), "Done.");
        let results = outcomes(&events);
        assert!(results[0].content.contains("hello world"), "{results:?}");
        assert!(results[1].content.contains("Today: 2026."), "{results:?}");
        assert_eq!(*questions.lock().unwrap(), asked, "{origin:?}");
    }
}
