//! `` !`command` `` dynamic context in a skill body (Claude Code): where
//! scripts are enabled, each command runs when the skill is activated, with
//! `sh -c` through the script runner (its working folder, environment,
//! limits and sandbox), after the approval policy and the scripts' policy
//! allowed it; its output replaces it. Elsewhere the body stays as written.
//!
//! Commands are read from the body as its file has it, before any value is
//! substituted, and what they print is inserted as inert text: arguments
//! (which the model, a web page it read or an MCP client writes) can never
//! become a command.

use std::ffi::OsString;
use std::ops::Range;

use serde_json::{Value, json};

use super::{RUN_SKILL_SCRIPT, Scripts, run::run_program};
use crate::dispatch::approval::{Approval, Approver, Decision, InputKind, ToolRequest};
use crate::skill::Skill;

/// The `` !`command` `` spans of `body`: (start, end, command), a command
/// being non-empty and on one line.
fn commands(body: &str) -> Vec<(usize, usize, &str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = body[from..].find("!`").map(|i| from + i) {
        let inner = at + 2;
        let Some(len) = body[inner..].find(['`', '\n']) else {
            break;
        };
        let end = inner + len;
        if body[end..].starts_with('`') && !body[inner..end].trim().is_empty() {
            found.push((at, end + 1, &body[inner..end]));
            from = end + 1;
        } else {
            from = inner;
        }
    }
    found
}

/// What each `` !`command` `` of `body` (skill `skill`'s, as its file has
/// it: nothing substituted yet) printed, or a note saying why it did not
/// run: the span it replaces and the text. `call_id` is the activation's;
/// `always_ask` (a skill of an untrusted kit): each command is asked even
/// where the policies allow it.
///
/// Only the author's text is scanned, so a command can come only from the
/// file: arguments, session ids and paths are substituted later, in the
/// text around these outputs (`Skill::render_written`).
pub(crate) async fn expand(
    body: &str,
    skill: &Skill,
    scripts: &Scripts,
    host: &impl Approver,
    call_id: &str,
    always_ask: bool,
) -> Vec<(Range<usize>, String)> {
    let mut outputs = Vec::new();
    for (start, end, command) in commands(body) {
        let output = run_one(command, skill, scripts, host, call_id, always_ask).await;
        outputs.push((start..end, output));
    }
    outputs
}

async fn run_one(
    command: &str,
    skill: &Skill,
    scripts: &Scripts,
    host: &impl Approver,
    call_id: &str,
    always_ask: bool,
) -> String {
    let request = ToolRequest {
        agent: host.path().clone(),
        call_id: call_id.to_owned(),
        name: RUN_SKILL_SCRIPT.to_owned(),
        input: json!({"skill": skill.name, "command": command}),
    };
    let mut verdict = host
        .decide(&request)
        .stricter(scripts.options.approval.decide(&request));
    if always_ask {
        verdict = verdict.stricter(Approval::Ask);
    }
    let refused = |why: String| format!("[`{command}` was not run: {why}]");
    match verdict {
        Approval::Allow => {}
        Approval::Deny(reason) => return refused(reason),
        Approval::Ask => match host.ask(&request, InputKind::Approval).await {
            Ok(Decision::Approve | Decision::Answer(Value::Bool(true))) => {}
            Ok(Decision::Deny { reason }) => {
                return refused(format!("the user denied it: {reason}"));
            }
            Ok(Decision::Answer(_)) => return refused("the user denied it".to_owned()),
            Err(why) => return refused(why),
        },
    }
    let work = match scripts.working_dir() {
        Ok(work) => work,
        Err(why) => return refused(why),
    };
    let argv = [OsString::from("-c"), OsString::from(command)];
    match run_program("sh", &argv, skill.dir(), "", &work, &scripts.options).await {
        Ok(output) if output.success() && !output.stdout.truncated() => {
            output.stdout.text.trim_end().to_owned()
        }
        Ok(output) => format!("[`{command}`: {}]", output.to_string().trim_end()),
        Err(why) => refused(why.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::commands;

    #[test]
    fn commands_are_found_on_one_line() {
        let body =
            "Status: !`git status --short`\nDiff: !`git diff`, not `this` nor !`` or !`open\n`";
        let found: Vec<&str> = commands(body).into_iter().map(|c| c.2).collect();
        assert_eq!(found, ["git status --short", "git diff"]);
        assert!(commands("no commands, just `code` and a bang!").is_empty());
    }
}
