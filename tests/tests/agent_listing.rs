//! The bounded skill listing: an agent over more skills than its listing
//! budget holds lists those that fit (used, pinned, relevant), says how many
//! more exist, offers `search_skills`, and takes any name in
//! `activate_skill` (with "did you mean" on a miss); under the budget the
//! system prompt and tools are exactly those of a catalog listed whole.

use skillkit_tests::agent::{ask, catalog, error_result, lead, options, outcomes, system, tool};
use skillkit_tests::llm::{Reply, Server};

use serde_json::{Value, json};
use skillkit::RetryPolicy;
use skillkit::agent::{
    ACTIVATE_SKILL, DEFAULT_LISTING_BUDGET, SEARCH_SKILLS, default_listing_budget, start_agent,
};
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::{Registry, Scripted};
use skillkit::{Catalog, Local, Memory, Skill};

/// `count` generated knowledge skills in kits of 100, each with a unique
/// number in its name.
fn generated(memory: &Memory, count: usize) {
    for n in 0..count {
        memory.put(
            Skill::new(
                format!("gen{}:task-{n}", n / 100),
                format!("Carries out generated task number {n} when a user asks for it."),
            )
            .with_body(format!("Do generated task {n}.")),
        );
    }
}

/// The `<name>`s of the `<available_skills>` block of `system`, in order.
fn listed(system: &str) -> Vec<String> {
    system
        .split("<name>\n")
        .skip(1)
        .map(|rest| rest.split('\n').next().unwrap_or("").to_owned())
        .collect()
}

/// The agent's own system prompt (`lead()`'s), which the listing follows.
const LEAD_PROMPT: &str = "You lead.";

#[tokio::test]
async fn over_the_budget_the_listing_fits_search_finds_and_activation_works() {
    let memory = Memory::new();
    generated(&memory, 10_000);
    let catalog = Catalog::builder()
        .provider(memory.clone())
        .provider(Local::each(skillkit_tests::corpus()))
        .build();
    let visible = catalog
        .snapshot()
        .await
        .skills()
        .filter(|s| s.model_invocable())
        .count();
    assert!(visible > 10_400, "the corpus loads: {visible}");
    let wanted = "obra__superpowers:brainstorming";
    let script = Scripted::new()
        .tool_call("c1", SEARCH_SKILLS, json!({"query": wanted, "limit": 5}))
        .tool_call("c2", ACTIVATE_SKILL, json!({"name": wanted}))
        .text("Done.");
    let mut agent = start_agent(lead(), options(catalog, &script)).unwrap();
    let (answer, events) = ask(&mut agent, "Help me design a new feature").await;
    assert_eq!(answer.unwrap(), "Done.");

    let requests = script.requests();
    let first = &requests[0];
    let prompt = system(first);
    // The scripted model's window is unknown: the fallback budget.
    assert!(
        prompt.chars().count() <= LEAD_PROMPT.len() + 2 + DEFAULT_LISTING_BUDGET,
        "the system prompt has {} characters",
        prompt.chars().count()
    );
    assert!(prompt.contains(SEARCH_SKILLS), "{prompt}");
    let shown = listed(prompt).len();
    assert!(shown > 0, "some skills fit: {prompt}");
    let more = visible - shown;
    assert!(
        prompt.contains(&format!("{more} more skills")),
        "the count of the rest: {prompt}"
    );
    // `search_skills` is offered; `activate_skill` takes any name.
    let search = tool(first, SEARCH_SKILLS);
    assert_eq!(search.input_schema["required"], json!(["query"]));
    let activate = tool(first, ACTIVATE_SKILL);
    assert!(
        activate.input_schema["properties"]["name"]
            .get("enum")
            .is_none()
    );
    let all_tools = serde_json::to_string(&first.tools).unwrap();
    assert!(
        all_tools.len() < 4_000,
        "{} bytes of tools",
        all_tools.len()
    );

    let results = outcomes(&events);
    assert!(!results[0].is_error, "{}", results[0].content);
    let hits: Vec<Value> = serde_json::from_str(&results[0].content).unwrap();
    assert!(!hits.is_empty() && hits.len() <= 5, "{hits:?}");
    assert_eq!(hits[0]["name"], wanted);
    assert!(
        hits[0]["description"]
            .as_str()
            .unwrap()
            .contains("creative work")
    );
    assert!(hits[0]["score"].is_number());
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {scores:?}"
    );
    assert!(!results[1].is_error, "{}", results[1].content);
    assert!(
        results[1]
            .content
            .starts_with(&format!("<skill_content name=\"{wanted}\">"))
    );
    // Once used, the skill is listed first.
    assert_eq!(listed(system(&requests[2]))[0], wanted);
}

#[tokio::test]
async fn a_missed_name_gets_did_you_mean() {
    let memory = Memory::new();
    generated(&memory, 300);
    let script = Scripted::new()
        .tool_call("c1", ACTIVATE_SKILL, json!({"name": "gen1:tsak-142"}))
        .text("Sorry.");
    let options = options(catalog(&memory), &script).listing_budget(1_000);
    let mut agent = start_agent(lead(), options).unwrap();
    let (_, events) = ask(&mut agent, "Do a task").await;
    let error = error_result(&events);
    assert!(
        error.contains("there is no skill `gen1:tsak-142`") && error.contains("did you mean"),
        "{error}"
    );
    assert!(error.contains("`gen1:task-142`"), "{error}");
    assert!(error.contains(SEARCH_SKILLS), "{error}");
    // Not every name: the answer is bounded too.
    assert!(error.len() < 500, "{error}");
}

