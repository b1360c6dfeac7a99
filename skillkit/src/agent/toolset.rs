//! One turn's tools, built from a catalog [`Snapshot`]: executable skills as
//! model tools, knowledge skills behind ONE `activate_skill` tool, sub-agents
//! as tools taking `{task}`; the wire-safe names of all of them; and the
//! system prompt with the `<available_skills>` block.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent::names::WireNames;
use crate::agent_definition::AgentDefinition;
use crate::catalog::Snapshot;
use crate::llm::ToolDefinition;
use crate::skill::{BodyError, Metadata, Skill};
use crate::tool::Tool;

/// The name of the tool that activates knowledge skills.
pub const ACTIVATE_SKILL: &str = "activate_skill";

/// The prefix of sub-agent tools' full names (`agent:files:summarize`, sent
/// as `agent_files_summarize`).
const AGENT_PREFIX: &str = "agent:";

/// The most file names listed beside an activated skill.
const MAX_LISTED_FILES: usize = 100;

/// What a tool call of this turn reaches.
#[derive(Clone)]
pub(crate) enum Target {
    /// An executable skill and the code its provider binds to it.
    Skill {
        skill: Arc<Skill>,
        tool: Arc<dyn Tool>,
        kit_metadata: Metadata,
    },
    /// `activate_skill`.
    Activate,
    /// A sub-agent.
    Agent(Arc<AgentDefinition>),
}

/// The tools of one turn.
pub(crate) struct ToolSet {
    pub(crate) names: WireNames,
    /// By full name (a skill's, `activate_skill`, `agent:<name>`), with the
    /// input schema.
    targets: HashMap<String, (Target, Value)>,
    /// What the model is told, with wire names, sorted by full name.
    pub(crate) definitions: Arc<[ToolDefinition]>,
    /// The knowledge skills, by full name.
    knowledge: HashMap<String, Arc<Skill>>,
    /// The system prompt: the definition's, then the skills block.
    pub(crate) system: String,
}

/// What a [`ToolSet`] was built from: the identity of every skill and
/// sub-agent of a snapshot. Providers hand out the same `Arc`s while nothing
/// changed (a changed file, a `put`, an import make new ones), so an equal key
/// means the same tools, and the set is reused instead of rebuilt, without
/// asking the providers for the tools again. A provider that changes which
/// code runs a skill serves a new skill value with it (as
/// [`Memory::put_tool`](crate::Memory::put_tool) does).
///
/// The key holds the `Arc`s themselves (not their addresses), so a skill freed
/// after a change can never be mistaken for a new one allocated at its place.
#[derive(Default)]
pub(crate) struct Key {
    skills: Vec<Arc<Skill>>,
    agents: Vec<Arc<AgentDefinition>>,
}

impl Key {
    /// The key of `snapshot`.
    pub(crate) fn of(snapshot: &Snapshot) -> Key {
        Key {
            skills: snapshot.skills().cloned().collect(),
            agents: snapshot.agents().cloned().collect(),
        }
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        fn same<T>(a: &[Arc<T>], b: &[Arc<T>]) -> bool {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| Arc::ptr_eq(a, b))
        }
        same(&self.skills, &other.skills) && same(&self.agents, &other.agents)
    }
}

impl ToolSet {
    /// The tools `definition` may use in `snapshot`.
    pub(crate) fn build(snapshot: &Snapshot, definition: &AgentDefinition) -> ToolSet {
        let allowed = |name: &str, kit: Option<&str>| {
            definition.tools.is_empty()
                || definition
                    .tools
                    .iter()
                    .any(|t| t == name || Some(t.as_ref()) == kit)
        };
        let mut targets = HashMap::new();
        let mut definitions: Vec<(String, ToolDefinition)> = Vec::new();
        let mut knowledge: Vec<Arc<Skill>> = Vec::new();
        for entry in snapshot.entries() {
            let name = entry.skill.name.as_ref();
            if !allowed(name, Some(entry.kit.name.as_ref())) {
                continue;
            }
            match entry.tool {
                Some(tool) => {
                    let mut def = tool.definition(entry.skill);
                    def.name = name.to_owned();
                    let target = Target::Skill {
                        skill: Arc::clone(entry.skill),
                        tool,
                        kit_metadata: entry.kit.metadata.clone(),
                    };
                    targets.insert(name.to_owned(), (target, def.input_schema.clone()));
                    definitions.push((name.to_owned(), def));
                }
                None => knowledge.push(Arc::clone(entry.skill)),
            }
        }
        for agent in snapshot.agents() {
            if agent.name == definition.name || !allowed(&agent.name, None) {
                continue;
            }
            let full = format!("{AGENT_PREFIX}{}", agent.name);
            let def = agent_tool(agent);
            targets.insert(
                full.clone(),
                (Target::Agent(Arc::clone(agent)), def.input_schema.clone()),
            );
            definitions.push((full, def));
        }
        if !knowledge.is_empty() {
            let def = activate_tool(&knowledge);
            targets.insert(
                ACTIVATE_SKILL.to_owned(),
                (Target::Activate, def.input_schema.clone()),
            );
            definitions.push((ACTIVATE_SKILL.to_owned(), def));
        }
        definitions.sort_by(|a, b| a.0.cmp(&b.0));
        let names = WireNames::assign(definitions.iter().map(|(full, _)| full.as_str()));
        let definitions = definitions
            .into_iter()
            .map(|(full, mut def)| {
                def.name = names.wire(&full).into_owned();
                def
            })
            .collect();
        let system = system_prompt(definition, &knowledge);
        ToolSet {
            names,
            targets,
            definitions,
            knowledge: knowledge
                .into_iter()
                .map(|s| (s.name.to_string(), s))
                .collect(),
            system,
        }
    }

