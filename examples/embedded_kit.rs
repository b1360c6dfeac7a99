//! A kit compiled into the binary with `#[derive(Kit)]`, registered in a
//! catalog beside a kit read from disk at run time, and one of its skills
//! executed.
//!
//! Run it with `cargo run -p skillkit-examples --example embedded_kit`.

use std::path::PathBuf;

use serde_json::json;
use skillkit::{Catalog, EmbeddedKit, Local, ToolExecution};
use skillkit_examples::FilesKit;

#[tokio::main]
async fn main() {
    let project = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let files = FilesKit {
        root: project.clone(),
    };
    if let Some(agent) = files.agent_definition() {
        println!("root agent `{}`: {}", agent.name, agent.description);
    }

    let catalog = Catalog::builder()
        .provider(files)
        .provider(Local::new(project.join("kits/notes")))
        .build();
    for skill in catalog.list_skills().await {
        println!("{:<16} {}", skill.name, skill.description);
    }

    let snapshot = catalog.snapshot().await;
    let (Some(skill), Some(list)) = (snapshot.skill("files:list"), snapshot.tool("files:list"))
    else {
        eprintln!("files:list is not executable");
        return;
    };
    let execution = ToolExecution::new(skill.clone(), json!({ "arguments": "kits" }));
    println!("files:list kits -> {:?}", list.execute(execution).await);

    // The Local kit beside it serves knowledge skills, rendered for the model.
    // Its body is read from the file only now, when it is rendered.
    if let Some(summarize) = snapshot.skill("notes:summarize") {
        match summarize.render("groceries", None) {
            Ok(text) => println!("notes:summarize -> {}", text.trim()),
            Err(e) => eprintln!("notes:summarize: {e}"),
        }
    }
}
