//! Compaction: when a conversation passes a share of the model's context
//! window, old tool results are cleared, and if that is not enough the model
//! summarises what came before into one message, after which the skills
//! still in use are re-attached whole (each within its own budget) and a
//! marker names any that did not fit. The listing is in the system prompt,
//! rebuilt for every request, so it is never lost.
//!
//! A compaction is a history item ([`Message::Compaction`]): stored in the
//! session like any other, so a resumed conversation sees what was
//! compacted; written only over the version it was made from, so it never
//! hides an append made meanwhile (it is made again over it).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::context::{CLEARED, chars, view_owned};
use crate::agent::run::AgentRun;
use crate::agent::session::Saved;
use crate::agent::spans::Chat;
use crate::agent::{AgentError, EventKind, History, context_window};
use crate::dispatch::activate::ACTIVATE_SKILL;
use crate::llm::{Compaction, KeptSkill, Message, Request, Response};

mod policy;

pub use policy::{
    CompactionPolicy, DEFAULT_COMPACT_AT_PERCENT, DEFAULT_CONTEXT_WINDOW,
    DEFAULT_KEEP_TOOL_RESULTS, DEFAULT_SKILL_TOKENS, DEFAULT_SKILLS_TOKENS,
};

/// What the model is told to do with the transcript.
const SUMMARISE: &str = "You summarise a conversation between a user and an AI agent, so \
     that the agent can go on from your summary alone. Keep: what the user asked for and \
     why, decisions and their reasons, facts learned (names, paths, values, errors), work \
     done and its results, what remains to do, and the latest request word for word. \
     Leave out the instructions of skills: they are kept apart and given back to the \
     agent whole. Answer with the summary only.";

/// How many characters of one tool call's input a transcript shows.
const INPUT_CHARS: usize = 500;

impl AgentRun {
    /// The size, in tokens, past which the conversation is compacted.
    pub(crate) fn compact_at(&self) -> u64 {
        (self.window as u64) * u64::from(self.runtime.compaction.at_percent) / 100
    }

    /// What the request asks the API to clear itself, when the policy lets
    /// it.
    pub(crate) fn server_clearing(&self) -> Option<crate::llm::ClearToolUses> {
        let policy = &self.runtime.compaction;
        policy.server_clearing.then(|| crate::llm::ClearToolUses {
            trigger_tokens: self.compact_at() / 2,
            keep: u32::try_from(policy.keep_tool_results).unwrap_or(u32::MAX),
            exclude_tools: vec![ACTIVATE_SKILL.to_owned()],
        })
    }

