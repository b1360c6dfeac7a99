//! The agent runtime over a scripted model: conversations with tools,
//! knowledge skills through `activate_skill`, sub-agents, limits, history
//! round trips, errors, and many agents at once. (Tool calls that wait, fail
//! or are stopped: `agent_tools.rs`.)

use skillkit_tests::agent as support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use skillkit::agent::{AgentError, EventKind, History, start_agent};
use skillkit::approval::AgentPath;
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::{Event, LlmError, Message, Registry, Reply, Scripted, ToolCall};
use skillkit::{
    AgentDefinition, Catalog, Kit, Local, Memory, Skill, Tool, ToolExecution, ToolOutcome,
};
use skillkit_tests::{skill_md, write};
use support::{
    FnTool, ask, calls_answered, catalog, echo, lead, options, outcomes, results_in, system, tool,
    tool_names, users_in, wire_safe,
};

/// A kit `team` with two sub-agents: `team:writer` (the parent's model) and
/// `team:critic` (its own model, `critic://small`).
fn team() -> Memory {
    let mut critic = AgentDefinition::new("team:critic", "Critiques drafts.")
        .with_system_prompt("You critique.");
    critic.model = Some("critic://small".into());
    let memory = Memory::new();
    memory.put_kit(
        Kit::new("team")
            .with_sub_agent(
                AgentDefinition::new("team:writer", "Writes drafts.")
                    .with_system_prompt("You write."),
            )
            .with_sub_agent(critic),
    );
    memory
}

/// A call of sub-agent `agent` (a wire name) with `task`.
fn delegate(id: &str, agent: &str, task: &str) -> Reply {
    Reply::ToolCalls {
        text: String::new(),
        calls: vec![ToolCall::new(id, agent, json!({ "task": task }))],
    }
}

/// Two messages: the model calls an executable skill under a wire-safe
/// name, gets its result in the next request, answers; the second
/// message's request carries the whole first exchange.
#[tokio::test]
async fn a_tool_result_goes_back_and_the_next_message_sees_the_first() {
    let memory = Memory::new();
    memory.put_tool(
        Skill::new("files:read", "Read a file."),
        FnTool(|e: ToolExecution| ToolOutcome::ok(format!("contents of {}", e.arguments()))),
    );
    memory.put_tool(Skill::new("my.notes:search notes", "Search."), echo());
    memory.put_tool(
        Skill::new(format!("archive:{}", "x".repeat(80)), "Long."),
        echo(),
    );
    let script = Scripted::new()
        .tool_call("call_1", "files_read", json!({"arguments": "notes.txt"}))
        .text("Buy milk.")
        .text("You asked about notes.txt.");
    let mut agent = start_agent(lead(), options(catalog(&memory), &script)).unwrap();

    let (answer, events) = ask(&mut agent, "What is in notes.txt?").await;
    assert_eq!(answer.unwrap(), "Buy milk.");
    let results = outcomes(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(
        (results[0].name.as_str(), results[0].content.as_str()),
        ("files:read", "contents of notes.txt")
    );
    assert!(!results[0].is_error);

    let requests = script.requests();
    let names = tool_names(&requests[0]);
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.iter().all(|n| wire_safe(n)), "{names:?}");
    assert!(names.contains(&"files_read"), "{names:?}");
    let unique: std::collections::HashSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "wire names must be unique");
    assert_eq!(
        requests[1].messages,
        [
            Message::system("You lead."),
            Message::user("What is in notes.txt?"),
            Message::assistant(
                "",
                vec![ToolCall::new(
                    "call_1",
                    "files_read",
                    json!({"arguments": "notes.txt"})
                )]
            ),
            Message::tool_result("call_1", "contents of notes.txt"),
        ]
    );

    let (answer, _) = ask(&mut agent, "What did I ask?").await;
    assert_eq!(answer.unwrap(), "You asked about notes.txt.");
    let requests = script.requests();
    assert_eq!(requests.len(), 3);
    let mut expected = requests[1].messages.clone();
    expected.push(Message::assistant("Buy milk.", vec![]));
    expected.push(Message::user("What did I ask?"));
    assert_eq!(requests[2].messages, expected);
    // The history speaks full names.
    let history = agent.history();
    assert_eq!(history.messages.len(), 6);
    let Message::Assistant(call) = &history.messages[1] else {
        panic!("{:?}", history.messages[1]);
    };
    assert_eq!(call.tool_calls[0].name, "files:read");
}

