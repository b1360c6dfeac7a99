//! [`Scripted`]: an adapter that plays queued answers, for tests and offline demos.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::StreamExt;
use serde::Deserialize;
use serde_json::Value;

use crate::llm::{
    Adapter, Event, EventStream, LlmError, Message, Request, StopReason, ToolCall, Usage,
};

/// One queued answer of a [`Scripted`] adapter.
///
/// ```
/// use skillkit::llm::{Reply, ToolCall};
/// let reply = Reply::ToolCalls { text: String::new(), calls: vec![ToolCall::new("1", "clock", serde_json::json!({}))] };
/// assert!(matches!(reply, Reply::ToolCalls { .. }));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Text, then `end_turn`.
    Text(String),
    /// Optional text and tool calls, then `tool_use`.
    ToolCalls {
        /// Text before the calls; may be empty.
        text: String,
        /// The calls.
        calls: Vec<ToolCall>,
    },
    /// The request fails before streaming, with this error.
    Fail(LlmError),
    /// These exact events (to script a mid-stream [`Event::Error`], say).
    Events(Vec<Event>),
    /// This text, then a stream that stays open without another event until
    /// it is dropped: a model stalled mid-answer, to test stopping an answer
    /// (`Agent::stop`, Ctrl-C in `skillkit chat`) without timing.
    Stall(String),
}

type Hook = Arc<dyn Fn(&Request) + Send + Sync>;

/// One reply of a JSON script ([`Scripted::from_json`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptStep {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptCall>,
    #[serde(default)]
    stall: bool,
}

/// One tool call of a JSON script.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default = "empty_object")]
    input: Value,
}

/// A JSON script of rules ([`Scripted::from_json`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleScript {
    rules: Vec<RuleStep>,
}

/// One rule of a JSON script.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleStep {
    #[serde(default)]
    when: Option<String>,
    #[serde(default)]
    context: Option<String>,
    replies: Vec<ScriptStep>,
}

/// Answers chosen by the conversation rather than by order: the first rule
/// whose `when` is in the conversation's first user message and whose
/// `context` is anywhere in the request (the messages, the tools' names and
/// descriptions: what the model is shown), ignoring case (a condition left
/// out matches any), and of its replies the one for the request's turn (the
/// number of assistant messages before it). So conversations run at once,
/// in any order, get the same answers; and a rule can answer differently
/// when a skill is listed, or described otherwise.
#[derive(Debug, Clone, Default)]
pub struct Rule {
    /// Text the first user message must hold (any, when `None`).
    pub when: Option<String>,
    /// Text the request must hold anywhere (any, when `None`).
    pub context: Option<String>,
    /// The reply of each turn, in order.
    pub replies: Vec<Reply>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// An adapter that answers each request with the next queued [`Reply`] and
/// remembers every request it got.
///
/// A cheap cloneable handle: keep one clone to queue replies and read the
/// requests while a registry or an agent holds another. A request that finds
/// the queue empty fails with [`LlmError::ScriptExhausted`].
///
/// Usage counts are words: the request's words as input tokens, the reply's
/// as output tokens.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::llm::{Adapter, Message, Request, Response, Scripted};
/// let script = Scripted::new()
///     .tool_call("call_1", "clock", serde_json::json!({}))
///     .text("It is noon.");
/// let first = Response::collect(script.stream(Request::new(vec![Message::user("Time?")])).await.unwrap()).await.unwrap();
/// assert_eq!(first.message.tool_calls[0].name, "clock");
/// let second = Response::collect(script.stream(Request::default()).await.unwrap()).await.unwrap();
/// assert_eq!(second.message.text, "It is noon.");
/// assert_eq!(script.requests().len(), 2);
/// assert!(script.stream(Request::default()).await.is_err());
/// # });
/// ```
#[derive(Clone, Default)]
pub struct Scripted {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    rules: Vec<Rule>,
    requests: Vec<Request>,
    hook: Option<Hook>,
}

impl fmt::Debug for Scripted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("Scripted")
            .field("queued", &state.replies.len())
            .field("requests", &state.requests.len())
            .finish()
    }
}

impl Scripted {
    /// An adapter with nothing queued.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Scripted::new().remaining(), 0);
    /// ```
    pub fn new() -> Self {
        Scripted::default()
    }

    /// Queues a text answer.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Scripted::new().text("a").text("b").remaining(), 2);
    /// ```
    pub fn text(self, text: impl Into<String>) -> Self {
        self.push(Reply::Text(text.into()));
        self
    }

    /// Queues an answer that calls one tool.
    ///
    /// ```
    /// let s = skillkit::llm::Scripted::new().tool_call("1", "clock", serde_json::json!({}));
    /// assert_eq!(s.remaining(), 1);
    /// ```
    pub fn tool_call(self, id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        self.push(Reply::ToolCalls {
            text: String::new(),
            calls: vec![ToolCall::new(id, name, input)],
        });
        self
    }

