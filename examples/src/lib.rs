//! SkillKit examples: see the `[[example]]` targets in Cargo.toml. This
//! library holds what several examples share: the `files` kit compiled into
//! the binary.

use std::path::{Component, Path, PathBuf};

use skillkit::{EmbeddedKit, Kit, ProviderError, Skill, ToolExecution, ToolOutcome};

/// The skills of `kits/files` (parsed at build time, embedded in the binary),
/// executed against the folder `root`.
#[derive(Kit)]
#[kit(path = "kits/files", name = "files")]
pub struct FilesKit {
    /// The folder `files:list` and `files:read` work in.
    pub root: PathBuf,
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
