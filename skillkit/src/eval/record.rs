//! Recording a model's answers and replaying them, so a CI job re-grades an
//! evaluation without paying for the model again: [`Recorded`] is an
//! [`Adapter`] that, recording, asks the real model and keeps each answer
//! in a folder; replaying, answers from that folder alone.
//!
//! An answer is kept under a digest of what the model was shown (the
//! messages, the tools), with absolute paths blanked so a recording made in
//! one checkout replays in another; one folder holds one model's answers.
//! Runs of the same request keep every answer, and a replay serves them in
//! turn.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::llm::{
    Adapter, AssistantMessage, Event, EventStream, LlmError, Registry, Request, Response,
    StopReason, Usage,
};

/// One kept answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kept {
    message: AssistantMessage,
    usage: Usage,
    stop_reason: String,
}

/// A folder's answers to one request.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Tape {
    model: String,
    answers: Vec<Kept>,
}

/// An adapter that records a model's answers into a folder, or replays
/// them from it.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::eval::Recorded;
/// use skillkit::llm::{Message, Registry, Request, Response, Scripted};
/// let dir = tempfile::tempdir().unwrap();
/// let real = Registry::new().with("scripted", Scripted::new().text("Recorded once."));
/// let recording = Registry::new().with("rec", Recorded::record(real, "scripted://m", dir.path()));
/// let ask = |registry: Registry, uri: &'static str| async move {
///     let events = registry.stream(uri, Request::new(vec![Message::user("Hi")])).await.unwrap();
///     Response::collect(events).await.unwrap().message.text
/// };
/// assert_eq!(ask(recording, "rec://m").await, "Recorded once.");
/// let replaying = Registry::new().with("rep", Recorded::replay(dir.path()));
/// assert_eq!(ask(replaying, "rep://m").await, "Recorded once.");
/// # });
/// ```
#[derive(Clone)]
pub struct Recorded {
    /// The real models, when recording.
    real: Option<Registry>,
    /// The model asked, when recording.
    uri: String,
    dir: PathBuf,
    /// Answers served so far, per request (replaying); writes in turn
    /// (recording).
    served: Arc<Mutex<HashMap<String, usize>>>,
}

impl std::fmt::Debug for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorded")
            .field("uri", &self.uri)
            .field("dir", &self.dir)
            .field("recording", &self.real.is_some())
            .finish()
    }
}

impl Recorded {
    /// Asks model `uri` of `real` and keeps every answer in `dir` (a
    /// folder for this model alone).
    ///
    /// ```
    /// let real = skillkit::llm::Registry::new();
    /// let recorder = skillkit::eval::Recorded::record(real, "anthropic://claude-haiku-4-5", "tapes/haiku");
    /// # drop(recorder);
    /// ```
    pub fn record(real: Registry, uri: impl Into<String>, dir: impl Into<PathBuf>) -> Recorded {
        Recorded {
            real: Some(real),
            uri: uri.into(),
            dir: dir.into(),
            served: Arc::default(),
        }
    }

    /// Answers as the model did when `dir` was recorded; a request it was
    /// never asked fails, saying to record again.
    ///
    /// ```
    /// let replayer = skillkit::eval::Recorded::replay("tapes/haiku");
    /// # drop(replayer);
    /// ```
    pub fn replay(dir: impl Into<PathBuf>) -> Recorded {
        Recorded {
            real: None,
            uri: String::new(),
            dir: dir.into(),
            served: Arc::default(),
        }
    }

    /// The file of `request`'s answers.
    fn file(&self, request: &Request) -> PathBuf {
        let shown = serde_json::json!({
            "messages": request.messages,
            "tools": request.tools.iter().map(|t| (&t.name, &t.description, &t.input_schema)).collect::<Vec<_>>(),
        });
        let text = blank_paths(&shown.to_string());
        let digest = sha2::Sha256::digest(text.as_bytes());
        let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{hex}.json"))
    }

    fn fail(&self, message: String) -> LlmError {
        LlmError::Other {
            provider: "recorded".into(),
            message,
        }
    }
}

/// `text` with every absolute path (`/a/b…`) replaced by `<path>`.
fn blank_paths(text: &str) -> String {
    static PATH: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(/[A-Za-z0-9._~+\-]+){2,}/?").ok());
    match PATH.as_ref() {
        Some(re) => re.replace_all(text, "<path>").into_owned(),
        None => text.to_owned(),
    }
}

fn stop_reason(text: &str) -> StopReason {
    match text {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        other => StopReason::Other(other.to_owned()),
    }
}

fn stop_text(reason: &StopReason) -> String {
    match reason {
        StopReason::EndTurn => "end_turn".into(),
        StopReason::ToolUse => "tool_use".into(),
        StopReason::MaxTokens => "max_tokens".into(),
        StopReason::StopSequence => "stop_sequence".into(),
        StopReason::Other(other) => other.clone(),
    }
}

/// The events of a kept answer.
fn events(kept: &Kept) -> Vec<Event> {
    let mut events = vec![Event::Started {
        id: "recorded".into(),
        model: "recorded".into(),
    }];
    if !kept.message.text.is_empty() {
        events.push(Event::delta(kept.message.text.clone()));
    }
    for call in &kept.message.tool_calls {
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
    events.push(Event::Usage(kept.usage));
    events.push(Event::Done {
        stop_reason: stop_reason(&kept.stop_reason),
    });
    events
}

#[async_trait::async_trait]
impl Adapter for Recorded {
    fn name(&self) -> &str {
        "recorded"
    }

    async fn stream(&self, request: Request) -> Result<EventStream, LlmError> {
        let file = self.file(&request);
        let key = file.display().to_string();
        let Some(real) = &self.real else {
            let text = std::fs::read_to_string(&file).map_err(|_| {
                self.fail(format!(
                    "no recorded answer for this request in {}; record again with --record",
                    self.dir.display()
                ))
            })?;
            let tape: Tape = serde_json::from_str(&text)
                .map_err(|e| self.fail(format!("{}: not a recording: {e}", file.display())))?;
            if tape.answers.is_empty() {
                return Err(self.fail(format!("{}: no answers", file.display())));
            }
            let turn = {
                let mut served = self.served.lock().unwrap_or_else(PoisonError::into_inner);
                let n = served.entry(key).or_insert(0);
                *n += 1;
                *n - 1
            };
            let kept = &tape.answers[turn % tape.answers.len()];
            return Ok(Box::pin(futures::stream::iter(events(kept))));
        };
        let answer = real.stream(&self.uri, request).await?;
        let response = Response::collect(answer).await?;
        let kept = Kept {
            message: response.message,
            usage: response.usage,
            stop_reason: stop_text(&response.stop_reason),
        };
        {
            let _turn = self.served.lock().unwrap_or_else(PoisonError::into_inner);
            let mut tape: Tape = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            tape.model.clone_from(&self.uri);
            tape.answers.push(kept.clone());
            let text = serde_json::to_string_pretty(&tape).unwrap_or_default();
            std::fs::create_dir_all(&self.dir)
                .and_then(|()| crate::whole::write(&file, text.as_bytes()))
                .map_err(|e| {
                    self.fail(format!("{}: cannot keep the answer: {e}", file.display()))
                })?;
        }
        Ok(Box::pin(futures::stream::iter(events(&kept))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_are_blanked() {
        assert_eq!(
            blank_paths("Skill directory: /tmp/abc/docs/skills/pdf\nnext"),
            "Skill directory: <path>\nnext"
        );
        assert_eq!(blank_paths("a/b and 1/2"), "a/b and 1/2");
    }
}
