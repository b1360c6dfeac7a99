//! `` !`command` `` dynamic context in a skill body (Claude Code): where
//! scripts are enabled, each command runs when the skill is activated, with
//! `sh -c` through the script runner (its working folder, environment,
//! limits and sandbox), after the approval policy and the scripts' policy
//! allowed it; its output replaces it. Elsewhere the body stays as written.

use std::ffi::OsString;

use serde_json::{Value, json};

use super::{RUN_SKILL_SCRIPT, Scripts, run::run_program};
use crate::agent::{Approval, Decision, Host, InputKind, ToolRequest};
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

/// `body` (skill `skill`'s, rendered) with each `` !`command` `` replaced by
/// what it printed, or by a note saying why it did not run. `call_id` is the
/// activation's; `always_ask` (a skill of an untrusted kit): each command is
/// asked even where the policies allow it.
pub(crate) async fn expand(
    body: String,
    skill: &Skill,
    scripts: &Scripts,
    host: &impl Host,
    call_id: &str,
    always_ask: bool,
) -> String {
    let found = commands(&body);
    if found.is_empty() {
        return body;
    }
    let mut out = String::with_capacity(body.len());
    let mut last = 0;
    for (start, end, command) in found {
        out.push_str(&body[last..start]);
        out.push_str(&run_one(command, skill, scripts, host, call_id, always_ask).await);
        last = end;
    }
    out.push_str(&body[last..]);
    out
}

async fn run_one(
    command: &str,
    skill: &Skill,
    scripts: &Scripts,
    host: &impl Host,
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
