//! The `<available_skills>` listing of an agent's system prompt, and its
//! budget.
//!
//! A listing has a budget in characters: by default 1% of the model's
//! context window at 4 characters a token (the share Claude Code gives its
//! skill listing; Codex gives about 2%, capped at 8,000 characters), else
//! [`DEFAULT_LISTING_BUDGET`] when the window of the model is not known.
//! While every skill the model may activate fits, the listing is all of
//! them, as it always was. Past the budget it holds the skills that fit,
//! chosen in order: those used in this conversation (latest first), those
//! the application pins, those most relevant to the latest user messages
//! (the catalog's search), then the others in catalog order; a last line
//! says how many more exist and to find them with `search_skills`.

// The agent's: the tool path builds it with an agent's tool set.
#![cfg_attr(not(feature = "agent"), allow(dead_code, unreachable_pub))]

use std::borrow::Borrow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::dispatch::activate::{ACTIVATE_SKILL, Activatable};
use crate::dispatch::script::RUN_SKILL_SCRIPT;
use crate::dispatch::search_skills::SEARCH_SKILLS;
use crate::llm::Message;
use crate::prompt::{CLOSE, OPEN, skill_entry};
use crate::skill::Skill;

/// The listing budget, in characters, when the model's context window is not
/// known (Claude Code's fallback too): about 2,000 tokens.
pub const DEFAULT_LISTING_BUDGET: usize = 8_000;

/// The share of the context window the listing may take by default, in
/// percent.
pub const LISTING_SHARE_PERCENT: usize = 1;

/// Characters per token, to turn a window in tokens into a budget in
/// characters (the usual estimate for English text).
pub const CHARS_PER_TOKEN: usize = 4;

/// Known context windows in tokens, by model name prefix (the first match
/// wins, so longer prefixes come first).
const WINDOWS: &[(&str, usize)] = &[
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("llama3.1", 128_000),
    ("llama3.2", 128_000),
    ("llama3.3", 128_000),
    ("llama3", 8_192),
    ("qwen2.5", 32_768),
    ("mistral", 32_768),
];

/// The context window of `model` (a model name, as in a model URI), in
/// tokens, when it is one SkillKit knows.
///
/// ```
/// use skillkit::agent::context_window;
/// assert_eq!(context_window("claude-sonnet-4-6"), Some(200_000));
/// assert_eq!(context_window("gpt-4o-mini"), Some(128_000));
/// assert_eq!(context_window("my-own-model"), None);
/// ```
pub fn context_window(model: &str) -> Option<usize> {
    let model = model.to_ascii_lowercase();
    // `vendor/model` names (OpenRouter, Hugging Face) are matched by model.
    let model = model.rsplit('/').next().unwrap_or(&model);
    WINDOWS
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map(|&(_, window)| window)
}

/// The listing budget of `model`, in characters, unless the application
/// sets one ([`AgentOptions::listing_budget`](crate::agent::AgentOptions::listing_budget)):
/// [`LISTING_SHARE_PERCENT`] of its [`context_window`] at
/// [`CHARS_PER_TOKEN`], else [`DEFAULT_LISTING_BUDGET`].
///
/// ```
/// use skillkit::agent::{default_listing_budget, DEFAULT_LISTING_BUDGET};
/// assert_eq!(default_listing_budget("claude-sonnet-4-6"), 8_000);
/// assert_eq!(default_listing_budget("gpt-5"), 16_000);
/// assert_eq!(default_listing_budget("my-own-model"), DEFAULT_LISTING_BUDGET);
/// ```
pub fn default_listing_budget(model: &str) -> usize {
    context_window(model).map_or(DEFAULT_LISTING_BUDGET, |window| {
        window * LISTING_SHARE_PERCENT / 100 * CHARS_PER_TOKEN
    })
}

/// What precedes the listing.
const INTRO: &str = "The following skills provide specialized instructions for specific tasks. \
     When a task matches a skill's description, call the `activate_skill` tool with the \
     skill's name to load its full instructions before you act.\n\n";

/// How many of the most relevant skills a listing asks the search for.
const RELEVANT: usize = 50;

/// After this many skills in a row that do not fit, the listing stops
/// trying the others.
const MISSES: usize = 16;

