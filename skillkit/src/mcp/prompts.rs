//! The server's prompts: one per skill a person may invoke (not those whose
//! frontmatter says `user-invocable: false`), with one optional `arguments`
//! argument described by the skill's `argument-hint`, so clients offer skills
//! as slash commands; `prompts/get` returns the body rendered with the
//! arguments.
//!
//! A prompt's name is safe for slash-command menus, which choke on `:` and
//! on characters beyond `[A-Za-z0-9_-]`: the skill's full name under the
//! agent's wire-name rule (`files:read` → `files_read`; a name that is safe
//! already is kept; when two names would meet on one, or one is longer than
//! 64 bytes, each changed one gets a suffix from a hash of its full name, so
//! the assignment depends only on the set of names). It maps back to exactly
//! one skill; `prompts/get` takes it, or the full name (as earlier versions
//! named prompts). The skill's full name is the prompt's `title`.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;

use crate::catalog::Snapshot;
use crate::dispatch::names::WireNames;
use crate::skill::Skill;

/// The name of a prompt's one argument.
const ARGUMENTS: &str = "arguments";

/// The prompt of `skill`, named `name`.
fn prompt(skill: &Skill, name: String) -> Prompt {
    let description = match skill.argument_hint() {
        Some(hint) => format!("Arguments for the skill, as text: {hint}"),
        None => "Arguments for the skill, as text (quotes group words).".to_owned(),
    };
    let argument = PromptArgument::new(ARGUMENTS)
        .with_description(description)
        .with_required(false);
    Prompt::new(
        name,
        Some(crate::prompt::shown_description(&skill.description).into_owned()),
        Some(vec![argument]),
    )
    .with_title(skill.name.to_string())
}

/// The skills that are prompts, and their prompts' names.
fn named(snapshot: &Snapshot) -> (Vec<&Arc<Skill>>, WireNames) {
    let skills: Vec<&Arc<Skill>> = snapshot.skills().filter(|s| s.user_invocable()).collect();
    let names = WireNames::assign(skills.iter().map(|s| s.name.as_ref()));
    (skills, names)
}

/// Every prompt of `snapshot`, sorted by name.
pub(super) fn list(snapshot: &Snapshot) -> Vec<Prompt> {
    let (skills, names) = named(snapshot);
    let mut prompts: Vec<Prompt> = skills
        .into_iter()
        .map(|s| prompt(s, names.wire(&s.name).into_owned()))
        .collect();
    prompts.sort_by(|a, b| a.name.cmp(&b.name));
    prompts
}

/// The prompt `request` asks for, rendered (a body a server keeps, as an
/// [`McpSkills`](crate::McpSkills) provider's, fetched first).
pub(super) async fn get(
    snapshot: &Snapshot,
    request: &GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let name = &request.name;
    let (_, names) = named(snapshot);
    let full = names.full(name).unwrap_or(name);
    let skill = snapshot
        .skill(full)
        .filter(|s| s.user_invocable())
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "there is no prompt `{name}`; prompts/list gives the prompts, one per skill"
                ),
                None,
            )
        })?;
    let mut arguments = String::new();
    for (key, value) in request.arguments.iter().flatten() {
        match (key.as_str(), value) {
            (ARGUMENTS, Value::String(text)) => arguments.clone_from(text),
            (ARGUMENTS, Value::Null) => {}
            (ARGUMENTS, _) => {
                return Err(ErrorData::invalid_params(
                    format!("the `{ARGUMENTS}` of prompt `{name}` must be a string"),
                    None,
                ));
            }
            (other, _) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "prompt `{name}` takes one argument, `{ARGUMENTS}` (text), not `{other}`"
                    ),
                    None,
                ));
            }
        }
    }
    let body = skill
        .activate(&arguments, None)
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, body)]);
    result.description = Some(crate::prompt::shown_description(&skill.description).into_owned());
    Ok(result)
}
