//! How an agent's events look in a terminal: the root agent's text streamed
//! as it comes, each tool call and each result on one compact line.

use skillkit::agent::{AgentEvent, EventKind};

use crate::agent::shorten;
use crate::output::{err, error_text, out, out_text};

/// Where tool lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// With the text, on stdout (`chat`).
    Stdout,
    /// On stderr, so stdout holds only the answer (`run`).
    Stderr,
}

/// Prints events; remembers whether streamed text left a line open.
#[derive(Debug)]
pub struct View {
    lines: Lines,
    mid_line: bool,
}

impl View {
    /// A view sending tool lines to `lines`.
    pub fn new(lines: Lines) -> View {
        View {
            lines,
            mid_line: false,
        }
    }

    /// Shows one event (a waiting call is asked about by the command).
    pub fn show(&mut self, event: &AgentEvent) {
        let who = match event.agent.is_root() {
            true => String::new(),
            false => format!("[{}] ", event.agent),
        };
        match &event.kind {
            EventKind::Delta { text } if event.agent.is_root() => {
                out_text!("{text}");
                self.mid_line = !text.ends_with('\n');
            }
            EventKind::ToolCallComplete { name, input, .. } => {
                self.line(&format!(
                    "  -> {who}{name} {}",
                    shorten(&input.to_string(), 80)
                ));
            }
            EventKind::ToolResult {
                name,
                content,
                is_error,
                ..
            } => {
                let mark = if *is_error { "error" } else { "ok" };
                self.line(&format!(
                    "  <- {who}{name} {mark}: {}",
                    shorten(content, 80)
                ));
            }
            EventKind::Compacted(compaction) => {
                self.line(&format!("  ~~ {who}{}", compacted(compaction)));
            }
            EventKind::Warning { message } => {
                self.line(&format!("  !! {who}{message}"));
            }
            EventKind::Error(error) if !event.agent.is_root() => {
                self.line(&format!("  !! {who}{}", crate::explain::agent(error)));
            }
            EventKind::Finished { .. } | EventKind::Error(_) | EventKind::Stopped => {
                self.end_line();
            }
            _ => {}
        }
    }

    /// Ends streamed text left without a line end.
    pub fn end_line(&mut self) {
        if std::mem::take(&mut self.mid_line) {
            out!("");
        }
    }

    /// Writes `prompt` where tool lines go, after ending any open line, with
    /// no line end (the person answers on the same line).
    pub fn prompt(&mut self, prompt: &str) {
        self.end_line();
        match self.lines {
            Lines::Stdout => out_text!("{prompt}"),
            Lines::Stderr => error_text(format_args!("{prompt}")),
        }
    }

    fn line(&mut self, text: &str) {
        self.end_line();
        match self.lines {
            Lines::Stdout => out!("{text}"),
            Lines::Stderr => err!("{text}"),
        }
    }
}

/// One line about a compaction: its sizes, the skills it kept and left out.
pub fn compacted(compaction: &skillkit::llm::Compaction) -> String {
    let sizes = format!(
        "{} → {} tokens",
        compaction.tokens_before, compaction.tokens_after
    );
    if compaction.summary.is_none() {
        return format!(
            "compacted: {} old tool results cleared ({sizes})",
            compaction.cleared.len()
        );
    }
    let names = |names: Vec<&str>| match names.is_empty() {
        true => "none".to_owned(),
        false => shorten(&names.join(", "), 200),
    };
    let mut line = format!(
        "compacted: the conversation summarised ({sizes}); skills kept: {}",
        names(compaction.skills.iter().map(|s| s.name.as_str()).collect())
    );
    if !compaction.left_out.is_empty() {
        line.push_str(&format!(
            "; left out for room: {}",
            names(compaction.left_out.iter().map(String::as_str).collect())
        ));
    }
    line
}