/// A body that cannot be read at activation (here: not UTF-8, though its
/// frontmatter listed fine) is an error result the model sees, and the
/// conversation goes on.
#[tokio::test]
async fn a_body_that_cannot_be_read_is_an_error_result_and_the_agent_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("notes");
    let mut bytes = skill_md("broken", "Broken body.", "").into_bytes();
    bytes.extend_from_slice(b"\xff not text");
    write(kit.join("broken/SKILL.md"), bytes);
    let script = Scripted::new()
        .tool_call("call_1", "activate_skill", json!({"name": "notes:broken"}))
        .text("That skill is broken.");
    let local = Catalog::builder().provider(Local::new(&kit)).build();
    let mut agent = start_agent(lead(), options(local, &script)).unwrap();
    let (answer, events) = ask(&mut agent, "Use it").await;
    assert_eq!(answer.unwrap(), "That skill is broken.");
    let results = outcomes(&events);
    assert!(results[0].is_error, "{}", results[0].content);
    assert!(
        results[0]
            .content
            .contains("cannot read the body of skill file"),
        "{}",
        results[0].content
    );
}

/// `activate_skill` renders a knowledge skill of a Local kit with its
/// arguments, its directory and the files beside it; the system prompt
/// lists the skills and the tool's `name` enum names them. With no
/// knowledge skill there is neither the tool nor the block.
#[tokio::test]
async fn activate_skill_renders_a_local_skill_with_its_arguments_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("notes");
    let skill_dir = kit.join("skills/summarize");
    write(
        skill_dir.join("SKILL.md"),
        skill_md(
            "summarize",
            "Summarize a document.",
            "Summarize $ARGUMENTS, starting with $0.\n",
        ),
    );
    write(skill_dir.join("template.md"), "# Summary\n");
    write(
        kit.join("skills/outline/SKILL.md"),
        skill_md("outline", "Outline a document.", "Outline it.\n"),
    );
    let script = Scripted::new()
        .tool_call(
            "call_1",
            "activate_skill",
            json!({"name": "notes:summarize", "arguments": "report.txt briefly"}),
        )
        .text("Summary: ...");
    let local = Catalog::builder().provider(Local::new(&kit)).build();
    let mut agent = start_agent(lead(), options(local, &script)).unwrap();

    let (answer, events) = ask(&mut agent, "Summarize report.txt").await;
    assert_eq!(answer.unwrap(), "Summary: ...");
    let results = outcomes(&events);
    assert_eq!(results[0].name, "activate_skill");
    assert!(!results[0].is_error, "{}", results[0].content);
    let content = &results[0].content;
    assert!(
        content.starts_with("<skill_content name=\"notes:summarize\">\n"),
        "{content}"
    );
    assert!(
        content.contains("Summarize report.txt briefly, starting with report.txt."),
        "{content}"
    );
    assert!(
        content.contains(&format!("Skill directory: {}", skill_dir.display())),
        "{content}"
    );
    assert!(content.contains("- template.md"), "{content}");
    assert!(!content.contains("- SKILL.md"), "{content}");
    assert!(content.ends_with("</skill_content>"), "{content}");

    let first = &script.requests()[0];
    let prompt = system(first);
    assert!(prompt.starts_with("You lead."), "{prompt}");
    assert!(prompt.contains("<available_skills>"), "{prompt}");
    assert!(
        prompt.contains("<name>\nnotes:summarize\n</name>\n<description>\nSummarize a document."),
        "{prompt}"
    );
    assert!(
        prompt.contains("<name>\nnotes:outline\n</name>"),
        "{prompt}"
    );
    assert_eq!(tool_names(first), ["activate_skill"]);
    assert_eq!(
        tool(first, "activate_skill").input_schema["properties"]["name"]["enum"],
        json!(["notes:outline", "notes:summarize"])
    );

    // Only executable skills: no activate_skill, no skills block.
    let memory = Memory::new();
    memory.put_tool(Skill::new("files:read", "Read."), echo());
    let plain = Scripted::new().text("Hi.");
    let mut agent = start_agent(lead(), options(catalog(&memory), &plain)).unwrap();
    assert_eq!(ask(&mut agent, "Hi").await.0.unwrap(), "Hi.");
    let request = &plain.requests()[0];
    assert_eq!(tool_names(request), ["files_read"]);
    assert_eq!(system(request), "You lead.");
}

