//! The model's context: what of the history a request holds (everything from
//! the last compaction, tool results cleared), how big a request is, and how
//! full the window is ([`ContextUse`]).
//!
//! Sizes are estimated at [`CHARS_PER_TOKEN`] characters a token before the
//! model's first answer; from then on the estimate is scaled by what the
//! adapter reported for the last request (its input, cache reads and cache
//! writes over the characters it held), so a model whose tokenizer counts
//! differently is measured by its own counts.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Serialize;

use crate::agent::CHARS_PER_TOKEN;
use crate::dispatch::schema::json_len;
use crate::llm::{Message, ToolResult, Usage};

/// What a cleared tool result says in its place.
pub(crate) const CLEARED: &str =
    "[This tool result was cleared to save context. Call the tool again if you need it.]";

/// How full an agent's context window is after a model request.
///
/// ```
/// let used = skillkit::agent::ContextUse { tokens: 50_000, window: 200_000, compact_at: Some(160_000) };
/// assert_eq!(used.percent(), 25);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContextUse {
    /// Tokens of the last request and its answer, as the model counted them.
    pub tokens: u64,
    /// The model's context window, in tokens.
    pub window: u64,
    /// The size at which the conversation is compacted, when compaction is
    /// on.
    pub compact_at: Option<u64>,
}

impl ContextUse {
    /// The share of the window in use, in percent (rounded down).
    ///
    /// ```
    /// let used = skillkit::agent::ContextUse { tokens: 1, window: 0, compact_at: None };
    /// assert_eq!(used.percent(), 100);
    /// ```
    pub fn percent(&self) -> u64 {
        match self.window {
            0 => 100,
            window => self.tokens.saturating_mul(100) / window,
        }
    }
}

/// The messages of `history` a request holds: from the last compaction with
/// a summary (that compaction, then the messages it kept), with the results
/// of cleared tool calls replaced by [`CLEARED`], and no compaction that
/// only cleared.
pub(crate) fn view(history: &[Message]) -> Vec<Cow<'_, Message>> {
    let summary = history
        .iter()
        .rposition(|message| matches!(message, Message::Compaction(c) if c.summary.is_some()));
    let (from, head) = match summary {
        Some(at) => {
            let Message::Compaction(compaction) = &history[at] else {
                unreachable!("found as a compaction")
            };
            (at.saturating_sub(compaction.kept), Some(at))
        }
        None => (0, None),
    };
    let cleared: HashSet<&str> = history[from..]
        .iter()
        .filter_map(|message| match message {
            Message::Compaction(c) => Some(c.cleared.iter().map(String::as_str)),
            _ => None,
        })
        .flatten()
        .collect();
    let mut view = Vec::with_capacity(history.len() - from + 1);
    if let Some(at) = head {
        view.push(Cow::Borrowed(&history[at]));
    }
    for message in &history[from..] {
        match message {
            Message::Compaction(_) => continue,
            Message::ToolResult(result) if cleared.contains(result.tool_call_id.as_str()) => {
                view.push(Cow::Owned(Message::ToolResult(ToolResult {
                    content: CLEARED.to_owned(),
                    ..result.clone()
                })));
            }
            other => view.push(Cow::Borrowed(other)),
        }
    }
    view
}

/// The messages of [`view`], owned.
pub(crate) fn view_owned(history: &[Message]) -> Vec<Message> {
    view(history).into_iter().map(Cow::into_owned).collect()
}

/// The characters of `message` a request carries.
pub(crate) fn chars(message: &Message) -> usize {
    match message {
        Message::System { text } | Message::User { text } => text.len(),
        Message::Assistant(assistant) => {
            assistant.text.len()
                + assistant
                    .tool_calls
                    .iter()
                    .map(|call| call.name.len() + json_len(&call.input) + call.id.len())
                    .sum::<usize>()
        }
        Message::ToolResult(result) => result.content.len() + result.tool_call_id.len(),
        Message::Compaction(compaction) => compaction.text().len(),
    }
}

