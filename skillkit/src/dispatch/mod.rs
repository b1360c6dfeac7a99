//! The tool path: one tool call, run to its result, by the one runner the
//! agent and the MCP server share. The input is checked against the tool's
//! schema, the approval verdict taken (and the caller's answer when it
//! asks), the tool run within its timeout, a pending result resumed, and the
//! outcome turned into the model's text. What differs between the two
//! callers is a [`Host`]; what only one of them does (a sub-agent, a forked
//! skill, the grants of an activated skill, the server's own tools) is handed
//! back to it as a [`Ran`].
//!
//! Also here, below both callers: the tools of a catalog snapshot
//! ([`toolset`]), the built-in tools (`activate_skill`, `search_skills`,
//! `call_skill`, `run_skill_script`), wire-safe names, input schemas, the
//! approval and trust policies, the skill scripts and their sandbox, and an
//! MCP server's tools as a caller's.

pub(crate) mod activate;
pub mod approval;
pub(crate) mod call_skill;
pub(crate) mod files;
pub(crate) mod listing;
#[cfg(feature = "mcp-client")]
#[cfg_attr(not(feature = "agent"), allow(dead_code))]
pub(crate) mod mcp;
pub(crate) mod names;
pub(crate) mod schema;
pub mod script;
pub(crate) mod search_skills;
pub(crate) mod toolset;
pub mod trust;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tracing::Instrument;

use crate::agent_definition::AgentDefinition;
use crate::catalog::Catalog;
use crate::llm::ToolCall;
use crate::skill::Skill;
use crate::tool::{self, ToolContext, ToolExecution, ToolOutcome};
use approval::{Approval, Approver, Decision, InputKind, ToolRequest};
use script::Scripts;
use toolset::{Found, Target, ToolSet};

/// How long one tool call may run, unless set (an agent's
/// `AgentOptions::tool_timeout`, a server's `McpServer::tool_timeout`).
#[cfg_attr(not(feature = "agent"), allow(unreachable_pub))]
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// Whoever a tool call is run for: the agent whose model made it, or the MCP
/// server a client called. Only what both provide: who approves its calls
/// ([`Approver`], all a skill's `` !`command` `` lines need), and the rest
/// of a call's surroundings.
pub(crate) trait Host: Approver {
    /// What a tool is told about its caller (the agent's name, the
    /// conversation's session id, which also fills `$SESSION_ID`); a server
    /// has neither.
    fn context(&self) -> ToolContext;
    /// Whether the skills activated so far pre-approve the tool of full name
    /// `full` (wire name `wire`); a server asks nothing, so nothing is.
    fn granted(&self, full: &str, wire: &str) -> bool;
    /// How long a tool may run.
    fn tool_timeout(&self) -> Duration;
    /// The scripts of this conversation, when `run_skill_script` is enabled.
    fn scripts(&self) -> Option<&Scripts>;
    /// The catalog `search_skills` searches.
    fn catalog(&self) -> &Catalog;
}

/// How far the tool path took a call.
pub(crate) enum Ran<'t> {
    /// The call's result: `Ok` with its text, `Err` with an error result's
    /// text saying what to do.
    Done(Result<String, String>),
    /// An approved call of a sub-agent, the caller's to run on the call's
    /// input.
    Agent(&'t Arc<AgentDefinition>),
    /// An approved call of the host's own tool of this full name.
    Own(&'t str),
    /// A skill activated: the caller grants its `allowed-tools` and runs it
    /// in a sub-agent when it forks, or answers with its content.
    Activated(Activation<'t>),
}

/// A skill `activate_skill` loaded and rendered.
#[cfg_attr(not(feature = "agent"), allow(dead_code))]
pub(crate) struct Activation<'t> {
    /// The skill.
    pub(crate) skill: Arc<Skill>,
    /// Its body rendered with the call's arguments (the task of a forked
    /// skill).
    pub(crate) body: String,
    /// What the model is shown: the body within `<skill_content>`, with its
    /// files and, for an executable skill, how to call it.
    pub(crate) content: String,
    /// The tools it pre-approves once activated (its kit trusted).
    pub(crate) grants: Option<&'t [String]>,
    /// Its `load_skill` span, for the rest of the activation's work.
    pub(crate) span: tracing::Span,
}

/// Runs `call` of `found` (a tool of `tools`) for `host`, as far as the tool
/// path goes (see [`Ran`]).
pub(crate) async fn run<'t>(
    tools: &'t ToolSet,
    found: &Found<'t>,
    call: &ToolCall,
    host: &impl Host,
) -> Ran<'t> {
    match route(tools, found, call, host).await {
        Ok(ran) => ran,
        Err(message) => Ran::Done(Err(message)),
    }
}

