//! Task eval results on disk, in the layout and with the field names of
//! Anthropic's skill-creator, so its eval viewer and `aggregate_benchmark`
//! read them unchanged:
//!
//! ```text
//! WORKSPACE/iteration-N/
//!     benchmark.json            metadata, every run, mean/stddev/min/max per configuration, delta
//!     benchmark.md              the same for people (a pull request comment)
//!     eval-<id>/eval_metadata.json   eval_id, eval_name, prompt, assertions
//!     eval-<id>/<configuration>/run-<k>/
//!         outputs/              the run's working folder: the case's files, what scripts wrote,
//!                               and answer.md (the final answer)
//!         grading.json          expectations [{text, passed, evidence}], summary, execution_metrics, timing
//!         timing.json           total_tokens, duration_ms, total_duration_seconds
//!         transcript.json       the prompt, the answer, the skills activated, every tool call
//! ```
//!
//! `<configuration>` is `with_skill`, and `without_skill` or (against a
//! previous version) `old_skill`. Prices are not
//! known to the adapters, so costs are not written; tokens are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Value, json};

use super::EvalError;
use super::tasks::{CaseRun, ConfigSummary, TaskReport};

/// What `benchmark.json`'s metadata says besides the runs.
///
/// ```
/// let meta = skillkit::eval::workspace::Metadata {
///     skill_path: "kits/docs/skills/pdf".into(),
///     executor_model: "scripted://m".into(),
///     analyzer_model: "scripted://m".into(),
/// };
/// assert!(meta.skill_path.ends_with("pdf"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// The skill's folder.
    pub skill_path: String,
    /// The model under test.
    pub executor_model: String,
    /// The judge's model.
    pub analyzer_model: String,
}

/// `relative` (plain names, such as `skillkit-eval/pdf`) inside the folder
/// `base`, checked: refused when a symbolic link on the way leads out of
/// `base`, or nowhere. The default workspace sits in the project being
/// evaluated, and a cloned project can ship `skillkit-eval -> ~/.config`;
/// results are written only inside the project.
///
/// ```
/// use skillkit::eval::workspace::inside;
/// let dir = tempfile::tempdir().unwrap();
/// let found = inside(dir.path(), "skillkit-eval/pdf").unwrap();
/// assert_eq!(found, dir.path().join("skillkit-eval/pdf"));
/// # #[cfg(unix)] {
/// let elsewhere = tempfile::tempdir().unwrap();
/// std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("skillkit-eval")).unwrap();
/// let refused = inside(dir.path(), "skillkit-eval/pdf").unwrap_err();
/// assert!(refused.to_string().contains("symbolic link `skillkit-eval`"));
/// # }
/// ```
pub fn inside(base: &Path, relative: &str) -> Result<PathBuf, EvalError> {
    crate::whole::within_linked(base, relative, true).map_err(|out| EvalError::File {
        path: relative.to_owned(),
        reason: match out {
            crate::whole::OutOf::NotPlain => {
                "not a folder inside the workspace's folder (a relative path of plain names)".into()
            }
            crate::whole::OutOf::Link(link) => format!(
                "the symbolic link `{}` on the way leads out of the folder (or nowhere); \
                 results are written only inside it",
                link.display()
            ),
        },
    })
}

/// The next `iteration-N` folder of `workspace` (1 when there is none).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let first = skillkit::eval::workspace::next_iteration(dir.path());
/// assert!(first.ends_with("iteration-1"));
/// std::fs::create_dir_all(&first).unwrap();
/// assert!(skillkit::eval::workspace::next_iteration(dir.path()).ends_with("iteration-2"));
/// ```
pub fn next_iteration(workspace: &Path) -> PathBuf {
    let last = std::fs::read_dir(workspace)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_prefix("iteration-")?
                        .parse::<u64>()
                        .ok()
                })
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0);
    // A folder `iteration-18446744073709551615` (a workspace that came with
    // a cloned project) is no reason to panic: the next is past it.
    if let Some(next) = last.checked_add(1) {
        return workspace.join(format!("iteration-{next}"));
    }
    let mut n = 1u64;
    loop {
        let path = workspace.join(format!("iteration-{last}-{n}"));
        if !path.exists() {
            return path;
        }
        n += 1;
    }
}

