//! `search_skills`, offered to an agent whose catalog is larger than its
//! listing budget: its definition, its input, and the text it returns (the
//! hits the model may activate, best first, with their scores).

use serde_json::{Value, json};

use crate::search::SearchHit;
use crate::tool::ToolDefinition;

/// The name of the tool that searches the skills an agent may activate.
#[cfg_attr(not(feature = "agent"), allow(unreachable_pub))]
pub const SEARCH_SKILLS: &str = "search_skills";

/// How many hits `search_skills` returns when the call gives no `limit`.
#[cfg_attr(not(feature = "agent"), allow(unreachable_pub))]
pub const DEFAULT_SEARCH_LIMIT: usize = 10;

/// The most hits one `search_skills` call returns.
#[cfg_attr(not(feature = "agent"), allow(unreachable_pub))]
pub const MAX_SEARCH_LIMIT: usize = 50;

/// The definition of `search_skills`.
pub(crate) fn definition() -> ToolDefinition {
    ToolDefinition::new(
        SEARCH_SKILLS,
        format!(
            "Search every skill, not only those listed, by what a task needs (a few words, or a \
             skill's name): their full names, descriptions and scores, best first. Then call \
             `activate_skill` with the name of the one that fits. At most {MAX_SEARCH_LIMIT} \
             hits; {DEFAULT_SEARCH_LIMIT} unless `limit` says."
        ),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the task needs, in a few words."},
                "limit": {"type": "integer", "description": "How many hits, best first (1 to 50)."}
            },
            "required": ["query"]
        }),
    )
}

/// The query and limit of a call (an input that fits [`definition`]'s
/// schema); `Err` with what to do when the query is empty.
pub(crate) fn input(input: &Value) -> Result<(&str, usize), String> {
    let query = input.get("query").and_then(Value::as_str).unwrap_or("");
    if query.trim().is_empty() {
        return Err(format!(
            "`{SEARCH_SKILLS}` needs a `query`: a few words about the task"
        ));
    }
    let limit = input
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_SEARCH_LIMIT, |n| {
            usize::try_from(n).unwrap_or(MAX_SEARCH_LIMIT)
        })
        .clamp(1, MAX_SEARCH_LIMIT);
    Ok((query, limit))
}

/// How many hits to ask the catalog for, to have `limit` the model may
/// activate after the others are left out.
pub(crate) fn wanted(limit: usize) -> usize {
    limit * 4 + 16
}

/// The hits of `hits` the model may activate (`activatable` says which, by
/// full name), at most `limit`, as a JSON array of `{name, description,
/// score}`, best first.
pub(crate) fn answer(
    hits: &[SearchHit],
    activatable: impl Fn(&str) -> bool,
    limit: usize,
) -> String {
    let found: Vec<Value> = hits
        .iter()
        .filter(|hit| activatable(&hit.skill.name))
        .take(limit)
        .map(|hit| {
            json!({
                "name": hit.skill.name,
                "description": crate::prompt::shown_description(&hit.skill.description),
                "score": hit.score,
            })
        })
        .collect();
    Value::Array(found).to_string()
}
