//! One tool call, run to its result, by the one path the agent and the MCP
//! server share: the input checked against the tool's schema, the approval
//! policy (and the caller's answer when it asks), the tool within its
//! timeout, a pending result and its resume, and the outcome turned into the
//! model's text. What differs between the two is a [`Host`].

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::run::AgentRun;
use crate::agent::script::{self, Scripts};
use crate::agent::toolset::{Found, Target, ToolSet};
use crate::agent::{
    AgentDefinition, AgentPath, Approval, Decision, EventKind, InputKind, InputRequest, ToolRequest,
};
use crate::agent::{activate, search_skills};
use crate::catalog::Catalog;
use crate::llm::{ToolCall, ToolResult};
use crate::skill::Skill;
use crate::tool::{self, ToolContext, ToolExecution, ToolOutcome};

/// Whoever a tool call is run for: the agent whose model made it, or the MCP
/// server a client called.
pub(crate) trait Host: Sync {
    /// The agent making the call (the root path for a server).
    fn path(&self) -> &AgentPath;
    /// The agent's name, for the tool's [`ToolContext`].
    fn agent(&self) -> Option<&str>;
    /// The conversation's session id, for `$SESSION_ID` and the
    /// [`ToolContext`].
    fn session_id(&self) -> Option<&str>;
    /// The approval policy's verdict on `request`.
    fn decide(&self, request: &ToolRequest) -> Approval;
    /// Asks the caller about `request` and waits for the decision; `Err`
    /// (the call's result) when this host cannot ask.
    fn ask(
        &self,
        request: &ToolRequest,
        kind: InputKind,
    ) -> impl Future<Output = Result<Decision, String>>;
    /// How long a tool may run.
    fn tool_timeout(&self) -> Duration;
    /// Runs sub-agent `definition` on `{task}` to its answer.
    fn delegate(
        &self,
        definition: &Arc<AgentDefinition>,
        input: &Value,
    ) -> impl Future<Output = Result<String, String>>;
    /// Whether the skills activated so far pre-approve the tool of full name
    /// `full` (wire name `wire`).
    fn granted(&self, full: &str, wire: &str) -> bool;
    /// Records that a skill was activated whose `allowed-tools` are
    /// `tools` (its kit trusted).
    fn grant(&self, tools: &[String]);
    /// Runs skill `skill` (`context: fork`) in a sub-agent of its own on
    /// `body`, its body rendered, to that agent's answer; `None` when this
    /// host runs no sub-agents (the skill is then activated in place).
    fn fork(
        &self,
        skill: &Arc<Skill>,
        body: &str,
    ) -> impl Future<Output = Option<Result<String, String>>>;
    /// The scripts of this conversation, when `run_skill_script` is enabled.
    fn scripts(&self) -> Option<&Scripts>;
    /// The catalog `search_skills` searches.
    fn catalog(&self) -> &Catalog;
    /// Runs tool `name`, one of the host's own ([`Target::Own`]).
    fn run_own(&self, name: &str, input: &Value) -> impl Future<Output = Result<String, String>>;
}

