//! One tool call, run to its result: the approval policy (and the caller's
//! answer when it asks), the tool with its timeout, a pending result and its
//! resume, and the outcome turned into the model's text.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::run::AgentRun;
use crate::agent::toolset::{Target, ToolSet};
use crate::agent::{Approval, Decision, EventKind, InputKind, InputRequest, ToolRequest};
use crate::llm::{ToolCall, ToolResult};
use crate::tool::{self, ToolContext, ToolExecution, ToolOutcome};

impl AgentRun {
    /// Runs one tool call to its result, which is also emitted.
    pub(super) async fn call(
        &self,
        tools: &ToolSet,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let wire = tools.names.wire(&call.name);
        let found = tools.target(&wire);
        let name = found.map_or(call.name.as_str(), |(full, _, _)| ToolSet::display(full));
        let span =
            tracing::info_span!("tool_call", agent = %self.path, tool = name, call_id = %call.id);
        let dispatched = async {
            let Some((_, target, schema)) = found else {
                return Err(format!(
                    "there is no tool `{}`; call one of: {}",
                    call.name,
                    tools.wire_names().join(", ")
                ));
            };
            self.dispatch(tools, call, &wire, name, target, schema)
                .await
        };
        let result = tokio::select! {
            result = dispatched.instrument(span) => result,
            () = cancel.cancelled() => Err("cancelled: the agent was stopped before this call finished".to_owned()),
        };
        let (content, is_error) = match result {
            Ok(content) => (content, false),
            Err(content) => (content, true),
        };
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

    /// Checks, approves and runs call `call` of `target` (wire name `wire`,
    /// shown as `name`).
    pub(super) async fn dispatch(
        &self,
        tools: &ToolSet,
        call: &ToolCall,
        wire: &str,
        name: &str,
        target: &Target,
        schema: &Value,
    ) -> Result<String, String> {
        if let Some(problem) = super::schema::check(schema, &call.input) {
            return Err(format!(
                "invalid input for `{wire}`: {problem}; call it again with input that fits its \
                 schema: {schema}"
            ));
        }
        let request = ToolRequest {
            agent: self.path.clone(),
            call_id: call.id.clone(),
            name: name.to_owned(),
            input: call.input.clone(),
        };
        match self.runtime.approval.decide(&request) {
            Approval::Allow => {}
            Approval::Deny(reason) => return Err(format!("the call was denied: {reason}")),
            Approval::Ask => match self.ask(&request, InputKind::Approval).await {
                Decision::Approve | Decision::Answer(Value::Bool(true)) => {}
                Decision::Deny { reason } => {
                    return Err(format!("the user denied the call: {reason}"));
                }
                Decision::Answer(_) => return Err("the user denied the call".to_owned()),
            },
        }
        match target {
            Target::Activate => tools.activate(&call.input, &self.runtime.session_id),
            Target::Agent(definition) => self.delegate(definition, &call.input).await,
            Target::Skill {
                skill,
                tool,
                kit_metadata,
            } => {
                let execution = ToolExecution::new(Arc::clone(skill), call.input.clone())
                    .with_context(ToolContext {
                        agent: Some(self.definition.name.to_string()),
                        session_id: Some(self.runtime.session_id.clone()),
                        call_id: Some(call.id.clone()),
                        kit_metadata: kit_metadata.clone(),
                    });
                let mut outcome = self
                    .timed(name, tool::call(&**tool, execution.clone()))
                    .await;
                while let ToolOutcome::Pending(state) = outcome {
                    let kind = InputKind::Pending {
                        state: state.clone(),
                    };
                    let decision = match self.ask(&request, kind).await {
                        Decision::Approve => Value::Bool(true),
                        Decision::Answer(value) => value,
                        Decision::Deny { reason } => {
                            return Err(format!("the user declined: {reason}"));
                        }
                    };
                    let resumed = tool::resume(&**tool, execution.clone(), state, decision);
                    outcome = self.timed(name, resumed).await;
                }
                match outcome {
                    ToolOutcome::Ok(Value::String(text)) => Ok(text),
                    ToolOutcome::Ok(value) => Ok(value.to_string()),
                    ToolOutcome::Error(message) => Err(message),
                    ToolOutcome::Pending(_) => unreachable!("pending outcomes are resumed above"),
                }
            }
        }
    }

    /// `outcome` within the tool timeout.
    pub(super) async fn timed(
        &self,
        name: &str,
        outcome: impl Future<Output = ToolOutcome>,
    ) -> ToolOutcome {
        let limit = self.runtime.tool_timeout;
        match tokio::time::timeout(limit, outcome).await {
            Ok(outcome) => outcome,
            Err(_) => ToolOutcome::error(format!(
                "`{name}` did not finish within {limit:?} (the tool timeout) and was stopped"
            )),
        }
    }

    /// Asks the caller about `request` and waits for the decision. A
    /// sub-agent's call ids are prefixed with its path (`notes:editor/call_1`),
    /// so calls of agents running side by side never share an id.
    pub(super) async fn ask(&self, request: &ToolRequest, kind: InputKind) -> Decision {
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
        receive
            .await
            .unwrap_or_else(|_| Decision::deny("the agent shut down"))
    }
}
