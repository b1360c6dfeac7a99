//! Skills in a database: an agent whose catalog holds the SQL provider. The
//! `notes` kit is imported from `examples/kits/notes` into a SQLite file; the
//! agent searches the notes; then another program (here: another connection
//! pool on the same file) inserts `house:release-notes`, and the agent uses it
//! on its very next turn.
//!
//! Offline: a scripted model plays the conversation. The same on PostgreSQL:
//! set `DATABASE_URL` to a `postgres://…` URL and add
//! `--features skillkit/postgres`.
//!
//! ```text
//! cargo run -p skillkit-examples --example database_provider
//! ```

use std::path::PathBuf;

use serde_json::json;
use skillkit::agent::{AgentEvent, AgentOptions, EventKind, start_agent};
use skillkit::llm::{Registry, Scripted};
use skillkit::{AgentDefinition, Catalog, Local, Skill, Sql};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let dir = std::env::temp_dir().join(format!("skillkit-database-{}", std::process::id()));
    let result = run(&dir).await;
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(dir: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| format!("sqlite://{}", dir.join("skills.db").display()));

    // The agent's side: a catalog over the database.
    let sql = Sql::open(&url)?;
    let catalog = Catalog::builder().provider(sql.clone()).build();

    // Another program's side: its own connections to the same database.
    let admin = Sql::open(&url)?;
    let kits = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kits");
    admin.import(&Local::new(kits.join("notes"))).await?;
    println!(
        "== imported kits/notes into {}",
        skillkit::KitProvider::name(&sql)
    );

    let definition = catalog
        .root_agent()
        .await
        .unwrap_or_else(|| AgentDefinition::new("notes", "Keeps notes.").into());
    println!("== agent `{}`: {}", definition.name, definition.description);
    for skill in catalog.list_skills().await {
        println!("   {:<22} {}", skill.name, skill.description);
    }

    let registry = Registry::new().with("scripted", script());
    let options = AgentOptions::new(catalog)
        .registry(registry)
        .model("scripted://database")
        .max_turns(8);
    let mut agent = start_agent(definition, options)?;

    let messages = [
        "What did I write about the quarterly report?",
        "Write release notes for version 0.2 in our house style.",
    ];
    for (n, message) in messages.into_iter().enumerate() {
        if n == 1 {
            // Inserted while the agent runs, by the other program: the
            // agent's catalog sees it on its next query.
            let revision = admin
                .put_skill(
                    "house",
                    &Skill::new(
                        "release-notes",
                        "Write release notes in the team's house style. Use for release notes.",
                    )
                    .with_body(
                        "Write release notes for $ARGUMENTS: one line per change, newest \
                         first, each starting with a verb.",
                    ),
                )
                .await?;
            println!("\n== inserted `house:release-notes` (revision {revision})");
        }
        println!("\n> {message}");
        match agent.ask(message, show).await {
            Ok(answer) => println!("{answer}"),
            Err(error) => println!("== error: {error}"),
        }
    }
    Ok(())
}

/// Shows each tool call and result on one line.
fn show(event: &AgentEvent) {
    match &event.kind {
        EventKind::ToolCallComplete { name, input, .. } => println!("  -> {name} {input}"),
        EventKind::ToolResult {
            name,
            content,
            is_error,
            ..
        } => {
            let mark = if *is_error { "error" } else { "ok" };
            let flat = content.split_whitespace().collect::<Vec<_>>().join(" ");
            let shown: String = flat.chars().take(100).collect();
            println!("  <- {name} {mark}: {shown}…");
        }
        _ => {}
    }
}

/// What the model answers, request by request.
fn script() -> Scripted {
    Scripted::new()
        .tool_call(
            "call_1",
            "activate_skill",
            json!({"name": "notes:search", "arguments": "quarterly report"}),
        )
        .text("Two notes mention it: \"Q3 report\" (due Friday) and \"Budget\" (the totals).")
        .tool_call(
            "call_2",
            "activate_skill",
            json!({"name": "house:release-notes", "arguments": "version 0.2"}),
        )
        .text(
            "Release notes, 0.2:\n- Add skills kept in a database.\n- Fix the total of an empty cart.",
        )
}