/// [`run`], its error results as `Err`.
async fn route<'t>(
    tools: &'t ToolSet,
    found: &Found<'t>,
    call: &ToolCall,
    host: &impl Host,
) -> Result<Ran<'t>, String> {
    // `call_skill {name, input}`: the call of that skill's own tool, checked,
    // approved and run as such.
    if let Target::Call = found.target {
        check_input(tools, found, call)?;
        let name = call.input.get("name").and_then(Value::as_str).unwrap_or("");
        let Some((full, (target, schema))) = tools.callable.get_key_value(name) else {
            return Err(format!(
                "there is no executable skill `{name}`; call `{}` with a few words about the \
                 task to find the skill that fits",
                search_skills::SEARCH_SKILLS
            ));
        };
        let input = call.input.get("input").cloned().unwrap_or(Value::Null);
        let inner = Found {
            full,
            target,
            schema,
        };
        let call = ToolCall::new(call.id.clone(), full.clone(), input);
        return run_found(tools, &inner, &call, host).await;
    }
    run_found(tools, found, call, host).await
}

/// `Err` saying what is wrong when `call`'s input does not fit `found`'s
/// schema.
fn check_input(tools: &ToolSet, found: &Found<'_>, call: &ToolCall) -> Result<(), String> {
    match schema::check(found.schema, &call.input) {
        None => Ok(()),
        Some(problem) => Err(format!(
            "invalid input for `{}`: {problem}; call it again with input that fits its schema: \
             {}",
            tools.names.wire(found.full),
            found.schema
        )),
    }
}

/// [`run`] once the tool is known: `found` is the tool `call` reaches.
async fn run_found<'t>(
    tools: &'t ToolSet,
    found: &Found<'t>,
    call: &ToolCall,
    host: &impl Host,
) -> Result<Ran<'t>, String> {
    check_input(tools, found, call)?;
    let name = found.display();
    let request = ToolRequest {
        agent: host.path().clone(),
        call_id: call.id.clone(),
        name: name.to_owned(),
        input: call.input.clone(),
    };
    let verdict = match (found.target, host.scripts()) {
        // A script call runs only when both policies allow it.
        (Target::Script, Some(scripts)) => host
            .decide(&request)
            .stricter(scripts.options.approval.decide(&request)),
        _ => host.decide(&request),
    };
    let verdict = match verdict {
        // A tool an active skill of a trusted kit pre-approves is not asked.
        Approval::Ask if host.granted(found.full, &tools.names.wire(found.full)) => {
            tracing::debug!(
                tool = found.full,
                "pre-approved by an active skill's allowed-tools"
            );
            Approval::Allow
        }
        verdict => verdict,
    };
    // The scripts of a skill whose kit is not trusted (nor of a trusted
    // origin: found, imported, served) are always asked.
    let verdict = match (found.target, verdict) {
        (Target::Script, Approval::Allow)
            if call
                .input
                .get("skill")
                .and_then(Value::as_str)
                .is_some_and(|skill| tools.untrusted.contains(skill)) =>
        {
            Approval::Ask
        }
        (_, verdict) => verdict,
    };
    let span = tracing::Span::current();
    let decided = |decision: &str| {
        span.record(crate::telemetry::attr::APPROVAL, decision);
    };
    match verdict {
        Approval::Allow => decided("allow"),
        Approval::Deny(reason) => {
            decided("deny");
            return Err(format!("the call was denied: {reason}"));
        }
        Approval::Ask => {
            let asked = std::time::Instant::now();
            let decision = host.ask(&request, InputKind::Approval).await;
            span.record(
                crate::telemetry::attr::APPROVAL_WAIT,
                asked.elapsed().as_secs_f64(),
            );
            match decision? {
                Decision::Approve | Decision::Answer(Value::Bool(true)) => decided("approved"),
                Decision::Deny { reason } => {
                    decided("denied");
                    return Err(format!("the user denied the call: {reason}"));
                }
                Decision::Answer(_) => {
                    decided("denied");
                    return Err("the user denied the call".to_owned());
                }
            }
        }
    }
    let (skill, tool, kit_metadata) = match found.target {
        Target::Activate => {
            let (skill, arguments) = tools.activatable.load(&call.input).await?;
            let span = load_skill_span(skill);
            return activate(tools, skill, arguments, call, host, span)
                .await
                .map(Ran::Activated);
        }
        Target::Agent(definition) => return Ok(Ran::Agent(definition)),
        Target::Call => return Err("`call_skill` names no skill".to_owned()),
        Target::Own => return Ok(Ran::Own(found.full)),
        Target::Search => {
            let (query, limit) = search_skills::input(&call.input)?;
            let hits = host
                .catalog()
                .search(query, search_skills::wanted(limit))
                .await;
            return Ok(Ran::Done(Ok(search_skills::answer(
                &hits,
                |name| tools.activatable.get(name).is_some(),
                limit,
            ))));
        }
        Target::Script => {
            let Some(scripts) = host.scripts() else {
                return Err("scripts are not enabled here".to_owned());
            };
            let name = call.input.get("skill").and_then(Value::as_str);
            let skill = tools.activatable.find(name.unwrap_or(""))?;
            return Ok(Ran::Done(scripts.call(skill, &call.input).await));
        }
        #[cfg(feature = "mcp-client")]
        Target::Mcp(tool) => {
            return Ok(Ran::Done(finished(
                timed(host.tool_timeout(), name, tool.call(&call.input)).await,
            )));
        }
        Target::Skill {
            skill,
            tool,
            kit_metadata,
        } => (skill, tool, kit_metadata),
    };
    let execution =
        ToolExecution::new(Arc::clone(skill), call.input.clone()).with_context(ToolContext {
            call_id: (!call.id.is_empty()).then(|| call.id.clone()),
            kit_metadata: kit_metadata.clone(),
            ..host.context()
        });
    let limit = host.tool_timeout();
    let mut outcome = timed(limit, name, tool::call(&**tool, execution.clone())).await;
    while let ToolOutcome::Pending(state) = outcome {
        let kind = InputKind::Pending {
            state: state.clone(),
        };
        let decision = match host.ask(&request, kind).await? {
            Decision::Approve => Value::Bool(true),
            Decision::Answer(value) => value,
            Decision::Deny { reason } => return Err(format!("the user declined: {reason}")),
        };
        let resumed = tool::resume(&**tool, execution.clone(), state, decision);
        outcome = timed(limit, name, resumed).await;
    }
    Ok(Ran::Done(finished(outcome)))
}

