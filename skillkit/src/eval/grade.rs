//! Grading a case's run: deterministic assertions first (text, regular
//! expression, JSON path, files in the output folder, tools used, turns),
//! then a judge model for assertions written in prose, each with its
//! evidence.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::run::Transcript;
use crate::llm::{Message, Registry, Request, Response};

/// What a case asserts of a run. In `evals.json` a string is a prose
/// assertion (graded by the judge model); an object with a `type` is one
/// of the deterministic kinds.
///
/// ```
/// use skillkit::eval::Assertion;
/// let a: Vec<Assertion> = serde_json::from_str(r#"[
///     "The answer is polite",
///     {"type": "contains", "value": "42"},
///     {"type": "regex", "pattern": "^Total: \\d+"},
///     {"type": "json_path", "path": "$.total", "equals": 42},
///     {"type": "file_exists", "path": "report.csv"},
///     {"type": "file_matches", "path": "report.csv", "pattern": "total"},
///     {"type": "tool_used", "tools": [{"name": "activate_skill", "input": {"name": "docs:pdf"}}]},
///     {"type": "max_turns", "value": 3}
/// ]"#).unwrap();
/// assert!(matches!(a[0], Assertion::Prose(_)));
/// assert_eq!(a.len(), 8);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Assertion {
    /// Graded by the judge model.
    Prose(String),
    /// Graded by SkillKit.
    Check(Check),
}

/// A deterministic assertion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Check {
    /// The answer holds `value` (ignoring case unless `case_sensitive`).
    Contains {
        /// The text.
        value: String,
        /// Compare case too.
        #[serde(default)]
        case_sensitive: bool,
    },
    /// The answer does not hold `value` (ignoring case).
    NotContains {
        /// The text.
        value: String,
    },
    /// The answer matches the regular expression.
    Regex {
        /// The expression (Rust's `regex` syntax, multi-line).
        pattern: String,
    },
    /// The answer (or `file`, in the output folder) is JSON whose value at
    /// `path` (`$.a.b[0]`) equals `equals`.
    JsonPath {
        /// `$`, then `.key` and `[index]` steps.
        path: String,
        /// The value expected.
        equals: Value,
        /// A file of the output folder instead of the answer.
        #[serde(default)]
        file: Option<String>,
    },
    /// A file exists in the output folder.
    FileExists {
        /// Relative to the output folder.
        path: String,
    },
    /// A file of the output folder matches the regular expression.
    FileMatches {
        /// Relative to the output folder.
        path: String,
        /// The expression.
        pattern: String,
    },
    /// These tools were called in this order (others may come between),
    /// each with input values matching the regular expressions given.
    ToolUsed {
        /// The calls, in order.
        tools: Vec<ToolStep>,
    },
    /// The run took at most this many model turns.
    MaxTurns {
        /// The most turns.
        value: u32,
    },
}

/// One call of a [`Check::ToolUsed`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolStep {
    /// The tool's full name (`activate_skill`, `run_skill_script`,
    /// `docs:pdf`).
    pub name: String,
    /// For each input key, a regular expression its value (as text; a
    /// string without its quotes) must match.
    #[serde(default)]
    pub input: serde_json::Map<String, Value>,
}

/// One assertion's verdict, in skill-creator's `grading.json` form.
///
/// ```
/// let g = skillkit::eval::Grade { text: "x".into(), passed: true, evidence: "found".into() };
/// assert!(g.passed);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grade {
    /// The assertion, as text.
    pub text: String,
    /// Whether it holds.
    pub passed: bool,
    /// Why: what was found, or not.
    pub evidence: String,
}

impl Assertion {
    /// The assertion as one line of text.
    ///
    /// ```
    /// let a = skillkit::eval::Assertion::Prose("It is polite".into());
    /// assert_eq!(a.text(), "It is polite");
    /// ```
    pub fn text(&self) -> String {
        match self {
            Assertion::Prose(text) => text.clone(),
            Assertion::Check(check) => serde_json::to_string(check).unwrap_or_default(),
        }
    }
}

/// Grades `assertion` of a run: `outputs` is the run's output folder.
pub(super) async fn grade(
    assertion: &Assertion,
    run: &Transcript,
    outputs: &Path,
    judge: (&Registry, &str),
    case_prompt: &str,
) -> Grade {
    let text = assertion.text();
    let (passed, evidence) = match assertion {
        Assertion::Check(check) => check_one(check, run, outputs),
        Assertion::Prose(prose) => judged(prose, run, outputs, judge, case_prompt).await,
    };
    Grade {
        text,
        passed,
        evidence,
    }
}

