//! What a person sees before answering y/n: the whole input of the call,
//! never cut silently. The fields that say what runs come first (`skill`,
//! `script`, `command`, `name`, `path`), then the rest in order; each value
//! is printed whole, wrapped, made inert for the terminal. An input too long
//! to read on a screen is written whole to a file the prompt names, and the
//! screen shows the start of each value with how much more there is.

use std::fmt::Write;
use std::io::Write as _;
use std::path::PathBuf;

use serde_json::Value;
use skillkit::agent::InputRequest;
use skillkit::approval::InputKind;

use crate::ask;
use crate::list::one_line;
use crate::output::inert;

/// The fields named first, in this order: what runs, and on what.
const FIRST: [&str; 5] = ["skill", "script", "command", "name", "path"];
/// Past this many characters of input, the whole of it goes to a file.
const ON_SCREEN: usize = 4000;
/// How much of a value the screen shows when the input went to a file.
const SHOWN: usize = 400;
/// The width values are wrapped at.
const WIDTH: usize = 96;

/// What to show before the prompt (lines, each ending in `\n`), and the
/// one-line question itself.
pub struct Approval {
    /// The call's whole input, field by field.
    pub details: String,
    /// `allow NAME? [y/n] `.
    pub question: String,
}

/// The approval of `request`, for a person.
pub fn approval(request: &InputRequest) -> Approval {
    let name = inert(&request.name).into_owned();
    match &request.kind {
        InputKind::Pending { state } => match ask::question_of(state) {
            Some(asked) => Approval {
                details: String::new(),
                question: inert(&format!("{name} asks: {} [y/n] ", one_line(asked))).into_owned(),
            },
            None => Approval {
                details: format!(
                    "{name} waits for you, with:\n{}and its input:\n{}",
                    fields(state, None),
                    fields(&request.input, None)
                ),
                question: format!("go on with {name}? [y/n] "),
            },
        },
        _ => {
            let whole = serde_json::to_string_pretty(&request.input).unwrap_or_default();
            let file = (whole.chars().count() > ON_SCREEN)
                .then(|| keep(&whole))
                .flatten();
            let mut details = format!("{name} wants to run with:\n");
            details.push_str(&fields(&request.input, file.as_ref()));
            if let Some(file) = &file {
                let _ = writeln!(
                    details,
                    "  (the input is {} characters long: all of it is in {})",
                    whole.chars().count(),
                    inert(&file.display().to_string())
                );
            }
            Approval {
                details,
                question: format!("allow {name}? [y/n] "),
            }
        }
    }
}

/// `value`'s fields, one per entry (`  key: value`, wrapped), the fields of
/// [`FIRST`] first; a value that is not an object is one entry. With `file`
/// (where the whole input is), each value shows its first [`SHOWN`]
/// characters and how many more there are.
fn fields(value: &Value, file: Option<&PathBuf>) -> String {
    let mut entries: Vec<(&str, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        other => vec![("input", other)],
    };
    entries.sort_by_key(|(key, _)| {
        (
            FIRST.iter().position(|f| f == key).unwrap_or(FIRST.len()),
            key.to_string(),
        )
    });
    let mut out = String::new();
    let width = entries
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    for (key, value) in entries {
        let text = match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let total = text.chars().count();
        let (text, more) = match file {
            Some(_) if total > SHOWN => (text.chars().take(SHOWN).collect(), total - SHOWN),
            _ => (text, 0),
        };
        let key = inert(key);
        let lead = format!("  {key}:{} ", " ".repeat(width - key.chars().count()));
        let indent = " ".repeat(lead.chars().count());
        let mut first = true;
        for line in wrap(&inert(&text), WIDTH.saturating_sub(indent.len()).max(20)) {
            out.push_str(if first { &lead } else { &indent });
            out.push_str(&line);
            out.push('\n');
            first = false;
        }
        if first {
            out.push_str(lead.trim_end());
            out.push('\n');
        }
        if more > 0 {
            let _ = writeln!(out, "{indent}… ({more} more characters, in the file below)");
        }
    }
    out
}

/// `text` in lines of at most `width` characters, cut at its own line ends
/// and then every `width` characters (nothing is dropped).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.split('\n') {
        let chars: Vec<char> = line.chars().collect();
        if chars.is_empty() {
            lines.push(String::new());
        }
        for chunk in chars.chunks(width) {
            lines.push(chunk.iter().collect());
        }
    }
    if text.is_empty() {
        lines.clear();
    }
    lines
}

/// Writes `whole` to a new file in the temporary folder, kept; its path.
fn keep(whole: &str) -> Option<PathBuf> {
    let mut file = tempfile::Builder::new()
        .prefix("skillkit-approval-")
        .suffix(".json")
        .tempfile()
        .ok()?;
    file.write_all(whole.as_bytes()).ok()?;
    file.write_all(b"\n").ok()?;
    let (_, path) = file.keep().ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(input: Value) -> InputRequest {
        InputRequest {
            call_id: "c1".into(),
            name: "run_skill_script".into(),
            input,
            kind: InputKind::Approval,
        }
    }

    #[test]
    fn identifying_fields_come_first_and_nothing_is_cut() {
        let long = format!("{} ~/.ssh/id_ed25519", "a".repeat(300));
        let shown = approval(&request(json!({
            "args": [long],
            "stdin": "",
            "script": "scripts/run.sh",
            "skill": "kit:deploy",
        })));
        let lines: Vec<&str> = shown.details.lines().collect();
        assert!(
            lines[1].starts_with("  skill:  kit:deploy"),
            "{}",
            shown.details
        );
        assert!(
            lines[2].starts_with("  script: scripts/run.sh"),
            "{}",
            shown.details
        );
        assert!(lines[3].starts_with("  args:"), "{}", shown.details);
        // Wrapped, whole: the tail is there.
        let joined: String = shown.details.split_whitespace().collect();
        assert!(joined.contains("~/.ssh/id_ed25519"), "{}", shown.details);
        assert!(
            shown
                .details
                .lines()
                .all(|l| l.chars().count() <= WIDTH + 2)
        );
        assert_eq!(shown.question, "allow run_skill_script? [y/n] ");
    }

    #[test]
    fn a_very_long_input_goes_whole_to_a_file_the_prompt_names() {
        let huge = format!("{}TAIL", "x".repeat(10_000));
        let shown = approval(&request(json!({"skill": "k:s", "command": huge})));
        assert!(shown.details.contains("more characters, in the file below"));
        let file = shown
            .details
            .lines()
            .find_map(|l| l.split("all of it is in ").nth(1))
            .map(|p| p.trim_end_matches(')').to_owned())
            .expect("the file is named");
        let written = std::fs::read_to_string(&file).unwrap();
        assert!(written.contains("TAIL"));
        let _ = std::fs::remove_file(file);
    }

    #[test]
    fn control_characters_are_inert() {
        let shown = approval(&request(json!({"command": "echo \u{1b}]0;x\u{7}"})));
        assert!(!shown.details.contains('\u{1b}'), "{}", shown.details);
    }
}
