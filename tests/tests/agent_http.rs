//! Whole agent conversations through the real Anthropic and OpenAI-compatible
//! adapters, against a real HTTP server on 127.0.0.1: what the model is sent
//! (wire-safe tool names, the system prompt, tool results), cancellation and
//! drops closing the connection, HTTP errors, and sub-agents.

use skillkit_tests::llm as support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skillkit::RetryPolicy;
use skillkit::agent::{Agent, AgentError, AgentEvent, AgentOptions, EventKind, start_agent};
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::openai::OpenAi;
use skillkit::llm::{LlmError, Registry};
use skillkit::{AgentDefinition, Catalog, Kit, Memory, Skill, Tool, ToolExecution, ToolOutcome};
use support::{
    Reply, Server, anthropic_delta, anthropic_sse, anthropic_start, anthropic_text,
    anthropic_tool_calls, halves, openai_sse, openai_text,
};
use tokio::sync::Notify;

const SYSTEM_PROMPT: &str = "You are a careful file assistant.";

// ---------------------------------------------------------------------------
// The catalog: an executable skill and a knowledge skill.
// ---------------------------------------------------------------------------

/// `files:read`: returns `contents of <path>`. Reading `a.txt` waits until
/// `b.txt` has been read, so when the model asks for both in one turn the
/// first call finishes last: its result must still come first.
struct ReadFile {
    b_read: Arc<Notify>,
}

#[skillkit::async_trait]
impl Tool for ReadFile {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        let path = execution.arguments().to_owned();
        if path == "a.txt" {
            self.b_read.notified().await;
        }
        let outcome = ToolOutcome::ok(format!("contents of {path}"));
        if path == "b.txt" {
            self.b_read.notify_one();
        }
        outcome
    }
}

fn files_catalog() -> Catalog {
    let memory = Memory::new();
    memory.put_tool(
        Skill::new("files:read", "Read a file."),
        ReadFile {
            b_read: Arc::new(Notify::new()),
        },
    );
    memory.put(
        Skill::new("style:haiku", "Write a haiku.").with_body("Write a haiku about $ARGUMENTS."),
    );
    Catalog::builder().provider(memory).build()
}

fn definition() -> AgentDefinition {
    AgentDefinition::new("helper", "Helps with files.").with_system_prompt(SYSTEM_PROMPT)
}

fn anthropic(server: &Server) -> Registry {
    Registry::empty().with(
        "anthropic",
        Anthropic::builder()
            .base_url(&server.base_url)
            .api_key("test-key")
            .retry(RetryPolicy::none())
            .build(),
    )
}

fn openai(server: &Server) -> Registry {
    Registry::empty().with(
        "openai",
        OpenAi::builder()
            .base_url(format!("{}/v1", server.base_url))
            .api_key("test-key")
            .retry(RetryPolicy::none())
            .build(),
    )
}

/// An agent over `catalog` with `registry` and `model`. The tool timeout only
/// bounds a hang: if the calls of one turn ran one after the other, `a.txt`
/// would wait for ever, and its result would be a timeout error.
fn agent(catalog: Catalog, registry: Registry, model: &str) -> Agent {
    let options = AgentOptions::new(catalog)
        .registry(registry)
        .model(model)
        .tool_timeout(Duration::from_secs(20));
    start_agent(definition(), options).unwrap()
}

// ---------------------------------------------------------------------------
// SSE bodies.
// ---------------------------------------------------------------------------

