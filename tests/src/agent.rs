//! Shared by the `agent*` tests: agents over a [`Scripted`] model, small
//! tools, and readers for the events and the requests the model got.

use std::future::Future;
use std::time::Duration;

use skillkit::ToolDefinition;
use skillkit::agent::{Agent, AgentError, AgentEvent, AgentOptions, EventKind, InputRequest};
use skillkit::approval::{AgentPath, Decision};
use skillkit::llm::{Message, Registry, Request, Scripted, ToolResult};
use skillkit::{AgentDefinition, Catalog, Memory, Tool, ToolExecution, ToolOutcome};

/// How long a test waits for something that must happen before it calls the
/// agent stuck. Never an assertion about speed: only a guard against hanging.
const HANG: Duration = Duration::from_secs(60);

/// Options over `catalog` whose only model is `script`, as `scripted://m`.
pub fn options(catalog: Catalog, script: &Scripted) -> AgentOptions {
    AgentOptions::new(catalog)
        .registry(Registry::empty().with("scripted", script.clone()))
        .model("scripted://m")
}

/// A catalog over `memory`.
pub fn catalog(memory: &Memory) -> Catalog {
    Catalog::builder().provider(memory.clone()).build()
}

/// The root agent's definition.
pub fn lead() -> AgentDefinition {
    AgentDefinition::new("lead", "Leads the work.").with_system_prompt("You lead.")
}

/// `future`, or a panic naming `what` when it hangs.
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(HANG, future)
        .await
        .unwrap_or_else(|_| panic!("stuck: {what} did not happen within {HANG:?}"))
}

/// Sends `text` and waits for the end of its work: the answer (or error) and
/// every event of the message, the last one included. No call may wait for
/// a decision.
pub async fn ask(agent: &mut Agent, text: &str) -> (Result<String, AgentError>, Vec<AgentEvent>) {
    ask_deciding(agent, text, |request| {
        panic!("no call should wait for a decision: {request:?}")
    })
    .await
}

/// Like [`ask`], answering every waiting call with `decide`.
pub async fn ask_deciding(
    agent: &mut Agent,
    text: &str,
    decide: impl Fn(&InputRequest) -> Decision,
) -> (Result<String, AgentError>, Vec<AgentEvent>) {
    let control = agent.controller();
    let mut events = Vec::new();
    let work = agent.ask(text, |event| {
        if let EventKind::InputRequested(request) = &event.kind {
            control
                .respond(&request.call_id, decide(request))
                .expect("the call waits for this decision");
        }
        events.push(event.clone());
    });
    let answer = within(&format!("the answer to {text:?}"), work).await;
    (answer, events)
}

/// The events up to and including the end of the current message.
pub async fn until_end(agent: &mut Agent) -> Vec<AgentEvent> {
    within("the end of the message", async {
        let mut events = Vec::new();
        while let Some(event) = agent.next_event().await {
            let end = event.is_end_of_message();
            events.push(event);
            if end {
                return events;
            }
        }
        panic!("the agent shut down before the end of the message: {events:?}");
    })
    .await
}

/// A `ToolResult` event, flattened.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub agent: AgentPath,
    pub id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
}

/// The `ToolResult` events among `events`, in order.
pub fn outcomes(events: &[AgentEvent]) -> Vec<Outcome> {
    events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::ToolResult {
                id,
                name,
                content,
                is_error,
            } => Some(Outcome {
                agent: event.agent.clone(),
                id: id.clone(),
                name: name.clone(),
                content: content.clone(),
                is_error: *is_error,
            }),
            _ => None,
        })
        .collect()
}

/// The one error result among `events` (panics unless there is exactly one).
pub fn error_result(events: &[AgentEvent]) -> String {
    let errors: Vec<Outcome> = outcomes(events)
        .into_iter()
        .filter(|o| o.is_error)
        .collect();
    assert_eq!(errors.len(), 1, "one error result expected: {errors:?}");
    errors[0].content.clone()
}

/// The system prompt of `request` (empty when it has none).
pub fn system(request: &Request) -> &str {
    request
        .messages
        .iter()
        .find_map(|m| match m {
            Message::System { text } => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or("")
}

/// The tool names `request` offered the model.
pub fn tool_names(request: &Request) -> Vec<&str> {
    request.tools.iter().map(|t| t.name.as_str()).collect()
}

/// The tool of `request` named `name` on the wire.
pub fn tool<'a>(request: &'a Request, name: &str) -> &'a ToolDefinition {
    request
        .tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool `{name}` in {:?}", tool_names(request)))
}

/// The tool results among the messages of `request`, in order.
pub fn results_in(request: &Request) -> Vec<&ToolResult> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(result) => Some(result),
            _ => None,
        })
        .collect()
}

/// The user texts among the messages of `request`, in order.
pub fn users_in(request: &Request) -> Vec<&str> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::User { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Whether every tool call in `messages` has a result, and every result a
/// call before it (what every vendor insists on).
pub fn calls_answered(messages: &[Message]) -> bool {
    let mut open: Vec<&str> = Vec::new();
    for message in messages {
        match message {
            Message::Assistant(a) => {
                if !open.is_empty() {
                    return false;
                }
                open = a.tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            Message::ToolResult(r) => match open.iter().position(|id| *id == r.tool_call_id) {
                Some(at) => {
                    open.remove(at);
                }
                None => return false,
            },
            _ if !open.is_empty() => return false,
            _ => {}
        }
    }
    open.is_empty()
}

/// Whether vendors accept `name` as a tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn wire_safe(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A tool made of a function of the execution.
pub struct FnTool<F>(pub F);

#[skillkit::async_trait]
impl<F> Tool for FnTool<F>
where
    F: Fn(ToolExecution) -> ToolOutcome + Send + Sync,
{
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        (self.0)(execution)
    }
}

/// A tool that returns its `arguments` text.
pub fn echo() -> FnTool<impl Fn(ToolExecution) -> ToolOutcome + Send + Sync> {
    FnTool(|execution: ToolExecution| ToolOutcome::ok(execution.arguments().to_owned()))
}

/// Queries `catalog` until skill `name` satisfies `ready` (a notification
/// reaches a provider in its own time), or panics as stuck.
pub async fn until_skill(
    catalog: &Catalog,
    name: &str,
    ready: impl Fn(&skillkit::Skill) -> bool,
) -> std::sync::Arc<skillkit::Skill> {
    within(&format!("skill `{name}` as expected"), async {
        loop {
            if let Some(skill) = catalog.get_skill(name).await
                && ready(&skill)
            {
                return skill;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}
