//! The tools of one catalog [`Snapshot`], as an agent or the MCP server
//! offers them: executable skills as tools of their own, `activate_skill`
//! for the skills read as instructions, sub-agents as tools taking `{task}`
//! (agents only), the tools of an agent's MCP servers (`<prefix>__<tool>`,
//! feature `mcp-client`) and the host's own tools (the MCP server's); the wire-safe
//! names of all of them; and an agent's system prompt with the
//! `<available_skills>` block. When an agent's skills do not all fit in its
//! listing budget, `activate_skill` takes any name, `search_skills` is
//! offered, and the system prompt is made for each turn
//! ([`listing`]).
//!
//! A set is built once per change of the catalog: [`Cache`] keeps the last
//! one and hands it out again while the snapshot holds the same skills and
//! sub-agents.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::agent_definition::AgentDefinition;
use crate::catalog::Snapshot;
use crate::dispatch::activate::{self, ACTIVATE_SKILL, Activatable, Hint};
use crate::dispatch::call_skill::{self, CALL_SKILL};
use crate::dispatch::listing::{self, Bounded};
use crate::dispatch::names::WireNames;
use crate::dispatch::script::RUN_SKILL_SCRIPT;
use crate::dispatch::search_skills::{self, SEARCH_SKILLS};
use crate::dispatch::trust::TrustPolicy;
use crate::kit::Skills;
use crate::skill::{Metadata, Skill};
use crate::tool::Tool;
use crate::tool::ToolDefinition;

/// The prefix of sub-agent tools' full names (`agent:files:summarize`, sent
/// as `agent_files_summarize`).
const AGENT_PREFIX: &str = "agent:";

/// Whose tools a set holds.
#[cfg_attr(not(feature = "agent"), allow(dead_code))]
pub(crate) enum Scope<'a> {
    /// An agent's: the skills and sub-agents its definition allows;
    /// `activate_skill` reaches the knowledge skills, all listed in the
    /// system prompt; the `allowed-tools` of skills whose kit `trust` trusts
    /// are granted when they are activated.
    Agent {
        definition: &'a AgentDefinition,
        trust: &'a TrustPolicy,
        /// Whether `run_skill_script` is offered (scripts enabled).
        scripts: bool,
        /// The tools of the agent's MCP servers this turn.
        #[cfg(feature = "mcp-client")]
        mcp: &'a [crate::dispatch::mcp::ServerTools],
        /// The listing's budget, in characters: past it, the system prompt
        /// lists some skills ([`Bounded`]) and `search_skills` is offered.
        budget: usize,
    },
    /// A server's: every skill; `activate_skill` reaches any skill by its
    /// full name; `own` are tools the host runs itself (a skill named like
    /// one of them, or like `activate_skill`, is reached through
    /// `activate_skill` only). `hint` says where the names of the skills are
    /// found, when a call names no skill.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    Server {
        own: &'a [ToolDefinition],
        hint: &'static str,
        /// Whether `run_skill_script` is offered (scripts enabled).
        scripts: bool,
    },
}

/// What a tool call reaches.
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
    /// A tool the host runs itself.
    Own,
    /// `run_skill_script`: a script of a skill `activate_skill` reaches.
    Script,
    /// A tool of an MCP server.
    #[cfg(feature = "mcp-client")]
    Mcp(crate::dispatch::mcp::McpTool),
    /// `search_skills`: the skills `activate_skill` reaches, searched.
    Search,
    /// `call_skill`: an executable skill not offered as a tool of its own.
    Call,
}

/// A tool call's tool, found in a [`ToolSet`].
pub(crate) struct Found<'a> {
    /// The tool's full name.
    pub(crate) full: &'a str,
    pub(crate) target: &'a Target,
    pub(crate) schema: &'a Value,
}

impl<'a> Found<'a> {
    /// The name the caller sees: the sub-agent's own name for a sub-agent
    /// tool, else the full name.
    pub(crate) fn display(&self) -> &'a str {
        self.full.strip_prefix(AGENT_PREFIX).unwrap_or(self.full)
    }
}