/// Turns characters into tokens: [`CHARS_PER_TOKEN`] until the model reports
/// its own counts, then at the ratio of its last request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meter {
    /// Tokens per character, as last measured.
    ratio: f64,
}

impl Default for Meter {
    fn default() -> Self {
        Meter {
            ratio: 1.0 / CHARS_PER_TOKEN as f64,
        }
    }
}

impl Meter {
    /// The tokens of `chars` characters.
    pub(crate) fn tokens(&self, chars: usize) -> u64 {
        (chars as f64 * self.ratio).ceil() as u64
    }

    /// Learns from a request of `chars` characters that the model counted as
    /// `usage`; the tokens of the request and its answer.
    pub(crate) fn measured(&mut self, chars: usize, usage: &Usage) -> u64 {
        let input = usage.input_with_cache();
        if input > 0 && chars > 0 {
            // Within reason: a model that reports nothing useful (a stub
            // counting words) does not turn 1 MB into 1 token.
            self.ratio = (input as f64 / chars as f64).clamp(0.05, 1.0);
        }
        usage.total()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Compaction;

    fn summary(kept: usize, cleared: &[&str]) -> Message {
        Message::Compaction(Compaction {
            summary: Some("so far".into()),
            kept,
            cleared: cleared.iter().map(|s| s.to_string()).collect(),
            ..Compaction::default()
        })
    }

    fn clearing(ids: &[&str]) -> Message {
        Message::Compaction(Compaction {
            cleared: ids.iter().map(|s| s.to_string()).collect(),
            ..Compaction::default()
        })
    }

    #[test]
    fn a_history_without_compaction_is_its_own_view() {
        let history = vec![Message::user("a"), Message::assistant("b", vec![])];
        assert_eq!(view_owned(&history), history);
    }

    #[test]
    fn the_estimate_of_json_is_near_its_length() {
        let value = serde_json::json!({"path": "notes/today.md", "lines": [1, 2, 3], "all": true});
        let real = value.to_string().len();
        let estimate = json_len(&value);
        assert!(estimate.abs_diff(real) * 4 <= real, "{estimate} for {real}");
    }

    #[test]
    fn the_view_starts_at_the_last_summary_then_the_messages_it_kept() {
        let history = vec![
            Message::user("old"),
            summary(0, &[]),
            Message::user("older request"),
            Message::assistant("", vec![]),
            Message::user("current"),
            Message::tool_result("c1", "big"),
            summary(2, &["c1"]),
            Message::assistant("after", vec![]),
        ];
        let view = view_owned(&history);
        assert_eq!(view.len(), 4, "{view:?}");
        assert!(matches!(&view[0], Message::Compaction(c) if c.kept == 2));
        assert_eq!(view[1], Message::user("current"));
        assert!(matches!(&view[2], Message::ToolResult(r) if r.content == CLEARED));
        assert_eq!(view[3], Message::assistant("after", vec![]));
    }

    #[test]
    fn a_compaction_that_only_clears_is_not_sent_and_clears_what_it_names() {
        let history = vec![
            Message::user("a"),
            Message::tool_result("c1", "one"),
            Message::tool_result("c2", "two"),
            clearing(&["c1"]),
            Message::user("b"),
        ];
        let view = view_owned(&history);
        assert_eq!(view.len(), 4);
        assert!(matches!(&view[1], Message::ToolResult(r) if r.content == CLEARED));
        assert!(matches!(&view[2], Message::ToolResult(r) if r.content == "two"));
    }

    #[test]
    fn the_meter_learns_the_model_s_own_counts() {
        let mut meter = Meter::default();
        assert_eq!(meter.tokens(400), 100);
        let usage = Usage {
            input_tokens: 100,
            cache_read_input_tokens: 100,
            output_tokens: 7,
            ..Usage::default()
        };
        assert_eq!(meter.measured(1_000, &usage), 207);
        assert_eq!(meter.tokens(400), 80);
    }
}
