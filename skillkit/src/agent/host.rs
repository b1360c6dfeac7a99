//! The agent as the host of its tool calls: each call of the model run by
//! the tool path ([`dispatch::run`]), emitted as events and traced; what
//! the tool path hands back to the agent (a sub-agent, a forked skill, the
//! grants of an activated skill) done here.

use std::time::Duration;

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::run::AgentRun;
use crate::agent::{EventKind, InputRequest};
use crate::catalog::Catalog;
use crate::dispatch::approval::{AgentPath, Approval, Approver, Decision, InputKind, ToolRequest};
use crate::dispatch::script::Scripts;
use crate::dispatch::toolset::{Found, ToolSet};
use crate::dispatch::{self, Activation, Host, Ran};
use crate::llm::{ToolCall, ToolResult};
use crate::tool::ToolContext;

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
            Some(crate::dispatch::toolset::Target::Mcp(_)) => "extension",
            _ => "function",
        };
        let span = super::spans::tool_span(&self.definition.name, name, &call.id, tool_type);
        #[cfg(feature = "mcp-client")]
        if let Some(crate::dispatch::toolset::Target::Mcp(_)) =
            found.as_ref().map(|found| found.target)
        {
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
            match dispatch::run(tools, found, call, self).await {
                Ran::Done(result) => result,
                Ran::Agent(definition) => self.delegate(definition, &call.input).await,
                Ran::Own(name) => Err(format!("there is no tool `{name}`")),
                Ran::Activated(activation) => self.activated(activation).await,
            }
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

impl Approver for AgentRun {
    fn path(&self) -> &AgentPath {
        &self.path
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
}

impl Host for AgentRun {
    fn context(&self) -> ToolContext {
        ToolContext {
            agent: Some(self.definition.name.to_string()),
            session_id: Some(self.runtime.session_id.clone()),
            ..ToolContext::default()
        }
    }

    fn granted(&self, full: &str, wire: &str) -> bool {
        let granted = self
            .runtime
            .granted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        granted.contains(full) || granted.contains(wire)
    }

    fn tool_timeout(&self) -> Duration {
        self.runtime.tool_timeout
    }

    fn scripts(&self) -> Option<&Scripts> {
        self.runtime.scripts.as_ref()
    }

    fn catalog(&self) -> &Catalog {
        &self.runtime.catalog
    }
}

impl AgentRun {
    /// An activation's end: the tools its skill pre-approves granted (its kit
    /// trusted), a forked skill (`context: fork`) run in a sub-agent of its
    /// own on its rendered body, else its content.
    async fn activated(&self, activation: Activation<'_>) -> Result<String, String> {
        if let Some(tools) = activation.grants {
            self.grant(tools);
        }
        if activation.skill.forks() {
            return AgentRun::fork(self, &activation.skill, &activation.body)
                .instrument(activation.span)
                .await;
        }
        Ok(activation.content)
    }

    /// Records that a skill was activated whose `allowed-tools` are `tools`.
    fn grant(&self, tools: &[String]) {
        let mut granted = self
            .runtime
            .granted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        granted.extend(tools.iter().cloned());
    }
}
