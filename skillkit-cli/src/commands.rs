//! What a person types at the chat prompt: the built-in commands and one
//! `/name` per skill they may run (not those marked `user-invocable:
//! false`), completed with Tab, and the skill's `argument-hint` shown after
//! `/name ` as a hint. Names and hints come from skills, so they are shown
//! inert.

use std::borrow::Cow;

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use skillkit::Snapshot;

use crate::output::inert;

/// The built-in commands.
const BUILT_IN: [&str; 4] = ["/skills", "/help", "/quit", "/exit"];

/// The commands of one prompt, each with its argument hint.
#[derive(Default)]
pub struct Commands {
    /// `(command, hint)`, e.g. `("/gh:fix-issue", Some("[issue-number]"))`.
    entries: Vec<(String, Option<String>)>,
}

impl Commands {
    /// The built-in commands and the skills of `snapshot` a person may run,
    /// each under its full name and, when no other skill shares it, its bare
    /// name.
    pub fn of(snapshot: &Snapshot) -> Commands {
        let mut entries: Vec<(String, Option<String>)> =
            BUILT_IN.iter().map(|c| ((*c).to_owned(), None)).collect();
        let skills: Vec<_> = snapshot.skills().filter(|s| s.user_invocable()).collect();
        for skill in &skills {
            let hint = skill.argument_hint().map(|h| inert(&h).into_owned());
            entries.push((format!("/{}", inert(&skill.name)), hint.clone()));
            let bare = skill.bare_name();
            let shared = skills.iter().filter(|s| s.bare_name() == bare).count() > 1;
            if !shared && bare != skill.name {
                entries.push((format!("/{}", inert(bare)), hint));
            }
        }
        entries.sort();
        entries.dedup_by(|a, b| a.0 == b.0);
        Commands { entries }
    }

    /// The commands starting with `typed`.
    fn matching<'a>(
        &'a self,
        typed: &'a str,
    ) -> impl Iterator<Item = &'a (String, Option<String>)> {
        self.entries
            .iter()
            .filter(move |(c, _)| c.starts_with(typed))
    }
}

impl Completer for Commands {
    type Candidate = Pair;

    /// Completes the command word (`/fix` → `/fix-issue `), only at the
    /// start of the line.
    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let typed = &line[..pos];
        if !typed.starts_with('/') || typed.contains(' ') {
            return Ok((0, Vec::new()));
        }
        let candidates = self
            .matching(typed)
            .map(|(command, hint)| Pair {
                display: match hint {
                    Some(hint) => format!("{command} {hint}"),
                    None => command.clone(),
                },
                replacement: format!("{command} "),
            })
            .collect();
        Ok((0, candidates))
    }
}

impl Hinter for Commands {
    type Hint = String;

    /// After `/name ` (and nothing else yet), the skill's argument hint.
    fn hint(&self, line: &str, pos: usize, _: &Context<'_>) -> Option<String> {
        let command = line.strip_suffix(' ')?;
        if pos != line.len() || command.contains(' ') {
            return None;
        }
        self.entries
            .iter()
            .find(|(c, _)| c == command)
            .and_then(|(_, hint)| hint.clone())
    }
}

impl Highlighter for Commands {
    /// The hint dimmed, as shells show one.
    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        Cow::Owned(format!("\x1b[2m{hint}\x1b[0m"))
    }
}

impl Validator for Commands {}

impl Helper for Commands {}

#[cfg(test)]
mod tests {
    use super::*;
    use rustyline::history::DefaultHistory;
    use skillkit::{Catalog, Memory, Skill};

    fn commands() -> Commands {
        let memory = Memory::new();
        let mut fix = Skill::new("gh:fix-issue", "Fix an issue.");
        fix.extra_mut()
            .insert("argument-hint".into(), serde_json::json!(["issue-number"]));
        memory.put(fix);
        let mut background = Skill::new("gh:conventions", "Conventions.");
        background
            .extra_mut()
            .insert("user-invocable".into(), false.into());
        memory.put(background);
        let catalog = Catalog::builder().provider(memory).build();
        let snapshot = tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(catalog.snapshot());
        Commands::of(&snapshot)
    }

    #[test]
    fn skills_a_person_runs_complete_with_their_hint() {
        let commands = commands();
        let history = DefaultHistory::new();
        let context = Context::new(&history);
        let (start, found) = commands.complete("/fix", 4, &context).unwrap();
        assert_eq!(start, 0);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].replacement, "/fix-issue ");
        assert_eq!(found[0].display, "/fix-issue [issue-number]");
        let (_, full) = commands.complete("/gh:", 4, &context).unwrap();
        assert_eq!(full.len(), 1, "the background skill is not a command");
        assert_eq!(
            commands.hint("/gh:fix-issue ", 14, &context).as_deref(),
            Some("[issue-number]")
        );
        assert_eq!(commands.hint("/gh:fix-issue 12", 16, &context), None);
        let (_, none) = commands.complete("hello /fix", 10, &context).unwrap();
        assert!(none.is_empty());
    }
}