/// A tool's `execute` gets the whole skill (body, metadata, frontmatter),
/// the model's input, and the context: agent, session, call id, kit
/// metadata. The model is offered the skill's own `input_schema`.
#[tokio::test]
async fn execute_receives_the_skill_the_input_and_the_context() {
    let memory = Memory::new();
    let mut kit = Kit::new("ops");
    kit.metadata.insert("team".into(), "infra".into());
    memory.put_kit(kit);
    let schema = json!({
        "type": "object",
        "properties": {"service": {"type": "string"}},
        "required": ["service"]
    });
    let mut skill = Skill::new("ops:deploy", "Deploy a service.").with_body("Deploy $0 carefully.");
    skill.metadata_mut().insert("danger".into(), "high".into());
    skill
        .extra_mut()
        .insert("input_schema".into(), schema.clone());
    let seen: Arc<Mutex<Vec<ToolExecution>>> = Arc::default();
    let record = Arc::clone(&seen);
    memory.put_tool(
        skill,
        FnTool(move |e: ToolExecution| {
            record.lock().unwrap().push(e);
            ToolOutcome::ok(json!({"deployed": true}))
        }),
    );
    let script = Scripted::new()
        .tool_call("call_7", "ops_deploy", json!({"service": "billing"}))
        .text("Deployed.");
    let options = options(catalog(&memory), &script).session_id("support-4711");
    let mut agent = start_agent(lead(), options).unwrap();

    let (answer, events) = ask(&mut agent, "Deploy billing").await;
    assert_eq!(answer.unwrap(), "Deployed.");
    assert_eq!(outcomes(&events)[0].content, r#"{"deployed":true}"#);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let execution = &seen[0];
    assert_eq!(execution.skill.name, "ops:deploy");
    assert_eq!(execution.skill.body.read().unwrap(), "Deploy $0 carefully.");
    assert_eq!(execution.skill.metadata()["danger"], "high");
    assert_eq!(execution.skill.extra()["input_schema"], schema);
    assert_eq!(execution.input, json!({"service": "billing"}));
    let context = &execution.context;
    assert_eq!(context.agent.as_deref(), Some("lead"));
    assert_eq!(context.session_id.as_deref(), Some("support-4711"));
    assert_eq!(context.call_id.as_deref(), Some("call_7"));
    assert_eq!(context.kit_metadata["team"], "infra");

    let offered = tool(&script.requests()[0], "ops_deploy").clone();
    assert_eq!(offered.input_schema, schema);
    assert_eq!(offered.description, "Deploy a service.");
}

/// A sub-agent runs the loop to its answer, which is the parent's tool
/// result; its events carry its path; it uses its definition's model when
/// it names one, else the parent's; it sees its siblings but not itself.
#[tokio::test]
async fn sub_agents_answer_as_tool_results_with_their_own_path_and_model() {
    let script = Scripted::new();
    script.push(delegate("p1", "agent_team_writer", "Draft a haiku."));
    script.push(Reply::Text("Autumn moonlight...".into()));
    script.push(delegate("p2", "agent_team_critic", "Critique it."));
    script.push(Reply::Text("Here is the haiku.".into()));
    let critic = Scripted::new().text("Too many syllables.");
    let options = options(catalog(&team()), &script).registry(
        Registry::empty()
            .with("scripted", script.clone())
            .with("critic", critic.clone()),
    );
    let mut agent = start_agent(lead(), options).unwrap();

    let (answer, events) = ask(&mut agent, "Write a haiku and have it checked.").await;
    assert_eq!(answer.unwrap(), "Here is the haiku.");

    let requests = script.requests();
    assert_eq!(requests.len(), 4, "parent, writer, parent, parent");
    let parent = &requests[0];
    assert_eq!(
        tool_names(parent),
        ["agent_team_critic", "agent_team_writer"]
    );
    assert_eq!(
        tool(parent, "agent_team_writer").input_schema["required"],
        json!(["task"])
    );
    let writer = &requests[1];
    assert_eq!(system(writer), "You write.");
    assert_eq!(users_in(writer), ["Draft a haiku."]);
    assert_eq!(tool_names(writer), ["agent_team_critic"]);
    let reviews = critic.requests();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].model, "small");
    assert_eq!(users_in(&reviews[0]), ["Critique it."]);
    assert_eq!(results_in(&requests[2])[0].content, "Autumn moonlight...");
    assert_eq!(results_in(&requests[3])[1].content, "Too many syllables.");

    let writer_path = AgentPath::root().child("team:writer");
    let critic_path = AgentPath::root().child("team:critic");
    let deltas: Vec<(AgentPath, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Delta { text } => Some((e.agent.clone(), text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas,
        [
            (writer_path.clone(), "Autumn moonlight...".into()),
            (critic_path.clone(), "Too many syllables.".into()),
            (AgentPath::root(), "Here is the haiku.".into()),
        ]
    );
    let results = outcomes(&events);
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.agent.is_root() && !r.is_error));
    assert_eq!(results[0].name, "team:writer");
    assert!(events.iter().any(|e| e.agent == writer_path
        && matches!(&e.kind, EventKind::TurnComplete { message } if message.text == "Autumn moonlight...")));
    // The parent's history holds its own exchange only.
    assert_eq!(agent.history().messages.len(), 6);
}