    /// Compacts `history` now, as asked: the model summarises it, keeping
    /// what `instructions` say.
    pub(crate) async fn compact_now(
        &mut self,
        history: &Mutex<History>,
        saved: Option<&mut Saved>,
        instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Compaction, AgentError> {
        let (_, tools) = self.tools().await;
        let fixed = tools.system.len() + tools.definitions_chars;
        self.compact(history, saved, How::Manual(instructions), fixed, cancel)
            .await
    }

    /// Compacts `history`: clears old tool results when `clear` allows and
    /// that is enough, else has the model summarise it. `fixed` is the size
    /// of the request besides its messages (system prompt, tools), in
    /// characters. The compaction is in `history` (and in the session)
    /// when this returns it.
    pub(crate) async fn compact(
        &mut self,
        history: &Mutex<History>,
        mut saved: Option<&mut Saved>,
        how: How<'_>,
        fixed: usize,
        cancel: &CancellationToken,
    ) -> Result<Compaction, AgentError> {
        for _ in 0..4 {
            if let Some(saved) = saved.as_deref_mut() {
                saved
                    .sync(history)
                    .await
                    .map_err(|e| AgentError::Session(e.to_string()))?;
            }
            let messages = lock(history).messages.clone();
            let compaction = self.plan(&messages, &how, fixed, cancel).await?;
            lock(history)
                .messages
                .push(Message::Compaction(compaction.clone()));
            let Some(saved) = saved.as_deref_mut() else {
                return Ok(compaction);
            };
            match saved.commit(history).await {
                Ok(true) => return Ok(compaction),
                // Another writer appended meanwhile: made again over it.
                Ok(false) => {
                    let mut history = lock(history);
                    if matches!(history.messages.last(), Some(Message::Compaction(c)) if *c == compaction)
                    {
                        history.messages.pop();
                    }
                }
                Err(error) => {
                    lock(history).messages.pop();
                    return Err(AgentError::Session(error.to_string()));
                }
            }
        }
        Err(AgentError::Compaction(
            "other writers kept appending to the session while it was compacted; try again".into(),
        ))
    }

    /// The compaction of `messages`.
    async fn plan(
        &mut self,
        messages: &[Message],
        how: &How<'_>,
        fixed: usize,
        cancel: &CancellationToken,
    ) -> Result<Compaction, AgentError> {
        let policy = self.runtime.compaction.clone();
        let seen = view_owned(messages);
        if !seen.iter().any(|m| !matches!(m, Message::Compaction(_))) {
            return Err(AgentError::Compaction(
                "there is nothing new to compact".into(),
            ));
        }
        let meter = self.meter;
        let size = |view: &[Message]| meter.tokens(fixed + view.iter().map(chars).sum::<usize>());
        let before = size(&seen);
        let target = self.compact_at() / 2;
        let calls = Calls::of(&seen);

        if policy.clear_tool_results && !policy.server_clearing && matches!(how, How::Auto) {
            let mut after = before;
            let mut cleared = Vec::new();
            for (id, length) in calls.clearable(&seen, policy.keep_tool_results) {
                if after <= target {
                    break;
                }
                after = after.saturating_sub(meter.tokens(length.saturating_sub(CLEARED.len())));
                cleared.push(id.to_owned());
            }
            if after <= target && !cleared.is_empty() {
                return Ok(Compaction {
                    cleared,
                    tokens_before: before,
                    tokens_after: after,
                    ..Compaction::default()
                });
            }
        }

        // The message being answered and its turns stay as they are, when
        // they are small enough to.
        let kept = match how {
            How::Auto => kept(messages),
            How::Manual(_) => 0,
        };
        let kept_seen = messages[messages.len() - kept..]
            .iter()
            .filter(|m| !matches!(m, Message::Compaction(_)))
            .count();
        let (kept, kept_seen) = match size(&seen[seen.len() - kept_seen..]) > target / 2 {
            true => (0, 0),
            false => (kept, kept_seen),
        };
        let summarised = &seen[..seen.len() - kept_seen];
        let budget = (self.compact_at() as usize).saturating_mul(crate::agent::CHARS_PER_TOKEN);
        let transcript = calls.transcript(summarised, budget);
        let instructions = match how {
            How::Manual(Some(text)) => Some(*text),
            _ => policy.instructions.as_deref(),
        };
        let summary = self.summarise(transcript, instructions, cancel).await?;
        let (skills, left_out) = reattach(
            calls.in_use(&seen),
            policy
                .skill_tokens
                .saturating_mul(crate::agent::CHARS_PER_TOKEN),
            policy
                .skills_tokens
                .saturating_mul(crate::agent::CHARS_PER_TOKEN),
        );
        let mut compaction = Compaction {
            summary: Some(summary),
            skills,
            left_out,
            kept,
            tokens_before: before,
            ..Compaction::default()
        };
        let mut after = vec![Message::Compaction(compaction.clone())];
        after.extend_from_slice(&seen[seen.len() - kept_seen..]);
        compaction.tokens_after = size(&after);
        Ok(compaction)
    }

    /// The model's summary of `transcript`.
    async fn summarise(
        &mut self,
        transcript: String,
        instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<String, AgentError> {
        let mut prompt = format!("<transcript>\n{transcript}\n</transcript>\n\nSummarise it.");
        if let Some(instructions) = instructions {
            prompt.push_str("\n\nAlso: ");
            prompt.push_str(instructions);
        }
        let request = Request {
            model: self.model.parsed.model.clone(),
            messages: vec![Message::system(SUMMARISE), Message::user(prompt)],
            tools: Vec::new().into(),
            options: self.model.parsed.options.clone(),
        };
        // A model request like any other: traced as a `chat` span.
        let span = self.chat_span(&request);
        let chat = Chat::new(span.clone(), self.model.adapter.name(), &request);
        let adapter = std::sync::Arc::clone(&self.model.adapter);
        let asked = async {
            let events = adapter.stream(request).await?;
            Response::collect(events.inspect(|event| chat.observe(Some(event)))).await
        };
        let response = tokio::select! {
            response = asked.instrument(span) => response,
            () = cancel.cancelled() => {
                chat.failed("cancelled");
                return Err(AgentError::Stopped);
            }
        };
        let response = match response {
            Ok(response) => {
                chat.answered(&response.message);
                response
            }
            Err(error) => {
                chat.failed(&error.error_type());
                return Err(AgentError::Compaction(format!(
                    "the model could not summarise: {error}"
                )));
            }
        };
        self.total += response.usage;
        self.emit(EventKind::Usage {
            request: response.usage,
            total: self.total,
        });
        let summary = response.message.text.trim().to_owned();
        match summary.is_empty() {
            true => Err(AgentError::Compaction(
                "the model's summary was empty".into(),
            )),
            false => Ok(summary),
        }
    }
}

/// The context window of `model` under `policy`, in tokens: the policy's,
/// else the model's, else [`DEFAULT_CONTEXT_WINDOW`].
pub(crate) fn window_of(policy: &CompactionPolicy, model: &crate::agent::run::Model) -> usize {
    policy
        .window
        .unwrap_or_else(|| context_window(model.name()).unwrap_or(DEFAULT_CONTEXT_WINDOW))
}

/// Why a compaction is made.
pub(crate) enum How<'a> {
    /// The next request passes the policy's share of the window.
    Auto,
    /// Asked for ([`Agent::compact`](crate::agent::Agent::compact)), with what
    /// the summary must keep.
    Manual(Option<&'a str>),
}

/// The tool calls of a view: each call's tool, and the skill an
/// `activate_skill` call names.
struct Calls<'a> {
    tools: HashMap<&'a str, &'a str>,
    skills: HashMap<&'a str, &'a str>,
}

impl<'a> Calls<'a> {
    fn of(view: &'a [Message]) -> Calls<'a> {
        let mut calls = Calls {
            tools: HashMap::new(),
            skills: HashMap::new(),
        };
        for message in view {
            let Message::Assistant(assistant) = message else {
                continue;
            };
            for call in &assistant.tool_calls {
                calls.tools.insert(&call.id, &call.name);
                if call.name == ACTIVATE_SKILL
                    && let Some(name) = call.input.get("name").and_then(|n| n.as_str())
                {
                    calls.skills.insert(&call.id, name);
                }
            }
        }
        calls
    }

    /// The skills in use: the latest activation of each, latest first (then
    /// those the last compaction re-attached).
    fn in_use(&self, view: &'a [Message]) -> Vec<(&'a str, &'a str)> {
        let mut used: Vec<(&str, &str)> = Vec::new();
        let mut push = |name: &'a str, content: &'a str| {
            if !used.iter().any(|(n, _)| *n == name) {
                used.push((name, content));
            }
        };
        for message in view.iter().rev() {
            match message {
                Message::ToolResult(result) if !result.is_error => {
                    if let Some(name) = self.skills.get(result.tool_call_id.as_str()) {
                        push(name, &result.content);
                    }
                }
                Message::Compaction(compaction) => {
                    for skill in &compaction.skills {
                        push(&skill.name, &skill.content);
                    }
                }
                _ => {}
            }
        }
        used
    }

    /// The tool results clearing may take, oldest first, with their sizes:
    /// not an activation, not one of the latest `keep`, not cleared yet.
    fn clearable(&self, view: &'a [Message], keep: usize) -> Vec<(&'a str, usize)> {
        let mut results: Vec<(&str, usize)> = view
            .iter()
            .filter_map(|message| match message {
                Message::ToolResult(result)
                    if !self.skills.contains_key(result.tool_call_id.as_str())
                        && self.tools.get(result.tool_call_id.as_str())
                            != Some(&ACTIVATE_SKILL)
                        && result.content != CLEARED =>
                {
                    Some((result.tool_call_id.as_str(), result.content.len()))
                }
                _ => None,
            })
            .collect();
        results.truncate(results.len().saturating_sub(keep));
        results
    }

    /// `view` as text for the summary, within `budget` characters: the
    /// skills' instructions left out (they are re-attached), then the oldest
    /// tool results cleared, then the oldest lines dropped, until it fits.
    fn transcript(&self, view: &[Message], budget: usize) -> String {
        let mut lines: Vec<String> = Vec::new();
        let mut results: Vec<usize> = Vec::new();
        for message in view {
            match message {
                Message::System { text } => lines.push(format!("[system] {text}")),
                Message::User { text } => lines.push(format!("User: {text}")),
                Message::Assistant(assistant) => {
                    if !assistant.text.is_empty() {
                        lines.push(format!("Agent: {}", assistant.text));
                    }
                    for call in &assistant.tool_calls {
                        let input = call.input.to_string();
                        lines.push(format!(
                            "Agent called {}({})",
                            call.name,
                            cut(&input, INPUT_CHARS)
                        ));
                    }
                }
                Message::ToolResult(result) => {
                    let id = result.tool_call_id.as_str();
                    if let Some(skill) = self.skills.get(id) {
                        lines.push(format!(
                            "[{skill} was activated: its instructions are kept apart]"
                        ));
                        continue;
                    }
                    let tool = self.tools.get(id).copied().unwrap_or("a tool");
                    let failed = if result.is_error { " (failed)" } else { "" };
                    results.push(lines.len());
                    lines.push(format!("Result of {tool}{failed}: {}", result.content));
                }
                Message::Compaction(compaction) => {
                    if let Some(summary) = &compaction.summary {
                        lines.push(format!("[Summary of the conversation before]\n{summary}"));
                    }
                }
            }
        }
        let mut total: usize = lines.iter().map(|l| l.len() + 1).sum();
        for at in results {
            if total <= budget {
                break;
            }
            let cleared = "[a tool result, cleared]".to_owned();
            total = total - lines[at].len() + cleared.len();
            lines[at] = cleared;
        }
        let mut first = 0;
        while total > budget && first + 1 < lines.len() {
            total -= lines[first].len() + 1;
            first += 1;
        }
        let mut text = String::with_capacity(total + 64);
        if first > 0 {
            text.push_str(&format!("[{first} earlier lines left out]\n"));
        }
        for line in &lines[first..] {
            text.push_str(cut(line, budget));
            text.push('\n');
        }
        text
    }
}

/// How many messages at the end of `history` a compaction keeps: from the
/// latest user message after the last summary, if there is one.
fn kept(history: &[Message]) -> usize {
    let after = history
        .iter()
        .rposition(|m| matches!(m, Message::Compaction(c) if c.summary.is_some()))
        .map_or(0, |at| at + 1);
    history[after..]
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
        .map_or(0, |at| history.len() - after - at)
}

/// The skills `in_use` re-attached: latest first, each cut to `one`
/// characters, all within `all`; and the names of those left out.
fn reattach(in_use: Vec<(&str, &str)>, one: usize, all: usize) -> (Vec<KeptSkill>, Vec<String>) {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    let mut used = 0;
    for (name, content) in in_use {
        let (content, cut_short) = match content.len() > one {
            false => (content.to_owned(), false),
            true => {
                // At the last line end or space of the last quarter, so no
                // word is cut in two.
                let head = cut(content, one);
                let head = match head.rfind(['\n', ' ']) {
                    Some(at) if at >= head.len() * 3 / 4 => &head[..at],
                    _ => head,
                };
                (
                    format!(
                        "{head}\n[… the rest of `{name}` is cut here to fit the budget of one \
                         skill; call activate_skill again for the whole]"
                    ),
                    true,
                )
            }
        };
        if used + content.len() > all {
            left_out.push(name.to_owned());
            continue;
        }
        used += content.len();
        kept.push(KeptSkill {
            name: name.to_owned(),
            content,
            cut: cut_short,
        });
    }
    (kept, left_out)
}

/// `text` up to `most` bytes, on a character boundary.
fn cut(text: &str, most: usize) -> &str {
    if text.len() <= most {
        return text;
    }
    let mut at = most;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[..at]
}

fn lock(history: &Mutex<History>) -> std::sync::MutexGuard<'_, History> {
    history.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The tool results of `view` that are cleared, for the tests.
#[cfg(test)]
fn cleared_in(view: &[Message]) -> usize {
    view.iter()
        .filter(|m| matches!(m, Message::ToolResult(r) if r.content == CLEARED))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use serde_json::json;

    fn activation(id: &str, name: &str, body: &str) -> [Message; 2] {
        [
            Message::assistant(
                "",
                vec![ToolCall::new(id, ACTIVATE_SKILL, json!({"name": name}))],
            ),
            Message::tool_result(id, body),
        ]
    }

    #[test]
    fn the_skills_in_use_are_the_latest_activation_of_each_latest_first() {
        let mut view = vec![Message::user("go")];
        view.extend(activation("1", "a:one", "first body of one"));
        view.extend(activation("2", "a:two", "body of two"));
        view.extend(activation("3", "a:one", "second body of one"));
        let calls = Calls::of(&view);
        assert_eq!(
            calls.in_use(&view),
            vec![("a:one", "second body of one"), ("a:two", "body of two")]
        );
    }

    #[test]
    fn skills_over_the_budget_are_cut_or_named_never_dropped_silently() {
        let big = "line\n".repeat(100);
        let old = "no room left for this one. ".repeat(4);
        let (kept, left_out) = reattach(
            vec![("new", "short"), ("big", &big), ("old", &old)],
            100,
            300,
        );
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].content, "short");
        assert!(kept[1].cut && kept[1].content.contains("call activate_skill again"));
        assert_eq!(left_out, vec!["old".to_owned()]);
    }

