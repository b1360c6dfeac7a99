//! Frontmatter YAML to JSON values, built from the events of `granit-parser`
//! (the pure-Rust YAML 1.2 parser serde-saphyr is built on).
//!
//! Reading the events ourselves keeps the budget under our control and lets
//! strict validation see how a value was written (flow or block style, anchors,
//! aliases, tags), which a deserializer hides:
//!
//! * scalars resolve by the YAML 1.2 core schema, with two conservative choices:
//!   numbers written with leading zeros or underscores stay text, and so do
//!   `.inf`/`.nan` (JSON has no such numbers); `yes`/`on` are text, as in 1.2;
//! * mapping keys are always the key's text (`1: x` has key `"1"`);
//! * duplicate keys, keys that are lists or maps, and a second document are errors;
//! * nesting deeper than [`MAX_DEPTH`] and more than [`MAX_NODES`] nodes (alias
//!   expansion counts) are errors, so alias bombs and deep nesting cost little.

use std::collections::HashMap;

use granit_parser::{Event, Parser, ScalarStyle, Span, StructureStyle};
use serde_json::{Map, Number, Value};

use crate::Diagnostic;

mod fast;

/// The deepest nesting of lists and maps accepted in frontmatter.
pub(crate) const MAX_DEPTH: usize = 64;

/// The most nodes (scalars, lists, maps, counting alias expansions) accepted in
/// frontmatter.
pub(crate) const MAX_NODES: usize = 100_000;

/// A list or map being built, with the anchor it will be stored under.
enum Frame {
    List(Vec<Value>, usize),
    /// Entries, the key waiting for its value, the anchor.
    Map(Map<String, Value>, Option<String>, usize),
}

/// The mapping of frontmatter written in the plain `key: value` subset nearly
/// every skill uses, read without the YAML parser; `None` when [`parse`] must
/// decide (see the `fast` module). When it answers, the answer is `parse`'s.
pub(crate) fn parse_plain_mapping(yaml: &str) -> Option<Map<String, Value>> {
    fast::parse(yaml)
}

/// Panics when the fast path answers and its answer is not the full parser's
/// (for the fast path's tests, and the `yaml_fast_path` fuzz target, built
/// with `--cfg fuzzing`).
#[cfg(any(test, fuzzing))]
pub(crate) fn check_fast_path(yaml: &str) {
    if let Some(map) = fast::parse(yaml) {
        match parse(yaml, 2) {
            Ok(value) => assert_eq!(value, Value::Object(map), "{yaml:?}"),
            Err(e) => panic!("fast path read {yaml:?}, the full parser refused it: {e}"),
        }
    }
}