/// Runs `call` of `found` (a tool of `tools`) for `host`: `Ok` with the
/// result's text, or `Err` with an error result's text saying what to do.
pub(crate) async fn run(
    tools: &ToolSet,
    found: &Found<'_>,
    call: &ToolCall,
    host: &impl Host,
) -> Result<String, String> {
    // `call_skill {name, input}`: the call of that skill's own tool, checked,
    // approved and run as such.
    if let Target::Call = found.target {
        check_input(tools, found, call)?;
        let name = call.input.get("name").and_then(Value::as_str).unwrap_or("");
        let Some((full, (target, schema))) = tools.callable.get_key_value(name) else {
            return Err(format!(
                "there is no executable skill `{name}`; call `{}` with a few words about the \
                 task to find the skill that fits",
                crate::agent::SEARCH_SKILLS
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
    match super::schema::check(found.schema, &call.input) {
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
async fn run_found(
    tools: &ToolSet,
    found: &Found<'_>,
    call: &ToolCall,
    host: &impl Host,
) -> Result<String, String> {
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
            return activate(tools, skill, arguments, call, host)
                .instrument(span)
                .await;
        }
        Target::Agent(definition) => return host.delegate(definition, &call.input).await,
        Target::Call => return Err("`call_skill` names no skill".to_owned()),
        Target::Own => return host.run_own(found.full, &call.input).await,
        Target::Search => {
            let (query, limit) = search_skills::input(&call.input)?;
            let hits = host
                .catalog()
                .search(query, search_skills::wanted(limit))
                .await;
            return Ok(search_skills::answer(
                &hits,
                |name| tools.activatable.get(name).is_some(),
                limit,
            ));
        }
        Target::Script => {
            let Some(scripts) = host.scripts() else {
                return Err("scripts are not enabled here".to_owned());
            };
            let name = call.input.get("skill").and_then(Value::as_str);
            let skill = tools.activatable.find(name.unwrap_or(""))?;
            return scripts.call(skill, &call.input).await;
        }
        #[cfg(feature = "mcp-client")]
        Target::Mcp(tool) => {
            return finished(timed(host.tool_timeout(), name, tool.call(&call.input)).await);
        }
        Target::Skill {
            skill,
            tool,
            kit_metadata,
        } => (skill, tool, kit_metadata),
    };
    let execution =
        ToolExecution::new(Arc::clone(skill), call.input.clone()).with_context(ToolContext {
            agent: host.agent().map(str::to_owned),
            session_id: host.session_id().map(str::to_owned),
            call_id: (!call.id.is_empty()).then(|| call.id.clone()),
            kit_metadata: kit_metadata.clone(),
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
    finished(outcome)
}

/// `activate_skill`'s work once `skill` is found: its `!`command`` lines
/// run where scripts are enabled, its body rendered with `arguments`, the
/// tools it pre-approves granted, a forked skill run as a sub-agent.
async fn activate(
    tools: &ToolSet,
    skill: &Arc<Skill>,
    arguments: &str,
    call: &ToolCall,
    host: &impl Host,
) -> Result<String, String> {
    let written = skill.body.read().map_err(|e| e.to_string())?;
    // `!`command`` runs only where scripts are enabled, and only as
    // the file has it: the arguments and the other values are
    // substituted afterwards, around what the commands printed.
    let outputs = match host.scripts() {
        Some(scripts) => {
            let always_ask = tools.untrusted.contains(skill.name.as_ref());
            script::expand(&written, skill, scripts, host, &call.id, always_ask).await
        }
        None => Vec::new(),
    };
    let session = host.session_id().filter(|s| !s.is_empty());
    let body = skill.render_pieces(&script::pieces(&written, &outputs), arguments, session);
    if let Some(allowed) = tools.grants.get(skill.name.as_ref()) {
        host.grant(allowed);
    }
    if skill.forks()
        && let Some(answer) = host.fork(skill, &body).await
    {
        return answer;
    }
    let mut content = activate::skill_content(skill, &body);
    if let Some((_, schema)) = tools.callable.get(skill.name.as_ref()) {
        let usage = crate::agent::call_skill::usage(&skill.name, schema);
        if let Some(at) = content.rfind("</skill_content>") {
            content.insert_str(at, &usage);
        }
    }
    Ok(content)
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

impl AgentRun {
    /// Runs one tool call to its result, which is also emitted.
    pub(super) async fn call(
        &self,
        tools: &ToolSet,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let wire = tools.names.wire(&call.name);
        let found = tools.find(&wire);
        let name = found.as_ref().map_or(call.name.as_str(), Found::display);
        let tool_type = match found.as_ref().map(|found| found.target) {
            #[cfg(feature = "mcp-client")]
            Some(Target::Mcp(_)) => "extension",
            _ => "function",
        };
        let span = super::spans::tool_span(&self.definition.name, name, &call.id, tool_type);
        #[cfg(feature = "mcp-client")]
        if let Some(Target::Mcp(_)) = found.as_ref().map(|found| found.target) {
            // The server's prefix (`everything` of `everything__echo`): the
            // name the application gave it, never its command line or URL.
            let server = name.split_once("__").map_or(name, |(prefix, _)| prefix);
            span.record(crate::telemetry::attr::MCP_SERVER, server);
        }
        let capture = crate::telemetry::capture_content() && !span.is_disabled();
        if capture {
            span.record(
                crate::telemetry::attr::TOOL_CALL_ARGUMENTS,
                call.input.to_string(),
            );
        }
        let dispatched = async {
            let Some(found) = &found else {
                return Err(format!(
                    "there is no tool `{}`; call one of: {}",
                    call.name,
                    tools.wire_names().join(", ")
                ));
            };
            run(tools, found, call, self).await
        };
        let result = tokio::select! {
            result = dispatched.instrument(span.clone()) => result,
            () = cancel.cancelled() => Err("cancelled: the agent was stopped before this call finished".to_owned()),
        };
        let (content, is_error) = match result {
            Ok(content) => (content, false),
            Err(content) => (content, true),
        };
        if capture {
            span.record(crate::telemetry::attr::TOOL_CALL_RESULT, content.as_str());
        }
        if is_error {
            crate::telemetry::fail(&span, "tool_error");
        }
        self.emit(EventKind::ToolResult {
            id: call.id.clone(),
            name: name.to_owned(),
            content: content.clone(),
            is_error,
        });
        ToolResult {
            tool_call_id: call.id.clone(),
            content,
            is_error,
        }
    }
}

impl Host for AgentRun {
    fn path(&self) -> &AgentPath {
        &self.path
    }

    fn agent(&self) -> Option<&str> {
        Some(&self.definition.name)
    }

    fn session_id(&self) -> Option<&str> {
        Some(&self.runtime.session_id)
    }

    fn decide(&self, request: &ToolRequest) -> Approval {
        self.runtime.approval.decide(request)
    }

    /// Emits the request and waits for the decision. A sub-agent's call ids
    /// are prefixed with its path (`notes:editor/call_1`), so calls of agents
    /// running side by side never share an id.
    async fn ask(&self, request: &ToolRequest, kind: InputKind) -> Result<Decision, String> {
        let (send, receive) = oneshot::channel();
        let call_id = match self.path.is_root() {
            true => request.call_id.clone(),
            false => format!("{}/{}", self.path, request.call_id),
        };
        self.runtime.waiting().insert(call_id.clone(), send);
        self.emit(EventKind::InputRequested(InputRequest {
            call_id,
            name: request.name.clone(),
            input: request.input.clone(),
            kind,
        }));
        // A dropped sender means the agent is shutting down: the call's
        // future is being cancelled anyway.
        Ok(receive
            .await
            .unwrap_or_else(|_| Decision::deny("the agent shut down")))
    }

    fn granted(&self, full: &str, wire: &str) -> bool {
        let granted = self
            .runtime
            .granted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        granted.contains(full) || granted.contains(wire)
    }

    fn grant(&self, tools: &[String]) {
        let mut granted = self
            .runtime
            .granted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        granted.extend(tools.iter().cloned());
    }

    fn tool_timeout(&self) -> Duration {
        self.runtime.tool_timeout
    }

    async fn delegate(
        &self,
        definition: &Arc<AgentDefinition>,
        input: &Value,
    ) -> Result<String, String> {
        AgentRun::delegate(self, definition, input).await
    }

    async fn fork(&self, skill: &Arc<Skill>, body: &str) -> Option<Result<String, String>> {
        Some(AgentRun::fork(self, skill, body).await)
    }

    fn scripts(&self) -> Option<&Scripts> {
        self.runtime.scripts.as_ref()
    }

    fn catalog(&self) -> &Catalog {
        &self.runtime.catalog
    }

    async fn run_own(&self, name: &str, _: &Value) -> Result<String, String> {
        Err(format!("there is no tool `{name}`"))
    }
}