    #[test]
    fn clearing_leaves_activations_and_the_latest_results() {
        let mut view = vec![Message::user("go")];
        view.extend(activation("s", "a:one", "skill body"));
        for id in ["1", "2", "3", "4"] {
            view.push(Message::assistant(
                "",
                vec![ToolCall::new(id, "files:read", json!({}))],
            ));
            view.push(Message::tool_result(id, "x".repeat(100)));
        }
        let calls = Calls::of(&view);
        let ids: Vec<&str> = calls
            .clearable(&view, 2)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(ids, vec!["1", "2"]);
        assert_eq!(cleared_in(&view), 0);
    }

    #[test]
    fn a_transcript_keeps_skills_apart_and_fits_its_budget() {
        let mut view = vec![Message::user("first request")];
        view.extend(activation("s", "a:one", "SKILL BODY"));
        view.push(Message::assistant(
            "",
            vec![ToolCall::new("r", "files:read", json!({"path": "a"}))],
        ));
        view.push(Message::tool_result("r", "y".repeat(10_000)));
        view.push(Message::user("latest request"));
        let calls = Calls::of(&view);
        let text = calls.transcript(&view, 1_000);
        assert!(!text.contains("SKILL BODY"), "{text}");
        assert!(text.contains("a:one was activated"));
        assert!(text.contains("latest request") && text.contains("first request"));
        assert!(text.len() <= 1_100, "{}", text.len());
    }

    #[test]
    fn the_message_being_answered_is_kept() {
        let history = vec![
            Message::user("old"),
            Message::assistant("ok", vec![]),
            Message::user("now"),
            Message::assistant("", vec![ToolCall::new("1", "t", json!({}))]),
            Message::tool_result("1", "r"),
        ];
        assert_eq!(kept(&history), 3);
        let mut after = history.clone();
        after.push(Message::Compaction(Compaction {
            summary: Some("s".into()),
            kept: 3,
            ..Compaction::default()
        }));
        assert_eq!(kept(&after), 0);
    }
}
