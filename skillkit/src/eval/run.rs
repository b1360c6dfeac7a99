//! One evaluated conversation: a fresh agent over a set of kits, one
//! message, every event kept: the answer, the skills it activated, the tool
//! calls in order, the turns, the tokens and the time.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::agent::{ACTIVATE_SKILL, AgentOptions, EventKind, SEARCH_SKILLS, start_agent};
use crate::agent_definition::AgentDefinition;
use crate::catalog::Catalog;
use crate::dispatch::approval::{Approval, ApprovalPolicy, Decision};
use crate::dispatch::script::ScriptOptions;
use crate::kit::Kit;
use crate::llm::{Registry, Usage};
use crate::providers::Memory;

/// What one conversation did.
///
/// ```
/// let t = skillkit::eval::Transcript::default();
/// assert!(t.activated.is_empty() && t.error.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Transcript {
    /// The message sent.
    pub prompt: String,
    /// The answer's text (empty when it failed).
    pub answer: String,
    /// The skills the agent activated, in order (full names).
    pub activated: Vec<String>,
    /// Every tool call, in order: the tool's full name and its input.
    pub calls: Vec<(String, Value)>,
    /// Every tool result, in order: the tool's full name, the text the
    /// model got, and whether the call failed.
    pub results: Vec<(String, String, bool)>,
    /// Model turns (requests) taken.
    pub turns: u32,
    /// Tokens of every request.
    pub usage: Usage,
    /// Why it stopped without an answer, if it did.
    pub error: Option<String>,
    /// How long it took.
    #[serde(skip)]
    pub elapsed: Duration,
}

impl Transcript {
    /// Tokens in all (input, output and cache).
    ///
    /// ```
    /// assert_eq!(skillkit::eval::Transcript::default().tokens(), 0);
    /// ```
    pub fn tokens(&self) -> u64 {
        self.usage.total()
    }
}

/// How a conversation runs.
pub(super) struct Setup<'a> {
    pub kits: Arc<[Kit]>,
    pub registry: &'a Registry,
    pub model: &'a str,
    pub max_turns: u32,
    /// The scripts' working folder, when the skill's scripts may run there.
    pub scripts: Option<(&'a Path, bool)>,
}

/// Runs `prompt` as a fresh conversation.
pub(super) async fn converse(setup: Setup<'_>, prompt: &str) -> Transcript {
    let started = Instant::now();
    let mut transcript = Transcript {
        prompt: prompt.to_owned(),
        ..Transcript::default()
    };
    let memory = Memory::new();
    for kit in setup.kits.iter() {
        memory.put_kit(kit.clone());
    }
    let catalog = Catalog::builder().provider(memory).build();
    let scripts_allowed = setup.scripts.is_some();
    let mut options = AgentOptions::new(catalog)
        .registry(setup.registry.clone())
        .model(setup.model)
        .max_turns(setup.max_turns)
        .approval(ApprovalPolicy::new(move |request| {
            let reading = request.name == ACTIVATE_SKILL || request.name == SEARCH_SKILLS;
            let script = scripts_allowed && request.name == crate::script::RUN_SKILL_SCRIPT;
            match reading || script {
                true => Approval::Allow,
                false => Approval::deny(
                    "in an eval only reading skills and running their scripts are allowed",
                ),
            }
        }));
    if let Some((dir, weaker)) = setup.scripts {
        options = options.scripts(
            // The eval's point is to run them: without asking, in the
            // sandbox, writing only in the case's working folder.
            ScriptOptions::new()
                .approval(ApprovalPolicy::new(|_| Approval::Allow))
                .working_dir(dir)
                .allow_weaker_sandbox(weaker),
        );
    }
    let definition =
        AgentDefinition::new("eval", "Answers the request, using skills where they help.");
    let mut agent = match start_agent(definition, options) {
        Ok(agent) => agent,
        Err(e) => {
            transcript.error = Some(e.to_string());
            return transcript;
        }
    };
    if let Err(e) = agent.send_message(prompt) {
        transcript.error = Some(e.to_string());
        return transcript;
    }
    while let Some(event) = agent.next_event().await {
        let root = event.agent.is_root();
        let end = event.is_end_of_message();
        match event.kind {
            EventKind::ToolCallComplete { name, input, .. } if root => {
                if name == ACTIVATE_SKILL
                    && let Some(skill) = input.get("name").and_then(Value::as_str)
                {
                    transcript.activated.push(skill.to_owned());
                }
                transcript.calls.push((name, input));
            }
            EventKind::ToolResult {
                name,
                content,
                is_error,
                ..
            } if root => transcript.results.push((name, content, is_error)),
            EventKind::Usage { total, .. } if root => transcript.usage = total,
            EventKind::TurnComplete { .. } if root => transcript.turns += 1,
            EventKind::InputRequested(request) => {
                let _ = agent.respond(
                    &request.call_id,
                    Decision::Deny {
                        reason: "not in an eval".into(),
                    },
                );
            }
            EventKind::Finished { text } if root => transcript.answer = text,
            EventKind::Error(error) if root => transcript.error = Some(error.to_string()),
            EventKind::Stopped if root => transcript.error = Some("stopped".into()),
            _ => {}
        }
        if end {
            break;
        }
    }
    transcript.elapsed = started.elapsed();
    transcript
}