/// The tools of one snapshot.
pub(crate) struct ToolSet {
    pub(crate) names: WireNames,
    /// By full name (a skill's, `activate_skill`, `agent:<name>`, an own
    /// tool's), with the input schema.
    targets: HashMap<String, (Target, Value)>,
    /// What the model is told, with wire names, sorted by full name.
    pub(crate) definitions: Arc<[ToolDefinition]>,
    /// About the characters `definitions` take in a request (for the
    /// compaction's estimate, made once per set).
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    pub(crate) definitions_chars: usize,
    /// The full name of each of `definitions`, in the same order.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) full_names: Arc<[String]>,
    pub(crate) activatable: Activatable,
    /// The executable skills reached through `call_skill` (not offered as
    /// tools of their own: their definitions do not fit in the listing's
    /// budget), by full name, with their input schema.
    pub(crate) callable: HashMap<String, (Target, Value)>,
    /// The tools each skill pre-approves once activated (`allowed-tools`,
    /// only for skills of trusted kits), by the skill's full name.
    pub(crate) grants: HashMap<String, Vec<String>>,
    /// The skills whose kit the trust policy does not trust and whose
    /// origin is not trusted either (found in a project, imported, read from
    /// a database or a server; an agent's set only): their scripts and
    /// dynamic context are always asked.
    pub(crate) untrusted: HashSet<String>,
    /// An agent's system prompt: the definition's, then the skills block
    /// (when they all fit in the listing's budget).
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    pub(crate) system: String,
    /// An agent's listing when the skills do not all fit in its budget: the
    /// system prompt is then made for each turn from this.
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    pub(crate) listing: Option<Arc<Bounded>>,
}