/// One tool call per index (0, 1, …), their arguments interleaved.
fn openai_tool_calls(calls: &[(&str, &str, Value)]) -> Vec<u8> {
    let mut chunks = vec![(json!({"role": "assistant", "content": null}), None)];
    for (i, (id, name, _)) in calls.iter().enumerate() {
        chunks.push((
            json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
    }
    let pieces: Vec<(String, String)> = calls.iter().map(|(_, _, input)| halves(input)).collect();
    for half in [0, 1] {
        for (i, (a, b)) in pieces.iter().enumerate() {
            let arguments = if half == 0 { a } else { b };
            chunks.push((
                json!({"tool_calls": [{"index": i, "function": {"arguments": arguments}}]}),
                None,
            ));
        }
    }
    chunks.push((json!({}), Some("tool_calls")));
    openai_sse(&chunks)
}

// ---------------------------------------------------------------------------
// Events.
// ---------------------------------------------------------------------------

/// The next event, or a panic if none comes (so a failing test cannot hang).
async fn next(agent: &mut Agent) -> AgentEvent {
    match tokio::time::timeout(Duration::from_secs(30), agent.next_event()).await {
        Ok(Some(event)) => event,
        Ok(None) => panic!("the agent shut down"),
        Err(_) => panic!("no event came"),
    }
}

/// Reads events until the end of the message; returns them all.
async fn until_end(agent: &mut Agent) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    loop {
        let event = next(agent).await;
        let end = event.is_end_of_message();
        events.push(event);
        if end {
            return events;
        }
    }
}

/// Sends `text` and reads its events; the last is the end of the message.
async fn converse(agent: &mut Agent, text: &str) -> Vec<AgentEvent> {
    agent.send_message(text).unwrap();
    until_end(agent).await
}

fn finished(events: &[AgentEvent]) -> &str {
    match &events.last().unwrap().kind {
        EventKind::Finished { text } => text,
        other => panic!("expected the answer, got {other:?} after {events:?}"),
    }
}

/// The `(id, name, content, is_error)` of every tool result event, by id
/// (each is emitted when its call finishes; the model gets them in call
/// order, which the request bodies show).
fn tool_results(events: &[AgentEvent]) -> Vec<(String, String, String, bool)> {
    let mut results: Vec<_> = events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::ToolResult {
                id,
                name,
                content,
                is_error,
            } => Some((id.clone(), name.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect();
    results.sort();
    results
}

/// The tool results of the two `files:read` calls of [`two_reads`].
fn two_reads_answered() -> [(String, String, String, bool); 2] {
    let read = |id: &str, file: &str| {
        (
            id.to_owned(),
            "files:read".to_owned(),
            format!("contents of {file}"),
            false,
        )
    };
    [read("call_a", "a.txt"), read("call_b", "b.txt")]
}

fn string(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}

fn two_reads() -> [(&'static str, &'static str, Value); 2] {
    [
        ("call_a", "files_read", json!({"arguments": "a.txt"})),
        ("call_b", "files_read", json!({"arguments": "b.txt"})),
    ]
}

// ---------------------------------------------------------------------------
// 1. Anthropic.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn anthropic_conversation_sends_wire_names_the_system_prompt_and_grouped_results() {
    let server = Server::start(vec![
        Reply::sse(anthropic_tool_calls("Reading both.", &two_reads())),
        Reply::sse(anthropic_text("a.txt and b.txt differ.")),
    ])
    .await;
    let mut agent = agent(
        files_catalog(),
        anthropic(&server),
        "anthropic://claude-sonnet-4-6",
    );

    let events = converse(&mut agent, "Compare a.txt and b.txt").await;
    assert_eq!(finished(&events), "a.txt and b.txt differ.");
    // Events speak full names.
    assert_eq!(tool_results(&events), two_reads_answered());

    let received = server.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/v1/messages")
        );
        assert_eq!(request.header("x-api-key"), Some("test-key"));
    }

    // Request 1: wire-safe tool names, the system prompt in `system`.
    let first = received[0].json();
    assert_eq!(first["model"], "claude-sonnet-4-6");
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| string(&tool["name"]))
        .collect();
    assert_eq!(names, ["activate_skill", "files_read"]);
    assert!(
        !first["tools"].to_string().contains("files:read"),
        "{first}"
    );
    let system = string(&first["system"][0]["text"]);
    assert!(system.starts_with(SYSTEM_PROMPT), "{system}");
    assert!(system.contains("<available_skills>"), "{system}");
    assert!(system.contains("<name>\nstyle:haiku\n</name>"), "{system}");
    // The executable skill is a tool, not listed among the knowledge skills.
    assert!(!system.contains("files:read"), "{system}");
    for message in first["messages"].as_array().unwrap() {
        assert_ne!(message["role"], "system", "{first}");
    }
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Compare a.txt and b.txt"}]}])
    );

    // Request 2: the assistant's tool_use blocks with the wire name, both
    // results in ONE user message, in call order.
    let second = received[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{second}");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "text", "text": "Reading both."},
            {"type": "tool_use", "id": "call_a", "name": "files_read",
                "input": {"arguments": "a.txt"}},
            {"type": "tool_use", "id": "call_b", "name": "files_read",
                "input": {"arguments": "b.txt"}},
        ])
    );
    assert_eq!(messages[2]["role"], "user");
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{second}");
    for (block, (id, content)) in results.iter().zip([
        ("call_a", "contents of a.txt"),
        ("call_b", "contents of b.txt"),
    ]) {
        assert_eq!(block["type"], "tool_result");
        assert_eq!(block["tool_use_id"], id);
        assert_eq!(block["content"], content);
        assert_ne!(block["is_error"], true);
    }
    assert_eq!(second["system"], first["system"]);
    assert_eq!(second["tools"], first["tools"]);
}

