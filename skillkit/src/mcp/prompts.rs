//! The server's prompts: one per skill a person may invoke (not those whose
//! frontmatter says `user-invocable: false`), named by the skill's full name,
//! with one optional `arguments` argument described by the skill's
//! `argument-hint`, so clients offer skills as slash commands; `prompts/get`
//! returns the body rendered with the arguments.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;

use crate::catalog::Snapshot;
use crate::skill::Skill;

/// The name of a prompt's one argument.
const ARGUMENTS: &str = "arguments";

/// The prompt of `skill`.
fn prompt(skill: &Skill) -> Prompt {
    let description = match skill.argument_hint() {
        Some(hint) => format!("Arguments for the skill, as text: {hint}"),
        None => "Arguments for the skill, as text (quotes group words).".to_owned(),
    };
    let argument = PromptArgument::new(ARGUMENTS)
        .with_description(description)
        .with_required(false);
    Prompt::new(
        skill.name.to_string(),
        Some(skill.description.to_string()),
        Some(vec![argument]),
    )
}

/// Every prompt of `snapshot`, sorted by name.
pub(super) fn list(snapshot: &Snapshot) -> Vec<Prompt> {
    let mut skills: Vec<&Arc<Skill>> = snapshot.skills().filter(|s| s.user_invocable()).collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    skills.into_iter().map(|s| prompt(s)).collect()
}

/// The prompt `request` asks for, rendered.
pub(super) fn get(
    snapshot: &Snapshot,
    request: &GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let name = &request.name;
    let skill = snapshot
        .skill(name)
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
        .render(&arguments, None)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, body)]);
    result.description = Some(skill.description.to_string());
    Ok(result)
}