impl ToolSet {
    /// The tools `scope` may use in `snapshot`.
    pub(crate) fn build(snapshot: &Snapshot, scope: &Scope<'_>) -> ToolSet {
        let mut targets = HashMap::new();
        let mut definitions: Vec<(String, ToolDefinition)> = Vec::new();
        let mut knowledge: Vec<Arc<Skill>> = Vec::new();
        let mut add = |full: String, target: Target, def: ToolDefinition| {
            targets.insert(full.clone(), (target, def.input_schema.clone()));
            definitions.push((full, def));
        };
        let allowed = |name: &str, kit: Option<&str>| match scope {
            Scope::Agent { definition, .. } => {
                definition.tools.is_empty()
                    || definition
                        .tools
                        .iter()
                        .any(|t| t == name || Some(t.as_ref()) == kit)
            }
            Scope::Server { .. } => true,
        };
        let reserved: Vec<&str> = match scope {
            Scope::Agent { .. } => Vec::new(),
            Scope::Server { own, scripts, .. } => own
                .iter()
                .map(|d| d.name.as_str())
                .chain([ACTIVATE_SKILL])
                .chain(scripts.then_some(RUN_SKILL_SCRIPT))
                .collect(),
        };
        let mut people_only = HashSet::new();
        let mut grants = HashMap::new();
        let mut untrusted = HashSet::new();
        let mut kit_trusted: HashMap<*const crate::kit::Kit, bool> = HashMap::new();
        // An agent's executable skills, offered once their size is known.
        let mut executables: Vec<(String, Target, ToolDefinition, Arc<Skill>)> = Vec::new();
        for entry in snapshot.entries() {
            let name = entry.skill.name.as_ref();
            if !allowed(name, Some(entry.kit.name.as_ref())) {
                continue;
            }
            // The model never sees a skill only people may run.
            if !entry.skill.model_invocable() {
                people_only.insert(name.to_owned());
                continue;
            }
            match entry.tool {
                Some(tool) if !reserved.contains(&name) => {
                    let mut def = tool.definition(entry.skill);
                    def.name = name.to_owned();
                    let target = Target::Skill {
                        skill: Arc::clone(entry.skill),
                        tool,
                        kit_metadata: entry.kit.metadata.clone(),
                    };
                    match scope {
                        Scope::Agent { .. } => {
                            executables.push((
                                name.to_owned(),
                                target,
                                def,
                                Arc::clone(entry.skill),
                            ));
                        }
                        Scope::Server { .. } => {
                            add(name.to_owned(), target, def);
                            knowledge.push(Arc::clone(entry.skill));
                        }
                    }
                }
                _ => {
                    if let Scope::Agent { trust, .. } = scope {
                        // Once per kit: a store-backed policy digests the
                        // kit's folder to answer.
                        let kit = std::ptr::from_ref(entry.kit);
                        let trusted = *kit_trusted
                            .entry(kit)
                            .or_insert_with(|| trust.trusts(entry.kit));
                        if !trusted {
                            // A folder the application (or the person, on
                            // the command line) named is not trusted to
                            // pre-approve tools, but its scripts follow
                            // the approval policies as any call does; a
                            // found, imported or served kit's are always
                            // asked.
                            if !entry.kit.origin.is_trusted() {
                                untrusted.insert(name.to_owned());
                            }
                        } else if !entry.skill.allowed_tools().is_empty() {
                            let tools = entry.skill.allowed_tools().iter();
                            grants.insert(name.to_owned(), tools.map(|t| t.to_string()).collect());
                        }
                    }
                    knowledge.push(Arc::clone(entry.skill));
                }
            }
        }
        let mut listing = None;
        let mut callable = HashMap::new();
        let (activatable, system) = match scope {
            Scope::Agent {
                definition,
                scripts,
                #[cfg(feature = "mcp-client")]
                mcp,
                budget,
                ..
            } => {
                // Executable skills are tools of their own while their
                // definitions fit in the listing's budget; past it, they are
                // listed and searched like the other skills, and called
                // through `call_skill`.
                let weight: usize = executables
                    .iter()
                    .map(|(_, _, def, _)| call_skill::weight(def))
                    .sum();
                if weight <= *budget {
                    for (full, target, def, _) in executables {
                        add(full, target, def);
                    }
                } else if !executables.is_empty() {
                    add(
                        CALL_SKILL.to_owned(),
                        Target::Call,
                        call_skill::definition(),
                    );
                    for (full, target, def, skill) in executables {
                        callable.insert(full, (target, def.input_schema));
                        knowledge.push(skill);
                    }
                }
                // A server's tools are allowed by their full name or the
                // server's prefix, as a kit's skills by the kit's name.
                #[cfg(feature = "mcp-client")]
                for server in *mcp {
                    for (full, def, tool) in server.definitions() {
                        if allowed(&full, Some(&server.prefix)) {
                            add(full, Target::Mcp(tool), def);
                        }
                    }
                }
                for agent in snapshot.agents() {
                    if agent.name == definition.name || !allowed(&agent.name, None) {
                        continue;
                    }
                    let full = format!("{AGENT_PREFIX}{}", agent.name);
                    add(full, Target::Agent(Arc::clone(agent)), agent_tool(agent));
                }
                let head = &definition.system_prompt;
                let whole = listing::whole(head, &knowledge, *budget);
                if !knowledge.is_empty() {
                    // All listed, the model may name only those; else any.
                    let names = whole
                        .as_ref()
                        .map(|_| knowledge.iter().map(|s| s.name.as_ref()).collect());
                    let def = activate::definition(names);
                    add(ACTIVATE_SKILL.to_owned(), Target::Activate, def);
                    if whole.is_none() {
                        add(
                            SEARCH_SKILLS.to_owned(),
                            Target::Search,
                            search_skills::definition(),
                        );
                    }
                    if *scripts {
                        let def = crate::dispatch::script::tool::definition();
                        add(RUN_SKILL_SCRIPT.to_owned(), Target::Script, def);
                    }
                }
                let hint = match whole {
                    Some(_) => Hint::ListNames,
                    None => Hint::Suggest,
                };
                let system = match whole {
                    Some(system) => system,
                    None => {
                        listing = Some(Arc::new(Bounded::new(head, knowledge.clone(), *budget)));
                        String::new()
                    }
                };
                (Activatable::new(knowledge, people_only, hint), system)
            }
            Scope::Server { own, hint, scripts } => {
                for def in *own {
                    add(def.name.clone(), Target::Own, def.clone());
                }
                let def = activate::definition(None);
                add(ACTIVATE_SKILL.to_owned(), Target::Activate, def);
                if *scripts {
                    let def = crate::dispatch::script::tool::definition();
                    add(RUN_SKILL_SCRIPT.to_owned(), Target::Script, def);
                }
                (
                    Activatable::new(knowledge, people_only, Hint::Text(hint)),
                    String::new(),
                )
            }
        };
        definitions.sort_by(|a, b| a.0.cmp(&b.0));
        let names = WireNames::assign(definitions.iter().map(|(full, _)| full.as_str()));
        let (full_names, definitions): (Vec<String>, Vec<ToolDefinition>) = definitions
            .into_iter()
            .map(|(full, mut def)| {
                def.name = names.wire(&full).into_owned();
                (full, def)
            })
            .unzip();
        ToolSet {
            names,
            targets,
            definitions_chars: crate::dispatch::schema::tools_chars(&definitions),
            definitions: definitions.into(),
            full_names: full_names.into(),
            activatable,
            callable,
            grants,
            untrusted,
            system,
            listing,
        }
    }

    /// The tool the model's call of wire name `wire` reaches, if it is one of
    /// this set's.
    pub(crate) fn find(&self, wire: &str) -> Option<Found<'_>> {
        let full = self.names.full(wire)?;
        let (target, schema) = self.targets.get(full)?;
        Some(Found {
            full,
            target,
            schema,
        })
    }

    /// The wire name of full name `full` when it is an executable skill of
    /// this set.
    #[cfg(feature = "mcp")]
    pub(crate) fn executable_wire<'a>(
        &'a self,
        full: &'a str,
    ) -> Option<std::borrow::Cow<'a, str>> {
        match self.targets.get(full) {
            Some((Target::Skill { .. }, _)) => Some(self.names.wire(full)),
            _ => None,
        }
    }

    /// The wire names the model may call, for an "unknown tool" result.
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    pub(crate) fn wire_names(&self) -> Vec<&str> {
        self.definitions.iter().map(|d| d.name.as_str()).collect()
    }
}

