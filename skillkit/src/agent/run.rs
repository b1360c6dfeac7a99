//! The loop: model stream → tool calls → results → again, until the model
//! answers without tool calls. The same loop runs the root agent and every
//! sub-agent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::toolset::{Key, Target, ToolSet};
use crate::agent::{
    AgentDefinition, AgentError, AgentEvent, AgentPath, Approval, ApprovalPolicy, Decision,
    EventKind, History, InputKind, InputRequest, ToolRequest,
};
use crate::catalog::Catalog;
use crate::llm::{
    AssistantMessage, Event, LlmProvider, Message, ModelUri, Registry, Request, ToolCall,
    ToolResult, Usage,
};
use crate::tool::{self, ToolContext, ToolExecution, ToolOutcome};

/// What every agent of one conversation (the root and its sub-agents) shares.
pub(crate) struct Runtime {
    pub(crate) catalog: Catalog,
    pub(crate) registry: Registry,
    pub(crate) approval: ApprovalPolicy,
    pub(crate) tool_concurrency: usize,
    pub(crate) tool_timeout: Duration,
    /// `max_turns` set in the options, over each definition's.
    pub(crate) max_turns: Option<u32>,
    pub(crate) max_depth: u32,
    pub(crate) session_id: String,
    pub(crate) events: mpsc::UnboundedSender<AgentEvent>,
    /// Calls waiting for [`Agent::respond`](crate::agent::AgentController::respond), by call id.
    pub(crate) waiting: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
}

impl Runtime {
    fn emit(&self, agent: &AgentPath, kind: EventKind) {
        // A caller that dropped its event stream still gets its work done.
        let _ = self.events.send(AgentEvent {
            agent: agent.clone(),
            kind,
        });
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Decision>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A model resolved for one agent.
#[derive(Clone)]
pub(crate) struct Model {
    pub(crate) uri: String,
    provider: Arc<dyn LlmProvider>,
    parsed: ModelUri,
}

impl Model {
    /// Resolves `uri` and checks that a request could be sent, before any is.
    pub(crate) fn resolve(
        registry: &Registry,
        agent: &str,
        uri: &str,
    ) -> Result<Model, AgentError> {
        let error = |source| AgentError::Model {
            agent: agent.to_owned(),
            model: uri.to_owned(),
            source: Box::new(source),
        };
        let (provider, parsed) = registry.resolve(uri).map_err(error)?;
        provider.check(&parsed.options).map_err(error)?;
        Ok(Model {
            uri: uri.to_owned(),
            provider,
            parsed,
        })
    }
}

/// How one message's work ended.
pub(crate) enum Outcome {
    Answered(String),
    Failed(AgentError),
    Cancelled,
}

/// One agent of the conversation: the root, or a sub-agent at `path`.
pub(crate) struct AgentRun {
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) definition: Arc<AgentDefinition>,
    pub(crate) path: AgentPath,
    pub(crate) model: Model,
    pub(crate) max_turns: u32,
    pub(crate) total: Usage,
    /// The last turn's tools, and what they were built from.
    pub(crate) tools: Option<(Key, Arc<ToolSet>)>,
}

impl AgentRun {
    /// Answers `text`: appends it to `history`, then runs turns until the
    /// model answers without tool calls, the turn limit, an error or
    /// `cancel`. The history stays valid whatever happens (every tool call
    /// has its result).
    pub(crate) async fn answer(
        &mut self,
        history: &Mutex<History>,
        text: String,
        cancel: &CancellationToken,
    ) -> Outcome {
        push(history, Message::user(text));
        for turn in 1..=self.max_turns {
            let span = tracing::info_span!("turn", agent = %self.path, turn);
            match self.turn(history, cancel).instrument(span).await {
                Step::Continue => {}
                Step::Done(outcome) => return outcome,
            }
        }
        Outcome::Failed(AgentError::MaxTurns {
            limit: self.max_turns,
        })
    }