/// `max_agent_depth` bounds delegation: at the limit the model gets an
/// error result saying so, and the conversation goes on.
#[tokio::test]
async fn max_agent_depth_turns_deeper_delegation_into_an_error_result() {
    // Depth 0: no sub-agent at all.
    let script = Scripted::new();
    script.push(delegate("p1", "agent_team_writer", "Draft."));
    script.push(Reply::Text("I will do it myself.".into()));
    let options0 = options(catalog(&team()), &script).max_agent_depth(0);
    let mut agent = start_agent(lead(), options0).unwrap();
    let (answer, events) = ask(&mut agent, "Draft a haiku.").await;
    assert_eq!(answer.unwrap(), "I will do it myself.");
    let error = support::error_result(&events);
    assert!(
        error.contains("cannot run sub-agent `team:writer`") && error.contains("max_agent_depth"),
        "{error}"
    );
    let requests = script.requests();
    assert_eq!(requests.len(), 2, "the sub-agent must not run");
    assert!(results_in(&requests[1])[0].is_error);

    // Depth 1: the writer runs, its own delegation is refused.
    let script = Scripted::new();
    let critic = Scripted::new().text("never asked");
    script.push(delegate("p1", "agent_team_writer", "Draft."));
    script.push(delegate("w1", "agent_team_critic", "Check my draft."));
    script.push(Reply::Text("A draft, unchecked.".into()));
    script.push(Reply::Text("Done.".into()));
    let options1 = options(catalog(&team()), &script)
        .registry(
            Registry::empty()
                .with("scripted", script.clone())
                .with("critic", critic.clone()),
        )
        .max_agent_depth(1);
    let mut agent = start_agent(lead(), options1).unwrap();
    let (answer, events) = ask(&mut agent, "Draft a haiku.").await;
    assert_eq!(answer.unwrap(), "Done.");
    let results = outcomes(&events);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].agent, AgentPath::root().child("team:writer"));
    assert!(results[0].is_error);
    assert!(
        results[0].content.contains("this agent is at depth 1"),
        "{}",
        results[0].content
    );
    assert_eq!(results[1].content, "A draft, unchecked.");
    assert!(critic.requests().is_empty());
}

