//! The server's tools: `list_skills`, `activate_skill`, `read_skill_file`,
//! and each executable skill as a tool of its own, under a wire-safe name.
//! `list_skills` and `read_skill_file` only read, and say so
//! (`readOnlyHint`), as `activate_skill` does where scripts are not enabled;
//! where they are, an activation runs the skill's `` !`command` ``s, so it
//! claims nothing, as an executable skill's tool and `run_skill_script` do:
//! nothing tells what they do. `list_skills` declares its result
//! (`outputSchema`) and returns it as `structuredContent`, `{"skills":
//! [...]}`, besides the text (the JSON list) models read.
//! The set is the agent runtime's ([`ToolSet`], built once per change of the
//! catalog) and a call runs by the agent's path ([`dispatch::run`]); this module
//! adds the server's own two tools and speaks MCP. A call that cannot be
//! carried out (an unknown skill, a missing or malformed argument, a path
//! leading outside the skill) is a tool result with `isError`, saying what to
//! do, so the model can fix its next call.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations,
};
use serde_json::{Value, json};

use crate::catalog::{Catalog, Snapshot};
use crate::dispatch::activate::ACTIVATE_SKILL;
use crate::dispatch::approval::{AgentPath, Approval, Approver, Decision, InputKind, ToolRequest};
use crate::dispatch::script::{RUN_SKILL_SCRIPT, Scripts};
use crate::dispatch::search_skills::{
    DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, wanted as search_wanted,
};
use crate::dispatch::toolset::{Scope as ToolScope, ToolSet};
use crate::dispatch::{self, Host, Ran};
use crate::llm::ToolCall;
use crate::skill::Skill;
use crate::tool::ToolDefinition;

use super::files::{self, Contents};
use super::resources;

/// The tool listing every skill.
pub(super) const LIST_SKILLS: &str = "list_skills";
/// The tool reading a file beside a skill's `SKILL.md`.
pub(super) const READ_SKILL_FILE: &str = "read_skill_file";

/// The result of `list_skills`, as its `outputSchema` declares it.
static LIST_SKILLS_OUTPUT: LazyLock<Arc<JsonObject>> = LazyLock::new(|| {
    let schema = json!({
        "type": "object",
        "properties": {
            "skills": {
                "type": "array",
                "description": "The skills, each with its full name, description, and the name of its own tool when it is executable.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                        "tool": {"type": "string"}
                    },
                    "required": ["name", "description"]
                }
            }
        },
        "required": ["skills"]
    });
    match schema {
        Value::Object(schema) => Arc::new(schema),
        _ => Arc::default(),
    }
});

/// The tools the server runs itself.
static OWN: LazyLock<[ToolDefinition; 2]> =
    LazyLock::new(|| [list_skills_tool(), read_file_tool()]);

/// Whose tools the server's set holds.
pub(super) fn scope(scripts: bool) -> ToolScope<'static> {
    ToolScope::Server {
        own: &OWN[..],
        hint: "call list_skills for the names of the skills",
        scripts,
    }
}

/// Every tool of `tools`, sorted by name.
pub(super) fn definitions(tools: &ToolSet) -> Vec<Tool> {
    let scripts = tools.find(RUN_SKILL_SCRIPT).is_some();
    tools
        .definitions
        .iter()
        .zip(tools.full_names.iter())
        .map(|(def, full)| {
            let schema = match &def.input_schema {
                Value::Object(schema) => schema.clone(),
                _ => JsonObject::from_iter([("type".to_owned(), json!("object"))]),
            };
            let tool = Tool::new(def.name.clone(), def.description.clone(), schema);
            let tool = match def.name.as_str() {
                LIST_SKILLS => tool.with_raw_output_schema(Arc::clone(&LIST_SKILLS_OUTPUT)),
                _ => tool,
            };
            let tool = match def.name.as_str() {
                LIST_SKILLS | READ_SKILL_FILE => {
                    tool.with_annotations(ToolAnnotations::new().read_only(true))
                }
                // Where scripts are enabled, an activation runs the skill's
                // `!`command``s: nothing tells what they do.
                ACTIVATE_SKILL if !scripts => {
                    tool.with_annotations(ToolAnnotations::new().read_only(true))
                }
                _ => tool,
            };
            match tools.executable_wire(full) {
                Some(_) => tool.with_title(full.clone()),
                None => tool,
            }
        })
        .collect()
}

