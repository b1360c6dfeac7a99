//! The loop: model stream → tool calls → results → again, until the model
//! answers without tool calls. The same loop runs the root agent and every
//! sub-agent.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::compact::How;
use crate::agent::context::{ContextUse, Meter, chars, view};
use crate::agent::session::Saved;
use crate::agent::{AgentError, AgentEvent, EventKind, History};
use crate::agent_definition::AgentDefinition;
use crate::catalog::{Catalog, Snapshot};
use crate::dispatch::approval::{AgentPath, ApprovalPolicy, Decision};
use crate::dispatch::listing::{Prompts, default_listing_budget};
use crate::dispatch::script::Scripts;
use crate::dispatch::toolset::{Cache, Scope, ToolSet};
use crate::dispatch::trust::TrustPolicy;
use crate::llm::{
    Adapter, AssistantMessage, Message, ModelUri, Registry, Request, ToolCall, Usage,
};

/// What every agent of one conversation (the root and its sub-agents) shares.
pub(crate) struct Runtime {
    pub(crate) catalog: Catalog,
    pub(crate) registry: Registry,
    pub(crate) approval: ApprovalPolicy,
    pub(crate) trust: TrustPolicy,
    /// The tools the skills activated in this conversation pre-approve
    /// (`allowed-tools` of trusted kits).
    pub(crate) granted: Mutex<HashSet<String>>,
    /// `run_skill_script`, when enabled: its options and working folder,
    /// removed with the conversation.
    pub(crate) scripts: Option<Scripts>,
    /// The MCP servers whose tools the agents take.
    #[cfg(feature = "mcp-client")]
    pub(crate) mcp: Vec<crate::dispatch::mcp::McpServer>,
    pub(crate) tool_concurrency: usize,
    pub(crate) tool_timeout: Duration,
    /// The listing budget set in the options, over each model's default.
    pub(crate) listing_budget: Option<usize>,
    /// When and how conversations are compacted.
    pub(crate) compaction: crate::agent::CompactionPolicy,
    /// The skills the application pins in the listing.
    pub(crate) pinned: Arc<[String]>,
    /// `max_turns` set in the options, over each definition's.
    pub(crate) max_turns: Option<u32>,
    pub(crate) max_depth: u32,
    pub(crate) session_id: String,
    pub(crate) events: mpsc::UnboundedSender<AgentEvent>,
    /// Calls waiting for [`Agent::respond`](crate::agent::AgentController::respond), by call id.
    pub(crate) waiting: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
}

impl Runtime {
    pub(super) fn emit(&self, agent: &AgentPath, kind: EventKind) {
        // A caller that dropped its event stream still gets its work done.
        let _ = self.events.send(AgentEvent {
            agent: agent.clone(),
            kind,
        });
    }