/// A deterministic check: (passed, evidence).
fn check_one(check: &Check, run: &Transcript, outputs: &Path) -> (bool, String) {
    let answer = &run.answer;
    match check {
        Check::Contains {
            value,
            case_sensitive,
        } => {
            let found = match case_sensitive {
                true => answer.contains(value.as_str()),
                false => answer.to_lowercase().contains(&value.to_lowercase()),
            };
            (found, found_or_not(found, value, "the answer"))
        }
        Check::NotContains { value } => {
            let found = answer.to_lowercase().contains(&value.to_lowercase());
            (!found, found_or_not(found, value, "the answer"))
        }
        Check::Regex { pattern } => match regex(pattern) {
            Ok(re) => match re.find(answer) {
                Some(m) => (true, format!("matched {:?}", clip(m.as_str()))),
                None => (false, format!("the answer does not match /{pattern}/")),
            },
            Err(e) => (false, e),
        },
        Check::JsonPath { path, equals, file } => {
            let text = match file {
                Some(file) => match read_output(outputs, file) {
                    Ok(text) => text,
                    Err(e) => return (false, e),
                },
                None => answer.clone(),
            };
            let Some(value) = json_in(&text) else {
                return (false, "no JSON value found".into());
            };
            match json_path(&value, path) {
                Ok(Some(found)) if found == equals => (true, format!("{path} is {found}")),
                Ok(Some(found)) => (false, format!("{path} is {found}, not {equals}")),
                Ok(None) => (false, format!("nothing at {path}")),
                Err(e) => (false, e),
            }
        }
        Check::FileExists { path } => match inside(outputs, path) {
            Ok(file) if file.is_file() => (true, format!("{path} exists")),
            Ok(_) => (false, format!("no file {path} in the outputs")),
            Err(e) => (false, e),
        },
        Check::FileMatches { path, pattern } => {
            let text = match read_output(outputs, path) {
                Ok(text) => text,
                Err(e) => return (false, e),
            };
            match regex(pattern) {
                Ok(re) => match re.find(&text) {
                    Some(m) => (true, format!("{path}: matched {:?}", clip(m.as_str()))),
                    None => (false, format!("{path} does not match /{pattern}/")),
                },
                Err(e) => (false, e),
            }
        }
        Check::ToolUsed { tools } => tools_in_order(tools, &run.calls),
        Check::MaxTurns { value } => (
            run.turns <= *value,
            format!("{} turns (at most {value})", run.turns),
        ),
    }
}

fn found_or_not(found: bool, value: &str, place: &str) -> String {
    match found {
        true => format!("{place} holds {:?}", clip(value)),
        false => format!("{place} does not hold {:?}", clip(value)),
    }
}

/// At most 200 characters of `text`.
fn clip(text: &str) -> String {
    match crate::prompt::cut_at(text, 200) {
        None => text.to_owned(),
        Some((kept, _)) => format!("{kept}…"),
    }
}

fn regex(pattern: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(pattern)
        .multi_line(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("not a regular expression: {e}"))
}

/// `path` inside `outputs` (relative, no `..`), or why not. A link the
/// run's scripts made there is followed only while it stays inside: a
/// sandboxed script cannot read `~/.ssh`, and must not have the grader,
/// which runs outside the sandbox, read it for it through `out -> ~/.ssh`.
fn inside(outputs: &Path, path: &str) -> Result<std::path::PathBuf, String> {
    use crate::whole::OutOf;
    crate::whole::within_linked(outputs, path, true).map_err(|out| match out {
        OutOf::NotPlain => format!("{path:?} is not a path inside the outputs"),
        OutOf::Link(link) => format!(
            "{path:?} leads out of the outputs through the symbolic link {:?}; it is not read",
            link.display().to_string()
        ),
    })
}

/// A file of the outputs as text (at most 4 MiB), read as skill files are.
fn read_output(outputs: &Path, path: &str) -> Result<String, String> {
    use std::io::Read as _;
    let file = inside(outputs, path)?;
    let (file, _) = skillkit_parser::open_file(&file)
        .map_err(|e| format!("{path} cannot be read from the outputs: {e}"))?;
    let mut text = String::new();
    file.take(4 * 1024 * 1024)
        .read_to_string(&mut text)
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(text)
}