/// Parses frontmatter YAML (which starts at file line `yaml_line`) into a value.
pub(crate) fn parse(yaml: &str, yaml_line: usize) -> Result<Value, Diagnostic> {
    let at = |span: &Span, message: String| {
        Diagnostic::error(
            yaml_line + span.start.line() - 1,
            span.start.col() + 1,
            message,
        )
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, (Value, usize)> = HashMap::new();
    let mut nodes = 0usize;
    let mut root: Option<Value> = None;
    let mut documents = 0;
    for item in Parser::new_from_str(yaml) {
        let (event, span) = item.map_err(|e| {
            Diagnostic::error(
                yaml_line + e.marker().line() - 1,
                e.marker().col() + 1,
                e.info(),
            )
        })?;
        let expecting_key = matches!(stack.last(), Some(Frame::Map(_, None, _)));
        let (value, anchor, size) = match event {
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return Err(at(
                        &span,
                        "only one YAML document is allowed in frontmatter".into(),
                    ));
                }
                continue;
            }
            Event::Alias(id) => {
                let Some((value, size)) = anchors.get(&id) else {
                    return Err(at(&span, "alias of an unknown anchor".into()));
                };
                if nodes + size > MAX_NODES {
                    return Err(at(&span, too_many()));
                }
                nodes += size;
                (value.clone(), 0, *size)
            }
            Event::Scalar(text, style, anchor, tag) => {
                let is_str = tag
                    .as_ref()
                    .is_some_and(|t| t.is_yaml_core_schema_tag("str"));
                let value = if expecting_key || style != ScalarStyle::Plain || is_str {
                    Value::String(text.into_owned())
                } else {
                    resolve(&text)
                };
                (value, anchor, 1)
            }
            Event::SequenceStart(_, anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(at(&span, too_deep()));
                }
                stack.push(Frame::List(Vec::new(), anchor));
                nodes += 1;
                continue;
            }
            Event::MappingStart(_, anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(at(&span, too_deep()));
                }
                stack.push(Frame::Map(Map::new(), None, anchor));
                nodes += 1;
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::List(items, anchor)) => (Value::Array(items), anchor, 0),
                Some(Frame::Map(map, _, anchor)) => (Value::Object(map), anchor, 0),
                None => continue,
            },
            _ => continue,
        };
        nodes += size;
        if nodes > MAX_NODES {
            return Err(at(&span, too_many()));
        }
        if anchor != 0 {
            anchors.insert(anchor, (value.clone(), count(&value)));
        }
        match stack.last_mut() {
            None => root = Some(value),
            Some(Frame::List(items, _)) => items.push(value),
            Some(Frame::Map(map, key @ None, _)) => {
                let Value::String(text) = value else {
                    return Err(at(
                        &span,
                        "mapping keys must be plain text, not lists or maps".into(),
                    ));
                };
                if map.contains_key(&text) {
                    return Err(at(
                        &span,
                        format!("duplicate key `{text}`, remove one of them"),
                    ));
                }
                *key = Some(text);
            }
            Some(Frame::Map(map, key @ Some(_), _)) => {
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
            }
        }
    }
    Ok(root.unwrap_or(Value::Null))
}

fn too_deep() -> String {
    format!("lists and maps nested more than {MAX_DEPTH} deep")
}

fn too_many() -> String {
    format!("more than {MAX_NODES} values (counting alias expansions)")
}

fn count(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(count).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(count).sum::<usize>(),
        _ => 1,
    }
}

/// The value of a plain scalar, by the YAML 1.2 core schema (see the module
/// docs for the conservative choices).
fn resolve(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let Some(first) = unsigned.bytes().next() else {
        return Value::String(text.to_owned());
    };
    if !(first.is_ascii_digit() || first == b'.') {
        return Value::String(text.to_owned());
    }
    if unsigned.bytes().all(|b| b.is_ascii_digit()) {
        if unsigned.len() > 1 && first == b'0' {
            return Value::String(text.to_owned());
        }
        if let Ok(i) = text.parse::<i64>() {
            return Value::from(i);
        }
        if let Ok(u) = text.parse::<u64>() {
            return Value::from(u);
        }
    }
    if let Some(hex) = text.strip_prefix("0x")
        && let Ok(i) = i64::from_str_radix(hex, 16)
    {
        return Value::from(i);
    }
    if let Some(octal) = text.strip_prefix("0o")
        && let Ok(i) = i64::from_str_radix(octal, 8)
    {
        return Value::from(i);
    }
    let float_chars = unsigned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if float_chars
        && (first.is_ascii_digit() || unsigned.as_bytes().get(1).is_some_and(u8::is_ascii_digit))
        && let Some(number) = text.parse::<f64>().ok().and_then(Number::from_f64)
    {
        return Value::Number(number);
    }
    Value::String(text.to_owned())
}

/// What strictyaml (the reference validator's YAML reader) refuses: flow-style
/// lists and maps, anchors, aliases and tags. Stops at a syntax error, which
/// [`parse`] reports.
pub(crate) fn strictyaml_problems(yaml: &str, yaml_line: usize) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for item in Parser::new_from_str(yaml) {
        let Ok((event, span)) = item else { break };
        let (flow, anchor, tag) = match &event {
            Event::SequenceStart(style, anchor, tag) | Event::MappingStart(style, anchor, tag) => {
                (*style == StructureStyle::Flow, *anchor, tag.is_some())
            }
            Event::Scalar(_, _, anchor, tag) => (false, *anchor, tag.is_some()),
            Event::Alias(_) => {
                problems.push(strict(
                    &span,
                    yaml_line,
                    "YAML alias (`*name`); write the value out instead",
                ));
                continue;
            }
            _ => continue,
        };
        if flow {
            problems.push(strict(
                &span,
                yaml_line,
                "flow-style collection (`[...]` or `{...}`); write it in block style, one `- item` or `key: value` per line",
            ));
        }
        if anchor != 0 {
            problems.push(strict(
                &span,
                yaml_line,
                "YAML anchor (`&name`); write the value out instead",
            ));
        }
        if tag {
            problems.push(strict(&span, yaml_line, "YAML tag (`!tag`); remove it"));
        }
    }
    problems
}

