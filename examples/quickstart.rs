//! The main job: load and validate the example kits, activate a skill, and let
//! a model answer with it, streamed.
//!
//! Offline by default: a scripted model answers. With `ANTHROPIC_API_KEY` set,
//! Claude answers (`SKILLKIT_MODEL` overrides the model URI).
//!
//! ```text
//! cargo run -p skillkit-examples --example quickstart
//! ```

use std::io::Write;

use futures::StreamExt;
use skillkit::llm::{Event, Message, Registry, Request, Scripted};
use skillkit::{Catalog, Local, prompt};

const DIFF: &str = "\
--- a/src/total.rs
+++ b/src/total.rs
@@ -1,3 +1,3 @@
 pub fn total(prices: &[u32]) -> u32 {
-    prices.iter().sum()
+    prices.iter().fold(0, |sum, p| sum + p) / prices.len() as u32
 }";

const OFFLINE_ANSWER: &str = "\
src/total.rs:2 — `total` now divides by `prices.len()`, so it returns an average, \
and panics on an empty slice — keep `prices.iter().sum()` or rename the function and \
handle the empty case.";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let kits = concat!(env!("CARGO_MANIFEST_DIR"), "/kits");
    let catalog = Catalog::builder().provider(Local::each(kits)).build();
    let snapshot = catalog.snapshot().await;

    println!("== {} kits from {kits}", snapshot.kits().len());
    for skill in snapshot.skills() {
        println!("   {:<24} {}", skill.name, skill.description);
    }
    for diagnostic in snapshot.diagnostics() {
        println!("   ! {diagnostic}");
    }

    // Strict Agent Skills validation (what `skillkit validate` does).
    let problems: Vec<_> = snapshot
        .skills()
        .filter_map(|skill| skill.dir())
        .flat_map(skillkit::parser::validate::skill_dir)
        .collect();
    println!("== validation: {} problems", problems.len());
    for problem in &problems {
        println!("   ! {problem}");
    }

    let skill = snapshot
        .skill("review:code-review")
        .ok_or("examples/kits/review/code-review/SKILL.md is missing")?;
    let task = skill.render(DIFF, Some("quickstart"));

    let (registry, model) = match std::env::var("ANTHROPIC_API_KEY") {
        Ok(_) => (
            Registry::new(),
            std::env::var("SKILLKIT_MODEL")
                .unwrap_or_else(|_| "anthropic://claude-sonnet-4-6?max_tokens=1024".into()),
        ),
        Err(_) => (
            Registry::new().with("scripted", Scripted::new().text(OFFLINE_ANSWER)),
            "scripted://offline".to_owned(),
        ),
    };
    println!("\n== {} answers with `{}`:\n", model, skill.name);

    let system = format!(
        "You are a code reviewer. These skills exist:\n{}",
        prompt::available_skills(snapshot.skills().map(|s| &**s))
    );
    let request = Request::new(vec![Message::system(system), Message::user(task)]);
    let mut events = registry.stream(&model, request).await?;
    let mut stdout = std::io::stdout();
    while let Some(event) = events.next().await {
        match event {
            Event::Delta { text } => {
                print!("{text}");
                stdout.flush()?;
            }
            Event::Usage(usage) => {
                println!(
                    "\n\n== tokens: {} in, {} out",
                    usage.input_tokens, usage.output_tokens
                )
            }
            Event::Done { stop_reason } => println!("== done: {}", stop_reason.as_str()),
            Event::Error(error) => return Err(error.into()),
            _ => {}
        }
    }
    Ok(())
}
