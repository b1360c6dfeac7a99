//! Agents: their definitions (`AGENT.md`, `agents/<name>.md`) and the
//! runtime that runs them, [`start_agent`].
//!
//! An agent answers each message with a loop: the model streams an answer;
//! its tool calls run (concurrently, results in call order); the results go
//! back to the model; again, until the model answers without tool calls.
//! Every turn rebuilds the tools from the [`Catalog`](crate::Catalog), so a
//! skill put into [`Memory`](crate::Memory) or imported from GitHub during the
//! conversation is callable on the next turn:
//!
//! * skills with a tool (their provider binds one,
//!   [`KitProvider::tool`](crate::KitProvider::tool)) are model tools;
//! * knowledge skills are listed in the system prompt's `<available_skills>`
//!   block and reached through ONE `activate_skill {name, arguments}` tool,
//!   which returns the body rendered by [`Skill::render`](crate::Skill::render);
//!   the listing has a budget ([`AgentOptions::listing_budget`], by default
//!   1% of the model's context window): past it, it holds the skills used,
//!   [pinned](AgentOptions::pin_skills) and most relevant, says how many more
//!   exist, and the model finds those with a `search_skills {query, limit}`
//!   tool;
//! * sub-agents (a kit's `agents/*.md`) are tools taking `{task}`; each runs
//!   the same loop to its answer, bounded by `max_agent_depth`.
//!
//! Tool names go to the model wire-safe (`files:read` → `files_read`,
//! `[a-zA-Z0-9_-]{1,64}`, unique) and are mapped back; events and the
//! [`History`] speak full names. An [`ApprovalPolicy`](crate::approval::ApprovalPolicy) decides every call
//! before it runs; pending tools and `ask` approvals wait for
//! [`respond`](AgentController::respond) without blocking the turn's other
//! calls.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use skillkit::agent::{start_agent, AgentOptions, EventKind};
//! use skillkit::llm::{Registry, Scripted};
//! use skillkit::{AgentDefinition, Catalog, Memory, Skill};
//!
//! let memory = Memory::new();
//! memory.put(Skill::new("style:haiku", "Write a haiku.").with_body("Write a haiku about $ARGUMENTS."));
//! let model = Scripted::new()
//!     .tool_call("call_1", "activate_skill", serde_json::json!({"name": "style:haiku", "arguments": "rust"}))
//!     .text("Borrowed, never lost...");
//! let options = AgentOptions::new(Catalog::builder().provider(memory).build())
//!     .registry(Registry::new().with("scripted", model.clone()))
//!     .model("scripted://demo");
//! let mut agent = start_agent(AgentDefinition::new("poet", "Writes poems."), options).unwrap();
//!
//! let mut results = Vec::new();
//! let answer = agent
//!     .ask("A poem about Rust, please", |event| {
//!         if let EventKind::ToolResult { content, .. } = &event.kind {
//!             results.push(content.clone());
//!         }
//!     })
//!     .await
//!     .unwrap();
//! assert_eq!(answer, "Borrowed, never lost...");
//! assert!(results[0].contains("Write a haiku about rust."));
//! // The model saw wire-safe tool names.
//! assert_eq!(model.requests()[0].tools[0].name, "activate_skill");
//! # });
//! ```

mod compact;
mod context;
mod delegate;
mod error;
mod event;
mod handle;
mod history;
mod host;
mod options;
mod run;
pub mod session;
mod spans;
mod stream;

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

pub use compact::{
    CompactionPolicy, DEFAULT_COMPACT_AT_PERCENT, DEFAULT_CONTEXT_WINDOW,
    DEFAULT_KEEP_TOOL_RESULTS, DEFAULT_SKILL_TOKENS, DEFAULT_SKILLS_TOKENS,
};
pub use context::ContextUse;
pub use error::AgentError;
pub use event::{AgentEvent, EventKind, InputRequest};
pub use handle::{Agent, AgentController};
pub use history::History;
#[cfg(feature = "mcp-client")]
pub use options::DEFAULT_MCP_OUTPUT_LIMIT;
pub use options::{
    AgentOptions, DEFAULT_MAX_AGENT_DEPTH, DEFAULT_MAX_TURNS, DEFAULT_MODEL,
    DEFAULT_TOOL_CONCURRENCY,
};
// The built-in tools' names and bounds, and the listing's budget: the tool
// path's (`crate::dispatch`, below the agent and the MCP server), public here.
pub use crate::dispatch::DEFAULT_TOOL_TIMEOUT;
pub use crate::dispatch::activate::ACTIVATE_SKILL;
pub use crate::dispatch::call_skill::CALL_SKILL;
pub use crate::dispatch::listing::{
    CHARS_PER_TOKEN, DEFAULT_LISTING_BUDGET, LISTING_SHARE_PERCENT, context_window,
    default_listing_budget,
};
pub use crate::dispatch::search_skills::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SEARCH_SKILLS};

use crate::agent_definition::AgentDefinition;
use crate::dispatch::approval::AgentPath;
use handle::{Input, Shared};
use run::{AgentRun, Model, Outcome, Runtime};