/// A model that calls tools forever stops at `max_turns`: an
/// `Error(MaxTurns)` event after exactly that many requests, a history in
/// which every call has its result, and an agent that takes the next
/// message.
#[tokio::test]
async fn max_turns_stops_a_model_that_calls_tools_forever() {
    let memory = Memory::new();
    memory.put_tool(Skill::new("loop:again", "Again."), echo());
    let looping = Arc::new(AtomicBool::new(true));
    let script = Scripted::new();
    let (queue, more) = (script.clone(), Arc::clone(&looping));
    // The hook queues the next reply as each request arrives (it holds a
    // handle on its own script, which the test leaks).
    let script = script.on_request(move |request| {
        let reply = match more.load(Ordering::SeqCst) {
            true => Reply::ToolCalls {
                text: String::new(),
                calls: vec![ToolCall::new(
                    format!("call_{}", request.messages.len()),
                    "loop_again",
                    json!({"arguments": "once more"}),
                )],
            },
            false => Reply::Text("Finally.".into()),
        };
        queue.push(reply);
    });
    let mut agent = start_agent(lead(), options(catalog(&memory), &script).max_turns(3)).unwrap();

    let (answer, events) = ask(&mut agent, "Loop.").await;
    assert_eq!(answer.unwrap_err(), AgentError::MaxTurns { limit: 3 });
    assert!(matches!(
        &events.last().unwrap().kind,
        EventKind::Error(AgentError::MaxTurns { limit: 3 })
    ));
    assert_eq!(script.requests().len(), 3);
    assert_eq!(outcomes(&events).len(), 3);
    let history = agent.history();
    assert_eq!(history.messages.len(), 1 + 3 * 2);
    assert!(calls_answered(&history.messages), "{history:?}");

    looping.store(false, Ordering::SeqCst);
    let (answer, _) = ask(&mut agent, "Stop looping.").await;
    assert_eq!(answer.unwrap(), "Finally.");
    let last = &script.requests()[3];
    assert_eq!(results_in(last).len(), 3);
    assert_eq!(users_in(last), ["Loop.", "Stop looping."]);
}