    async fn turn(&mut self, history: &Mutex<History>, cancel: &CancellationToken) -> Step {
        let tools = self.tools().await;
        let request = self.request(history, &tools);
        let message = match self.stream(request, &tools, cancel).await {
            Ok(message) => message,
            Err(outcome) => return Step::Done(outcome),
        };
        self.emit(EventKind::TurnComplete {
            message: message.clone(),
        });
        if message.tool_calls.is_empty() {
            push(history, Message::Assistant(message.clone()));
            return Step::Done(Outcome::Answered(message.text));
        }
        let calls: Vec<_> = message
            .tool_calls
            .iter()
            .map(|call| self.call(&tools, call, cancel))
            .collect();
        let results = futures::stream::iter(calls)
            .buffered(self.runtime.tool_concurrency)
            .collect::<Vec<_>>()
            .await;
        // The calls and their results join the history together, so a copy
        // taken at any moment is a conversation a model accepts.
        {
            let mut history = history.lock().unwrap_or_else(PoisonError::into_inner);
            history.messages.push(Message::Assistant(message));
            history
                .messages
                .extend(results.into_iter().map(Message::ToolResult));
        }
        match cancel.is_cancelled() {
            true => Step::Done(Outcome::Cancelled),
            false => Step::Continue,
        }
    }

    /// This turn's tools: rebuilt from a fresh catalog snapshot, unless the
    /// snapshot holds exactly the skills, tools and sub-agents of the last
    /// turn's.
    async fn tools(&mut self) -> Arc<ToolSet> {
        let snapshot = self.runtime.catalog.snapshot().await;
        let key = Key::of(&snapshot);
        if let Some((cached, tools)) = &self.tools
            && *cached == key
        {
            return Arc::clone(tools);
        }
        let tools = Arc::new(ToolSet::build(&snapshot, &self.definition));
        self.tools = Some((key, Arc::clone(&tools)));
        tools
    }

    /// The request of this turn: the system prompt, the history with wire
    /// tool names, the tools.
    fn request(&self, history: &Mutex<History>, tools: &ToolSet) -> Request {
        let history = history.lock().unwrap_or_else(PoisonError::into_inner);
        let mut messages = Vec::with_capacity(history.messages.len() + 1);
        if !tools.system.is_empty() {
            messages.push(Message::system(tools.system.clone()));
        }
        messages.extend(history.messages.iter().map(|message| {
            match message {
                Message::Assistant(assistant) => Message::Assistant(AssistantMessage {
                    text: assistant.text.clone(),
                    tool_calls: assistant
                        .tool_calls
                        .iter()
                        .map(|call| {
                            ToolCall::new(
                                call.id.clone(),
                                tools.names.wire(&call.name).into_owned(),
                                call.input.clone(),
                            )
                        })
                        .collect(),
                }),
                other => other.clone(),
            }
        }));
        Request {
            model: self.model.parsed.model.clone(),
            messages,
            tools: tools.definitions.clone(),
            options: self.model.parsed.options.clone(),
        }
    }