    /// Queues a request that fails before streaming.
    ///
    /// ```
    /// let s = skillkit::llm::Scripted::new()
    ///     .error(skillkit::llm::LlmError::Other { provider: "scripted".into(), message: "down".into() });
    /// assert_eq!(s.remaining(), 1);
    /// ```
    pub fn error(self, error: LlmError) -> Self {
        self.push(Reply::Fail(error));
        self
    }

    /// An adapter with the replies of a script written as JSON, for offline
    /// runs of programs (`skillkit run --model scripted://FILE`): an array
    /// of replies, each an object with
    ///
    /// * `text`: the answer's text (optional when there are tool calls);
    /// * `tool_calls`: `[{"name": …, "input": {…}, "id": …}]`, `id` optional
    ///   (`call_<reply>_<call>`, counted from 1);
    /// * `stall: true`: stream the text, then stay open until stopped
    ///   ([`Reply::Stall`]).
    ///
    /// ```
    /// let script = skillkit::llm::Scripted::from_json(r#"[
    ///     {"tool_calls": [{"name": "activate_skill", "input": {"name": "notes:summarize"}}]},
    ///     {"text": "Done."},
    ///     {"text": "Thinking", "stall": true}
    /// ]"#).unwrap();
    /// assert_eq!(script.remaining(), 3);
    /// let err = skillkit::llm::Scripted::from_json(r#"[{"txt": "typo"}]"#).unwrap_err();
    /// assert!(err.to_string().contains("unknown field `txt`"));
    /// ```
    pub fn from_json(script: &str) -> Result<Self, serde_json::Error> {
        if script.trim_start().starts_with('{') {
            let script: RuleScript = serde_json::from_str(script)?;
            let scripted = Scripted::new();
            for rule in script.rules {
                scripted.rule(Rule {
                    when: rule.when,
                    context: rule.context,
                    replies: rule
                        .replies
                        .into_iter()
                        .enumerate()
                        .map(|(n, step)| reply_of(n, step))
                        .collect(),
                });
            }
            return Ok(scripted);
        }
        let steps: Vec<ScriptStep> = serde_json::from_str(script)?;
        let scripted = Scripted::new();
        for (n, step) in steps.into_iter().enumerate() {
            scripted.push(reply_of(n, step));
        }
        Ok(scripted)
    }

    /// Adds a rule: with rules, each request is answered by the first rule
    /// matching its conversation ([`Rule`]), not from the queue.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::llm::{Adapter, Message, Reply, Request, Response, Rule, Scripted};
    /// let script = Scripted::new();
    /// script.rule(Rule { when: Some("pdf".into()), replies: vec![Reply::Text("A PDF.".into())], ..Rule::default() });
    /// script.rule(Rule { replies: vec![Reply::Text("Other.".into())], ..Rule::default() });
    /// let answer = |text: &str| {
    ///     let request = Request::new(vec![Message::user(text)]);
    ///     let script = script.clone();
    ///     async move { Response::collect(script.stream(request).await.unwrap()).await.unwrap().message.text }
    /// };
    /// assert_eq!(answer("Read this PDF").await, "A PDF.");
    /// assert_eq!(answer("Hello").await, "Other.");
    /// # });
    /// ```
    pub fn rule(&self, rule: Rule) {
        self.lock().rules.push(rule);
    }

    /// Queues any reply, through a shared handle.
    ///
    /// ```
    /// let s = skillkit::llm::Scripted::new();
    /// s.push(skillkit::llm::Reply::Text("hi".into()));
    /// assert_eq!(s.remaining(), 1);
    /// ```
    pub fn push(&self, reply: Reply) {
        self.lock().replies.push_back(reply);
    }

    /// Calls `hook` with every request, as it arrives (before its reply is
    /// taken from the queue).
    ///
    /// ```
    /// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
    /// let seen = Arc::new(AtomicUsize::new(0));
    /// let count = seen.clone();
    /// let s = skillkit::llm::Scripted::new().on_request(move |r| { count.fetch_add(r.messages.len(), Ordering::SeqCst); });
    /// # let _ = s;
    /// ```
    pub fn on_request(self, hook: impl Fn(&Request) + Send + Sync + 'static) -> Self {
        self.lock().hook = Some(Arc::new(hook));
        self
    }

    /// Every request received so far, in order.
    ///
    /// ```
    /// assert!(skillkit::llm::Scripted::new().requests().is_empty());
    /// ```
    pub fn requests(&self) -> Vec<Request> {
        self.lock().requests.clone()
    }

    /// How many replies are still queued.
    ///
    /// ```
    /// assert_eq!(skillkit::llm::Scripted::new().remaining(), 0);
    /// ```
    pub fn remaining(&self) -> usize {
        self.lock().replies.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking hook poisons the lock; the queue itself is still sound.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait::async_trait]
impl Adapter for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn default_model(&self) -> Option<&str> {
        Some("scripted")
    }