/// A history saved as JSON after one message seeds a new agent: its next
/// request carries the first exchange (tool names back on the wire), and the
/// session id is kept.
#[tokio::test]
async fn a_saved_history_resumes_the_conversation_in_a_new_agent() {
    let memory = Memory::new();
    let sessions: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let record = Arc::clone(&sessions);
    memory.put_tool(
        Skill::new("files:read", "Read a file."),
        FnTool(move |e: ToolExecution| {
            record.lock().unwrap().push(e.context.session_id);
            ToolOutcome::ok("buy milk")
        }),
    );
    let first = Scripted::new()
        .tool_call("call_1", "files_read", json!({"arguments": "todo.txt"}))
        .text("Buy milk.");
    let mut agent = start_agent(lead(), options(catalog(&memory), &first)).unwrap();
    assert_eq!(
        ask(&mut agent, "What is todo?").await.0.unwrap(),
        "Buy milk."
    );
    let saved = serde_json::to_string(&agent.history()).unwrap();
    let session = agent.session_id().to_owned();
    drop(agent);
    assert!(saved.contains(r#""name":"files:read""#), "{saved}");

    let second = Scripted::new()
        .tool_call("call_2", "files_read", json!({"arguments": "todo.txt"}))
        .text("Still milk.");
    let history: History = serde_json::from_str(&saved).unwrap();
    let options = options(catalog(&memory), &second).history(history);
    let mut agent = start_agent(lead(), options).unwrap();
    assert_eq!(agent.session_id(), session);
    assert_eq!(ask(&mut agent, "And now?").await.0.unwrap(), "Still milk.");

    let mut expected = first.requests()[1].messages.clone();
    expected.push(Message::assistant("Buy milk.", vec![]));
    expected.push(Message::user("And now?"));
    assert_eq!(second.requests()[0].messages, expected);
    assert_eq!(agent.history().session_id, session);
    assert_eq!(
        *sessions.lock().unwrap(),
        [Some(session.clone()), Some(session)]
    );
}

/// What cannot work is said before any request: an unknown scheme, a
/// missing API key (`start_agent` fails with `AgentError::Model`). A model
/// failing mid-turn is an `Error` event, and the next message is answered.
#[tokio::test]
async fn model_errors_are_reported_and_the_agent_goes_on() {
    let script = Scripted::new();
    let err = start_agent(
        lead(),
        options(Catalog::builder().build(), &script).model("nope://m"),
    )
    .unwrap_err();
    let AgentError::Model {
        agent,
        model,
        source,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!((agent.as_str(), model.as_str()), ("lead", "nope://m"));
    assert!(
        matches!(&**source, LlmError::UnknownScheme { scheme, .. } if scheme == "nope"),
        "{source:?}"
    );

    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        // SAFETY: no test of this binary reads ANTHROPIC_API_KEY, and
        // nothing here reads the environment outside Rust's `std::env`,
        // which serialises its own access.
        unsafe { std::env::remove_var("ANTHROPIC_API_KEY") };
    }
    let mut keyless = AgentDefinition::new("keyless", "No key.");
    keyless.model = Some("anthropic://claude-sonnet-4-6".into());
    let registry = Registry::empty().with(
        "anthropic",
        Anthropic::builder().base_url("http://127.0.0.1:9").build(),
    );
    let options_without_key =
        skillkit::agent::AgentOptions::new(Catalog::builder().build()).registry(registry);
    let err = start_agent(keyless, options_without_key).unwrap_err();
    assert!(
        matches!(&err, AgentError::Model { source, .. }
            if matches!(&**source, LlmError::MissingApiKey { variable, .. } if variable == "ANTHROPIC_API_KEY")),
        "{err:?}"
    );

    // Mid-turn: after a tool call, before streaming, inside the stream.
    let memory = Memory::new();
    memory.put_tool(Skill::new("files:read", "Read."), echo());
    let script = Scripted::new()
        .tool_call("call_1", "files_read", json!({"arguments": "a"}))
        .error(LlmError::Other {
            provider: "scripted".into(),
            message: "model down".into(),
        });
    script.push(Reply::Events(vec![
        Event::delta("Half an ans"),
        Event::Error(LlmError::Api {
            provider: "scripted".into(),
            kind: "overloaded_error".into(),
            message: "busy".into(),
        }),
    ]));
    script.push(Reply::Text("Back again.".into()));
    let mut agent = start_agent(lead(), options(catalog(&memory), &script)).unwrap();

    let (answer, events) = ask(&mut agent, "One").await;
    let err = answer.unwrap_err();
    assert!(
        matches!(&err, AgentError::Llm(e) if matches!(&**e, LlmError::Other { message, .. } if message == "model down")),
        "{err:?}"
    );
    assert!(matches!(events.last().unwrap().kind, EventKind::Error(_)));
    let (answer, events) = ask(&mut agent, "Two").await;
    assert!(
        matches!(answer, Err(AgentError::Llm(ref e)) if matches!(&**e, LlmError::Api { kind, .. } if kind == "overloaded_error")),
        "{answer:?}"
    );
    assert!(matches!(events.last().unwrap().kind, EventKind::Error(_)));
    assert_eq!(ask(&mut agent, "Three").await.0.unwrap(), "Back again.");

    let history = agent.history();
    assert!(calls_answered(&history.messages), "{history:?}");
    assert!(
        !format!("{history:?}").contains("Half an ans"),
        "a failed answer is not history"
    );
    assert_eq!(users_in(&script.requests()[3]), ["One", "Two", "Three"]);
}

/// Answers `{}` with the calling agent's name, after letting other tasks run.
struct WhoAmI;

#[skillkit::async_trait]
impl Tool for WhoAmI {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        tokio::task::yield_now().await;
        ToolOutcome::ok(execution.context.agent.unwrap_or_default())
    }
}

/// 200 agents on one two-worker runtime, each with its own model making two
/// tool round trips over one shared catalog: all finish, and each history
/// holds its own exchange only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_agents_run_side_by_side() {
    const AGENTS: usize = 200;
    let memory = Memory::new();
    memory.put_tool(Skill::new("id:whoami", "Say who is calling."), WhoAmI);
    let catalog = catalog(&memory);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..AGENTS {
        let script = Scripted::new()
            .tool_call("c1", "id_whoami", json!({}))
            .tool_call("c2", "id_whoami", json!({}))
            .text(format!("I am agent-{i}."));
        let options = options(catalog.clone(), &script);
        let definition = AgentDefinition::new(format!("agent-{i}"), "One of many.");
        let mut agent = start_agent(definition, options).unwrap();
        tasks.spawn(async move {
            let (answer, _) = ask(&mut agent, "Who are you?").await;
            (i, answer, agent.history(), script.requests().len())
        });
    }
    let mut done = 0;
    while let Some(joined) = tasks.join_next().await {
        let (i, answer, history, requests) = joined.unwrap();
        assert_eq!(answer.unwrap(), format!("I am agent-{i}."));
        assert_eq!(requests, 3);
        assert_eq!(history.messages.len(), 6, "agent-{i}: {history:?}");
        let contents: Vec<&str> = history
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult(r) => Some(r.content.as_str()),
                _ => None,
            })
            .collect();
        let me = format!("agent-{i}");
        assert_eq!(contents, [me.as_str(), me.as_str()]);
        done += 1;
    }
    assert_eq!(done, AGENTS);
}

