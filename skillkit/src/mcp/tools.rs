//! The server's tools: `list_skills`, `activate_skill`, `read_skill_file`,
//! and each executable skill as a tool of its own, under a wire-safe name.
//! A call that cannot be carried out (an unknown skill, a missing or
//! malformed argument, a path leading outside the skill) is a tool result
//! with `isError`, saying what to do, so the model can fix its next call.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};

use crate::agent::{ACTIVATE_SKILL, WireNames, check_input, skill_content};
use crate::catalog::Snapshot;
use crate::skill::{Metadata, Skill};
use crate::tool::{self, ToolContext, ToolExecution, ToolOutcome};

use super::files::{self, Contents};
use super::resources;

/// The tool listing every skill.
pub(super) const LIST_SKILLS: &str = "list_skills";
/// The tool reading a file beside a skill's `SKILL.md`.
pub(super) const READ_SKILL_FILE: &str = "read_skill_file";

const BUILTINS: [&str; 3] = [LIST_SKILLS, ACTIVATE_SKILL, READ_SKILL_FILE];

/// An executable skill of one snapshot.
struct Executable {
    skill: Arc<Skill>,
    tool: Arc<dyn tool::Tool>,
    kit_metadata: Metadata,
}

/// The tools of one snapshot: the built-in ones and the executable skills,
/// with the wire name of each.
pub(super) struct Tools {
    names: WireNames,
    executable: Vec<(String, Executable)>,
}

impl Tools {
    /// The tools of `snapshot`.
    pub(super) fn of(snapshot: &Snapshot) -> Tools {
        let executable: Vec<(String, Executable)> = snapshot
            .entries()
            .filter(|e| !BUILTINS.contains(&e.skill.name.as_ref()))
            .filter_map(|entry| {
                let tool = entry.tool?;
                Some((
                    entry.skill.name.to_string(),
                    Executable {
                        skill: Arc::clone(entry.skill),
                        tool,
                        kit_metadata: entry.kit.metadata.clone(),
                    },
                ))
            })
            .collect();
        let names = WireNames::assign(
            BUILTINS
                .iter()
                .copied()
                .chain(executable.iter().map(|(full, _)| full.as_str())),
        );
        Tools { names, executable }
    }

    /// The wire name of executable skill `full`, if it is one.
    pub(super) fn wire_name<'a>(&'a self, full: &'a str) -> Option<Cow<'a, str>> {
        self.executable
            .iter()
            .any(|(name, _)| name == full)
            .then(|| self.names.wire(full))
    }

    /// Every tool, sorted by name.
    pub(super) fn definitions(&self) -> Vec<Tool> {
        let mut tools = vec![list_skills_tool(), activate_tool(), read_file_tool()];
        for (full, executable) in &self.executable {
            let def = executable.tool.definition(&executable.skill);
            let schema = match def.input_schema {
                Value::Object(schema) => schema,
                _ => JsonObject::from_iter([("type".to_owned(), json!("object"))]),
            };
            let tool = Tool::new(self.names.wire(full).into_owned(), def.description, schema)
                .with_title(full.clone());
            tools.push(tool);
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }

    /// The result of `request`: `Err` only for a tool this server does not
    /// have (a protocol error, as MCP asks).
    pub(super) async fn call(
        &self,
        snapshot: &Snapshot,
        request: CallToolRequestParams,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let full = self.names.full(&request.name).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "there is no tool `{}`; tools/list gives the tools of this server",
                    request.name
                ),
                None,
            )
        })?;
        let outcome = match full {
            LIST_SKILLS => Ok(self.list_skills(snapshot)),
            ACTIVATE_SKILL => activate(snapshot, &arguments),
            READ_SKILL_FILE => read_file(snapshot, &arguments),
            _ => match self.executable.iter().find(|(name, _)| name == full) {
                Some((_, executable)) => execute(executable, arguments).await,
                None => Err(format!("there is no tool `{}`", request.name)),
            },
        };
        Ok(match outcome {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        })
    }

    /// Every skill's name and description (and tool name, when executable),
    /// as a JSON array.
    fn list_skills(&self, snapshot: &Snapshot) -> String {
        let skills: Vec<Value> = snapshot
            .skills()
            .map(|skill| {
                let mut item = json!({"name": skill.name, "description": skill.description});
                if let Some(wire) = self.wire_name(&skill.name) {
                    item["tool"] = json!(wire);
                }
                item
            })
            .collect();
        Value::Array(skills).to_string()
    }
}

