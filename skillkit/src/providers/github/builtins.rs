//! The built-in kit `github`: `import`, `list`, `remove` and `refresh`, which
//! an agent calls as tools to manage skill repositories mid-conversation. The
//! [`GitHub`] provider executes them itself.

use std::time::SystemTime;

use serde_json::{Value, json};

use super::{GitHub, Imported};
use crate::kit::Kit;
use crate::skill::{Metadata, Skill};
use crate::tool::{Tool, ToolExecution, ToolOutcome};

/// The name of the built-in kit.
pub(crate) const KIT: &str = "github";

const SOURCE_HELP: &str = "`owner/repo[/path][@ref]`, for example `obra/superpowers` or \
                           `anthropics/skills/document-skills@main`";

/// The built-in kit.
pub(crate) fn kit() -> Kit {
    let source_schema = |what: &str| {
        json!({
            "type": "object",
            "properties": {
                "source": {
                    "type": "string",
                    "description": format!("{what}: {SOURCE_HELP}."),
                }
            },
            "required": ["source"],
            "additionalProperties": false,
        })
    };
    let mut metadata = Metadata::new();
    metadata.insert("provider".into(), "github".into());
    Kit {
        metadata,
        ..Kit::new(KIT)
            .with_skill(builtin(
                "import",
                "Import a skill repository from GitHub; its skills can be used from the next \
                 turn. Only allowed sources can be imported (`github:list` shows them). A source \
                 already imported is not downloaded again; use `github:refresh` to update it.",
                source_schema("The repository to import"),
            ))
            .with_skill(builtin(
                "list",
                "List the GitHub skill repositories imported so far, with their commit, and the \
                 sources allowed for import.",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ))
            .with_skill(builtin(
                "remove",
                "Remove an imported GitHub skill repository; its skills are gone from the next \
                 turn.",
                source_schema("The source, exactly as imported"),
            ))
            .with_skill(builtin(
                "refresh",
                "Update an imported GitHub skill repository to the latest commit of its branch \
                 or tag. Downloads only when the commit changed; if the update fails, the \
                 imported version stays.",
                source_schema("The source, exactly as imported"),
            ))
    }
}

fn builtin(name: &str, description: &str, schema: Value) -> Skill {
    let mut skill = Skill::new(format!("{KIT}:{name}"), description.to_owned())
        .with_body(description.to_owned());
    skill.extra_mut().insert("input_schema".into(), schema);
    skill
}

#[async_trait::async_trait]
impl Tool for GitHub {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        let command = execution.skill.bare_name().to_owned();
        if execution.skill.kit() != Some(KIT) {
            return ToolOutcome::error(format!(
                "the GitHub provider executes only its own skills (`{KIT}:import`, `{KIT}:list`, \
                 `{KIT}:remove`, `{KIT}:refresh`), not `{}`",
                execution.skill.name
            ));
        }
        let source = || source_of(&execution);
        let outcome = match command.as_str() {
            "list" => self.list_outcome().await,
            "import" => match source() {
                Ok(source) => self.import(&source).await.map(|done| imported(&done)),
                Err(message) => return ToolOutcome::error(message),
            },
            "refresh" => match source() {
                Ok(source) => self.refresh(&source).await.map(|done| imported(&done)),
                Err(message) => return ToolOutcome::error(message),
            },
            "remove" => match source() {
                Ok(source) => self.remove(&source).await.map(|()| {
                    json!({
                        "removed": source,
                        "message": format!(
                            "Removed `{source}`; its skills are gone from the next turn."
                        ),
                    })
                }),
                Err(message) => return ToolOutcome::error(message),
            },
            other => {
                return ToolOutcome::error(format!(
                    "`{KIT}:{other}` is not a GitHub command; use `{KIT}:import`, `{KIT}:list`, \
                     `{KIT}:remove` or `{KIT}:refresh`"
                ));
            }
        };
        match outcome {
            Ok(output) => ToolOutcome::ok(output),
            Err(error) => {
                tracing::info!(provider = "github", command = %command, "{error}");
                ToolOutcome::error(error.to_string())
            }
        }
    }
}

impl GitHub {
    async fn list_outcome(&self) -> Result<Value, super::GitHubError> {
        let sources = self.imported().await?;
        let allowed = self.allowed_sources();
        let listed: Vec<Value> = sources
            .iter()
            .map(|s| {
                json!({
                    "source": s.reference.to_string(),
                    "sha": s.sha,
                    "imported_at": unix_seconds(s.imported_at),
                })
            })
            .collect();
        let names: Vec<String> = sources
            .iter()
            .map(|s| format!("`{}`", s.reference))
            .collect();
        let message = if names.is_empty() {
            "No GitHub source is imported yet.".to_owned()
        } else {
            format!(
                "{} imported: {}.",
                count(names.len(), "source"),
                names.join(", ")
            )
        };
        let allowed_text = if allowed.is_empty() {
            " No source may be imported (allowed_sources is empty).".to_owned()
        } else {
            format!(" Sources that may be imported: {}.", allowed.join(", "))
        };
        Ok(json!({
            "sources": listed,
            "allowed_sources": allowed,
            "message": message + &allowed_text,
        }))
    }
}

/// The `source` of the input (`{"source": …}`, or the input as text).
fn source_of(execution: &ToolExecution) -> Result<String, String> {
    let source = execution
        .input
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or_else(|| execution.arguments())
        .trim();
    if source.is_empty() {
        return Err(format!(
            "`{}` needs a `source`: {SOURCE_HELP}",
            execution.skill.name
        ));
    }
    Ok(source.to_owned())
}

fn imported(done: &Imported) -> Value {
    let short = |sha: &str| sha.chars().take(12).collect::<String>();
    let skills = if done.skills.is_empty() {
        "no skills (agents only)".to_owned()
    } else {
        format!(
            "{}: {}",
            count(done.skills.len(), "skill"),
            done.skills.join(", ")
        )
    };
    let message = match &done.previous_sha {
        Some(previous) if *previous == done.sha => format!(
            "`{}` is up to date at commit {}; nothing was downloaded. {skills}.",
            done.kit,
            short(&done.sha)
        ),
        Some(previous) => format!(
            "Updated `{}` from commit {} to {}. {skills}. They can be used from the next turn.",
            done.kit,
            short(previous),
            short(&done.sha)
        ),
        None if !done.downloaded => format!(
            "`{}` was already imported at commit {} (use `{KIT}:refresh` to update it). {skills}.",
            done.kit,
            short(&done.sha)
        ),
        None => format!(
            "Imported `{}` at commit {}. {skills}. They can be used from the next turn.",
            done.kit,
            short(&done.sha)
        ),
    };
    let mut output = json!({
        "kit": done.kit,
        "sha": done.sha,
        "skills": done.skills,
        "downloaded": done.downloaded,
        "message": message,
    });
    if let Some(previous) = &done.previous_sha {
        output["previous_sha"] = previous.clone().into();
    }
    if !done.skipped.is_empty() {
        output["skipped"] = done.skipped.clone().into();
    }
    output
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn unix_seconds(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