    pub(super) fn waiting(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Decision>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A model resolved for one agent.
#[derive(Clone)]
pub(crate) struct Model {
    pub(crate) adapter: Arc<dyn Adapter>,
    pub(crate) parsed: ModelUri,
}

impl Model {
    /// The model's name: the URI's, else the adapter's default.
    pub(crate) fn name(&self) -> &str {
        match self.parsed.model.as_str() {
            "" => self.adapter.default_model().unwrap_or(""),
            name => name,
        }
    }

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
        let (adapter, parsed) = registry.resolve(uri).map_err(error)?;
        adapter.check(&parsed.options).map_err(error)?;
        Ok(Model { adapter, parsed })
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
    /// The last turn's tools.
    pub(crate) tools: Cache,
    /// The last turn's system prompt, when the listing is over its budget.
    pub(crate) prompts: Prompts,
    /// Characters to tokens, as the model counts them.
    pub(crate) meter: Meter,
    /// The token counts of the last model request, when it reported them.
    pub(crate) last_usage: Option<Usage>,
    /// The model's context window, in tokens.
    pub(crate) window: usize,
}

impl AgentRun {
    /// A new agent of the conversation `runtime` runs, at `path`.
    pub(crate) fn new(
        runtime: Arc<Runtime>,
        definition: Arc<AgentDefinition>,
        path: AgentPath,
        model: Model,
    ) -> AgentRun {
        AgentRun {
            max_turns: max_turns(&runtime, &definition),
            window: crate::agent::compact::window_of(&runtime.compaction, &model),
            runtime,
            definition,
            path,
            model,
            total: Usage::default(),
            tools: Cache::default(),
            prompts: Prompts::default(),
            meter: Meter::default(),
            last_usage: None,
        }
    }

    /// Answers `text`: appends it to `history`, then runs turns until the
    /// model answers without tool calls, the turn limit, an error or
    /// `cancel`. The history stays valid whatever happens (every tool call
    /// has its result).
    pub(crate) async fn answer(
        &mut self,
        history: &Mutex<History>,
        text: String,
        cancel: &CancellationToken,
        saved: Option<&mut Saved>,
    ) -> Outcome {
        let span = self.invoke_span();
        if crate::telemetry::capture_content() && !span.is_disabled() {
            let input =
                serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": text}]}]);
            span.record(crate::telemetry::attr::INPUT_MESSAGES, input.to_string());
        }
        let outcome = self
            .answer_in(history, text, cancel, saved)
            .instrument(span.clone())
            .await;
        match &outcome {
            Outcome::Answered(text) => {
                if crate::telemetry::capture_content() && !span.is_disabled() {
                    let output = serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}]);
                    span.record(crate::telemetry::attr::OUTPUT_MESSAGES, output.to_string());
                }
            }
            Outcome::Failed(error) => crate::telemetry::fail(&span, &error.kind()),
            Outcome::Cancelled => crate::telemetry::fail(&span, "cancelled"),
        }
        outcome
    }

    /// The `invoke_agent {name}` span of one message answered.
    fn invoke_span(&self) -> tracing::Span {
        let name = &self.definition.name;
        let span = tracing::info_span!(
            "invoke_agent",
            otel.name = %format_args!("invoke_agent {name}"),
            otel.kind = "internal",
            otel.status_code = tracing::field::Empty,
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = %name,
            gen_ai.agent.id = tracing::field::Empty,
            gen_ai.agent.description = %self.definition.description,
            gen_ai.conversation.id = %self.runtime.session_id,
            gen_ai.request.model = %self.model.parsed.model,
            gen_ai.provider.name = tracing::field::Empty,
            gen_ai.system = tracing::field::Empty,
            gen_ai.input.messages = tracing::field::Empty,
            gen_ai.output.messages = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        if !span.is_disabled() {
            let id = match self.path.is_root() {
                true => name.to_string(),
                false => format!("{name}@{}", self.path),
            };
            span.record(crate::telemetry::attr::AGENT_ID, id);
            span.record(crate::telemetry::provider_key(), self.model.adapter.name());
        }
        span
    }

    async fn answer_in(
        &mut self,
        history: &Mutex<History>,
        text: String,
        cancel: &CancellationToken,
        mut saved: Option<&mut Saved>,
    ) -> Outcome {
        push(history, Message::user(text));
        for turn in 1..=self.max_turns {
            let span = tracing::debug_span!("turn", agent = %self.path, turn);
            let step = self
                .turn(history, cancel, saved.as_deref_mut())
                .instrument(span)
                .await;
            // Each turn's messages reach the session as the turn completes.
            if let Some(saved) = saved.as_deref_mut()
                && let Err(error) = saved.save(history).await
            {
                tracing::warn!("{error}");
                self.emit(EventKind::Warning {
                    message: AgentError::Session(error.to_string()).to_string(),
                });
            }
            match step {
                Step::Continue => {}
                Step::Done(outcome) => return outcome,
            }
        }
        Outcome::Failed(AgentError::MaxTurns {
            limit: self.max_turns,
        })
    }

    async fn turn(
        &mut self,
        history: &Mutex<History>,
        cancel: &CancellationToken,
        saved: Option<&mut Saved>,
    ) -> Step {
        let (snapshot, tools) = self.tools().await;
        let (mut request, fixed, mut all) = self.request(history, &snapshot, &tools);
        // Past the share of the window, unless the conversation itself is
        // small (a system prompt and tools that alone fill the window are
        // not helped by compacting, again and again).
        if self.runtime.compaction.on
            && self.meter.tokens(all) > self.compact_at()
            && self.meter.tokens(all - fixed) > self.compact_at() / 4
        {
            match self.compact(history, saved, How::Auto, fixed, cancel).await {
                Ok(compaction) => {
                    self.emit(EventKind::Compacted(compaction));
                    (request, _, all) = self.request(history, &snapshot, &tools);
                }
                Err(AgentError::Stopped) => return Step::Done(Outcome::Cancelled),
                Err(error) => {
                    tracing::warn!("{error}");
                    self.emit(EventKind::Warning {
                        message: format!("{error}; the request is sent as it is"),
                    });
                }
            }
        }
        self.last_usage = None;
        let message = match self.stream(request, &tools, cancel).await {
            Ok(message) => message,
            Err(outcome) => return Step::Done(outcome),
        };
        if let Some(usage) = self.last_usage.take() {
            let tokens = self.meter.measured(all, &usage);
            self.emit(EventKind::Context(ContextUse {
                tokens,
                window: self.window as u64,
                compact_at: self.runtime.compaction.on.then(|| self.compact_at()),
            }));
        }
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
    pub(super) async fn tools(&self) -> (Snapshot, Arc<ToolSet>) {
        #[cfg(feature = "mcp-client")]
        let (snapshot, mcp) = futures::join!(
            self.runtime.catalog.snapshot(),
            crate::dispatch::mcp::tools(&self.runtime.mcp, |message| {
                tracing::warn!("{message}");
                self.emit(EventKind::Warning { message });
            })
        );
        #[cfg(not(feature = "mcp-client"))]
        let snapshot = self.runtime.catalog.snapshot().await;
        let scope = Scope::Agent {
            definition: &self.definition,
            trust: &self.runtime.trust,
            scripts: self.runtime.scripts.is_some(),
            #[cfg(feature = "mcp-client")]
            mcp: &mcp,
            budget: self.listing_budget(),
        };
        let tools = self.tools.get(&snapshot, &scope);
        (snapshot, tools)
    }

    /// The listing budget of this agent: the options', else its model's
    /// default.
    fn listing_budget(&self) -> usize {
        self.runtime
            .listing_budget
            .unwrap_or_else(|| default_listing_budget(self.model.name()))
    }

    /// The request of this turn: the system prompt, the history with wire
    /// tool names, the tools; and its size in characters, the system prompt
    /// and the tools alone, then all of it (counted as it is built).
    fn request(
        &self,
        history: &Mutex<History>,
        snapshot: &Snapshot,
        tools: &Arc<ToolSet>,
    ) -> (Request, usize, usize) {
        let history = history.lock().unwrap_or_else(PoisonError::into_inner);
        let seen = view(&history.messages);
        let mut messages = Vec::with_capacity(seen.len() + 1);
        let catalog = &self.runtime.catalog;
        let system = self.prompts.get(
            tools.listing.as_ref(),
            &tools.system,
            &tools.activatable,
            &seen,
            &self.runtime.pinned,
            |query, limit| catalog.search_words(snapshot, query, limit),
        );
        let fixed = system.len() + tools.definitions_chars;
        if !system.is_empty() {
            messages.push(Message::system(system));
        }
        let mut all = fixed;
        messages.extend(seen.iter().map(|message| {
            all += chars(message);
            match &**message {
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
        let mut options = self.model.parsed.options.clone();
        if let Some(clear) = self.server_clearing() {
            options.clear_tool_uses.get_or_insert(clear);
        }
        let request = Request {
            model: self.model.parsed.model.clone(),
            messages,
            tools: tools.definitions.clone(),
            options,
        };
        (request, fixed, all)
    }

    pub(super) fn emit(&self, kind: EventKind) {
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

pub(super) fn push(history: &Mutex<History>, message: Message) {
    history
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .messages
        .push(message);
}
