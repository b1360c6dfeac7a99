//! Compaction: a conversation that passes its share of the context window is
//! summarised, and the model's next request still holds the body of every
//! skill in use and the listing (asserted on what the adapter sends, through
//! the real Anthropic adapter on 127.0.0.1 and on the scripted one). Claude
//! Code's open bugs are each a test: the oldest skill silently dropped over
//! the budget (#96168), nothing re-attached after a manual compaction
//! (#94564), the listing lost after compaction (#74990, #82017), skill
//! content summarised instead of kept (#73280). Old tool results are cleared
//! first; a compaction is stored in the session and is made again over an
//! append another writer made meanwhile.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use skillkit::RetryPolicy;
use skillkit::agent::session::{FileSessionStore, SessionStore};
use skillkit::agent::{AgentEvent, AgentOptions, CompactionPolicy, EventKind, start_agent};
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::{Compaction, LlmError, Message, Registry, Request, Scripted};
use skillkit::{Catalog, Memory, Skill, ToolExecution, ToolOutcome};
use skillkit_tests::agent::{FnTool, ask, lead, options, system, within};
use skillkit_tests::llm::{
    Reply, Server, anthropic_delta, anthropic_end, anthropic_sse, anthropic_start_counting,
};

/// What the compaction's request tells the model (its system prompt).
const SUMMARISE: &str = "You summarise a conversation";

/// `words` words of filler prose, starting with `mark`.
fn prose(mark: &str, words: usize) -> String {
    const WORDS: [&str; 8] = [
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
    ];
    let mut text = format!("{mark} ");
    for i in 0..words {
        text.push_str(WORDS[i % WORDS.len()]);
        text.push(' ');
    }
    text
}

/// Three trip skills (bodies that say who they are) and `files:read`, which
/// answers `READ-<n>` and `words` words of prose, `n` counting its calls.
fn trip_catalog(words: usize) -> Catalog {
    let memory = Memory::new();
    memory.put(
        Skill::new("trip:plan", "Plan a trip day by day.")
            .with_body("PLAN-BODY: plan each day, mornings for museums."),
    );
    memory.put(
        Skill::new("trip:budget", "Keep a trip within budget.")
            .with_body("BUDGET-BODY: keep a running total in euros."),
    );
    memory
        .put(Skill::new("trip:visa", "Check visa rules.").with_body("VISA-BODY: check the rules."));
    let calls = Arc::new(AtomicUsize::new(0));
    memory.put_tool(
        Skill::new("files:read", "Read a file."),
        FnTool(move |_: ToolExecution| {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            ToolOutcome::ok(prose(&format!("READ-{n}"), words))
        }),
    );
    Catalog::builder().provider(memory).build()
}

fn activate(name: &str) -> Value {
    json!({"name": name})
}

/// The requests of `script` that asked for a summary, and the others.
fn split(requests: Vec<Request>) -> (Vec<Request>, Vec<Request>) {
    requests
        .into_iter()
        .partition(|r| system(r).starts_with(SUMMARISE))
}