/// Writes each run's `grading.json`, `timing.json`, `transcript.json` and
/// `outputs/answer.md` beside its outputs, and the iteration's
/// `benchmark.json` and `benchmark.md` in `iteration`.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::eval::{Evaluator, TaskSet, workspace};
/// use skillkit::llm::{Registry, Scripted};
/// use skillkit::{Kit, Skill};
/// // A model that answers every conversation alike, with or without the skill.
/// let model = Scripted::from_json(r#"{"rules": [{"replies": [{"text": "Hello, Ada!"}]}]}"#).unwrap();
/// let kit = Kit::new("greet").with_skill(Skill::new("greet:hello", "Greet someone."));
/// let evaluator = Evaluator::new(vec![kit])
///     .registry(Registry::new().with("scripted", model))
///     .model("scripted://m")
///     .runs(1);
/// let set = TaskSet::parse(
///     r#"{"evals": [{"id": 1, "prompt": "Greet Ada", "assertions": [{"type": "contains", "value": "Ada"}]}]}"#,
///     ".",
/// ).unwrap();
/// let iteration = tempfile::tempdir().unwrap();
/// let report = evaluator.tasks("greet:hello", &set, Some(iteration.path())).await.unwrap();
/// workspace::write(iteration.path(), &report, &workspace::Metadata::default()).unwrap();
/// let run = iteration.path().join("eval-1/with_skill/run-1");
/// assert!(run.join("grading.json").is_file() && run.join("outputs/answer.md").is_file());
/// assert!(iteration.path().join("benchmark.json").is_file());
/// # });
/// ```
pub fn write(iteration: &Path, report: &TaskReport, meta: &Metadata) -> Result<(), EvalError> {
    for run in &report.runs {
        let Some(outputs) = &run.outputs else {
            continue;
        };
        let folder = outputs.parent().unwrap_or(outputs);
        put(&outputs.join("answer.md"), run.transcript.answer.as_bytes())?;
        put_json(&folder.join("grading.json"), &grading(run))?;
        put_json(
            &folder.join("timing.json"),
            &json!({
                "total_tokens": run.transcript.tokens(),
                "duration_ms": (run.time_seconds * 1000.0).round() as u64,
                "total_duration_seconds": round(run.time_seconds, 3),
            }),
        )?;
        put_json(&folder.join("transcript.json"), &json!(run.transcript))?;
        // The case itself, beside its configurations, as the viewer reads it.
        if let Some(case) = folder.parent().and_then(Path::parent) {
            let assertions: Vec<&str> = run.expectations.iter().map(|g| g.text.as_str()).collect();
            put_json(
                &case.join("eval_metadata.json"),
                &json!({
                    "eval_id": id_value(&run.eval_id),
                    "eval_name": format!("eval-{}", run.eval_id),
                    "prompt": run.transcript.prompt,
                    "assertions": assertions,
                }),
            )?;
        }
    }
    let benchmark = benchmark(report, meta);
    put_json(&iteration.join("benchmark.json"), &benchmark)?;
    put(
        &iteration.join("benchmark.md"),
        markdown(report, meta).as_bytes(),
    )?;
    Ok(())
}

/// A run's `grading.json`.
fn grading(run: &CaseRun) -> Value {
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, _) in &run.transcript.calls {
        *tools.entry(name.as_str()).or_insert(0) += 1;
    }
    let total = run.expectations.len();
    let passed = run.passed();
    json!({
        "expectations": run.expectations,
        "summary": {
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "pass_rate": round(run.pass_rate(), 4),
        },
        "execution_metrics": {
            "tool_calls": tools,
            "total_tool_calls": run.transcript.calls.len(),
            "total_steps": run.transcript.turns,
            "errors_encountered": usize::from(run.transcript.error.is_some()),
            "output_chars": run.transcript.answer.chars().count(),
        },
        "timing": {
            "executor_duration_seconds": round(run.time_seconds, 3),
            "total_duration_seconds": round(run.time_seconds, 3),
        },
    })
}

