//! Reading typed fields out of a frontmatter map, with positioned diagnostics.

use serde_json::{Map, Value};

use crate::Diagnostic;
use crate::frontmatter::{as_text, key_line};

/// A frontmatter map being taken apart field by field; what is left at the end
/// is the `extra` map.
pub(crate) struct Fields<'a> {
    map: Map<String, Value>,
    yaml: &'a str,
    yaml_line: usize,
    pub(crate) warnings: Vec<Diagnostic>,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(map: Map<String, Value>, yaml: &'a str, yaml_line: usize) -> Self {
        Fields {
            map,
            yaml,
            yaml_line,
            warnings: Vec::new(),
        }
    }

    /// The file line of `key` (the opening `---` line when absent).
    pub(crate) fn line(&self, key: &str) -> usize {
        key_line(self.yaml, self.yaml_line, key, 1)
    }

    /// A required non-empty text field.
    pub(crate) fn required(&mut self, key: &str, hint: &str) -> Result<String, Diagnostic> {
        // The line is looked for only when there is something to say.
        let line = |fields: &Self| fields.line(key);
        match self.map.remove(key) {
            None => Err(Diagnostic::error(
                1,
                1,
                format!("missing required field `{key}`: add `{key}: {hint}` to the frontmatter"),
            )),
            Some(value) => match as_text(&value) {
                Some(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
                Some(_) => Err(Diagnostic::error(
                    line(self),
                    1,
                    format!("field `{key}` is empty: give it a value, as in `{key}: {hint}`"),
                )),
                None => Err(Diagnostic::error(
                    line(self),
                    1,
                    format!("field `{key}` must be text, not a list or map: write `{key}: {hint}`"),
                )),
            },
        }
    }

    /// An optional text field; a list or map there is ignored with a warning.
    pub(crate) fn text(&mut self, key: &str) -> Option<String> {
        let value = self.map.remove(key)?;
        match as_text(&value) {
            Some(text) if !text.trim().is_empty() => Some(text.trim().to_owned()),
            Some(_) => None,
            None => {
                let line = self.line(key);
                self.warnings.push(Diagnostic::warning(
                    line,
                    1,
                    format!("field `{key}` must be text; it was ignored"),
                ));
                None
            }
        }
    }

    /// An optional non-negative integer field.
    pub(crate) fn count(&mut self, key: &str) -> Option<u32> {
        let value = self.map.remove(key)?;
        let parsed = match &value {
            Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        if parsed.is_none() {
            let line = self.line(key);
            self.warnings.push(Diagnostic::warning(
                line,
                1,
                format!("field `{key}` must be a whole number such as `{key}: 10`; it was ignored"),
            ));
        }
        parsed
    }

    /// A list field: a YAML list, or text split on spaces and commas outside
    /// parentheses (so `Bash(git add:*) Read, Grep` keeps `Bash(git add:*)` whole).
    pub(crate) fn list(&mut self, key: &str) -> Vec<String> {
        let Some(value) = self.map.remove(key) else {
            return Vec::new();
        };
        match &value {
            Value::Array(items) => items
                .iter()
                .filter_map(|item| as_text(item).map(|t| t.trim().to_owned()))
                .filter(|t| !t.is_empty())
                .collect(),
            other => match as_text(other) {
                Some(text) => split_list(&text),
                None => {
                    let line = self.line(key);
                    self.warnings.push(Diagnostic::warning(
                        line,
                        1,
                        format!("field `{key}` must be a list or text; it was ignored"),
                    ));
                    Vec::new()
                }
            },
        }
    }

    /// An optional map field; anything else is ignored with a warning.
    pub(crate) fn map(&mut self, key: &str) -> Map<String, Value> {
        match self.map.remove(key) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => {
                let line = self.line(key);
                self.warnings.push(Diagnostic::warning(
                    line,
                    1,
                    format!("field `{key}` must be a map of `key: value` lines; it was ignored"),
                ));
                Map::new()
            }
        }
    }

    /// Whether `key` is present.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// Whether `key` is given as a YAML list.
    pub(crate) fn is_list(&self, key: &str) -> bool {
        matches!(self.map.get(key), Some(Value::Array(_)))
    }

    /// The keys nobody took. When none is left, a new empty map: the taken
    /// keys' map would keep its emptied node allocated (hundreds of bytes per
    /// skill, for as long as the skill is held).
    pub(crate) fn rest(self) -> (Map<String, Value>, Vec<Diagnostic>) {
        if self.map.is_empty() {
            // An emptied `BTreeMap` keeps its node (hundreds of bytes a skill).
            return (Map::new(), self.warnings);
        }
        (self.map, self.warnings)
    }
}

fn split_list(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if depth == 0 && (c.is_whitespace() || c == ',') => {
                if !current.is_empty() {
                    items.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    items
}

#[cfg(test)]
mod tests {
    use super::split_list;

    #[test]
    fn lists_keep_parenthesised_patterns_whole() {
        assert_eq!(
            split_list("Bash(git add:*) Read, Grep"),
            ["Bash(git add:*)", "Read", "Grep"]
        );
    }

    #[test]
    fn unbalanced_parentheses_do_not_panic() {
        assert_eq!(split_list(")) a (b"), ["))", "a", "(b"]);
    }
}
