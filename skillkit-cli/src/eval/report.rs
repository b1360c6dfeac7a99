//! The reports of `skillkit eval`: for people on stdout, `--json`, JUnit
//! XML (`--junit`) and Markdown (`--markdown`). Everything a skill, a model
//! or a grader wrote is made inert before it reaches the terminal, and
//! escaped in XML.

use std::fmt::Write as _;

use serde_json::{Value, json};
use skillkit::eval::workspace;

use super::Outcome;
use crate::output::{inert, out};

/// The report for people: per skill and model, its rates, each trigger
/// query (`ok` or `MISS`), the description found, and each failed
/// expectation.
pub(super) fn print(o: &Outcome) {
    out!("{} on {}", inert(&o.skill), inert(&o.model));
    if let Some(t) = &o.triggers {
        let rate = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{r:.2}"));
        out!(
            "  triggers: trigger rate {}, false-trigger rate {}",
            rate(t.trigger_rate),
            rate(t.false_trigger_rate)
        );
        for q in &t.queries {
            let mark = match q.correct() == q.runs {
                true => "ok  ",
                false => "MISS",
            };
            let mut line = format!(
                "  {mark} {}/{} {} {:?}",
                q.triggers,
                q.runs,
                if q.should_trigger {
                    "should"
                } else {
                    "should not"
                },
                q.query
            );
            if q.should_trigger && !q.taken_by.is_empty() {
                let by: Vec<String> = q
                    .taken_by
                    .iter()
                    .map(|(s, n)| format!("{s} ({n})"))
                    .collect();
                let _ = write!(line, "; taken by {}", by.join(", "));
            }
            out!("{}", inert(&line));
        }
    }
    if let Some(found) = &o.optimized {
        out!(
            "  description before (train {:.2}, validation {:.2}): {}",
            found.before.train,
            found.before.validation,
            inert(&found.before.description)
        );
        out!(
            "  description after  (train {:.2}, validation {:.2}, round {}): {}",
            found.best.train,
            found.best.validation,
            found.best.round,
            inert(&found.best.description)
        );
    }
    if let Some(r) = &o.tasks {
        let baseline = match r.baseline_configuration.as_str() {
            "old_skill" => "the previous version",
            _ => "without",
        };
        out!(
            "  tasks: pass rate with the skill {:.2} ± {:.2}, {baseline} {:.2} ± {:.2}, delta {:+.2}",
            r.with_skill.pass_rate.mean,
            r.with_skill.pass_rate.stddev,
            r.baseline.pass_rate.mean,
            r.baseline.pass_rate.stddev,
            r.delta()
        );
        // Without the skill, failures are the baseline, not news.
        for run in r.runs.iter().filter(|r| r.configuration == "with_skill") {
            for g in run.expectations.iter().filter(|g| !g.passed) {
                out!(
                    "  FAIL eval {} {} run {}: {} ({})",
                    inert(&run.eval_id),
                    run.configuration,
                    run.run_number,
                    inert(&g.text),
                    inert(&g.evidence)
                );
            }
        }
    }
}

/// The `--json` report: every skill and model's results, the thresholds
/// not met, and whether all held.
pub(super) fn json(outcomes: &[Outcome], failed: &[String]) -> Value {
    let skills: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            json!({
                "skill": o.skill,
                "model": o.model,
                "triggers": o.triggers,
                "tasks": o.tasks.as_ref().map(|r| json!({
                    "with_skill": r.with_skill,
                    r.baseline_configuration.as_str(): r.baseline,
                    "delta": r.delta(),
                    "runs": r.runs.iter().map(|run| json!({
                        "eval_id": run.eval_id,
                        "configuration": run.configuration,
                        "run_number": run.run_number,
                        "pass_rate": run.pass_rate(),
                        "expectations": run.expectations,
                        "turns": run.transcript.turns,
                        "tokens": run.transcript.tokens(),
                        "error": run.transcript.error,
                    })).collect::<Vec<_>>(),
                })),
                "optimized": o.optimized,
            })
        })
        .collect();
    json!({ "results": skills, "failed": failed, "ok": failed.is_empty() })
}

/// A JUnit XML report: a suite per skill and model, a test per trigger
/// query and per task run.
pub(super) fn junit(outcomes: &[Outcome]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for o in outcomes {
        let mut cases = Vec::new();
        if let Some(t) = &o.triggers {
            for q in &t.queries {
                let failure = (q.correct() < q.runs).then(|| {
                    format!(
                        "{} of {} runs activated the skill (should{} trigger)",
                        q.triggers,
                        q.runs,
                        if q.should_trigger { "" } else { " not" }
                    )
                });
                cases.push((format!("trigger: {}", q.query), failure));
            }
        }
        if let Some(r) = &o.tasks {
            for run in &r.runs {
                let failing: Vec<String> = run
                    .expectations
                    .iter()
                    .filter(|g| !g.passed)
                    .map(|g| format!("{} ({})", g.text, g.evidence))
                    .collect();
                let failure = (!failing.is_empty()).then(|| failing.join("; "));
                cases.push((
                    format!(
                        "eval {} {} run {}",
                        run.eval_id, run.configuration, run.run_number
                    ),
                    failure,
                ));
            }
        }
        let failures = cases.iter().filter(|(_, f)| f.is_some()).count();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">",
            escape(&format!("{} on {}", o.skill, o.model)),
            cases.len()
        );
        for (name, failure) in cases {
            match failure {
                None => {
                    let _ = writeln!(xml, "    <testcase name=\"{}\"/>", escape(&name));
                }
                Some(why) => {
                    let _ = writeln!(
                        xml,
                        "    <testcase name=\"{}\"><failure message=\"{}\"/></testcase>",
                        escape(&name),
                        escape(&why)
                    );
                }
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// XML text: markup escaped, control characters dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// A Markdown summary of every skill and model.
pub(super) fn markdown(outcomes: &[Outcome], failed: &[String]) -> String {
    let mut text = String::from("# Skill evals\n\n");
    let trig: Vec<&Outcome> = outcomes.iter().filter(|o| o.triggers.is_some()).collect();
    if !trig.is_empty() {
        text.push_str(
            "| skill | model | trigger rate | false-trigger rate |\n|---|---|---:|---:|\n",
        );
        for o in trig {
            let t = o.triggers.as_ref().expect("filtered");
            let rate = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{r:.2}"));
            let _ = writeln!(
                text,
                "| `{}` | `{}` | {} | {} |",
                o.skill,
                o.model,
                rate(t.trigger_rate),
                rate(t.false_trigger_rate)
            );
        }
        text.push('\n');
    }
    for o in outcomes {
        if let Some(r) = &o.tasks {
            let meta = workspace::Metadata {
                executor_model: o.model.clone(),
                ..Default::default()
            };
            text.push_str(&workspace::markdown(r, &meta));
            text.push('\n');
        }
    }
    match failed.is_empty() {
        true => text.push_str("Every threshold holds.\n"),
        false => {
            text.push_str("**Thresholds not met:**\n\n");
            for f in failed {
                let _ = writeln!(text, "- {f}");
            }
        }
    }
    text
}