/// The JSON value of `text`: all of it, else its first `{…}` or `[…]`
/// block (an answer with prose around a JSON object).
fn json_in(text: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str(text.trim()) {
        return Some(value);
    }
    let start = text.find(['{', '['])?;
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    stream.next()?.ok()
}

/// The value at `path` (`$.a.b[0]`) in `value`.
fn json_path<'a>(value: &'a Value, path: &str) -> Result<Option<&'a Value>, String> {
    let rest = path
        .strip_prefix('$')
        .ok_or_else(|| format!("the JSON path {path:?} does not start with `$`"))?;
    let mut at = value;
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut key = String::new();
                while let Some(&next) = chars.peek() {
                    if next == '.' || next == '[' {
                        break;
                    }
                    key.push(next);
                    chars.next();
                }
                match at.get(&key) {
                    Some(next) => at = next,
                    None => return Ok(None),
                }
            }
            '[' => {
                let mut index = String::new();
                for next in chars.by_ref() {
                    if next == ']' {
                        break;
                    }
                    index.push(next);
                }
                let step = match index.trim().parse::<usize>() {
                    Ok(n) => at.get(n),
                    Err(_) => at.get(index.trim().trim_matches(['"', '\''])),
                };
                match step {
                    Some(next) => at = next,
                    None => return Ok(None),
                }
            }
            other => return Err(format!("unexpected {other:?} in the JSON path {path:?}")),
        }
    }
    Ok(Some(at))
}

/// Whether `steps` were called in order among `calls`.
fn tools_in_order(steps: &[ToolStep], calls: &[(String, Value)]) -> (bool, String) {
    let mut from = 0;
    for step in steps {
        let found = calls[from..].iter().position(|(name, input)| {
            name == &step.name
                && step.input.iter().all(|(key, pattern)| {
                    let Some(pattern) = pattern.as_str() else {
                        return input.get(key) == Some(pattern);
                    };
                    let value = match input.get(key) {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => return false,
                    };
                    regex(pattern).is_ok_and(|re| re.is_match(&value))
                })
        });
        match found {
            Some(n) => from += n + 1,
            None => {
                let called: Vec<&str> = calls.iter().map(|(n, _)| n.as_str()).collect();
                return (
                    false,
                    format!(
                        "no call of {} (with its input) after the steps before it; called: [{}]",
                        step.name,
                        called.join(", ")
                    ),
                );
            }
        }
    }
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    (true, format!("called in order: {}", names.join(", ")))
}