/// `head` (an agent's own system prompt) followed by the listing of
/// `skills`, when it fits in `budget` characters; `None` when it does not.
pub(crate) fn whole(head: &str, skills: &[Arc<Skill>], budget: usize) -> Option<String> {
    let mut system = head.trim_end().to_owned();
    if skills.is_empty() {
        return Some(system);
    }
    if !system.is_empty() {
        system.push_str("\n\n");
    }
    let start = system.len();
    system.push_str(INTRO);
    system.push_str(OPEN);
    let mut used = chars(&system[start..]) + chars(CLOSE);
    for skill in skills {
        let at = system.len();
        skill_entry(&mut system, skill);
        used += chars(&system[at..]);
        if used > budget {
            return None;
        }
    }
    system.push_str(CLOSE);
    Some(system)
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// An agent's listing over its budget: what it is made from, besides the
/// conversation.
pub(crate) struct Bounded {
    /// The agent's own system prompt, trimmed.
    head: String,
    /// Every skill the model may activate, in catalog order.
    skills: Vec<Arc<Skill>>,
    budget: usize,
}

impl Bounded {
    pub(crate) fn new(head: &str, skills: Vec<Arc<Skill>>, budget: usize) -> Bounded {
        Bounded {
            head: head.trim_end().to_owned(),
            skills,
            budget,
        }
    }

    /// The system prompt listing the skills that fit: `used`, `pinned`,
    /// `relevant`, then the others, each once and only when `activatable`
    /// has it; then how many more there are.
    fn prompt<'a>(
        &'a self,
        activatable: &'a Activatable,
        used: &[String],
        pinned: &[String],
        relevant: impl Iterator<Item = &'a Arc<Skill>>,
    ) -> String {
        let named: Vec<&'a Arc<Skill>> = used
            .iter()
            .chain(pinned)
            .filter_map(|n| activatable.get(n))
            .collect();
        let candidates = named
            .into_iter()
            .chain(relevant.filter(|s| activatable.get(&s.name).is_some()))
            .chain(&self.skills);
        let total = self.skills.len();
        let tail = |rest: usize| {
            format!(
                "\n\n{rest} more skills are not listed here: call `{SEARCH_SKILLS}` with a few \
                 words about the task to find them, then `{ACTIVATE_SKILL}` with the name it gives."
            )
        };
        let mut left = self
            .budget
            .saturating_sub(chars(INTRO) + chars(OPEN) + chars(CLOSE) + chars(&tail(total)));
        let mut block = String::from(OPEN);
        let mut listed: HashSet<&str> = HashSet::new();
        let mut misses = 0;
        for skill in candidates {
            if misses >= MISSES || left == 0 {
                break;
            }
            if listed.contains(skill.name.as_ref()) {
                continue;
            }
            let at = block.len();
            skill_entry(&mut block, skill);
            let size = chars(&block[at..]);
            if size > left {
                block.truncate(at);
                misses += 1;
                continue;
            }
            misses = 0;
            left -= size;
            listed.insert(skill.name.as_ref());
        }
        block.push_str(CLOSE);
        let mut system = self.head.clone();
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system.push_str(INTRO);
        system.push_str(&block);
        system.push_str(&tail(total - listed.len()));
        system
    }
}

/// The skills of knowledge used in `messages` (activated, or whose scripts
/// ran, or re-attached at a compaction), latest first, each once.
fn used<M: Borrow<Message>>(messages: &[M]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for message in messages.iter().rev() {
        let assistant = match message.borrow() {
            Message::Assistant(assistant) => assistant,
            Message::Compaction(compaction) => {
                for skill in &compaction.skills {
                    if !names.contains(&skill.name) {
                        names.push(skill.name.clone());
                    }
                }
                continue;
            }
            _ => continue,
        };
        for call in assistant.tool_calls.iter().rev() {
            let key = match call.name.as_str() {
                ACTIVATE_SKILL => "name",
                RUN_SKILL_SCRIPT => "skill",
                _ => continue,
            };
            if let Some(name) = call.input.get(key).and_then(Value::as_str)
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// What the relevant skills are searched with: the latest three user
/// messages, at most 2,000 characters, latest first.
fn recent_query<M: Borrow<Message>>(messages: &[M]) -> String {
    let mut query = String::new();
    let users = messages.iter().rev().filter_map(|m| match m.borrow() {
        Message::User { text } => Some(text.as_str()),
        _ => None,
    });
    for text in users.take(3) {
        query.push_str(text);
        query.push('\n');
    }
    match query.char_indices().nth(2_000) {
        Some((at, _)) => query[..at].to_owned(),
        None => query,
    }
}

/// The last bounded system prompt an agent built, handed out again while
/// its tools, the skills used and the query are the same (an unchanged turn
/// costs no search and no listing).
#[derive(Default)]
pub(crate) struct Prompts(Mutex<Option<Last>>);

struct Last {
    listing: Arc<Bounded>,
    used: Vec<String>,
    query: String,
    system: String,
}

impl Prompts {
    /// The system prompt of a turn whose tool set made `listing` (`None`:
    /// every skill fits, and `system` is the prompt) and `activatable`, over
    /// `messages`, pinning `pinned`; `search` finds the skills relevant to a
    /// query.
    pub(crate) fn get<M: Borrow<Message>>(
        &self,
        listing: Option<&Arc<Bounded>>,
        system: &str,
        activatable: &Activatable,
        messages: &[M],
        pinned: &[String],
        search: impl FnOnce(&str, usize) -> Vec<crate::search::SearchHit>,
    ) -> String {
        let Some(bounded) = listing else {
            return system.to_owned();
        };
        let used = used(messages);
        let query = recent_query(messages);
        let mut last = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(last) = &*last
            && Arc::ptr_eq(&last.listing, bounded)
            && last.used == used
            && last.query == query
        {
            return last.system.clone();
        }
        let hits = search(&query, RELEVANT);
        let system = bounded.prompt(
            activatable,
            &used,
            pinned,
            hits.iter().map(|hit| &hit.skill),
        );
        *last = Some(Last {
            listing: Arc::clone(bounded),
            used,
            query,
            system: system.clone(),
        });
        system
    }
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prompts")
    }
}