    /// The full name, target and input schema of the model's call of wire
    /// name `wire`, if it is one of this turn's tools.
    pub(crate) fn target(&self, wire: &str) -> Option<(&str, &Target, &Value)> {
        let full = self.names.full(wire)?;
        let (target, schema) = self.targets.get(full)?;
        Some((full, target, schema))
    }

    /// The name the caller sees for full name `full`: the sub-agent's own
    /// name for a sub-agent tool.
    pub(crate) fn display(full: &str) -> &str {
        full.strip_prefix(AGENT_PREFIX).unwrap_or(full)
    }

    /// The wire names the model may call, for an "unknown tool" result.
    pub(crate) fn wire_names(&self) -> Vec<&str> {
        self.definitions.iter().map(|d| d.name.as_str()).collect()
    }

    /// The result of `activate_skill {name, arguments}`.
    pub(crate) fn activate(&self, input: &Value, session_id: &str) -> Result<String, String> {
        let name = input.get("name").and_then(Value::as_str).unwrap_or("");
        let arguments = match input.get("arguments") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        };
        let skill = self.knowledge.get(name).ok_or_else(|| {
            let mut known: Vec<&str> = self.knowledge.keys().map(String::as_str).collect();
            known.sort_unstable();
            format!(
                "there is no knowledge skill `{name}`; activate one of: {}",
                known.join(", ")
            )
        })?;
        skill_content(skill, &arguments, session_id).map_err(|e| e.to_string())
    }
}

/// The rendered body of `skill` as `activate_skill` returns it: inside
/// `<skill_content name="…">`, with the skill's directory and the names of
/// the files beside its `SKILL.md` (read later, if at all). The body is read
/// now when it lives in its file.
pub(crate) fn skill_content(
    skill: &Skill,
    arguments: &str,
    session_id: &str,
) -> Result<String, BodyError> {
    let session = (!session_id.is_empty()).then_some(session_id);
    let body = skill.render(arguments, session)?;
    let mut out = format!("<skill_content name=\"{}\">\n", skill.name);
    out.push_str(body.trim_end());
    out.push('\n');
    if let Some(dir) = skill.dir() {
        let _ = write!(out, "\nSkill directory: {}\n", dir.display());
        let files = files_beside(dir);
        if !files.is_empty() {
            let _ = writeln!(
                out,
                "Files in it (paths relative to the skill directory; read one only when the \
                 instructions need it):"
            );
            for file in files {
                let _ = writeln!(out, "- {file}");
            }
        }
    }
    out.push_str("</skill_content>");
    Ok(out)
}

/// The files under `dir` other than `SKILL.md`, relative, sorted; hidden
/// entries skipped; at most [`MAX_LISTED_FILES`].
pub(crate) fn files_beside(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if out.len() >= MAX_LISTED_FILES {
                return;
            }
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() && depth < 4 => walk(root, &path, depth + 1, out),
                Ok(t) if t.is_file() => {
                    let relative = path.strip_prefix(root).unwrap_or(&path);
                    if relative != Path::new("SKILL.md") {
                        out.push(relative.display().to_string());
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, 0, &mut out);
    out
}

fn activate_tool(knowledge: &[Arc<Skill>]) -> ToolDefinition {
    let names: Vec<&str> = knowledge.iter().map(|s| s.name.as_ref()).collect();
    ToolDefinition::new(
        ACTIVATE_SKILL,
        "Load the full instructions of one of the skills listed in <available_skills>, when \
         the task matches its description. Returns the skill's instructions with the \
         arguments filled in.",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names, "description": "The skill's name."},
                "arguments": {"type": "string", "description": "Arguments for the skill, as text."}
            },
            "required": ["name"]
        }),
    )
}

fn agent_tool(agent: &AgentDefinition) -> ToolDefinition {
    ToolDefinition::new(
        format!("{AGENT_PREFIX}{}", agent.name),
        format!(
            "Delegate a task to the sub-agent `{}`: {} It works on its own and returns its answer.",
            agent.name, agent.description
        ),
        json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "The task, with everything the sub-agent needs to know."}
            },
            "required": ["task"]
        }),
    )
}

fn system_prompt(definition: &AgentDefinition, knowledge: &[Arc<Skill>]) -> String {
    let mut system = definition.system_prompt.trim_end().to_owned();
    if !knowledge.is_empty() {
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system.push_str(
            "The following skills provide specialized instructions for specific tasks. When a \
             task matches a skill's description, call the `activate_skill` tool with the \
             skill's name to load its full instructions before you act.\n\n",
        );
        system.push_str(&crate::prompt::available_skills(
            knowledge.iter().map(|s| &**s),
        ));
    }
    system
}