#[tokio::test]
async fn used_then_pinned_then_relevant_skills_are_listed_first() {
    let memory = Memory::new();
    generated(&memory, 2_000);
    let script = Scripted::new()
        .tool_call("c1", ACTIVATE_SKILL, json!({"name": "gen3:task-342"}))
        .text("Done.");
    let options = options(catalog(&memory), &script)
        .listing_budget(2_000)
        .pin_skills(["gen9:task-950", "no:such-skill"]);
    let mut agent = start_agent(lead(), options).unwrap();
    let (answer, _) = ask(&mut agent, "Please run gen17:task-1717 for me").await;
    answer.unwrap();
    let requests = script.requests();
    let before = listed(system(&requests[0]));
    assert_eq!(
        before[..2],
        ["gen9:task-950", "gen17:task-1717"],
        "{before:?}"
    );
    let after = listed(system(&requests[1]));
    assert_eq!(
        after[..3],
        ["gen3:task-342", "gen9:task-950", "gen17:task-1717"],
        "{after:?}"
    );
    for request in &requests {
        assert!(system(request).chars().count() <= LEAD_PROMPT.len() + 2 + 2_000);
    }
}

#[tokio::test]
async fn under_the_budget_the_listing_is_exactly_the_whole_catalog() {
    let memory = Memory::new();
    memory.put(Skill::new("style:haiku", "Write a haiku."));
    memory.put(Skill::new("style:limerick", "Write a <limerick> & more."));
    memory.put(Skill::new("notes:todo", "Keep a to-do list."));
    let script = Scripted::new().text("Hi.");
    let mut agent = start_agent(lead(), options(catalog(&memory), &script)).unwrap();
    ask(&mut agent, "Hello").await.0.unwrap();
    let request = &script.requests()[0];
    let skills = [
        Skill::new("notes:todo", "Keep a to-do list."),
        Skill::new("style:haiku", "Write a haiku."),
        Skill::new("style:limerick", "Write a <limerick> & more."),
    ];
    let expected = format!(
        "You lead.\n\nThe following skills provide specialized instructions for specific tasks. \
         When a task matches a skill's description, call the `activate_skill` tool with the \
         skill's name to load its full instructions before you act.\n\n{}",
        skillkit::prompt::available_skills(&skills)
    );
    assert_eq!(system(request), expected);
    let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, [ACTIVATE_SKILL]);
    assert_eq!(
        request.tools[0].input_schema["properties"]["name"]["enum"],
        json!(["notes:todo", "style:haiku", "style:limerick"])
    );
}

#[tokio::test]
async fn the_budget_follows_the_models_context_window() {
    // 1% of a 200,000-token window at 4 characters a token.
    assert_eq!(default_listing_budget("claude-sonnet-4-6"), 8_000);
    assert_eq!(default_listing_budget("gpt-4o"), 5_120);
    assert_eq!(
        default_listing_budget("some-local-model"),
        DEFAULT_LISTING_BUDGET
    );
}

#[tokio::test]
async fn through_the_anthropic_adapter_the_request_stays_within_the_budget() {
    let memory = Memory::new();
    generated(&memory, 10_000);
    let body = [
        r#"event: message_start"#,
        r#"data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}"#,
        "",
        r#"event: content_block_start"#,
        r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        "",
        r#"event: content_block_delta"#,
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi."}}"#,
        "",
        r#"event: content_block_stop"#,
        r#"data: {"type":"content_block_stop","index":0}"#,
        "",
        r#"event: message_delta"#,
        r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}"#,
        "",
        r#"event: message_stop"#,
        r#"data: {"type":"message_stop"}"#,
        "",
        "",
    ]
    .join("\n");
    let server = Server::start(vec![Reply::sse(body)]).await;
    let registry = Registry::empty().with(
        "anthropic",
        Anthropic::builder()
            .base_url(&server.base_url)
            .api_key("test-key")
            .retry(RetryPolicy::none())
            .build(),
    );
    let options = skillkit::agent::AgentOptions::new(catalog(&memory))
        .registry(registry)
        .model("anthropic://claude-sonnet-4-6?max_tokens=1024");
    let mut agent = start_agent(lead(), options).unwrap();
    assert_eq!(ask(&mut agent, "Hello").await.0.unwrap(), "Hi.");
    let sent = server.received()[0].json();
    let system = sent["system"]
        .as_str()
        .or_else(|| sent["system"][0]["text"].as_str());
    let system = system.expect("a system prompt");
    let budget = default_listing_budget("claude-sonnet-4-6");
    assert!(
        system.chars().count() <= LEAD_PROMPT.len() + 2 + budget,
        "{} characters",
        system.chars().count()
    );
    let tools: Vec<&str> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&SEARCH_SKILLS), "{tools:?}");
    assert!(
        sent.to_string().len() < budget + 8_000,
        "{} bytes",
        sent.to_string().len()
    );
}