/// `activate_skill`'s work once `skill` is found (in `span`, its
/// `load_skill`): its `!`command`` lines run where scripts are enabled, its
/// body rendered with `arguments`.
async fn activate<'t>(
    tools: &'t ToolSet,
    skill: &Arc<Skill>,
    arguments: &str,
    call: &ToolCall,
    host: &impl Host,
    span: tracing::Span,
) -> Result<Activation<'t>, String> {
    // `!`command`` runs only where scripts are enabled, and only as the
    // file has it: the arguments and the other values are substituted
    // afterwards, around what the commands printed.
    let context = host.context();
    let session = context.session_id.as_deref().filter(|s| !s.is_empty());
    let written = skill.written_body().await.map_err(|e| e.to_string())?;
    let outputs = match host.scripts() {
        Some(scripts) => {
            let always_ask = tools.untrusted.contains(skill.name.as_ref());
            script::expand(&written, skill, scripts, host, &call.id, always_ask)
                .instrument(span.clone())
                .await
        }
        None => Vec::new(),
    };
    let body = skill.render_written(&written, &outputs, arguments, session);
    let mut content = activate::skill_content(skill, &body);
    if let Some((_, schema)) = tools.callable.get(skill.name.as_ref()) {
        let usage = call_skill::usage(&skill.name, schema);
        if let Some(at) = content.rfind("</skill_content>") {
            content.insert_str(at, &usage);
        }
    }
    Ok(Activation {
        skill: Arc::clone(skill),
        body,
        content,
        grants: tools.grants.get(skill.name.as_ref()).map(Vec::as_slice),
        span,
    })
}

/// The `load_skill` span of an activation of `skill` (the refinement of
/// `execute_tool` the GenAI conventions are writing): its name, description
/// and where it comes from, as a logical location, never a path.
fn load_skill_span(skill: &Skill) -> tracing::Span {
    tracing::info_span!(
        "load_skill",
        otel.name = %format_args!("load_skill {}", skill.name),
        otel.kind = "internal",
        gen_ai.operation.name = "load_skill",
        gen_ai.skill.name = %skill.name,
        gen_ai.skill.description = %skill.description,
        gen_ai.skill.source.uri = %crate::telemetry::skill_uri(skill),
    )
}

/// A finished call's outcome as the model's text.
fn finished(outcome: ToolOutcome) -> Result<String, String> {
    match outcome {
        ToolOutcome::Ok(Value::String(text)) => Ok(text),
        ToolOutcome::Ok(value) => Ok(value.to_string()),
        ToolOutcome::Error(message) => Err(message),
        ToolOutcome::Pending(_) => Err("the tool is still waiting for input".to_owned()),
    }
}

/// `outcome` within `limit`.
async fn timed(
    limit: Duration,
    name: &str,
    outcome: impl Future<Output = ToolOutcome>,
) -> ToolOutcome {
    match tokio::time::timeout(limit, outcome).await {
        Ok(outcome) => outcome,
        Err(_) => ToolOutcome::error(format!(
            "`{name}` did not finish within {limit:?} (the tool timeout) and was stopped"
        )),
    }
}
