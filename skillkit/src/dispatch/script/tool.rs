//! `run_skill_script`: its definition and a call's input turned into a
//! script run, for the agent and the MCP server alike (the call itself goes
//! through the shared tool path, approval first).

use serde_json::{Value, json};

use super::{Scripts, run_script};
use crate::skill::Skill;
use crate::tool::ToolDefinition;

/// The name of the tool that runs a skill's scripts.
pub const RUN_SKILL_SCRIPT: &str = "run_skill_script";

/// The definition of `run_skill_script`.
pub(crate) fn definition() -> ToolDefinition {
    ToolDefinition::new(
        RUN_SKILL_SCRIPT,
        "Run a script that a skill ships (a file inside the skill's folder, such as \
         scripts/fill_form.py), when the skill's instructions say to. It runs with python3, \
         bash, sh or node (by its #! line or extension) in a working folder shared by this \
         conversation's scripts, sandboxed, and returns its exit code, stdout and stderr.",
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's full name."},
                "script": {"type": "string", "description": "The script's path, relative to the skill's folder."},
                "args": {"type": "array", "items": {"type": "string"}, "description": "Command-line arguments."},
                "stdin": {"type": "string", "description": "Text given on standard input."}
            },
            "required": ["skill", "script"]
        }),
    )
}

impl Scripts {
    /// Runs the script `input` names (`{skill, script, args, stdin}`, checked
    /// against [`definition`]'s schema) of `skill`: `Ok` with the result when
    /// it exits 0, else `Err` with the same layout or what went wrong.
    pub(crate) async fn call(&self, skill: &Skill, input: &Value) -> Result<String, String> {
        let Some(dir) = skill.dir() else {
            return Err(format!(
                "skill `{}` is not in a folder, so it has no scripts",
                skill.name
            ));
        };
        let script = input.get("script").and_then(Value::as_str).unwrap_or("");
        let args: Vec<String> = input
            .get("args")
            .and_then(Value::as_array)
            .map(|args| {
                args.iter()
                    .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let stdin = input.get("stdin").and_then(Value::as_str).unwrap_or("");
        let work = self.working_dir()?;
        let output = run_script(dir, script, &args, stdin, &work, &self.options)
            .await
            .map_err(|e| e.to_string())?;
        // On the call's `execute_tool` span: the script (a path inside its
        // skill), how it ended and the sandbox layers in force.
        let span = tracing::Span::current();
        if !span.is_disabled() {
            use crate::telemetry::attr;
            span.record(attr::SCRIPT, script);
            if let super::run::Ending::Exited(code) = output.ending {
                span.record(attr::SCRIPT_EXIT_CODE, i64::from(code));
            }
            let layers: Vec<&str> = output
                .sandbox
                .layers()
                .iter()
                .map(|layer| match layer {
                    super::Layer::Namespaces => "namespaces",
                    super::Layer::Landlock { .. } => "landlock",
                    super::Layer::Seccomp => "seccomp",
                })
                .collect();
            span.record(attr::SANDBOX, layers.join(",").as_str());
        }
        match output.success() {
            true => Ok(output.to_string()),
            false => Err(output.to_string()),
        }
    }
}