/// Skills as Claude Code's documentation writes them: a deploy skill only
/// people run, background knowledge only the model uses, and one with an
/// argument hint.
fn claude_code_skills() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("ops/skills");
    write(
        kit.join("deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploy the application to production\n\
         disable-model-invocation: true\n---\nDeploy $ARGUMENTS to production:\n\
         1. Run the test suite\n2. Build the application\n3. Push to the deployment target\n",
    );
    write(
        kit.join("legacy-system-context/SKILL.md"),
        "---\nname: legacy-system-context\ndescription: How the legacy billing system works\n\
         user-invocable: false\n---\nThe legacy billing system keeps invoices in one table.\n",
    );
    write(
        kit.join("fix-issue/SKILL.md"),
        "---\nname: fix-issue\ndescription: Fix a GitHub issue\nargument-hint: [issue-number]\n\
         ---\nFix GitHub issue $ARGUMENTS following our coding standards.\n",
    );
    dir
}

#[tokio::test]
async fn a_skill_only_people_run_is_never_shown_to_the_model() {
    let dir = claude_code_skills();
    let catalog = Catalog::builder()
        .provider(Local::new(dir.path().join("ops")))
        .build();
    let script = Scripted::new()
        .tool_call("c1", "activate_skill", json!({"name": "ops:deploy"}))
        .tool_call(
            "c2",
            "activate_skill",
            json!({"name": "ops:legacy-system-context"}),
        )
        .text("Done.");
    let mut agent = start_agent(lead(), options(catalog, &script)).unwrap();
    let (answer, events) = ask(&mut agent, "Ship it").await;
    assert_eq!(answer.unwrap(), "Done.");

    let request = &script.requests()[0];
    let prompt = system(request);
    assert!(!prompt.contains("deploy"), "{prompt}");
    assert!(
        prompt.contains("<name>\nops:legacy-system-context\n</name>"),
        "{prompt}"
    );
    assert!(
        prompt.contains("<name>\nops:fix-issue\n</name>"),
        "{prompt}"
    );
    assert_eq!(
        tool(request, "activate_skill").input_schema["properties"]["name"]["enum"],
        json!(["ops:fix-issue", "ops:legacy-system-context"])
    );
    // Named anyway, it is refused with what to do; the model's own skill works.
    let results = outcomes(&events);
    assert!(
        results[0].is_error && results[0].content.contains("run by people only"),
        "{results:?}"
    );
    assert!(
        results[0]
            .content
            .contains("disable-model-invocation: true")
    );
    assert!(!results[1].is_error, "{results:?}");
    assert!(results[1].content.contains("keeps invoices in one table"));
}