// ---------------------------------------------------------------------------
// 2. OpenAI-compatible.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn openai_conversation_sends_wire_names_the_system_message_first_and_tool_messages() {
    let server = Server::start(vec![
        Reply::sse(openai_tool_calls(&two_reads())),
        Reply::sse(openai_text("a.txt and b.txt differ.")),
    ])
    .await;
    let mut agent = agent(files_catalog(), openai(&server), "openai://gpt-4o");

    let events = converse(&mut agent, "Compare a.txt and b.txt").await;
    assert_eq!(finished(&events), "a.txt and b.txt differ.");
    assert_eq!(tool_results(&events), two_reads_answered());

    let received = server.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/v1/chat/completions")
        );
        assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    }

    let first = received[0].json();
    assert_eq!(first["model"], "gpt-4o");
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| string(&tool["function"]["name"]))
        .collect();
    assert_eq!(names, ["activate_skill", "files_read"]);
    assert!(
        !first["tools"].to_string().contains("files:read"),
        "{first}"
    );
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{first}");
    assert_eq!(messages[0]["role"], "system");
    let system = string(&messages[0]["content"]);
    assert!(system.starts_with(SYSTEM_PROMPT), "{system}");
    assert!(system.contains("<available_skills>"), "{system}");
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "Compare a.txt and b.txt"})
    );

    let second = received[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "{second}");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[2]["role"], "assistant");
    let calls = messages[2]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{second}");
    for (call, (id, path)) in calls.iter().zip([("call_a", "a.txt"), ("call_b", "b.txt")]) {
        assert_eq!(call["id"], id);
        assert_eq!(call["type"], "function");
        assert_eq!(call["function"]["name"], "files_read");
        let arguments: Value =
            serde_json::from_str(string(&call["function"]["arguments"])).unwrap();
        assert_eq!(arguments, json!({"arguments": path}));
    }
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_a", "content": "contents of a.txt"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_b", "content": "contents of b.txt"})
    );
}

// ---------------------------------------------------------------------------
// 3. Cancellation and drops close the connection.
// ---------------------------------------------------------------------------

/// An Anthropic answer that sends its first words, then nothing more.
fn anthropic_stalled(text: &str) -> Reply {
    let mut events = anthropic_start();
    events.push(anthropic_delta(text));
    Reply::sse(anthropic_sse(&events)).hold_open()
}

/// Reads events until the first delta; returns its text.
async fn first_delta(agent: &mut Agent) -> String {
    loop {
        let event = next(agent).await;
        match event.kind {
            EventKind::Delta { text } => return text,
            _ if event.is_end_of_message() => panic!("the message ended early: {event:?}"),
            _ => {}
        }
    }
}

