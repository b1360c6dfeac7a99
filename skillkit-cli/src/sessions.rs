//! `skillkit sessions`: the conversations `run --session` and `chat
//! --session` keep (a folder of `FileSessionStore`, or a SQLite or
//! PostgreSQL database through the SQL provider): list, show, fork, remove.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Subcommand;
use serde_json::json;
use skillkit::agent::session::{FileSessionStore, SessionError, SessionStore, valid_id};
use skillkit::llm::Message;

use crate::failure::Failure;
use crate::list::one_line;
use crate::output::out;
use crate::sources;

/// What `skillkit sessions` does.
#[derive(Debug, Clone, Subcommand)]
pub enum Action {
    /// Each session: its name, how many items it has had, when it was last
    /// written.
    List {
        /// As a JSON array of {name, items, title, agent, created, updated,
        /// error} (times in seconds since 1970; null where the store does not
        /// know; error: why a session cannot be read, else null).
        #[arg(long)]
        json: bool,
    },
    /// A session's messages, one a line.
    Show {
        /// The session.
        name: String,
        /// Its items as JSON lines ({seq, message}).
        #[arg(long)]
        json: bool,
    },
    /// A new session NEW holding NAME's items up to item --at (default: all);
    /// the two go on apart.
    Fork {
        /// The session forked.
        name: String,
        /// The new session's name.
        new: String,
        /// The last item kept.
        #[arg(long, value_name = "N")]
        at: Option<u64>,
    },
    /// Removes a session.
    Rm {
        /// The session.
        name: String,
    },
}

/// Where sessions are kept, as `--sessions` (or `SKILLKIT_SESSIONS_URL`)
/// says: a folder, or a `sqlite://…` or `postgres://…` URL; by default the
/// user's data folder's `skillkit/sessions`.
pub fn place(at: Option<&str>) -> Result<String, Failure> {
    match at {
        Some(at) => Ok(at.to_owned()),
        None => dirs::data_local_dir()
            .map(|d| d.join("skillkit").join("sessions").display().to_string())
            .ok_or_else(|| Failure::io("no data folder for sessions; pass --sessions DIR|URL")),
    }
}

/// The store at `at` (see [`place`]).
pub fn open(at: Option<&str>) -> Result<Arc<dyn SessionStore>, Failure> {
    let at = place(at)?;
    if at.starts_with("sqlite:") || at.starts_with("postgres:") || at.starts_with("postgresql:") {
        let sql = skillkit::Sql::open(&at).map_err(|e| Failure::io(format!("--sessions: {e}")))?;
        return Ok(Arc::new(sql));
    }
    Ok(Arc::new(FileSessionStore::new(PathBuf::from(at))))
}

/// The store at `at` and the session `name`, checked.
pub fn store(at: Option<&str>, name: &str) -> Result<Arc<dyn SessionStore>, Failure> {
    if !valid_id(name) {
        return Err(Failure::io(SessionError::InvalidId(name.to_owned())));
    }
    open(at)
}

/// `skillkit sessions [ACTION]`.
pub fn run(dir: Option<&str>, action: Option<Action>) -> Result<(), Failure> {
    let runtime = sources::runtime()?;
    let failed = |e: SessionError| match e {
        SessionError::NotFound(_) => Failure::failed(e),
        e => Failure::io(e),
    };
    match action.unwrap_or(Action::List { json: false }) {
        Action::List { json } => {
            let store = open(dir)?;
            let sessions = runtime.block_on(store.list()).map_err(failed)?;
            let seconds = |t: Option<std::time::SystemTime>| {
                t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_secs())
            };
            if json {
                let list: Vec<_> = sessions
                    .iter()
                    .map(|s| {
                        json!({
                            "name": s.id,
                            "items": s.version,
                            "title": s.meta.title,
                            "agent": s.meta.agent,
                            "created": seconds(s.created),
                            "updated": seconds(s.updated),
                            "error": s.error,
                        })
                    })
                    .collect();
                out!("{}", serde_json::Value::Array(list));
            } else if sessions.is_empty() {
                out!("no sessions in {}", place(dir)?);
            } else {
                for s in &sessions {
                    if let Some(error) = &s.error {
                        out!("{}  cannot be read: {}", s.id, one_line(error));
                        continue;
                    }
                    let mut about = Vec::new();
                    if let Some(title) = &s.meta.title {
                        about.push(one_line(title));
                    }
                    if let Some(agent) = &s.meta.agent {
                        about.push(format!("agent {}", one_line(agent)));
                    }
                    let about = about.join(", ");
                    match about.is_empty() {
                        true => out!("{}  {} items", s.id, s.version),
                        false => out!("{}  {} items  ({about})", s.id, s.version),
                    }
                }
            }
            let damaged: Vec<&str> = sessions
                .iter()
                .filter(|s| s.error.is_some())
                .map(|s| s.id.as_str())
                .collect();
            if !damaged.is_empty() {
                return Err(Failure::io(format!(
                    "{} of the sessions cannot be read ({}); the others are listed; \
                     `skillkit sessions rm NAME` removes one",
                    damaged.len(),
                    damaged.join(", ")
                )));
            }
        }
        Action::Show { name, json } => {
            let store = store(dir, &name)?;
            let loaded = runtime.block_on(store.load(&name, None)).map_err(failed)?;
            if loaded.version == 0 {
                return Err(Failure::failed(format!(
                    "there is no session `{name}`; `skillkit sessions` lists them"
                )));
            }
            for item in &loaded.items {
                if json {
                    out!("{}", serde_json::to_string(item).unwrap_or_default());
                    continue;
                }
                let line = match &item.message {
                    Message::System { text } => format!("system: {}", one_line(text)),
                    Message::User { text } => format!("user: {}", one_line(text)),
                    Message::Assistant(a) => {
                        let calls: Vec<&str> =
                            a.tool_calls.iter().map(|c| c.name.as_str()).collect();
                        match calls.is_empty() {
                            true => format!("assistant: {}", one_line(&a.text)),
                            false => format!(
                                "assistant: {} [calls {}]",
                                one_line(&a.text),
                                calls.join(", ")
                            ),
                        }
                    }
                    Message::ToolResult(r) => format!(
                        "tool result{}: {}",
                        if r.is_error { " (error)" } else { "" },
                        one_line(&r.content)
                    ),
                    Message::Compaction(c) => match &c.summary {
                        Some(summary) => format!(
                            "compacted ({} → {} tokens; skills kept: {}): {}",
                            c.tokens_before,
                            c.tokens_after,
                            match c.skills.is_empty() {
                                true => "none".to_owned(),
                                false => c
                                    .skills
                                    .iter()
                                    .map(|s| s.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", "),
                            },
                            one_line(summary)
                        ),
                        None => format!(
                            "compacted: {} tool results cleared ({} → {} tokens)",
                            c.cleared.len(),
                            c.tokens_before,
                            c.tokens_after
                        ),
                    },
                };
                out!("{:>4}  {line}", item.seq);
            }
        }
        Action::Fork { name, new, at } => {
            let store = store(dir, &name)?;
            if !valid_id(&new) {
                return Err(Failure::io(SessionError::InvalidId(new)));
            }
            runtime
                .block_on(store.fork(&name, at.unwrap_or(u64::MAX), &new))
                .map_err(failed)?;
            out!("forked {name} as {new}");
        }
        Action::Rm { name } => {
            let store = store(dir, &name)?;
            runtime.block_on(store.clear(&name)).map_err(failed)?;
            out!("removed {name}");
        }
    }
    Ok(())
}