/// What a [`ToolSet`] was built from: the identity of every kit's skills and
/// sub-agents in a snapshot. Providers hand out the same `Arc`s while nothing
/// changed (a changed file, a `put`, an import make new ones), so an equal key
/// means the same tools, and the set is reused instead of rebuilt, without
/// asking the providers for the tools again. A provider that changes which
/// code runs a skill serves a new skill value with it (as
/// [`Memory::put_tool`](crate::Memory::put_tool) does).
///
/// A kit whose skill list is the very list of the last query
/// ([`Skills::ptr_eq`]) is the same without looking at its skills, so an
/// unchanged catalog costs one comparison per kit, not per skill. The key
/// holds the lists and `Arc`s themselves (not their addresses), so a value
/// freed after a change can never be mistaken for a new one allocated at its
/// place.
struct Key {
    kits: Vec<(Skills, Vec<Arc<AgentDefinition>>)>,
    /// The tool list of each MCP server (a session lists anew, into a new
    /// `Arc`, only when the server's tools changed).
    #[cfg(feature = "mcp-client")]
    mcp: Vec<Arc<[rmcp::model::Tool]>>,
}

impl Key {
    fn of(snapshot: &Snapshot, scope: &Scope<'_>) -> Key {
        #[cfg(not(feature = "mcp-client"))]
        let _ = scope;
        Key {
            kits: snapshot
                .kits()
                .iter()
                .map(|kit| (kit.skills.clone(), kit.agents.clone()))
                .collect(),
            #[cfg(feature = "mcp-client")]
            mcp: mcp_lists(scope).cloned().collect(),
        }
    }

    /// Whether `snapshot` (and `scope`'s MCP tools) hold exactly the skills,
    /// sub-agents and MCP tools this key was taken from (compared in place:
    /// no allocation on the hot path).
    fn matches(&self, snapshot: &Snapshot, scope: &Scope<'_>) -> bool {
        fn same<T: ?Sized>(held: &[Arc<T>], now: &[Arc<T>]) -> bool {
            held.len() == now.len() && held.iter().zip(now).all(|(a, b)| Arc::ptr_eq(a, b))
        }
        #[cfg(not(feature = "mcp-client"))]
        let _ = scope;
        #[cfg(feature = "mcp-client")]
        {
            let mut now = mcp_lists(scope);
            let same_mcp = self
                .mcp
                .iter()
                .all(|a| now.next().is_some_and(|b| Arc::ptr_eq(a, b)))
                && now.next().is_none();
            if !same_mcp {
                return false;
            }
        }
        let kits = snapshot.kits();
        self.kits.len() == kits.len()
            && self.kits.iter().zip(kits).all(|((skills, agents), kit)| {
                (Skills::ptr_eq(skills, &kit.skills) || same(skills, &kit.skills))
                    && same(agents, &kit.agents)
            })
    }
}

/// The tool lists of `scope`'s MCP servers.
#[cfg(feature = "mcp-client")]
fn mcp_lists<'a>(scope: &'a Scope<'_>) -> impl Iterator<Item = &'a Arc<[rmcp::model::Tool]>> {
    let servers = match scope {
        Scope::Agent { mcp, .. } => *mcp,
        Scope::Server { .. } => &[],
    };
    servers.iter().map(|server| &server.tools)
}

/// The last [`ToolSet`] built, handed out again while the catalog holds the
/// same skills and sub-agents. Shared by the clones of whoever holds it.
#[derive(Default)]
pub(crate) struct Cache(Mutex<Option<(Key, Arc<ToolSet>)>>);

impl Cache {
    /// The tools of `snapshot` for `scope`: the last set when `snapshot`
    /// holds what it was built from, else a new one.
    pub(crate) fn get(&self, snapshot: &Snapshot, scope: &Scope<'_>) -> Arc<ToolSet> {
        let mut last = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((built_from, tools)) = &*last
            && built_from.matches(snapshot, scope)
        {
            return Arc::clone(tools);
        }
        let tools = Arc::new(ToolSet::build(snapshot, scope));
        *last = Some((Key::of(snapshot, scope), Arc::clone(&tools)));
        tools
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cache")
    }
}

fn agent_tool(agent: &AgentDefinition) -> ToolDefinition {
    ToolDefinition::new(
        format!("{AGENT_PREFIX}{}", agent.name),
        format!(
            "Delegate a task to the sub-agent `{}`: {} It works on its own and returns its answer.",
            agent.name,
            crate::prompt::shown_description(&agent.description)
        ),
        serde_json::json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "The task, with everything the sub-agent needs to know."}
            },
            "required": ["task"]
        }),
    )
}