#[tokio::test]
async fn stop_mid_stream_closes_the_connection_and_the_agent_answers_the_next_message() {
    let server = Server::start(vec![
        anthropic_stalled("Let me"),
        Reply::sse(anthropic_text("Second answer.")),
    ])
    .await;
    let mut agent = agent(
        files_catalog(),
        anthropic(&server),
        "anthropic://claude-sonnet-4-6",
    );

    agent.send_message("First question").unwrap();
    assert_eq!(first_delta(&mut agent).await, "Let me");
    agent.stop();
    let events = until_end(&mut agent).await;
    assert!(
        matches!(events.last().unwrap().kind, EventKind::Stopped),
        "{events:?}"
    );
    assert!(
        server.client_closed().await,
        "the server never saw the connection close"
    );

    let events = converse(&mut agent, "Second question").await;
    assert_eq!(finished(&events), "Second answer.");
    let received = server.received();
    assert_eq!(received.len(), 2);
    let messages = received[1].json()["messages"].clone();
    assert_eq!(
        messages.as_array().unwrap().last().unwrap()["content"][0]["text"],
        "Second question"
    );
}

#[tokio::test]
async fn dropping_the_agent_mid_stream_closes_the_connection() {
    let server = Server::start(vec![anthropic_stalled("Let me")]).await;
    let mut agent = agent(
        files_catalog(),
        anthropic(&server),
        "anthropic://claude-sonnet-4-6",
    );

    agent.send_message("A question").unwrap();
    assert_eq!(first_delta(&mut agent).await, "Let me");
    drop(agent);
    assert!(
        server.client_closed().await,
        "the server never saw the connection close"
    );
    assert_eq!(server.received().len(), 1);
}

// ---------------------------------------------------------------------------
// 4. HTTP errors mid-conversation.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn an_http_400_is_an_error_event_and_the_next_message_works() {
    let server = Server::start(vec![
        Reply::sse(anthropic_text("First answer.")),
        Reply::status(
            400,
            r#"{"type":"error",
                "error":{"type":"invalid_request_error","message":"messages: bad"}}"#,
        ),
        Reply::sse(anthropic_text("Third answer.")),
    ])
    .await;
    let mut agent = agent(
        files_catalog(),
        anthropic(&server),
        "anthropic://claude-sonnet-4-6",
    );

    assert_eq!(
        finished(&converse(&mut agent, "One").await),
        "First answer."
    );
    let events = converse(&mut agent, "Two").await;
    match &events.last().unwrap().kind {
        EventKind::Error(AgentError::Llm(error)) => match &**error {
            LlmError::Status {
                status, message, ..
            } => {
                assert_eq!(*status, 400);
                assert!(message.contains("messages: bad"), "{message}");
            }
            other => panic!("expected a status error, got {other:?}"),
        },
        other => panic!("expected an error, got {other:?}"),
    }
    assert_eq!(
        finished(&converse(&mut agent, "Three").await),
        "Third answer."
    );

    // The conversation went on: the third request carries the first answer
    // and every user message.
    let received = server.received();
    assert_eq!(received.len(), 3);
    let third = received[2].json();
    let texts: Vec<(&str, &str)> = third["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (string(&m["role"]), string(&m["content"][0]["text"])))
        .collect();
    assert_eq!(
        texts,
        [
            ("user", "One"),
            ("assistant", "First answer."),
            ("user", "Two"),
            ("user", "Three"),
        ]
    );
}

