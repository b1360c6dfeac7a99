//! An agent's MCP tools (`AgentOptions::mcp_server`), against servers nobody
//! here wrote: server-everything (the official TypeScript SDK's example
//! server) over stdio and over Streamable HTTP on 127.0.0.1, and a small
//! server written with the official Python SDK (`bench/peers/mcp_tools_server.py`)
//! that counts what reaches it and announces a new tool. The model is
//! scripted; the servers are real processes, killed and restarted here.

use skillkit_tests::agent as support;
use skillkit_tests::peers;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use skillkit::agent::{AgentError, EventKind, start_agent};
use skillkit::approval::{Approval, ApprovalPolicy, Decision};
use skillkit::llm::Scripted;
use skillkit::mcp_client::{Endpoint, Session, Status};
use skillkit::{Memory, RetryPolicy};
use support::{ask, ask_deciding, catalog, lead, options, outcomes, tool, tool_names, within};

/// A backoff short enough for a test to see a restart.
fn quick() -> RetryPolicy {
    let mut policy = RetryPolicy::default();
    policy.base_delay = Duration::from_millis(200);
    policy.max_delay = Duration::from_secs(1);
    policy
}

/// A shell command starting `program` after writing its process id to
/// `pid_file` (the process `exec`s, so the id is the server's).
fn with_pid_file(program: &Path, pid_file: &Path) -> Endpoint {
    let line = format!(
        "echo $$ > '{}'; exec '{}'",
        pid_file.display(),
        program.display()
    );
    Endpoint::command("sh", ["-c", line.as_str()])
}

fn read_pid(pid_file: &Path) -> String {
    std::fs::read_to_string(pid_file)
        .expect("the server wrote its pid")
        .trim()
        .to_owned()
}

fn kill(pid: &str) {
    let status = std::process::Command::new("kill")
        .args(["-9", pid])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -9 {pid}");
}