/// The result of `request` (JSON-RPC request `id`): `Err` only for a tool
/// this server does not have (a protocol error, as MCP asks).
pub(super) async fn call(
    catalog: &Catalog,
    tools: &ToolSet,
    snapshot: &Snapshot,
    request: CallToolRequestParams,
    id: String,
    timeout: Duration,
    scripts: Option<&Scripts>,
) -> Result<CallToolResult, ErrorData> {
    let found = tools.find(&request.name).ok_or_else(|| {
        ErrorData::invalid_params(
            format!(
                "there is no tool `{}`; tools/list gives the tools of this server",
                request.name
            ),
            None,
        )
    })?;
    let input = Value::Object(request.arguments.unwrap_or_default());
    let call = ToolCall::new(id, request.name.to_string(), input);
    let host = Server {
        catalog,
        snapshot,
        tools,
        timeout,
        path: AgentPath::root(),
        scripts,
    };
    let result = match dispatch::run(tools, &found, &call, &host).await {
        Ran::Done(result) => result,
        // The server runs no sub-agents; its tool set offers none.
        Ran::Agent(definition) => Err(format!(
            "this server does not run sub-agents such as `{}`",
            definition.name
        )),
        Ran::Own(name) => host.run_own(name, &call.input).await,
        // The server has no model to run a forked skill (`context: fork`)
        // on: it is activated in place, and the client's host decides how to
        // run it (its frontmatter is in `SKILL.md`). It asks nothing, so
        // there is nothing for the skill's `allowed-tools` to pre-approve.
        Ran::Activated(activation) => Ok(activation.content),
    };
    Ok(match result {
        Ok(text) if request.name == LIST_SKILLS => {
            let skills = serde_json::from_str::<Value>(&text).unwrap_or_default();
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(json!({ "skills": skills }));
            result
        }
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    })
}

/// The server as the host of a tool call: every call is allowed (the client
/// asks its user), nothing can be asked back, and the server's own tools
/// read the snapshot.
struct Server<'a> {
    catalog: &'a Catalog,
    snapshot: &'a Snapshot,
    tools: &'a ToolSet,
    timeout: Duration,
    path: AgentPath,
    scripts: Option<&'a Scripts>,
}

impl Approver for Server<'_> {
    fn path(&self) -> &AgentPath {
        &self.path
    }

    /// Every call is allowed: the client asks its user.
    fn decide(&self, _: &ToolRequest) -> Approval {
        Approval::Allow
    }

    async fn ask(&self, request: &ToolRequest, _: InputKind) -> Result<Decision, String> {
        if request.name == RUN_SKILL_SCRIPT {
            return Err(format!(
                "this server's operator has not allowed `{RUN_SKILL_SCRIPT}`, and there is no \
                 one to ask over MCP, so nothing was run (the operator allows it with \
                 `skillkit serve --allow {RUN_SKILL_SCRIPT}`)"
            ));
        }
        Err(format!(
            "`{}` asks for a decision before it goes on, which this server cannot ask over MCP",
            request.name
        ))
    }
}

impl Host for Server<'_> {
    /// A server call has no agent and no conversation.
    fn context(&self) -> crate::tool::ToolContext {
        crate::tool::ToolContext::default()
    }

    /// The server asks nothing, so nothing is pre-approved.
    fn granted(&self, _: &str, _: &str) -> bool {
        false
    }

    fn tool_timeout(&self) -> Duration {
        self.timeout
    }

    fn scripts(&self) -> Option<&Scripts> {
        self.scripts
    }

    fn catalog(&self) -> &Catalog {
        self.catalog
    }
}

impl Server<'_> {
    /// Runs one of the server's own tools (`list_skills`, `read_skill_file`).
    async fn run_own(&self, name: &str, input: &Value) -> Result<String, String> {
        match name {
            LIST_SKILLS => Ok(list_skills(self.catalog, self.snapshot, self.tools, input).await),
            _ => read_file(self.snapshot, self.tools, input),
        }
    }
}

