//! [`Agent`]: the handle of a running agent, and [`AgentController`], its
//! cloneable control half.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::run::Runtime;
use crate::agent::{AgentError, AgentEvent, EventKind, History};
use crate::dispatch::approval::Decision;
use crate::llm::Compaction;

/// What the handles share with the agent's task.
pub(crate) struct Shared {
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) history: Arc<Mutex<History>>,
    /// The token of the message being answered; [`AgentController::stop`]
    /// cancels it.
    pub(crate) current: Mutex<CancellationToken>,
    /// Cancelled when the last handle is dropped: the task ends.
    pub(crate) shutdown: CancellationToken,
}

/// Ends the agent's task when the last handle goes.
/// What the agent's task is asked to do, in order.
pub(crate) enum Input {
    /// Answer a message.
    Message(String),
    /// Compact the conversation, keeping what the text asks for.
    Compact(Option<String>),
}

struct Control {
    messages: mpsc::UnboundedSender<Input>,
    shared: Arc<Shared>,
}

impl Drop for Control {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

/// The control half of an [`Agent`]: send messages, answer waiting calls,
/// stop, read the history, from any task. Cheap to clone; the agent shuts
/// down (its model stream and tools cancelled) when the [`Agent`] and every
/// controller are dropped.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::agent::{start_agent, AgentOptions};
/// use skillkit::llm::{Registry, Scripted};
/// use skillkit::{AgentDefinition, Catalog};
///
/// let options = AgentOptions::new(Catalog::builder().build())
///     .registry(Registry::new().with("scripted", Scripted::new().text("Hello!")))
///     .model("scripted://demo");
/// let mut agent = start_agent(AgentDefinition::new("greeter", "Greets."), options).unwrap();
/// let controller = agent.controller();
/// tokio::spawn(async move { controller.send_message("Hi").unwrap() });
/// while let Some(event) = agent.next_event().await {
///     if event.is_end_of_message() { break; }
/// }
/// assert_eq!(agent.history().messages.len(), 2);
/// # });
/// ```
#[derive(Clone)]
pub struct AgentController {
    control: Arc<Control>,
}

impl std::fmt::Debug for AgentController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentController")
            .field("session_id", &self.control.shared.runtime.session_id)
            .finish_non_exhaustive()
    }
}

impl AgentController {
    /// Queues a user message; the agent answers messages one after another.
    /// Fails only when the agent has shut down.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new().text("ok"))).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// agent.send_message("Hello").unwrap();
    /// # });
    /// ```
    pub fn send_message(&self, text: impl Into<String>) -> Result<(), AgentError> {
        self.control
            .messages
            .send(Input::Message(text.into()))
            .map_err(|_| AgentError::Closed)
    }

    /// Queues a compaction of the conversation after the messages queued
    /// before it: its outcome is an [`EventKind::Compacted`] (or an
    /// [`EventKind::Error`]) of the root agent. `instructions` say what the
    /// summary must keep. A session's compaction is stored in it.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::empty().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// # let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// agent.controller().request_compaction(Some("Keep the order numbers.".into())).unwrap();
    /// # });
    /// ```
    pub fn request_compaction(&self, instructions: Option<String>) -> Result<(), AgentError> {
        self.control
            .messages
            .send(Input::Compact(instructions))
            .map_err(|_| AgentError::Closed)
    }

    /// Answers the tool call `call_id` of an
    /// [`InputRequested`](EventKind::InputRequested) event.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// let err = agent.respond("call_9", skillkit::approval::Decision::Approve).unwrap_err();
    /// assert!(matches!(err, skillkit::agent::AgentError::NotWaiting { .. }));
    /// # });
    /// ```
    pub fn respond(&self, call_id: &str, decision: Decision) -> Result<(), AgentError> {
        let waiting = self
            .control
            .shared
            .runtime
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(call_id);
        waiting
            .and_then(|sender| sender.send(decision).ok())
            .ok_or_else(|| AgentError::NotWaiting {
                call_id: call_id.to_owned(),
            })
    }

    /// Stops the answer in progress (a message still queued is not affected):
    /// its model stream is dropped (the HTTP
    /// request is cancelled), its running tools and sub-agents are cancelled,
    /// a [`Stopped`](EventKind::Stopped) event follows. The history keeps
    /// what was done (a stopped call gets an error result) and the agent
    /// takes the next message.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// agent.stop(); // nothing in progress: nothing happens
    /// # });
    /// ```
    pub fn stop(&self) {
        self.control
            .shared
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cancel();
    }

    /// The conversation so far (a copy), ready to serialise.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m")
    /// #     .session_id("s1");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// assert_eq!(agent.history().session_id, "s1");
    /// # });
    /// ```
    pub fn history(&self) -> History {
        self.control
            .shared
            .history
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The conversation's session id.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// assert!(agent.session_id().starts_with("session-"));
    /// # });
    /// ```
    pub fn session_id(&self) -> &str {
        &self.control.shared.runtime.session_id
    }
}

/// A running agent: send it messages and read its events. Returned by
/// [`start_agent`](crate::agent::start_agent).
///
/// The agent answers one message at a time, on its own tokio task. Its
/// events arrive in order on this handle ([`next_event`](Agent::next_event),
/// or the handle as a `Stream`); its control methods (`send_message`,
/// `respond`, `stop`, `history`, `session_id`) are those of
/// [`AgentController`], which [`controller`](Agent::controller) hands to other
/// tasks. Dropping the
/// agent and every controller cancels whatever it is doing.
pub struct Agent {
    controller: AgentController,
    events: mpsc::UnboundedReceiver<AgentEvent>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("session_id", &self.session_id())
            .finish_non_exhaustive()
    }
}