/// The text argument `key` of a built-in tool: `Ok(None)` when absent (or
/// null), an error when it is not a string.
fn text(arguments: &JsonObject, key: &str) -> Result<Option<String>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(format!(
            "`{key}` must be a string, not {}",
            match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::Array(_) => "an array",
                _ => "an object",
            }
        )),
    }
}

/// The skill named by the `name` argument of `tool`.
fn named_skill<'a>(
    snapshot: &'a Snapshot,
    arguments: &JsonObject,
    tool: &str,
) -> Result<&'a Arc<Skill>, String> {
    let name = text(arguments, "name")?.ok_or_else(|| {
        format!("`{tool}` needs `name`: a skill's full name, as {LIST_SKILLS} gives it")
    })?;
    snapshot.skill(&name).ok_or_else(|| {
        format!("there is no skill `{name}`; call {LIST_SKILLS} for the names of the skills")
    })
}

fn activate(snapshot: &Snapshot, arguments: &JsonObject) -> Result<String, String> {
    let skill = named_skill(snapshot, arguments, ACTIVATE_SKILL)?;
    let args = text(arguments, "arguments")?.unwrap_or_default();
    skill_content(skill, &args, "").map_err(|e| e.to_string())
}

fn read_file(snapshot: &Snapshot, arguments: &JsonObject) -> Result<String, String> {
    let skill = named_skill(snapshot, arguments, READ_SKILL_FILE)?;
    let path = text(arguments, "path")?.ok_or_else(|| {
        format!(
            "`{READ_SKILL_FILE}` needs `path`: a file's path relative to the skill's folder, as \
             {ACTIVATE_SKILL} lists them"
        )
    })?;
    let dir = skill.dir().ok_or_else(|| {
        format!(
            "skill `{}` is not served from a folder, so there is no file beside it",
            skill.name
        )
    })?;
    let file = files::resolve(dir, &path)?;
    match files::read(&file, &path)? {
        Contents::Text(text) => Ok(text),
        Contents::Binary(_) => Err(format!(
            "`{path}` is not text; read it as the resource `{}`",
            resources::file_uri(skill, &path)
        )),
    }
}

async fn execute(executable: &Executable, arguments: JsonObject) -> Result<String, String> {
    let input = Value::Object(arguments);
    let def = executable.tool.definition(&executable.skill);
    if let Some(problem) = check_input(&def.input_schema, &input) {
        return Err(format!("{problem}; see the tool's input schema"));
    }
    let execution =
        ToolExecution::new(Arc::clone(&executable.skill), input).with_context(ToolContext {
            kit_metadata: executable.kit_metadata.clone(),
            ..ToolContext::default()
        });
    match tool::call(&*executable.tool, execution).await {
        ToolOutcome::Ok(Value::String(text)) => Ok(text),
        ToolOutcome::Ok(value) => Ok(value.to_string()),
        ToolOutcome::Error(message) => Err(message),
        ToolOutcome::Pending(_) => Err(format!(
            "`{}` asks for a decision before it goes on, which this server cannot ask over MCP",
            executable.skill.name
        )),
    }
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn list_skills_tool() -> Tool {
    Tool::new(
        LIST_SKILLS,
        "List every skill of this server: its full name and description (and its tool's name \
         when it is executable). Activate one with activate_skill when a task matches its \
         description.",
        schema(json!({"type": "object", "properties": {}})),
    )
}

fn activate_tool() -> Tool {
    Tool::new(
        ACTIVATE_SKILL,
        "Load the full instructions of a skill (a name from list_skills), with the arguments \
         filled in, and the names of the files beside it (read them with read_skill_file).",
        schema(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's full name."},
                "arguments": {"type": "string", "description": "Arguments for the skill, as text."}
            },
            "required": ["name"]
        })),
    )
}

fn read_file_tool() -> Tool {
    Tool::new(
        READ_SKILL_FILE,
        "Read a file beside a skill's SKILL.md (a script, a reference, a template), by its path \
         relative to the skill's folder, as activate_skill lists them.",
        schema(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's full name."},
                "path": {"type": "string", "description": "The file's path, relative to the skill's folder."}
            },
            "required": ["name", "path"]
        })),
    )
}