/// The judge's verdict on a prose assertion.
async fn judged(
    assertion: &str,
    run: &Transcript,
    outputs: &Path,
    (registry, model): (&Registry, &str),
    case_prompt: &str,
) -> (bool, String) {
    let mut files = Vec::new();
    if let Ok(entries) = std::fs::read_dir(outputs) {
        for entry in entries.flatten().take(50) {
            files.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    files.sort();
    let calls: Vec<&str> = run.calls.iter().map(|(n, _)| n.as_str()).collect();
    let prompt = format!(
        "Grade one assertion about an AI assistant's work.\n\n\
         <request>\n{case_prompt}\n</request>\n\n\
         <answer>\n{}\n</answer>\n\n\
         <tools_called>{}</tools_called>\n<output_files>{}</output_files>\n\n\
         <assertion>\n{assertion}\n</assertion>\n\n\
         Does the assertion hold? Reply with one JSON object and nothing else: \
         {{\"passed\": true or false, \"evidence\": \"the words of the answer (or the \
         fact) that decide it\"}}.",
        clip_long(&run.answer),
        calls.join(", "),
        files.join(", "),
    );
    let request = Request::new(vec![
        Message::system("You are a strict grader. You quote evidence; you never guess."),
        Message::user(prompt),
    ]);
    let answer = match registry.stream(model, request).await {
        Ok(events) => Response::collect(events).await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(response) => verdict(&response.message.text),
        Err(e) => (false, format!("the judge failed: {e}")),
    }
}

/// At most 20,000 characters of the answer for the judge.
fn clip_long(text: &str) -> String {
    match crate::prompt::cut_at(text, 20_000) {
        None => text.to_owned(),
        Some((kept, _)) => format!("{kept}\n[… the rest of the answer left out]"),
    }
}

/// The judge's reply as (passed, evidence).
fn verdict(reply: &str) -> (bool, String) {
    let Some(value) = json_in(reply) else {
        return (
            false,
            format!("the judge's reply is not a verdict: {:?}", clip(reply)),
        );
    };
    match value.get("passed").and_then(Value::as_bool) {
        Some(passed) => (
            passed,
            value
                .get("evidence")
                .and_then(Value::as_str)
                .unwrap_or("(the judge gave no evidence)")
                .to_owned(),
        ),
        None => (
            false,
            format!("the judge's reply has no `passed`: {:?}", clip(reply)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's scripts (sandboxed, unable to read the user's secrets) leave
    /// links in their outputs: the grader follows those that stay inside,
    /// and reads nothing through one that leads out.
    #[cfg(unix)]
    #[test]
    fn the_grader_reads_no_link_out_of_the_outputs() {
        let top = tempfile::tempdir().unwrap();
        let (outputs, secrets) = (top.path().join("outputs"), top.path().join("secrets"));
        std::fs::create_dir_all(&outputs).unwrap();
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(secrets.join("key"), "TOP-SECRET {\"k\": 1}").unwrap();
        std::fs::write(outputs.join("report.txt"), "all TOP marks").unwrap();
        let link = |to: &Path, name: &str| std::os::unix::fs::symlink(to, outputs.join(name));
        link(&secrets.join("key"), "out.txt").unwrap();
        link(&secrets, "dir").unwrap();
        link(Path::new("report.txt"), "latest.txt").unwrap();
        let run = Transcript::default();
        let matches = |path: &str| Check::FileMatches {
            path: path.into(),
            pattern: "TOP.*".into(),
        };
        for path in ["out.txt", "dir/key"] {
            for check in [
                matches(path),
                Check::FileExists { path: path.into() },
                Check::JsonPath {
                    path: "$.k".into(),
                    equals: serde_json::json!(1),
                    file: Some(path.into()),
                },
            ] {
                let (passed, evidence) = check_one(&check, &run, &outputs);
                assert!(!passed, "{path}: {evidence}");
                assert!(evidence.contains("leads out of the outputs"), "{evidence}");
                assert!(!evidence.contains("SECRET"), "{evidence}");
            }
        }
        let (passed, evidence) = check_one(&matches("latest.txt"), &run, &outputs);
        assert!(passed, "{evidence}");
        assert!(evidence.contains("TOP marks"), "{evidence}");
    }

    #[test]
    fn json_paths_walk_keys_and_indexes() {
        let value = serde_json::json!({"a": {"b": [10, {"c": "x"}]}});
        assert_eq!(
            json_path(&value, "$.a.b[0]").unwrap(),
            Some(&serde_json::json!(10))
        );
        assert_eq!(
            json_path(&value, "$.a.b[1].c").unwrap(),
            Some(&serde_json::json!("x"))
        );
        assert_eq!(json_path(&value, "$.a.z").unwrap(), None);
        assert!(json_path(&value, "a.b").is_err());
        assert_eq!(
            json_in("The result: {\"total\": 3} as asked."),
            Some(serde_json::json!({"total": 3}))
        );
    }

    #[test]
    fn tools_are_found_in_order_with_their_input() {
        let calls = vec![
            (
                "activate_skill".to_owned(),
                serde_json::json!({"name": "docs:pdf"}),
            ),
            (
                "run_skill_script".to_owned(),
                serde_json::json!({"script": "scripts/fill.py"}),
            ),
        ];
        let step = |name: &str, input: Value| ToolStep {
            name: name.into(),
            input: input.as_object().cloned().unwrap_or_default(),
        };
        let in_order = [
            step("activate_skill", serde_json::json!({"name": "^docs:pdf$"})),
            step("run_skill_script", serde_json::json!({"script": "fill"})),
        ];
        assert!(tools_in_order(&in_order, &calls).0);
        let reversed = [in_order[1].clone(), in_order[0].clone()];
        assert!(!tools_in_order(&reversed, &calls).0);
        let wrong_input = [step(
            "activate_skill",
            serde_json::json!({"name": "^docs:xls$"}),
        )];
        assert!(!tools_in_order(&wrong_input, &calls).0);
    }

    #[test]
    fn a_judge_reply_is_read_or_refused() {
        assert_eq!(
            verdict(r#"{"passed": true, "evidence": "says 42"}"#),
            (true, "says 42".into())
        );
        assert!(!verdict("I think it passes").0);
        assert!(!verdict(r#"{"evidence": "x"}"#).0);
    }
}