impl Agent {
    pub(crate) fn new(
        messages: mpsc::UnboundedSender<Input>,
        shared: Arc<Shared>,
        events: mpsc::UnboundedReceiver<AgentEvent>,
    ) -> Agent {
        Agent {
            controller: AgentController {
                control: Arc::new(Control { messages, shared }),
            },
            events,
        }
    }

    /// Queues a user message ([`AgentController::send_message`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new().text("ok"))).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// agent.send_message("Hello").unwrap();
    /// # });
    /// ```
    pub fn send_message(&self, text: impl Into<String>) -> Result<(), AgentError> {
        self.controller.send_message(text)
    }

    /// Answers a pending tool call ([`AgentController::respond`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// let err = agent.respond("call_9", skillkit::approval::Decision::Approve).unwrap_err();
    /// assert!(matches!(err, skillkit::agent::AgentError::NotWaiting { .. }));
    /// # });
    /// ```
    pub fn respond(&self, call_id: &str, decision: Decision) -> Result<(), AgentError> {
        self.controller.respond(call_id, decision)
    }

    /// Stops the answer in progress ([`AgentController::stop`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// agent.stop();
    /// # });
    /// ```
    pub fn stop(&self) {
        self.controller.stop()
    }

    /// The conversation so far ([`AgentController::history`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// assert!(agent.history().messages.is_empty());
    /// # });
    /// ```
    pub fn history(&self) -> History {
        self.controller.history()
    }

    /// The conversation's session id ([`AgentController::session_id`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// assert!(agent.session_id().starts_with("session-"));
    /// # });
    /// ```
    pub fn session_id(&self) -> &str {
        self.controller.session_id()
    }

    /// A control handle for other tasks.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new())).model("s://m");
    /// let agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// let controller = agent.controller();
    /// assert_eq!(controller.session_id(), agent.session_id());
    /// # });
    /// ```
    pub fn controller(&self) -> AgentController {
        self.controller.clone()
    }

    /// The next event; `None` once the agent has shut down and every event
    /// was read.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new().text("Hi!"))).model("s://m");
    /// let mut agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// agent.send_message("Hello").unwrap();
    /// let first = agent.next_event().await.unwrap();
    /// assert!(matches!(first.kind, skillkit::agent::EventKind::Delta { .. }));
    /// # });
    /// ```
    pub async fn next_event(&mut self) -> Option<AgentEvent> {
        self.events.recv().await
    }

    /// Sends `text` and waits for the answer: the final text, or the error
    /// that ended the work. Other events of the message are passed to
    /// `on_event` as they come (tool calls, deltas, sub-agents' events).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(skillkit::llm::Registry::new().with("s", skillkit::llm::Scripted::new().text("4"))).model("s://m");
    /// let mut agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// let answer = agent.ask("2 + 2?", |_| {}).await.unwrap();
    /// assert_eq!(answer, "4");
    /// # });
    /// ```
    pub async fn ask(
        &mut self,
        text: impl Into<String>,
        mut on_event: impl FnMut(&AgentEvent),
    ) -> Result<String, AgentError> {
        self.send_message(text)?;
        while let Some(event) = self.next_event().await {
            on_event(&event);
            if event.is_end_of_message() {
                return match event.kind {
                    EventKind::Finished { text } => Ok(text),
                    EventKind::Error(error) => Err(error),
                    _ => Err(AgentError::Stopped),
                };
            }
        }
        Err(AgentError::Closed)
    }

    /// Compacts the conversation now and waits for it (as `/compact` does
    /// in `skillkit chat`): the model summarises it, keeping what
    /// `instructions` ask for, and the skills in use are re-attached after
    /// the summary. Events meanwhile are passed to `on_event`.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::llm::{Registry, Scripted};
    /// let model = Scripted::new().text("Paris it is.").text("The user chose Paris.");
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build())
    /// #     .registry(Registry::empty().with("s", model.clone())).model("s://m");
    /// let mut agent = skillkit::agent::start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    /// agent.ask("Paris or Rome?", |_| {}).await.unwrap();
    /// let compaction = agent.compact(None, |_| {}).await.unwrap();
    /// assert_eq!(compaction.summary.as_deref(), Some("The user chose Paris."));
    /// # });
    /// ```
    pub async fn compact(
        &mut self,
        instructions: Option<&str>,
        mut on_event: impl FnMut(&AgentEvent),
    ) -> Result<Compaction, AgentError> {
        self.controller
            .request_compaction(instructions.map(str::to_owned))?;
        while let Some(event) = self.next_event().await {
            on_event(&event);
            if event.agent.is_root() {
                match event.kind {
                    EventKind::Compacted(compaction) => return Ok(compaction),
                    EventKind::Error(error) => return Err(error),
                    _ => {}
                }
            }
        }
        Err(AgentError::Closed)
    }
}

impl Stream for Agent {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.events.poll_recv(cx)
    }
}
