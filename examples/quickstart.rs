//! The main job: an agent over one catalog that holds a kit compiled into the
//! binary (`files`), a kit read from disk (`examples/kits/review`) and a skill
//! put into memory at run time (`house:release-notes`). Over three messages it
//! activates a knowledge skill with arguments, calls a Rust tool, delegates to
//! a sub-agent, and uses the skill added while it runs.
//!
//! Offline by default: a scripted model plays the conversation. With
//! `ANTHROPIC_API_KEY` set, Claude answers; `SKILLKIT_MODEL=<uri>` picks any
//! model of the registry (`openai://gpt-4o-mini`, …).
//!
//! ```text
//! cargo run -p skillkit-examples --example quickstart
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use skillkit::agent::{AgentEvent, AgentOptions, EventKind, start_agent};
use skillkit::llm::{Registry, Scripted};
use skillkit::{AgentDefinition, Catalog, Local, Memory, Skill};
use skillkit_examples::FilesKit;

const DIFF: &str = "\
--- a/src/total.rs
+++ b/src/total.rs
@@ -1,3 +1,3 @@
 pub fn total(prices: &[u32]) -> u32 {
-    prices.iter().sum()
+    prices.iter().fold(0, |sum, p| sum + p) / prices.len() as u32
 }";

const SKILL_FILE: &str = "kits/review/code-review/SKILL.md";

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), skillkit::agent::AgentError> {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let memory = Memory::new();
    let catalog = Catalog::builder()
        .provider(FilesKit {
            root: examples.clone(),
        })
        .provider(Local::new(examples.join("kits/review")))
        .provider(memory.clone())
        .build();

    let (registry, model) = model();
    match &model {
        Some(uri) => println!("== model: {uri}"),
        None => println!(
            "== offline: a scripted model plays this conversation \
             (set ANTHROPIC_API_KEY or SKILLKIT_MODEL=<uri> for a real model)"
        ),
    }
    let model = model.unwrap_or_else(|| "scripted://quickstart".into());

    // The root agent of the compiled-in kit (its AGENT.md).
    let definition = catalog
        .root_agent()
        .await
        .unwrap_or_else(|| AgentDefinition::new("files", "Finds and reads files.").into());
    println!("== agent `{}`: {}", definition.name, definition.description);
    for skill in catalog.list_skills().await {
        println!("   {:<22} {}", skill.name, skill.description);
    }

    let options = AgentOptions::new(catalog)
        .registry(registry)
        .model(model)
        .max_turns(8);
    let mut agent = start_agent(definition, options)?;

    let messages = [
        format!("Review this change:\n{DIFF}"),
        format!("Read {SKILL_FILE}, then have the summarize agent sum it up."),
        "Write release notes for version 0.2 in our house style.".to_owned(),
    ];
    for (n, message) in messages.into_iter().enumerate() {
        if n == 2 {
            // A skill put into memory while the agent runs: callable next turn.
            memory.put(
                Skill::new(
                    "house:release-notes",
                    "Write release notes in the team's house style. Use for release notes.",
                )
                .with_body(
                    "Write release notes for $ARGUMENTS: one line per change, \
                     newest first, each starting with a verb.",
                ),
            );
            println!("\n== put `house:release-notes` into memory");
        }
        println!("\n> {}", message.lines().next().unwrap_or_default());
        let answer = agent.ask(message, show).await;
        if MID_LINE.swap(false, Ordering::Relaxed) {
            println!();
        }
        if let Err(error) = answer {
            println!("== error: {error}");
        }
    }
    let history = agent.history();
    println!(
        "\n== {} messages in the history of session {}",
        history.messages.len(),
        history.session_id
    );
    Ok(())
}

/// Whether the last thing printed was streamed text with no line end yet.
static MID_LINE: AtomicBool = AtomicBool::new(false);

/// Streams the root agent's text, and shows each tool call and result (of the
/// root and its sub-agents) on one line.
fn show(event: &AgentEvent) {
    let who = match event.agent.is_root() {
        true => String::new(),
        false => format!("[{}] ", event.agent),
    };
    if !matches!(event.kind, EventKind::Delta { .. }) && MID_LINE.swap(false, Ordering::Relaxed) {
        println!();
    }
    match &event.kind {
        EventKind::Delta { text } if event.agent.is_root() => {
            print!("{text}");
            let _ = std::io::stdout().flush();
            MID_LINE.store(!text.ends_with('\n'), Ordering::Relaxed);
        }
        EventKind::ToolCallComplete { name, input, .. } => {
            println!("  {who}-> {name} {}", one_line(&input.to_string(), 70));
        }
        EventKind::ToolResult {
            name,
            content,
            is_error,
            ..
        } => {
            let mark = if *is_error { "error" } else { "ok" };
            println!("  {who}<- {name} {mark}: {}", one_line(content, 70));
        }
        EventKind::Error(error) => println!("  {who}!! {error}"),
        _ => {}
    }
}

fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// The registry and model URI: `SKILLKIT_MODEL`, else Claude when
/// `ANTHROPIC_API_KEY` is set, else `None` and the scripted conversation.
fn model() -> (Registry, Option<String>) {
    if let Ok(uri) = std::env::var("SKILLKIT_MODEL") {
        return (Registry::new(), Some(uri));
    }
    if skillkit::llm::ApiKey::from_env("ANTHROPIC_API_KEY").is_some() {
        let uri = "anthropic://claude-sonnet-4-6?max_tokens=2048".to_owned();
        return (Registry::new(), Some(uri));
    }
    (Registry::new().with("scripted", script()), None)
}

/// What the model answers offline, request by request (the sub-agent's two
/// requests come between the parent's fourth and fifth).
fn script() -> Scripted {
    Scripted::new()
        // Message 1: activate a knowledge skill with the diff as its argument.
        .tool_call(
            "call_1",
            "activate_skill",
            json!({"name": "review:code-review", "arguments": DIFF}),
        )
        .text(
            "src/total.rs:2 — `total` now divides by `prices.len()`: it returns an average \
             and panics on an empty slice — keep `prices.iter().sum()`, or rename it and \
             handle the empty case.",
        )
        // Message 2: a Rust tool of the compiled-in kit, then the sub-agent.
        .tool_call("call_2", "files_read", json!({"arguments": SKILL_FILE}))
        .tool_call(
            "call_3",
            "agent_files_summarize",
            json!({"task": format!("Summarize {SKILL_FILE}")}),
        )
        .tool_call("call_4", "files_read", json!({"arguments": SKILL_FILE}))
        .text(
            "- A skill that reviews a unified diff.\n- Findings as file:line — problem — \
             suggestion.\n- Most severe first, or \"no findings\".",
        )
        .text(
            "The code-review skill reviews diffs and lists findings by severity; the \
             summarize agent's three bullets are above.",
        )
        // Message 3: the skill put into memory a moment ago.
        .tool_call(
            "call_5",
            "activate_skill",
            json!({"name": "house:release-notes", "arguments": "version 0.2"}),
        )
        .text("Release notes, 0.2:\n- Add agents that call skills as tools.\n- Fix the total of an empty cart.")
}