/// A skill of kit `dev` that runs in a fork (`context: fork`), with
/// the sub-agent it runs as (`agent:`) when given.
fn forked(name: &str, body: &'static str, agent: Option<&str>) -> Skill {
    let mut skill = Skill::new(format!("dev:{name}"), format!("The {name} skill.")).with_body(body);
    skill.extra_mut().insert("context".into(), "fork".into());
    if let Some(agent) = agent {
        skill.extra_mut().insert("agent".into(), agent.into());
    }
    skill
}

#[tokio::test]
async fn a_forked_skill_runs_in_a_sub_agent_of_its_own() {
    let memory = Memory::new();
    memory.put_kit(
        Kit::new("dev")
            .with_sub_agent(
                AgentDefinition::new("dev:critic", "Critiques.")
                    .with_system_prompt("You critique."),
            )
            .with_skill(
                forked("research", "Research $ARGUMENTS thoroughly.", None)
                    .with_model("fast://small"),
            )
            .with_skill(forked("review", "Review $ARGUMENTS.", Some("critic")))
            .with_skill(forked("broken", "Anything.", None).with_model("nope://x"))
            .with_skill(forked("lost", "Anything.", Some("ghost"))),
    );
    let script = Scripted::new()
        .tool_call(
            "c1",
            "activate_skill",
            json!({"name": "dev:research", "arguments": "rust"}),
        )
        .tool_call(
            "c2",
            "activate_skill",
            json!({"name": "dev:review", "arguments": "the draft"}),
        )
        .text("Looks good.") // the critic, on the parent's model
        .tool_call(
            "c3",
            "activate_skill",
            json!({"name": "dev:broken", "arguments": ""}),
        )
        .tool_call(
            "c4",
            "activate_skill",
            json!({"name": "dev:lost", "arguments": ""}),
        )
        .text("Done.");
    let fast = Scripted::new().text("Rust facts.");
    let options = skillkit::agent::AgentOptions::new(catalog(&memory))
        .registry(
            Registry::empty()
                .with("scripted", script.clone())
                .with("fast", fast.clone()),
        )
        .model("scripted://m");
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, events) = ask(&mut agent, "Ship it").await;
    assert_eq!(answer.unwrap(), "Done.");

    // The fork's own request: its rendered body as the task, on its model,
    // without the conversation's history.
    let forked = &fast.requests()[0];
    assert_eq!(users_in(forked), ["Research rust thoroughly."]);
    let results: Vec<_> = outcomes(&events)
        .into_iter()
        .filter(|o| o.agent.is_root())
        .collect();
    assert_eq!(results[0].content, "Rust facts.");
    assert!(!results[0].is_error);
    // A fork as a named agent of the kit: its instructions, the parent's model.
    let critic = &script.requests()[2];
    assert!(
        system(critic).starts_with("You critique."),
        "{}",
        system(critic)
    );
    assert_eq!(users_in(critic), ["Review the draft."]);
    assert_eq!(results[1].content, "Looks good.");
    // An unknown model or agent is an error result saying so.
    assert!(
        results[2].is_error && results[2].content.contains("its `model:`"),
        "{results:?}"
    );
    assert!(
        results[3].is_error
            && results[3]
                .content
                .contains("which no kit of the catalog has"),
        "{results:?}"
    );
}
