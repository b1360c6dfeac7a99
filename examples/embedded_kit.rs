//! A kit compiled into the binary with `#[derive(Kit)]`, registered in a
//! catalog beside a kit read from disk at run time, and one of its skills
//! executed.
//!
//! Run it with `cargo run -p skillkit-examples --example embedded_kit`.

use std::path::{Component, Path, PathBuf};

use serde_json::json;
use skillkit::{
    Catalog, EmbeddedKit, Kit, Local, ProviderError, Skill, ToolExecution, ToolOutcome,
};

/// The skills of `kits/files` (parsed at build time, embedded in the binary),
/// executed against the folder `root`.
#[derive(Kit)]
#[kit(path = "kits/files", name = "files")]
struct FilesKit {
    root: PathBuf,
}

impl FilesKit {
    /// `relative` inside the root, refusing absolute paths and `..`.
    fn resolve(&self, relative: &str) -> Result<PathBuf, String> {
        let relative = Path::new(relative.trim());
        if relative
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            Ok(self.root.join(relative))
        } else {
            Err(format!(
                "`{}` is not a path inside the project folder",
                relative.display()
            ))
        }
    }
}

impl EmbeddedKit for FilesKit {
    // One kit, several skills: the execution carries the skill being called.
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        let path = match self.resolve(execution.arguments()) {
            Ok(path) => path,
            Err(message) => return ToolOutcome::error(message),
        };
        match execution.skill.bare_name() {
            "read" => match tokio::fs::read_to_string(&path).await {
                Ok(text) => ToolOutcome::ok(text),
                Err(e) => ToolOutcome::error(format!("cannot read `{}`: {e}", path.display())),
            },
            "list" => match std::fs::read_dir(&path) {
                Ok(entries) => {
                    let mut names: Vec<String> = entries
                        .flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect();
                    names.sort();
                    ToolOutcome::ok(names)
                }
                Err(e) => ToolOutcome::error(format!("cannot list `{}`: {e}", path.display())),
            },
            "root" => ToolOutcome::ok(self.root.display().to_string()),
            other => ToolOutcome::error(format!("the files kit has no skill `{other}`")),
        }
    }

    // An override that keeps the generated behaviour (the embedded kit) and
    // adds a skill known only at run time.
    async fn kits(&self) -> Result<Vec<Kit>, ProviderError> {
        let root = Skill::new(
            "files:root",
            format!(
                "Tell where the project folder is ({}).",
                self.root.display()
            ),
        );
        let mut kit = Self::embedded_kit().clone().with_skill(root);
        kit.agent = self.agent_definition();
        Ok(vec![kit])
    }
}

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
    if let Some(summarize) = snapshot.skill("notes:summarize") {
        println!(
            "notes:summarize -> {}",
            summarize.render("groceries", None).trim()
        );
    }
}