/// `benchmark.json`: the metadata, every run, and each configuration's mean,
/// standard deviation, minimum and maximum, with the delta between them.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::eval::{Evaluator, TaskSet, workspace};
/// use skillkit::llm::{Registry, Scripted};
/// use skillkit::{Kit, Skill};
/// // A model that answers every conversation alike, with or without the skill.
/// let model = Scripted::from_json(r#"{"rules": [{"replies": [{"text": "Hello, Ada!"}]}]}"#).unwrap();
/// let kit = Kit::new("greet").with_skill(Skill::new("greet:hello", "Greet someone."));
/// let evaluator = Evaluator::new(vec![kit])
///     .registry(Registry::new().with("scripted", model))
///     .model("scripted://m")
///     .runs(1);
/// let set = TaskSet::parse(
///     r#"{"evals": [{"id": 1, "prompt": "Greet Ada", "assertions": [{"type": "contains", "value": "Ada"}]}]}"#,
///     ".",
/// ).unwrap();
/// let iteration = tempfile::tempdir().unwrap();
/// let report = evaluator.tasks("greet:hello", &set, Some(iteration.path())).await.unwrap();
/// let benchmark = workspace::benchmark(&report, &workspace::Metadata::default());
/// assert_eq!(benchmark["runs"].as_array().unwrap().len(), 2);
/// assert_eq!(benchmark["run_summary"]["with_skill"]["pass_rate"]["mean"], 1.0);
/// # });
/// ```
pub fn benchmark(report: &TaskReport, meta: &Metadata) -> Value {
    let mut evals: Vec<&str> = report.runs.iter().map(|r| r.eval_id.as_str()).collect();
    evals.dedup();
    let runs_per = report.runs.iter().map(|r| r.run_number).max().unwrap_or(0);
    let runs: Vec<Value> = report
        .runs
        .iter()
        .map(|run| {
            json!({
                "eval_id": id_value(&run.eval_id),
                "eval_name": format!("eval-{}", run.eval_id),
                "configuration": run.configuration,
                "run_number": run.run_number,
                "result": {
                    "pass_rate": round(run.pass_rate(), 4),
                    "passed": run.passed(),
                    "failed": run.expectations.len() - run.passed(),
                    "total": run.expectations.len(),
                    "time_seconds": round(run.time_seconds, 3),
                    "tokens": run.transcript.tokens(),
                    "tool_calls": run.transcript.calls.len(),
                    "errors": usize::from(run.transcript.error.is_some()),
                },
                "expectations": run.expectations,
                "notes": run.transcript.error.iter().collect::<Vec<_>>(),
            })
        })
        .collect();
    let signed = |v: f64, digits: i32| {
        let v = round(v, digits);
        match v >= 0.0 {
            true => format!("+{v}"),
            false => format!("{v}"),
        }
    };
    let (with, without) = (&report.with_skill, &report.baseline);
    json!({
        "metadata": {
            "skill_name": report.skill,
            "skill_path": meta.skill_path,
            "executor_model": meta.executor_model,
            "analyzer_model": meta.analyzer_model,
            "timestamp": timestamp(SystemTime::now()),
            "evals_run": evals.iter().map(|e| id_value(e)).collect::<Vec<_>>(),
            "runs_per_configuration": runs_per,
        },
        "runs": runs,
        "run_summary": {
            "with_skill": summary(with),
            report.baseline_configuration.as_str(): summary(without),
            "delta": {
                "pass_rate": signed(with.pass_rate.mean - without.pass_rate.mean, 2),
                "time_seconds": signed(with.time_seconds.mean - without.time_seconds.mean, 1),
                "tokens": signed(with.tokens.mean - without.tokens.mean, 0),
            },
        },
        "notes": [],
    })
}