#[tokio::test]
async fn an_anthropic_error_event_mid_stream_is_an_error_event_and_the_next_message_works() {
    let mut events = anthropic_start();
    events.push(anthropic_delta("Let me think"));
    events.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = Server::start(vec![
        Reply::sse(anthropic_sse(&events)),
        Reply::sse(anthropic_text("Better now.")),
    ])
    .await;
    let mut agent = agent(
        files_catalog(),
        anthropic(&server),
        "anthropic://claude-sonnet-4-6",
    );

    let events = converse(&mut agent, "One").await;
    // The words before the error reached the caller.
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::Delta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Let me think"]);
    match &events.last().unwrap().kind {
        EventKind::Error(AgentError::Llm(error)) => assert_eq!(
            **error,
            LlmError::Api {
                provider: "anthropic".into(),
                kind: "overloaded_error".into(),
                message: "Overloaded".into(),
            }
        ),
        other => panic!("expected an error, got {other:?}"),
    }
    assert_eq!(finished(&converse(&mut agent, "Two").await), "Better now.");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn an_openai_error_object_mid_stream_is_an_error_event_and_the_next_message_works() {
    let mut body =
        String::from_utf8(openai_sse(&[(json!({"content": "Let me think"}), None)])).unwrap();
    // Cut before the usage chunk and `[DONE]`: the error takes their place.
    body.truncate(body.find("\n\n").unwrap() + 2);
    body.push_str(
        "data: {\"error\":{\"message\":\"The server had an error.\",\
         \"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n",
    );
    let server = Server::start(vec![
        Reply::sse(body),
        Reply::sse(openai_text("Better now.")),
    ])
    .await;
    let mut agent = agent(files_catalog(), openai(&server), "openai://gpt-4o");

    let events = converse(&mut agent, "One").await;
    match &events.last().unwrap().kind {
        EventKind::Error(AgentError::Llm(error)) => assert_eq!(
            **error,
            LlmError::Api {
                provider: "openai".into(),
                kind: "server_error".into(),
                message: "The server had an error.".into(),
            }
        ),
        other => panic!("expected an error, got {other:?}"),
    }
    assert_eq!(finished(&converse(&mut agent, "Two").await), "Better now.");
    assert_eq!(server.received().len(), 2);
}

// ---------------------------------------------------------------------------
// 5. A sub-agent through the real adapter.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_sub_agent_sends_its_own_request_and_its_answer_is_the_parents_tool_result() {
    let memory = Memory::new();
    memory.put_kit(Kit::new("notes").with_sub_agent(
        AgentDefinition::new("notes:editor", "Edits notes.").with_system_prompt("You edit."),
    ));
    let task = "Fix the typos in: teh cat";
    let server = Server::start(vec![
        Reply::sse(anthropic_tool_calls(
            "Delegating.",
            &[("call_edit", "agent_notes_editor", json!({"task": task}))],
        )),
        Reply::sse(anthropic_text("the cat")),
        Reply::sse(anthropic_text("Fixed: the cat")),
    ])
    .await;
    let mut agent = agent(
        Catalog::builder().provider(memory).build(),
        anthropic(&server),
        "anthropic://claude-sonnet-4-6",
    );

    let events = converse(&mut agent, "Please fix my note").await;
    assert_eq!(finished(&events), "Fixed: the cat");
    assert_eq!(
        tool_results(&events),
        [(
            "call_edit".into(),
            "notes:editor".into(),
            "the cat".into(),
            false
        )]
    );
    // The child's own events are tagged with its path.
    let child: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| e.agent.names() == ["notes:editor"])
        .collect();
    assert!(
        child
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Delta { text } if text == "the cat")),
        "{events:?}"
    );

    let received = server.received();
    assert_eq!(received.len(), 3);
    let parent = received[0].json();
    let names: Vec<&str> = parent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| string(&tool["name"]))
        .collect();
    assert_eq!(names, ["agent_notes_editor"]);
    assert_eq!(parent["system"][0]["text"], SYSTEM_PROMPT);

    // The child: its own system prompt, the task as its only message, and no
    // tool to delegate to itself.
    let child = received[1].json();
    assert_eq!(
        child["system"],
        json!([{"type": "text", "text": "You edit."}])
    );
    assert_eq!(
        child["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": task}]}])
    );
    assert!(
        child.get("tools").is_none_or(|tools| tools == &json!([])),
        "{child}"
    );

    // The parent again: the child's answer as the tool result.
    let parent = received[2].json();
    assert_eq!(parent["system"][0]["text"], SYSTEM_PROMPT);
    let messages = parent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{parent}");
    assert_eq!(
        messages[1]["content"][1],
        json!({"type": "tool_use", "id": "call_edit", "name": "agent_notes_editor",
            "input": {"task": task}})
    );
    assert_eq!(messages[2]["role"], "user");
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{parent}");
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["tool_use_id"], "call_edit");
    assert_eq!(results[0]["content"], "the cat");
}