/// Starts an agent: `definition` (an `AGENT.md`, an embedded kit's
/// `agent_definition()`, or one built in code) over `options`.
///
/// The model (the options', else the definition's `model`, else
/// [`DEFAULT_MODEL`]) is resolved and checked now: an unknown scheme, a bad
/// URI or a missing API key is an error before any request. The agent then
/// runs on its own Tokio task, so many agents run side by side.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::agent::{start_agent, AgentError, AgentOptions};
/// use skillkit::{AgentDefinition, Catalog};
/// let options = AgentOptions::new(Catalog::builder().build()).model("mistral://large");
/// let err = start_agent(AgentDefinition::new("a", "d"), options).unwrap_err();
/// assert!(matches!(err, AgentError::Model { .. }));
/// assert!(err.to_string().contains("unknown model scheme `mistral`"));
/// # });
/// ```
pub fn start_agent(
    definition: impl Into<Arc<AgentDefinition>>,
    options: AgentOptions,
) -> Result<Agent, AgentError> {
    let definition = definition.into();
    let tokio = tokio::runtime::Handle::try_current().map_err(|_| AgentError::NoRuntime)?;
    let registry = options.registry_or_default();
    let model = Model::resolve(&registry, &definition.name, &options.model_for(&definition))?;
    let mut history = options.history.clone();
    if history.session_id.is_empty() {
        history.session_id = format!("session-{:016x}", fastrand::u64(..));
    }
    let (events, receiver) = mpsc::unbounded_channel();
    let runtime = Arc::new(Runtime {
        catalog: options.catalog.clone(),
        registry,
        approval: options.approval.clone(),
        trust: options.trust.clone(),
        granted: Mutex::default(),
        scripts: options
            .scripts
            .clone()
            .map(crate::dispatch::script::Scripts::new),
        #[cfg(feature = "mcp-client")]
        mcp: options::checked(&options.mcp, options.mcp_output_limit)?,
        tool_concurrency: options.tool_concurrency,
        tool_timeout: options.tool_timeout,
        listing_budget: options.listing_budget,
        compaction: options.compaction.clone(),
        pinned: options.pinned.clone(),
        max_turns: options.max_turns,
        max_depth: options.max_depth_for(&definition),
        session_id: history.session_id.clone(),
        events,
        waiting: Mutex::new(Default::default()),
    });
    let shutdown = CancellationToken::new();
    let shared = Arc::new(Shared {
        runtime: Arc::clone(&runtime),
        history: Arc::new(Mutex::new(history)),
        current: Mutex::new(shutdown.child_token()),
        shutdown,
    });
    let root = AgentRun::new(runtime, definition, AgentPath::root(), model);
    let (messages, inbox) = mpsc::unbounded_channel();
    let span = tracing::debug_span!("agent", agent = %root.definition.name, session = %shared.runtime.session_id);
    let saved = options
        .session
        .clone()
        .map(|(store, id)| session::Saved::new(store, id, root.definition.name.to_string()));
    tokio.spawn(drive(root, Arc::clone(&shared), inbox, saved).instrument(span));
    Ok(Agent::new(messages, shared, receiver))
}

/// The agent's task: answers messages one after another until every handle
/// is gone.
async fn drive(
    mut root: AgentRun,
    shared: Arc<Shared>,
    mut inbox: mpsc::UnboundedReceiver<Input>,
    mut saved: Option<session::Saved>,
) {
    loop {
        let input = tokio::select! {
            input = inbox.recv() => match input {
                Some(input) => input,
                None => return,
            },
            () = shared.shutdown.cancelled() => return,
        };
        let cancel = shared.shutdown.child_token();
        *shared
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = cancel.clone();
        // The session's items first (read once), then what other writers
        // added since.
        if let Some(saved) = saved.as_mut()
            && let Err(error) = saved.sync(&shared.history).await
        {
            let _ = root.runtime.events.send(AgentEvent {
                agent: AgentPath::root(),
                kind: EventKind::Error(AgentError::Session(error.to_string())),
            });
            continue;
        }
        let text = match input {
            Input::Message(text) => text,
            Input::Compact(instructions) => {
                let kind = match root
                    .compact_now(
                        &shared.history,
                        saved.as_mut(),
                        instructions.as_deref(),
                        &cancel,
                    )
                    .await
                {
                    Ok(compaction) => EventKind::Compacted(compaction),
                    Err(AgentError::Stopped) if shared.shutdown.is_cancelled() => return,
                    Err(error) => EventKind::Error(error),
                };
                let _ = root.runtime.events.send(AgentEvent {
                    agent: AgentPath::root(),
                    kind,
                });
                continue;
            }
        };
        let kind = match root
            .answer(&shared.history, text, &cancel, saved.as_mut())
            .await
        {
            Outcome::Answered(text) => EventKind::Finished { text },
            Outcome::Failed(error) => {
                tracing::warn!("{error}");
                EventKind::Error(error)
            }
            Outcome::Cancelled if shared.shutdown.is_cancelled() => return,
            Outcome::Cancelled => EventKind::Stopped,
        };
        let _ = root.runtime.events.send(AgentEvent {
            agent: AgentPath::root(),
            kind,
        });
    }
}