/// Every skill's name and description (and tool name, when executable), as
/// a JSON array; not those only people run (`disable-model-invocation`).
/// With a `query`, the skills the catalog's search finds, best first, each
/// with its `score`; at most `limit` when the input gives one.
async fn list_skills(
    catalog: &Catalog,
    snapshot: &Snapshot,
    tools: &ToolSet,
    input: &Value,
) -> String {
    let limit = input
        .get("limit")
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let item = |skill: &Skill| {
        let mut item = json!({
            "name": skill.name,
            "description": crate::prompt::shown_description(&skill.description),
        });
        if let Some(wire) = tools.executable_wire(&skill.name) {
            item["tool"] = json!(wire);
        }
        item
    };
    let skills: Vec<Value> = match input.get("query").and_then(Value::as_str) {
        Some(query) if !query.trim().is_empty() => {
            let wanted = limit
                .unwrap_or(DEFAULT_SEARCH_LIMIT)
                .clamp(1, MAX_SEARCH_LIMIT);
            catalog
                .search_snapshot(snapshot, query, search_wanted(wanted))
                .await
                .into_iter()
                .filter(|hit| hit.skill.model_invocable())
                .take(wanted)
                .map(|hit| {
                    let mut found = item(&hit.skill);
                    found["score"] = json!(hit.score);
                    found
                })
                .collect()
        }
        _ => snapshot
            .skills()
            .filter(|skill| skill.model_invocable())
            .take(limit.unwrap_or(usize::MAX))
            .map(|skill| item(skill))
            .collect(),
    };
    Value::Array(skills).to_string()
}

/// The skill named by the `name` argument (its schema made it a string).
fn named_skill<'a>(snapshot: &'a Snapshot, input: &Value) -> Result<&'a Arc<Skill>, String> {
    let name = input.get("name").and_then(Value::as_str).unwrap_or("");
    snapshot.skill(name).ok_or_else(|| {
        format!("there is no skill `{name}`; call {LIST_SKILLS} for the names of the skills")
    })
}

/// `read_skill_file`: refused for a skill only people run, as
/// `activate_skill` refuses it (its files are its instructions too).
fn read_file(snapshot: &Snapshot, tools: &ToolSet, input: &Value) -> Result<String, String> {
    let skill = named_skill(snapshot, input)?;
    if !skill.model_invocable() {
        // The same answer as an activation of it.
        return Err(match tools.activatable.find(&skill.name) {
            Err(refused) => refused,
            Ok(_) => format!("`{}` is run by people only", skill.name),
        });
    }
    let path = input.get("path").and_then(Value::as_str).unwrap_or("");
    let dir = skill.dir().ok_or_else(|| {
        format!(
            "skill `{}` is not served from a folder, so there is no file beside it",
            skill.name
        )
    })?;
    let file = files::resolve(dir, path)?;
    match files::read(&file, path)? {
        Contents::Text(text) => Ok(text),
        Contents::Binary(_) => Err(format!(
            "`{path}` is not text; read it as the resource `{}`",
            resources::file_uri(skill, path)
        )),
    }
}

fn list_skills_tool() -> ToolDefinition {
    ToolDefinition::new(
        LIST_SKILLS,
        format!(
            "List every skill of this server: its full name and description (and its tool's \
             name when it is executable). With a `query` (a few words about the task, or a \
             skill's name), only the skills that match, best first, each with its `score`. \
             Activate one with {ACTIVATE_SKILL} when a task matches its description."
        ),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the task needs, in a few words; without it, every skill."},
                "limit": {"type": "integer", "description": "The most skills to return (with a query, at most 50; 10 unless given)."}
            }
        }),
    )
}

fn read_file_tool() -> ToolDefinition {
    ToolDefinition::new(
        READ_SKILL_FILE,
        format!(
            "Read a file beside a skill's SKILL.md (a script, a reference, a template), by its \
             path relative to the skill's folder, as {ACTIVATE_SKILL} lists them."
        ),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's full name."},
                "path": {"type": "string", "description": "The file's path, relative to the skill's folder."}
            },
            "required": ["name", "path"]
        }),
    )
}