/// Skills as written for Claude Code, and a real one of the corpus
/// (`user-invocable: true`, an `argument-hint`), through the Anthropic
/// adapter: the request the server records lists what the model may use and
/// never the skill only people run.
#[tokio::test]
async fn the_anthropic_request_never_lists_a_skill_only_people_run() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("ops");
    skillkit_tests::write(
        kit.join("skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploy the application to production\n\
         disable-model-invocation: true\n---\nDeploy $ARGUMENTS to production.\n",
    );
    skillkit_tests::write(
        kit.join("skills/legacy-system-context/SKILL.md"),
        "---\nname: legacy-system-context\ndescription: How the legacy billing system works\n\
         user-invocable: false\n---\nInvoices live in one table.\n",
    );
    let real = skillkit_tests::corpus()
        .join("github__awesome-copilot/skills/react-container-presentation-component/SKILL.md");
    std::fs::create_dir_all(kit.join("skills/react-container-presentation-component")).unwrap();
    std::fs::copy(
        &real,
        kit.join("skills/react-container-presentation-component/SKILL.md"),
    )
    .unwrap();
    let catalog = Catalog::builder()
        .provider(skillkit::Local::new(&kit))
        .build();
    let server = Server::start(vec![
        Reply::sse(anthropic_tool_calls(
            "",
            &[("toolu_1", "activate_skill", json!({"name": "ops:deploy"}))],
        )),
        Reply::sse(anthropic_text("I cannot deploy; run /deploy yourself.")),
    ])
    .await;
    let mut agent = agent(catalog, anthropic(&server), "anthropic://claude-sonnet-4-6");
    let events = converse(&mut agent, "Ship version 2").await;
    assert_eq!(finished(&events), "I cannot deploy; run /deploy yourself.");

    let sent = server.received()[0].json();
    let system = sent["system"].to_string();
    assert!(!system.contains("deploy"), "{system}");
    assert!(system.contains("ops:legacy-system-context"), "{system}");
    assert!(
        system.contains("ops:react-container-presentation-component"),
        "{system}"
    );
    let activate = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "activate_skill")
        .unwrap();
    assert_eq!(
        activate["input_schema"]["properties"]["name"]["enum"],
        json!([
            "ops:legacy-system-context",
            "ops:react-container-presentation-component"
        ])
    );
    // Named anyway, the refusal goes back as the tool's error result.
    let second = server.received()[1].json().to_string();
    assert!(second.contains("run by people only"), "{second}");
    assert!(second.contains("\"is_error\":true"), "{second}");
}

/// A server that reports token counts no model reads (`u64::MAX` input
/// tokens, then more cache reads on top, over two turns) makes no sum
/// overflow: the agent answers, and every total stops at the largest
/// count rather than wrapping round to a small one.
#[tokio::test]
async fn token_counts_past_any_bound_are_held_at_the_largest() {
    let huge = |text: &str| {
        let mut events = support::anthropic_start_counting(u64::MAX);
        events[0]["message"]["usage"]["cache_read_input_tokens"] = json!(u64::MAX);
        events[0]["message"]["usage"]["output_tokens"] = json!(u64::MAX);
        events.push(anthropic_delta(text));
        events.push(json!({"type": "content_block_stop", "index": 0}));
        events.extend(support::anthropic_end("end_turn"));
        anthropic_sse(&events)
    };
    let server = Server::start(vec![Reply::sse(huge("One.")), Reply::sse(huge("Two."))]).await;
    let mut agent = agent(
        files_catalog(),
        anthropic(&server),
        "anthropic://claude-sonnet-4-6",
    );
    for (question, answer) in [("first?", "One."), ("second?", "Two.")] {
        let events = converse(&mut agent, question).await;
        assert_eq!(finished(&events), answer);
        let total = events.iter().rev().find_map(|event| match &event.kind {
            EventKind::Usage { total, .. } => Some(*total),
            _ => None,
        });
        let total = total.expect("a usage event");
        assert_eq!(total.input_tokens, u64::MAX, "{total:?}");
        assert_eq!(total.cache_read_input_tokens, u64::MAX, "{total:?}");
    }
}