fn strict(span: &Span, yaml_line: usize, what: &str) -> Diagnostic {
    Diagnostic::error(
        yaml_line + span.start.line() - 1,
        span.start.col() + 1,
        format!("the Agent Skills reference validator (strictyaml) refuses this {what}"),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn value(yaml: &str) -> Value {
        parse(yaml, 1).unwrap()
    }

    #[test]
    fn core_schema_scalars() {
        assert_eq!(
            value(
                "a: 1\nb: -2\nc: 1.5\nd: 1e3\ne: true\nf: ~\ng: yes\nh: on\ni: 010\nj: 1_000\nk: 0x1F\nl: .inf\nm: '1'\nn: !!str 2\no: 0\np: +3\nq: .5\nr: 1.2.3\ns: -x\n"
            ),
            json!({
                "a": 1, "b": -2, "c": 1.5, "d": 1000.0, "e": true, "f": null, "g": "yes", "h": "on",
                "i": "010", "j": "1_000", "k": 31, "l": ".inf", "m": "1", "n": "2", "o": 0, "p": 3,
                "q": 0.5, "r": "1.2.3", "s": "-x"
            })
        );
    }

    #[test]
    fn keys_are_text() {
        assert_eq!(
            value("1: x\ntrue: y\n~: z\n"),
            json!({"1": "x", "true": "y", "~": "z"})
        );
        assert!(
            parse("[a]: x\n", 1)
                .unwrap_err()
                .message
                .contains("plain text")
        );
    }

    #[test]
    fn anchors_and_aliases_expand_within_budget() {
        assert_eq!(
            value("a: &x [1, 2]\nb: *x\n"),
            json!({"a": [1, 2], "b": [1, 2]})
        );
        let mut bomb = String::from("a: &a [x,x,x,x,x,x,x,x,x,x]\n");
        for (prev, cur) in ('a'..'j').zip('b'..'k') {
            let refs = vec![format!("*{prev}"); 10].join(",");
            bomb.push_str(&format!("{cur}: &{cur} [{refs}]\n"));
        }
        assert!(
            parse(&bomb, 1)
                .unwrap_err()
                .message
                .contains("alias expansions")
        );
    }

    #[test]
    fn positions_are_file_positions() {
        let err = parse("name: a\nx: [unclosed\n", 2).unwrap_err();
        assert_eq!((err.line, err.column), (3, 4));
        let err = parse("x: 1\nx: 2\n", 2).unwrap_err();
        assert_eq!((err.line, err.column), (3, 1));
        assert!(err.message.contains("duplicate key `x`"));
    }

    #[test]
    fn deep_nesting_fails_fast() {
        let deep = format!("x: {}\n", "[".repeat(100_000));
        assert!(parse(&deep, 1).is_err());
        let ok = format!("x: {}{}\n", "[".repeat(60), "]".repeat(60));
        assert!(parse(&ok, 1).is_ok());
    }

    #[test]
    fn strictyaml_refusals_are_found_with_positions() {
        let problems = strictyaml_problems(
            "a: [1]\nb: &x y\nc: *x\nd: !!str z\ne: |\n  [not flow]\n",
            2,
        );
        let found: Vec<(usize, usize)> = problems.iter().map(|p| (p.line, p.column)).collect();
        // Each at its value (an anchored or tagged scalar's span starts at its text).
        assert_eq!(found, [(2, 4), (3, 7), (4, 4), (5, 10)]);
    }
}