/// The text of every message of `request` as an adapter sends it, system
/// prompt included.
fn all_text(request: &Request) -> String {
    request
        .messages
        .iter()
        .map(|message| match message {
            Message::Compaction(compaction) => compaction.text(),
            other => serde_json::to_string(other).unwrap(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn compactions(events: &[AgentEvent]) -> Vec<Compaction> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Compacted(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Through the real Anthropic adapter: what goes on the wire.
// ---------------------------------------------------------------------------

/// An Anthropic answer: `text`, then tool calls; the request counted as
/// `input` tokens (0: not counted, so the agent keeps its own estimate).
fn anthropic_answer(text: &str, calls: &[(&str, &str, Value)], input: u64) -> Vec<u8> {
    let mut events = anthropic_start_counting(input);
    events.push(anthropic_delta(text));
    events.push(json!({"type": "content_block_stop", "index": 0}));
    for (i, (id, name, input)) in calls.iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": i + 1,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
        events.push(json!({"type": "content_block_delta", "index": i + 1,
            "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}));
        events.push(json!({"type": "content_block_stop", "index": i + 1}));
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.extend(anthropic_end(stop));
    anthropic_sse(&events)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_conversation_compacts_and_the_next_request_sent_holds_every_skill_in_use_and_the_listing()
 {
    let server = Server::start(vec![
        Reply::sse(anthropic_answer(
            "",
            &[("t1", "activate_skill", activate("trip:plan"))],
            0,
        )),
        Reply::sse(anthropic_answer(
            "",
            &[("t2", "activate_skill", activate("trip:budget"))],
            0,
        )),
        Reply::sse(anthropic_answer("Planned: three days.", &[], 0)),
        Reply::sse(anthropic_answer(
            "",
            &[("t3", "files_read", json!({"arguments": "notes.txt"}))],
            0,
        )),
        Reply::sse(anthropic_answer(
            "",
            &[("t4", "files_read", json!({"arguments": "more.txt"}))],
            0,
        )),
        // The summary.
        Reply::sse(anthropic_answer(
            "SUMMARY: a three-day Lisbon trip; the notes were read.",
            &[],
            0,
        )),
        Reply::sse(anthropic_answer("Your notes say to see the tiles.", &[], 0)),
    ])
    .await;
    let registry = Registry::empty().with(
        "anthropic",
        Anthropic::builder()
            .base_url(&server.base_url)
            .api_key("test-key")
            .retry(RetryPolicy::none())
            .build(),
    );
    // Each read is about 42,000 characters; the conversation is compacted
    // past 16,000 tokens (64,000 characters at 4 a token): after the second.
    let options = AgentOptions::new(trip_catalog(7_000))
        .registry(registry)
        .model("anthropic://claude-sonnet-4-6")
        .compaction(
            CompactionPolicy::new()
                .context_window(20_000)
                .clear_tool_results(false),
        );
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, _) = ask(&mut agent, "Plan three days in Lisbon within 600 euros").await;
    assert_eq!(answer.unwrap(), "Planned: three days.");
    let (answer, events) = ask(&mut agent, "What do my notes say?").await;
    assert_eq!(answer.unwrap(), "Your notes say to see the tiles.");

    let compacted = compactions(&events);
    assert_eq!(compacted.len(), 1, "{events:?}");
    let names: Vec<&str> = compacted[0]
        .skills
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["trip:budget", "trip:plan"],
        "latest activation first"
    );
    assert!(compacted[0].left_out.is_empty());
    assert!(compacted[0].tokens_after < compacted[0].tokens_before / 4);

    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    assert_eq!(sent.len(), 7);
    // The summary request: the transcript, no tools, no skill body (#73280);
    // the oldest result cleared to fit it.
    let summary = sent[5].to_string();
    assert!(
        sent[5]["system"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with(SUMMARISE)
    );
    assert!(
        sent[5]
            .get("tools")
            .is_none_or(|t| t.as_array().unwrap().is_empty())
    );
    assert!(summary.contains("READ-2 lorem") && summary.contains("Plan three days in Lisbon"));
    assert!(!summary.contains("READ-1 lorem") && summary.contains("a tool result, cleared"));
    assert!(!summary.contains("PLAN-BODY") && !summary.contains("BUDGET-BODY"));

    // The request after it: the listing in the system prompt, the summary
    // and both skill bodies, whole, in the first message; no old result.
    let next = &sent[6];
    let system = next["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("<available_skills>") && system.contains("trip:visa"));
    let first = next["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert_eq!(next["messages"][0]["role"], "user");
    assert!(
        first.contains("SUMMARY: a three-day Lisbon trip"),
        "{first}"
    );
    assert!(first.contains("PLAN-BODY: plan each day, mornings for museums."));
    assert!(first.contains("BUDGET-BODY: keep a running total in euros."));
    assert!(
        !next.to_string().contains("READ-1 lorem") && !next.to_string().contains("READ-2 lorem")
    );
    assert!(next["tools"].as_array().unwrap().len() >= 2);

    // The history keeps everything, the compaction among it.
    let history = agent.history();
    assert!(
        history
            .messages
            .iter()
            .any(|m| matches!(m, Message::ToolResult(r) if r.content.starts_with("READ-1")))
    );
    assert!(
        history
            .messages
            .iter()
            .any(|m| matches!(m, Message::Compaction(_)))
    );
}

// ---------------------------------------------------------------------------
// On the scripted model: Claude Code's bugs, clearing, sessions.
// ---------------------------------------------------------------------------

/// #96168: the oldest skill silently dropped over the budget. Here a skill
/// over its own budget is cut, saying so, and one that does not fit the
/// whole budget is named for the model.
#[tokio::test(flavor = "multi_thread")]
async fn a_skill_over_the_budget_is_cut_or_named_never_silently_dropped() {
    let memory = Memory::new();
    memory.put(Skill::new("a:oldest", "Oldest.").with_body(prose("OLDEST-BODY", 300)));
    memory.put(Skill::new("a:long", "Long.").with_body(prose("LONG-BODY", 2_000)));
    memory.put(Skill::new("a:latest", "Latest.").with_body(prose("LATEST-BODY", 300)));
    let model = Scripted::new()
        .tool_call("1", "activate_skill", activate("a:oldest"))
        .tool_call("2", "activate_skill", activate("a:long"))
        .tool_call("3", "activate_skill", activate("a:latest"))
        .text("Done.")
        .text("SUMMARY OF IT")
        .text("Still here.");
    // One skill at most 1,000 tokens (4,000 characters); all 1,600 tokens:
    // the latest and the long one cut, not the oldest as well.
    let options = options(skillkit_tests::agent::catalog(&memory), &model).compaction(
        CompactionPolicy::new()
            .skill_budget(1_000)
            .skills_budget(1_600),
    );
    let mut agent = start_agent(lead(), options).unwrap();
    ask(&mut agent, "Use all three").await.0.unwrap();
    let compaction = within("the compaction", agent.compact(None, |_| {}))
        .await
        .unwrap();
    let names: Vec<(&str, bool)> = compaction
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.cut))
        .collect();
    assert_eq!(names, [("a:latest", false), ("a:long", true)]);
    assert_eq!(compaction.left_out, ["a:oldest"]);

    ask(&mut agent, "Go on").await.0.unwrap();
    let (_, requests) = split(model.requests());
    let text = all_text(requests.last().unwrap());
    assert!(text.contains(&prose("LATEST-BODY", 300).trim_end().to_owned()));
    assert!(text.contains("LONG-BODY") && text.contains("the rest of `a:long` is cut here"));
    assert!(!text.contains("OLDEST-BODY"));
    assert!(
        text.contains("left out of this compaction for lack of room: a:oldest"),
        "{text}"
    );
}

/// #94564: nothing re-attached after a manual compaction; #74990, #82017:
/// the listing lost after compaction. Here a manual compaction keeps the
/// skill used, and the listing (over its budget, so bounded) still leads
/// with it and says how to find the others.
#[tokio::test(flavor = "multi_thread")]
async fn after_a_manual_compaction_the_skill_in_use_and_the_listing_are_there() {
    let memory = Memory::new();
    for i in 0..200 {
        memory.put(
            Skill::new(
                format!("k:s{i:03}"),
                format!("Skill number {i} of the kit."),
            )
            .with_body(format!("BODY-{i:03}: do step {i}.")),
        );
    }
    let model = Scripted::new()
        .tool_call("1", "activate_skill", activate("k:s150"))
        .text("Done with 150.")
        .text("SUMMARY: skill 150 was used.")
        .text("Next.");
    let options = options(skillkit_tests::agent::catalog(&memory), &model).listing_budget(2_000);
    let mut agent = start_agent(lead(), options).unwrap();
    ask(&mut agent, "Use skill 150").await.0.unwrap();
    let compaction = within(
        "the compaction",
        agent.compact(Some("Keep the skill numbers."), |_| {}),
    )
    .await
    .unwrap();
    assert_eq!(compaction.skills.len(), 1);
    ask(&mut agent, "And now?").await.0.unwrap();

    let (summaries, requests) = split(model.requests());
    assert_eq!(summaries.len(), 1);
    assert!(all_text(&summaries[0]).contains("Keep the skill numbers."));
    let last = requests.last().unwrap();
    let listing = system(last);
    assert!(listing.contains("<available_skills>"), "{listing}");
    let first_entry = listing.find("<name>").unwrap();
    assert!(
        listing[first_entry..].starts_with("<name>\nk:s150\n</name>"),
        "{listing}"
    );
    assert!(listing.contains("search_skills"));
    let text = all_text(last);
    assert!(text.contains("BODY-150: do step 150."));
    assert!(text.contains("SUMMARY: skill 150 was used."));
    assert!(
        !text.contains("Use skill 150\""),
        "the old messages are summarised"
    );
}

/// Old tool results are cleared first, oldest first, never an activation's
/// and never the latest; when that is enough there is no summary.
#[tokio::test(flavor = "multi_thread")]
async fn old_tool_results_are_cleared_first_and_activations_kept() {
    let mut model = Scripted::new().tool_call("a", "activate_skill", activate("trip:plan"));
    for i in 1..=6 {
        model = model.tool_call(
            format!("r{i}"),
            "files_read",
            json!({"arguments": format!("part {i}")}),
        );
    }
    let model = model.text("All read.");
    let options = options(trip_catalog(1_500), &model).compaction(
        CompactionPolicy::new()
            .context_window(10_000)
            .keep_tool_results(1),
    );
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, events) = ask(&mut agent, "Read the six parts").await;
    assert_eq!(answer.unwrap(), "All read.");
    let compacted = compactions(&events);
    assert!(!compacted.is_empty(), "{events:?}");
    assert!(compacted.iter().all(|c| c.summary.is_none()));
    let (summaries, requests) = split(model.requests());
    assert!(summaries.is_empty(), "clearing was enough: no summary");

    let last = requests.last().unwrap();
    let results = skillkit_tests::agent::results_in(last);
    assert_eq!(results.len(), 7, "every call keeps a result");
    assert!(
        results[0].content.contains("PLAN-BODY"),
        "the activation is kept"
    );
    assert!(
        results[1].content.contains("was cleared"),
        "{:?}",
        results[1]
    );
    assert!(
        results[6].content.starts_with("READ-6"),
        "the latest is kept"
    );
}

/// A compaction is a session item: a new agent over the session sends the
/// compacted conversation. Another writer's append while the summary was
/// made is not hidden: the compaction is made again over it.
#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_is_stored_and_made_again_over_an_append_made_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(dir.path());
    let memory = Memory::new();
    memory.put(Skill::new("trip:plan", "Plan.").with_body("PLAN-BODY: day by day."));
    let catalog = skillkit_tests::agent::catalog(&memory);

    let appended = Arc::new(AtomicUsize::new(0));
    let other = store.clone();
    let once = Arc::clone(&appended);
    let model = Scripted::new()
        .tool_call("1", "activate_skill", activate("trip:plan"))
        .text("Planned.")
        .text("FIRST SUMMARY")
        .text("SECOND SUMMARY")
        .on_request(move |request| {
            if system(request).starts_with(SUMMARISE) && once.fetch_add(1, Ordering::SeqCst) == 0 {
                // Another process writes to the session meanwhile.
                tokio::task::block_in_place(|| {
                    tokio::runtime::Handle::current().block_on(async {
                        let version = other.load("trip", Some(0)).await.unwrap().version;
                        other
                            .append("trip", version, &[Message::user("FOREIGN: also Porto")])
                            .await
                            .unwrap();
                    })
                });
            }
        });
    let mut agent = start_agent(
        lead(),
        options(catalog.clone(), &model).session(store.clone(), "trip"),
    )
    .unwrap();
    ask(&mut agent, "Plan Lisbon").await.0.unwrap();
    let compaction = within("the compaction", agent.compact(None, |_| {}))
        .await
        .unwrap();
    assert_eq!(compaction.summary.as_deref(), Some("SECOND SUMMARY"));
    let (summaries, _) = split(model.requests());
    assert_eq!(summaries.len(), 2);
    assert!(all_text(&summaries[1]).contains("FOREIGN: also Porto"));

    let items = store.load("trip", None).await.unwrap().items;
    let foreign = items
        .iter()
        .position(|i| i.message == Message::user("FOREIGN: also Porto"))
        .unwrap();
    let compacted = items
        .iter()
        .position(|i| matches!(&i.message, Message::Compaction(_)))
        .unwrap();
    assert!(foreign < compacted);
    assert_eq!(
        items
            .iter()
            .filter(|i| matches!(&i.message, Message::Compaction(_)))
            .count(),
        1
    );
    drop(agent);

    // A new agent over the session sends the compacted conversation.
    let resumed = Scripted::new().text("Back.");
    let mut agent = start_agent(lead(), options(catalog, &resumed).session(store, "trip")).unwrap();
    ask(&mut agent, "Where were we?").await.0.unwrap();
    let text = all_text(&resumed.requests()[0]);
    assert!(text.contains("SECOND SUMMARY") && text.contains("PLAN-BODY: day by day."));
    assert!(!text.contains("Plan Lisbon"), "{text}");
}

/// A summary that fails leaves the conversation as it was: a warning, and
/// the request goes out whole.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_summary_is_a_warning_and_the_conversation_goes_on() {
    let model = Scripted::new()
        .tool_call("1", "files_read", json!({"arguments": "big"}))
        .error(LlmError::Other {
            provider: "scripted".into(),
            message: "overloaded".into(),
        })
        .text("Read it.");
    let options = options(trip_catalog(8_000), &model).compaction(
        CompactionPolicy::new()
            .context_window(4_000)
            .clear_tool_results(false),
    );
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, events) = ask(&mut agent, "Read it").await;
    assert_eq!(answer.unwrap(), "Read it.");
    assert!(events.iter().any(|e| matches!(&e.kind,
        EventKind::Warning { message } if message.contains("could not be compacted") && message.contains("overloaded"))));
    assert!(compactions(&events).is_empty());
    assert!(
        !agent
            .history()
            .messages
            .iter()
            .any(|m| matches!(m, Message::Compaction(_)))
    );
    let last = model.requests().pop().unwrap();
    assert!(all_text(&last).contains("READ-1"));
}

/// After each request the agent says how full the window is.
#[tokio::test(flavor = "multi_thread")]
async fn each_request_reports_how_full_the_window_is() {
    let model = Scripted::new().text("Hi.");
    let options = options(Catalog::builder().build(), &model).compaction(
        CompactionPolicy::new()
            .context_window(50_000)
            .at_percent(60),
    );
    let mut agent = start_agent(lead(), options).unwrap();
    let (_, events) = ask(&mut agent, "Hello there").await;
    let used = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Context(used) => Some(*used),
            _ => None,
        })
        .expect("a context event");
    assert_eq!(used.window, 50_000);
    assert_eq!(used.compact_at, Some(30_000));
    assert!(used.tokens > 0 && used.percent() < 1);
}

/// By option, the Anthropic API clears old tool results itself: the request
/// carries the `clear_tool_uses` edit (activations excluded) and its beta
/// header; the OpenAI-compatible adapter sends nothing of it.
#[tokio::test(flavor = "multi_thread")]
async fn the_anthropic_api_can_clear_tool_results_itself() {
    let server = Server::start(vec![Reply::sse(anthropic_answer("Hi.", &[], 0))]).await;
    let registry = Registry::empty().with(
        "anthropic",
        Anthropic::builder()
            .base_url(&server.base_url)
            .api_key("test-key")
            .retry(RetryPolicy::none())
            .build(),
    );
    let options = AgentOptions::new(trip_catalog(10))
        .registry(registry)
        .model("anthropic://claude-sonnet-4-6")
        .compaction(
            CompactionPolicy::new()
                .server_clearing(true)
                .keep_tool_results(4),
        );
    let mut agent = start_agent(lead(), options).unwrap();
    ask(&mut agent, "Hello").await.0.unwrap();
    let received = &server.received()[0];
    assert_eq!(
        received.header("anthropic-beta"),
        Some("context-management-2025-06-27")
    );
    let edit = &received.json()["context_management"]["edits"][0];
    assert_eq!(edit["type"], "clear_tool_uses_20250919");
    assert_eq!(edit["keep"], json!({"type": "tool_uses", "value": 4}));
    assert_eq!(edit["exclude_tools"], json!(["activate_skill"]));
    // Past half the compaction size: 80% of 200,000, halved.
    assert_eq!(
        edit["trigger"],
        json!({"type": "input_tokens", "value": 80_000})
    );

    let server = Server::start(vec![Reply::sse(skillkit_tests::llm::openai_text("Hi."))]).await;
    let registry = Registry::empty().with(
        "openai",
        skillkit::llm::openai::OpenAi::builder()
            .base_url(format!("{}/v1", server.base_url))
            .api_key("test-key")
            .retry(RetryPolicy::none())
            .build(),
    );
    let options = AgentOptions::new(trip_catalog(10))
        .registry(registry)
        .model("openai://gpt-4o")
        .compaction(CompactionPolicy::new().server_clearing(true));
    let mut agent = start_agent(lead(), options).unwrap();
    ask(&mut agent, "Hello").await.0.unwrap();
    let body = server.received()[0].json();
    assert!(body.get("context_management").is_none(), "{body}");
}
