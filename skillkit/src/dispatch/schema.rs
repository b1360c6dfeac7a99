//! The check of a tool call's input against its tool's JSON schema, before
//! the tool runs: the shape a model gets wrong (not an object, a required
//! property missing, a property of the wrong type), said so the model can
//! fix its next call.

use crate::tool::ToolDefinition;
use serde_json::Value;

/// `None` when `input` fits `schema`; else what is wrong, for the model.
///
/// Checks `type`, `required` and the `type` of each listed property, one
/// level deep (what tool schemas use); other keywords are the tool's to
/// enforce.
pub(crate) fn check(schema: &Value, input: &Value) -> Option<String> {
    if let Some(problem) = type_problem(schema, input, "the input") {
        return Some(problem);
    }
    let (Some(properties), Value::Object(given)) = (schema.get("properties"), input) else {
        return None;
    };
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        let missing: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|key| !given.contains_key(*key))
            .collect();
        if !missing.is_empty() {
            return Some(format!(
                "the input lacks the required propert{} `{}`",
                if missing.len() == 1 { "y" } else { "ies" },
                missing.join("`, `")
            ));
        }
    }
    given.iter().find_map(|(key, value)| {
        let schema = properties.get(key)?;
        type_problem(schema, value, &format!("property `{key}`"))
    })
}

fn type_problem(schema: &Value, value: &Value, what: &str) -> Option<String> {
    let expected: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let fits = |t: &str| match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "null" => value.is_null(),
        _ => true,
    };
    if expected.is_empty() || expected.iter().any(|t| fits(t)) {
        return None;
    }
    Some(format!(
        "{what} must be of type {}, not {}",
        expected.join(" or "),
        kind(value)
    ))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The characters of `tools`' definitions.
pub(crate) fn tools_chars(tools: &[ToolDefinition]) -> usize {
    tools
        .iter()
        .map(|tool| tool.name.len() + tool.description.len() + json_len(&tool.input_schema))
        .sum()
}

/// About the length of `value` written as JSON, without writing it (the
/// estimate runs before every request).
pub(crate) fn json_len(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => match n.as_u64() {
            Some(n) => n.checked_ilog10().unwrap_or(0) as usize + 1,
            None => 10,
        },
        Value::String(text) => text.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|v| json_len(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(key, v)| key.len() + 4 + json_len(v))
                .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}},
            "required": ["path"]
        })
    }

    #[test]
    fn fitting_input_passes() {
        assert_eq!(
            check(&schema(), &json!({"path": "a.txt", "lines": 3})),
            None
        );
        assert_eq!(check(&json!({}), &json!("anything")), None);
    }

    #[test]
    fn wrong_shapes_say_what_is_wrong() {
        let not_object = check(&schema(), &json!("a.txt")).unwrap();
        assert!(
            not_object.contains("type object, not a string"),
            "{not_object}"
        );
        let missing = check(&schema(), &json!({"lines": 3})).unwrap();
        assert!(missing.contains("required property `path`"), "{missing}");
        let wrong = check(&schema(), &json!({"path": "a", "lines": "3"})).unwrap();
        assert!(
            wrong.contains("property `lines` must be of type integer"),
            "{wrong}"
        );
    }
}