/// Waits until `session` is not up (the death of its server noticed).
async fn until_down(session: &Session) {
    within("the session to notice its server died", async {
        while session.status() == Status::Up {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// The text results of `events`' tool calls, with their error flags.
fn results(events: &[skillkit::agent::AgentEvent]) -> Vec<(String, String, bool)> {
    outcomes(events)
        .into_iter()
        .map(|o| (o.name, o.content, o.is_error))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_tools_over_stdio_are_listed_described_called_and_approved() {
    let Some(everything) = peers::or_skip("server-everything over stdio", peers::everything())
    else {
        return;
    };
    let script = Scripted::new()
        .tool_call("c1", "everything__echo", json!({"message": "hi"}))
        .tool_call("c2", "everything__get-sum", json!({"a": 2, "b": 3}))
        .tool_call("c3", "everything__get-tiny-image", json!({}))
        .tool_call("c4", "everything__get-env", json!({}))
        .tool_call(
            "c5",
            "everything__trigger-long-running-operation",
            json!({"duration": 1, "steps": 1}),
        )
        .text("done");
    let policy = ApprovalPolicy::new(|request| match request.name.as_str() {
        "everything__get-env" => Approval::deny("the environment is private"),
        "everything__trigger-long-running-operation" => Approval::Ask,
        _ => Approval::Allow,
    });
    let options = options(catalog(&Memory::new()), &script)
        .approval(policy)
        .mcp_server(
            "everything",
            Endpoint::command(everything.to_str().unwrap(), Vec::<String>::new()),
        );
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, events) = ask_deciding(&mut agent, "use the server", |request| {
        assert_eq!(request.name, "everything__trigger-long-running-operation");
        Decision::deny("not now")
    })
    .await;
    assert_eq!(answer.unwrap(), "done");

    let requests = script.requests();
    let first = &requests[0];
    let echo = tool(first, "everything__echo");
    assert_eq!(echo.description, "Echoes back the input string");
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    assert!(tool_names(first).contains(&"everything__get-sum"));

    let results = results(&events);
    assert_eq!(
        results[0],
        ("everything__echo".into(), "Echo: hi".into(), false)
    );
    assert!(
        !results[1].2 && results[1].1.contains('5'),
        "{:?}",
        results[1]
    );
    assert!(
        results[2].1.contains("[an image (image/png"),
        "images are a note: {:?}",
        results[2]
    );
    assert!(results[3].2 && results[3].1.contains("the environment is private"));
    assert!(results[4].2 && results[4].1.contains("the user denied the call: not now"));
}

/// One message whose one turn calls `everything__echo` with `message`: the
/// call's result.
async fn echo(
    agent: &mut skillkit::agent::Agent,
    script: &Scripted,
    id: &str,
    message: &str,
) -> (String, String, bool) {
    let _ = script
        .clone()
        .tool_call(id, "everything__echo", json!({"message": message}))
        .text("ok");
    let (answer, events) = ask(agent, message).await;
    assert_eq!(answer.unwrap(), "ok", "the agent goes on");
    results(&events).remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio_killed_mid_conversation_gives_an_error_result_then_is_restarted()
 {
    let Some(everything) = peers::or_skip("server-everything restart", peers::everything()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let session = Session::new(with_pid_file(&everything, &pid_file)).retry(quick());
    let script = Scripted::new();
    let options =
        options(catalog(&Memory::new()), &script).mcp_server("everything", session.clone());
    let mut agent = start_agent(lead(), options).unwrap();

    let before = echo(&mut agent, &script, "c1", "one").await;
    assert_eq!(before.1, "Echo: one");
    let first_pid = read_pid(&pid_file);
    kill(&first_pid);
    until_down(&session).await;

    let (_, content, is_error) = echo(&mut agent, &script, "c2", "two").await;
    assert!(
        is_error,
        "a call while the server is down is an error result"
    );
    assert!(content.contains("is down"), "{content}");
    assert!(content.contains("restarted"), "{content}");

    assert!(
        session.wait_connected(Duration::from_secs(60)).await,
        "restarted"
    );
    let after = echo(&mut agent, &script, "c3", "three").await;
    assert_eq!(
        after,
        ("everything__echo".into(), "Echo: three".into(), false)
    );
    assert_ne!(read_pid(&pid_file), first_pid, "a new server process");
}

/// server-everything's Streamable HTTP mode on 127.0.0.1:`port`, up.
async fn start_http(script: &Path, port: u16) -> tokio::process::Child {
    let child = tokio::process::Command::new("node")
        .arg(script)
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start node");
    within("server-everything to listen", async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    child
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http_is_called_then_killed_and_reconnected() {
    let Some(script_path) = peers::or_skip("server-everything over HTTP", peers::everything_http())
    else {
        return;
    };
    let port = free_port();
    let mut server = start_http(&script_path, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let session = Session::new(Endpoint::url(url)).retry(quick());
    let script = Scripted::new()
        .tool_call("c1", "remote__echo", json!({"message": "over http"}))
        .text("ok")
        .tool_call("c2", "remote__echo", json!({"message": "gone"}))
        .text("ok")
        .tool_call("c3", "remote__echo", json!({"message": "back"}))
        .text("ok");
    let options = options(catalog(&Memory::new()), &script).mcp_server("remote", session.clone());
    let mut agent = start_agent(lead(), options).unwrap();

    let (_, events) = ask(&mut agent, "one").await;
    assert_eq!(results(&events)[0].1, "Echo: over http");
    assert_eq!(
        tool(&script.requests()[0], "remote__echo").description,
        "Echoes back the input string"
    );

    server.kill().await.unwrap();
    let (answer, events) = ask(&mut agent, "two").await;
    assert_eq!(answer.unwrap(), "ok", "the agent goes on");
    let (_, content, is_error) = results(&events).remove(0);
    assert!(is_error && content.contains("is down"), "{content}");

    let _server = start_http(&script_path, port).await;
    assert!(
        session.wait_connected(Duration::from_secs(60)).await,
        "reconnected"
    );
    let (_, events) = ask(&mut agent, "three").await;
    assert_eq!(
        results(&events)[0],
        ("remote__echo".into(), "Echo: back".into(), false)
    );
}

fn python_server() -> Option<(PathBuf, PathBuf)> {
    let python = peers::or_skip("the Python SDK tool server", peers::python())?;
    Some((python, peers::dir().join("mcp_tools_server.py")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_is_followed_the_list_is_cached_otherwise_and_denied_calls_never_reach_the_server()
 {
    let Some((python, server)) = python_server() else {
        return;
    };
    let endpoint = Endpoint::command(
        python.to_str().unwrap(),
        [server.to_str().unwrap().to_owned()],
    );
    let script = Scripted::new()
        .tool_call("c1", "py__bump", json!({}))
        .tool_call("c2", "py__count", json!({}))
        .tool_call("c3", "py__count", json!({}))
        .tool_call("c4", "py__add_tool", json!({}))
        .tool_call("c5", "py__fresh", json!({}))
        .tool_call("c6", "py__count", json!({}))
        .text("done");
    let policy = ApprovalPolicy::new(|request| match request.name.as_str() {
        "py__bump" => Approval::deny("no bumps"),
        _ => Approval::Allow,
    });
    let options = options(catalog(&Memory::new()), &script)
        .approval(policy)
        .mcp_server("py", endpoint);
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, events) = ask(&mut agent, "go").await;
    assert_eq!(answer.unwrap(), "done");

    let results = results(&events);
    assert!(results[0].2 && results[0].1.contains("no bumps"));
    // Three turns so far, one `tools/list`; the denied call never arrived.
    assert_eq!(results[1].1, "bumps=0 lists=1");
    assert_eq!(results[2].1, "bumps=0 lists=1");
    assert_eq!(results[3].1, "added fresh");
    assert_eq!(results[4], ("py__fresh".into(), "fresh!".into(), false));
    // Listed once more, after the server said its tools changed.
    assert_eq!(results[5].1, "bumps=0 lists=2");

    let requests = script.requests();
    assert!(!tool_names(&requests[3]).contains(&"py__fresh"));
    assert!(
        tool_names(&requests[4]).contains(&"py__fresh"),
        "the next turn sees the new tool"
    );
}

#[tokio::test]
async fn a_server_not_up_contributes_no_tools_and_a_warning_and_the_agent_answers() {
    let port = free_port();
    let session = Session::new(Endpoint::url(format!("http://127.0.0.1:{port}/mcp")))
        .connect_timeout(Duration::from_secs(2));
    let script = Scripted::new().text("answered anyway");
    let options = options(catalog(&Memory::new()), &script).mcp_server("absent", session);
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, events) = ask(&mut agent, "hello").await;
    assert_eq!(answer.unwrap(), "answered anyway");
    assert!(
        tool_names(&script.requests()[0])
            .iter()
            .all(|n| !n.starts_with("absent__"))
    );
    let warning = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .expect("a warning");
    assert!(
        warning.contains("`absent`") && warning.contains("not connected"),
        "{warning}"
    );
}

#[tokio::test]
async fn bad_or_shared_prefixes_are_refused_at_start() {
    for prefixes in [vec!["a:b"], vec!["x__y"], vec![""], vec!["same", "same"]] {
        let mut options = options(catalog(&Memory::new()), &Scripted::new());
        for prefix in &prefixes {
            options = options.mcp_server(*prefix, Endpoint::url("http://127.0.0.1:9/mcp"));
        }
        let error = start_agent(lead(), options).unwrap_err();
        assert!(
            matches!(error, AgentError::McpPrefix { .. }),
            "{prefixes:?}: {error}"
        );
    }
}

/// `allowed-tools` of an active skill of a trusted kit pre-approve an MCP
/// tool by its full name; the other tools of the server are still asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_skills_allowed_tools_pre_approve_an_mcp_tool_by_full_name() {
    let Some((python, server)) = python_server() else {
        return;
    };
    let endpoint = Endpoint::command(
        python.to_str().unwrap(),
        [server.to_str().unwrap().to_owned()],
    );
    let memory = Memory::new();
    memory.put(
        skillkit::Skill::new("ops:counting", "How to count.")
            .with_body("Count with py__count.")
            .with_allowed_tools(["py__count"]),
    );
    let script = Scripted::new()
        .tool_call("c1", "activate_skill", json!({"name": "ops:counting"}))
        .tool_call("c2", "py__count", json!({}))
        .tool_call("c3", "py__bump", json!({}))
        .text("done");
    let policy = ApprovalPolicy::new(|request| match request.name.as_str() {
        "activate_skill" => Approval::Allow,
        _ => Approval::Ask,
    });
    let options = options(catalog(&memory), &script)
        .approval(policy)
        .mcp_server("py", endpoint);
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, events) = ask_deciding(&mut agent, "count", |request| {
        assert_eq!(
            request.name, "py__bump",
            "only the tool not pre-approved is asked"
        );
        Decision::deny("no")
    })
    .await;
    assert_eq!(answer.unwrap(), "done");
    let results = results(&events);
    assert_eq!(
        results[1],
        ("py__count".into(), "bumps=0 lists=1".into(), false)
    );
    assert!(results[2].2 && results[2].1.contains("the user denied the call: no"));
}

/// An MCP server's tool result over the agent's limit reaches the model cut,
/// with a line saying how much was left out; by default the limit is
/// 100,000 characters (about Claude Code's 25,000 tokens).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_result_over_the_limit_is_cut_saying_so() {
    let Some(everything) = peers::or_skip("server-everything over stdio", peers::everything())
    else {
        return;
    };
    let big = "x".repeat(300_000);
    let script = Scripted::new()
        .tool_call("c1", "everything__echo", json!({"message": big}))
        .tool_call(
            "c2",
            "everything__echo",
            json!({"message": "y".repeat(5_000)}),
        )
        .text("done");
    let endpoint = || Endpoint::command(everything.to_str().unwrap(), Vec::<String>::new());
    let first_options =
        options(catalog(&Memory::new()), &script).mcp_server("everything", endpoint());
    let mut agent = start_agent(lead(), first_options).unwrap();
    let (answer, events) = ask(&mut agent, "echo").await;
    assert_eq!(answer.unwrap(), "done");
    let echoed = results(&events);
    // "Echo: " and 300,000 characters: 100,000 kept, the rest said.
    let first = &echoed[0].1;
    assert!(
        first.len() < 100_300,
        "{} characters reached the model",
        first.len()
    );
    assert!(
        first.ends_with(
            "[result cut: 200006 more characters were left out (over this agent's limit of \
             100000 characters for an MCP tool's result)]"
        ),
        "{}",
        &first[first.len() - 200..]
    );
    // Within the limit: whole.
    assert_eq!(echoed[1].1, format!("Echo: {}", "y".repeat(5_000)));

    let script = Scripted::new()
        .tool_call(
            "c1",
            "everything__echo",
            json!({"message": "z".repeat(5_000)}),
        )
        .text("done");
    let limited = options(catalog(&Memory::new()), &script)
        .mcp_output_limit(1_000)
        .mcp_server("everything", endpoint());
    let mut agent = start_agent(lead(), limited).unwrap();
    let (_, events) = ask(&mut agent, "echo").await;
    let cut = &results(&events)[0].1;
    assert!(cut.starts_with("Echo: zzz"), "{cut}");
    assert!(cut.contains("[result cut: 4006 more characters"), "{cut}");
}