/// A Markdown summary of a task evaluation, for a pull request.
///
/// ```
/// fn pull_request_comment(report: &skillkit::eval::TaskReport) -> String {
///     skillkit::eval::workspace::markdown(report, &Default::default())
/// }
/// ```
pub fn markdown(report: &TaskReport, meta: &Metadata) -> String {
    let row = |name: &str, s: &ConfigSummary| {
        format!(
            "| {name} | {:.2} ± {:.2} | {:.1} s | {:.0} |\n",
            s.pass_rate.mean, s.pass_rate.stddev, s.time_seconds.mean, s.tokens.mean
        )
    };
    let mut text = format!(
        "## Skill eval: `{}`\n\nModel `{}`; delta in pass rate **{:+.2}**.\n\n\
         | configuration | pass rate | time | tokens |\n|---|---:|---:|---:|\n",
        report.skill,
        meta.executor_model,
        report.delta()
    );
    text.push_str(&row("with skill", &report.with_skill));
    text.push_str(&row(
        &report.baseline_configuration.replace('_', " "),
        &report.baseline,
    ));
    let failing: Vec<&CaseRun> = report
        .runs
        .iter()
        .filter(|r| r.configuration == super::tasks::WITH_SKILL && r.pass_rate() < 1.0)
        .collect();
    if !failing.is_empty() {
        text.push_str("\nFailing with the skill:\n\n");
        for run in failing {
            for grade in run.expectations.iter().filter(|g| !g.passed) {
                text.push_str(&format!(
                    "- eval {} run {}: {} ({})\n",
                    run.eval_id,
                    run.run_number,
                    one_line(&grade.text),
                    one_line(&grade.evidence)
                ));
            }
        }
    }
    text
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn summary(s: &ConfigSummary) -> Value {
    let stats = |st: &super::tasks::Stats, digits: i32| {
        json!({
            "mean": round(st.mean, digits),
            "stddev": round(st.stddev, digits),
            "min": round(st.min, digits),
            "max": round(st.max, digits),
        })
    };
    json!({
        "pass_rate": stats(&s.pass_rate, 4),
        "time_seconds": stats(&s.time_seconds, 3),
        "tokens": stats(&s.tokens, 1),
    })
}

/// An eval id as JSON: a number when it is one.
fn id_value(id: &str) -> Value {
    id.parse::<u64>()
        .map_or_else(|_| Value::from(id), Value::from)
}

fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// `at` as RFC 3339 in UTC (`2026-12-04T09:30:00Z`).
fn timestamp(at: SystemTime) -> String {
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

fn put(path: &Path, bytes: &[u8]) -> Result<(), EvalError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| EvalError::Io {
            path: parent.display().to_string(),
            source,
        })?;
    }
    crate::whole::write(path, bytes).map_err(|source| EvalError::Io {
        path: path.display().to_string(),
        source,
    })
}

fn put_json(path: &Path, value: &Value) -> Result<(), EvalError> {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    put(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_iteration_is_past_the_last_however_large() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "iteration-2",
            "iteration-x",
            "iteration-4294967295",
            "other-9",
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        assert!(next_iteration(dir.path()).ends_with("iteration-4294967296"));
        std::fs::create_dir(dir.path().join("iteration-18446744073709551615")).unwrap();
        let next = next_iteration(dir.path());
        assert!(!next.exists(), "{}", next.display());
        assert!(next.ends_with("iteration-18446744073709551615-1"));
        std::fs::create_dir(&next).unwrap();
        assert!(next_iteration(dir.path()).ends_with("iteration-18446744073709551615-2"));
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_796_376_600);
        assert_eq!(timestamp(at), "2026-12-04T09:30:00Z");
        assert_eq!(timestamp(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
    }
}