    async fn stream(&self, request: Request) -> Result<EventStream, LlmError> {
        let hook = self.lock().hook.clone();
        if let Some(hook) = hook {
            hook(&request);
        }
        let input_tokens = words_in(&request);
        let model = (!request.model.is_empty()).then(|| request.model.clone());
        let (reply, number) = {
            let mut state = self.lock();
            let reply = match state.rules.is_empty() {
                true => state.replies.pop_front(),
                false => by_rule(&state.rules, &request),
            };
            state.requests.push(request);
            (reply, state.requests.len())
        };
        let events = match reply.ok_or(LlmError::ScriptExhausted { request: number })? {
            Reply::Fail(error) => return Err(error),
            // Exactly the events given.
            Reply::Events(events) => return Ok(Box::pin(futures::stream::iter(events))),
            Reply::Text(text) => answer(&text, &[], StopReason::EndTurn, input_tokens),
            Reply::ToolCalls { text, calls } => {
                answer(&text, &calls, StopReason::ToolUse, input_tokens)
            }
            Reply::Stall(text) => {
                let events = futures::stream::iter([Event::delta(text)]);
                return Ok(Box::pin(events.chain(futures::stream::pending())));
            }
        };
        let started = Event::Started {
            id: format!("scripted-{number}"),
            model: model.unwrap_or_else(|| "scripted".to_owned()),
        };
        Ok(Box::pin(futures::stream::iter(
            std::iter::once(started).chain(events),
        )))
    }
}

/// A JSON script's step as a reply (`n`: its place, for the calls' ids).
fn reply_of(n: usize, step: ScriptStep) -> Reply {
    let text = step.text.unwrap_or_default();
    match (step.stall, step.tool_calls) {
        (true, _) => Reply::Stall(text),
        (false, calls) if calls.is_empty() => Reply::Text(text),
        (false, calls) => Reply::ToolCalls {
            text,
            calls: calls
                .into_iter()
                .enumerate()
                .map(|(i, call)| {
                    let id = call
                        .id
                        .unwrap_or_else(|| format!("call_{}_{}", n + 1, i + 1));
                    ToolCall::new(id, call.name, call.input)
                })
                .collect(),
        },
    }
}

/// The reply of the first rule matching `request`'s conversation, for its
/// turn; `None` past the rule's replies or when no rule matches.
fn by_rule(rules: &[Rule], request: &Request) -> Option<Reply> {
    let first = request.messages.iter().find_map(|m| match m {
        Message::User { text } => Some(text.to_lowercase()),
        _ => None,
    });
    let first = first.unwrap_or_default();
    let turn = request
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant(_)))
        .count();
    let mut context: Option<String> = None;
    let mut context = || {
        context
            .get_or_insert_with(|| context_of(request).to_lowercase())
            .clone()
    };
    rules
        .iter()
        .find(|rule| {
            rule.when
                .as_ref()
                .is_none_or(|when| first.contains(&when.to_lowercase()))
                && rule
                    .context
                    .as_ref()
                    .is_none_or(|text| context().contains(&text.to_lowercase()))
        })
        .and_then(|rule| rule.replies.get(turn).cloned())
}

/// What the model is shown: every message's text and each tool's name
/// and description.
fn context_of(request: &Request) -> String {
    let mut text = String::new();
    for message in &request.messages {
        let part = match message {
            Message::System { text } | Message::User { text } => text.as_str(),
            Message::Assistant(message) => message.text.as_str(),
            Message::ToolResult(result) => result.content.as_str(),
            _ => "",
        };
        text.push_str(part);
        text.push('\n');
    }
    for tool in request.tools.iter() {
        text.push_str(&tool.name);
        text.push('\n');
        text.push_str(&tool.description);
        text.push('\n');
        text.push_str(&tool.input_schema.to_string());
        text.push('\n');
    }
    text
}

fn answer(
    text: &str,
    calls: &[ToolCall],
    stop_reason: StopReason,
    input_tokens: u64,
) -> Vec<Event> {
    let mut events = Vec::new();
    if !text.is_empty() {
        events.push(Event::delta(text));
    }
    for call in calls {
        events.push(Event::ToolCallStart {
            id: call.id.clone(),
            name: call.name.clone(),
        });
        events.push(Event::ToolCallComplete {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
        });
    }
    let output_tokens = words(text)
        + calls
            .iter()
            .map(|c| words(&c.input.to_string()))
            .sum::<u64>();
    events.push(Event::Usage(Usage {
        input_tokens,
        output_tokens,
        ..Default::default()
    }));
    events.push(Event::Done { stop_reason });
    events
}

fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

fn words_in(request: &Request) -> u64 {
    use crate::llm::Message;
    request
        .messages
        .iter()
        .map(|message| match message {
            Message::System { text } | Message::User { text } => words(text),
            Message::Assistant(a) => words(&a.text),
            Message::ToolResult(r) => words(&r.content),
            Message::Compaction(c) => words(&c.text()),
        })
        .sum()
}
