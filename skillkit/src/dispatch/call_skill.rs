//! `call_skill {name, input}`: the executable skills an agent is not offered
//! as tools of their own. While every executable skill's definition fits in
//! the listing's budget, each is a tool; past it, none is, and they are
//! found like the other skills (the listing, `search_skills`), shown by
//! `activate_skill` with their input schema, and called through this one
//! tool. A call is checked, approved and run as a call of the skill's own
//! tool would be (the approval policy sees the skill's name and input).

use serde_json::{Value, json};

use crate::tool::ToolDefinition;

/// The name of the tool that calls an executable skill by name.
#[cfg_attr(not(feature = "agent"), allow(unreachable_pub))]
pub const CALL_SKILL: &str = "call_skill";

/// The definition of `call_skill`.
pub(crate) fn definition() -> ToolDefinition {
    ToolDefinition::new(
        CALL_SKILL,
        "Call an executable skill by its full name, with input that fits its input schema. \
         Find the skill with search_skills (or in the list of skills); activate_skill on it \
         shows what it does and its input schema.",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's full name."},
                "input": {"type": "object", "description": "The skill's input, fitting its schema."}
            },
            "required": ["name", "input"]
        }),
    )
}

/// The size, in characters, of what offering `definition` as a tool of
/// its own costs the model's context.
pub(crate) fn weight(definition: &ToolDefinition) -> usize {
    definition.name.chars().count()
        + definition.description.chars().count()
        + definition.input_schema.to_string().chars().count()
}

/// What `activate_skill` adds for an executable skill reached through
/// `call_skill`: how to call it, and its input schema.
pub(crate) fn usage(name: &str, schema: &Value) -> String {
    format!(
        "\nThis skill runs code: call it with `{CALL_SKILL}` {{\"name\": \"{name}\", \"input\": \
         {{…}}}}, the input fitting this schema:\n{schema}\n"
    )
}