    /// Streams one answer, forwarding its events; the assistant message with
    /// full tool names.
    async fn stream(
        &mut self,
        request: Request,
        tools: &ToolSet,
        cancel: &CancellationToken,
    ) -> Result<AssistantMessage, Outcome> {
        let span = tracing::info_span!("llm_request", model = %self.model.uri);
        let provider = Arc::clone(&self.model.provider);
        let started = tokio::select! {
            started = provider.stream(request).instrument(span.clone()) => started,
            () = cancel.cancelled() => return Err(Outcome::Cancelled),
        };
        let mut events = started.map_err(|e| Outcome::Failed(e.into()))?;
        let mut message = AssistantMessage::default();
        // The ids of the calls in the order the model began them.
        let mut began: Vec<String> = Vec::new();
        let full = |wire: &str| {
            tools
                .target(wire)
                .map_or(wire, |(full, _, _)| ToolSet::display(full))
                .to_owned()
        };
        loop {
            let event = tokio::select! {
                event = events.next() => event,
                // Dropping the stream closes the connection.
                () = cancel.cancelled() => return Err(Outcome::Cancelled),
            };
            match event {
                Some(Event::Delta { text }) => {
                    message.text.push_str(&text);
                    self.emit(EventKind::Delta { text });
                }
                Some(Event::ToolCallStart { id, name }) => {
                    began.push(id.clone());
                    let name = full(&name);
                    self.emit(EventKind::ToolCallStart { id, name });
                }
                Some(Event::ToolCallComplete { id, name, input }) => {
                    // History keeps full names (sub-agent tools as `agent:<name>`).
                    let stored = tools
                        .target(&name)
                        .map_or(name.clone(), |(f, _, _)| f.to_owned());
                    self.emit(EventKind::ToolCallComplete {
                        id: id.clone(),
                        name: full(&name),
                        input: input.clone(),
                    });
                    // Calls keep the model's order, though parallel calls
                    // may complete out of it (Anthropic blocks stop in any order).
                    let rank = |id: &str| began.iter().position(|b| b == id).unwrap_or(usize::MAX);
                    let at = message
                        .tool_calls
                        .partition_point(|call| rank(&call.id) <= rank(&id));
                    message
                        .tool_calls
                        .insert(at, ToolCall::new(id, stored, input));
                }
                Some(Event::Usage(usage)) => {
                    self.total += usage;
                    self.emit(EventKind::Usage {
                        request: usage,
                        total: self.total,
                    });
                }
                Some(Event::Done { .. }) | None => return Ok(message),
                Some(Event::Error(error)) => return Err(Outcome::Failed(error.into())),
            }
        }
    }

    /// Runs one tool call to its result, which is also emitted.
    async fn call(
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
    async fn dispatch(
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
    async fn timed(&self, name: &str, outcome: impl Future<Output = ToolOutcome>) -> ToolOutcome {
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
    async fn ask(&self, request: &ToolRequest, kind: InputKind) -> Decision {
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

    /// Runs sub-agent `definition` on `{task}` to its answer.
    async fn delegate(
        &self,
        definition: &Arc<AgentDefinition>,
        input: &Value,
    ) -> Result<String, String> {
        let depth = self.path.depth() as u32;
        if depth >= self.runtime.max_depth {
            return Err(format!(
                "cannot delegate to `{}`: sub-agents may nest {} deep (max_agent_depth) and \
                 this agent is at depth {depth}; do the task yourself",
                definition.name, self.runtime.max_depth
            ));
        }
        let task = input
            .get("task")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let model = match &definition.model {
            Some(uri) => Model::resolve(&self.runtime.registry, &definition.name, uri)
                .map_err(|e| e.to_string())?,
            None => self.model.clone(),
        };
        let mut child = AgentRun {
            runtime: Arc::clone(&self.runtime),
            definition: Arc::clone(definition),
            path: self.path.child(&definition.name),
            model,
            max_turns: max_turns(&self.runtime, definition),
            total: Usage::default(),
            tools: None,
        };
        let history = Mutex::new(History {
            session_id: self.runtime.session_id.clone(),
            messages: Vec::new(),
        });
        // The parent's cancellation reaches the child through the select in
        // `call`, which drops this future.
        let never = CancellationToken::new();
        match Box::pin(child.answer(&history, task.to_owned(), &never)).await {
            Outcome::Answered(text) => Ok(text),
            Outcome::Failed(error) => {
                Err(format!("sub-agent `{}` failed: {error}", definition.name))
            }
            Outcome::Cancelled => Err(format!("sub-agent `{}` was stopped", definition.name)),
        }
    }

    fn emit(&self, kind: EventKind) {
        self.runtime.emit(&self.path, kind);
    }
}

/// What a turn leads to.
enum Step {
    Continue,
    Done(Outcome),
}

/// The turn limit of `definition` in `runtime`.
pub(crate) fn max_turns(runtime: &Runtime, definition: &AgentDefinition) -> u32 {
    runtime
        .max_turns
        .or(definition.max_turns)
        .unwrap_or(crate::agent::DEFAULT_MAX_TURNS)
        .max(1)
}

fn push(history: &Mutex<History>, message: Message) {
    history
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .messages
        .push(message);
}
