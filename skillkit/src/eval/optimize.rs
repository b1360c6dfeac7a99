//! Optimising a skill's description against its trigger set, by the method
//! of the Agent Skills documentation (`optimizing-descriptions`): the
//! queries split about 60/40 into training and validation; each round the
//! proposing model sees the description and the failing training queries
//! (never a validation one) and writes a new description; each candidate is
//! scored on both parts, and the best validation score wins (the training
//! score never decides: it is what the proposals were fitted to).

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::triggers::{QueryOutcome, TriggerQuery, TriggerReport};
use super::{EvalError, Evaluator};
use crate::kit::{Kit, Skills};
use crate::llm::{Message, Request, Response};

/// The most characters of a description (the Agent Skills limit).
const MAX_DESCRIPTION: usize = 1024;

/// One description tried, with its scores (runs that went as they should,
/// over all runs, on each part of the set).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// 0 for the description as written, then the round that proposed it.
    pub round: usize,
    /// The description.
    pub description: String,
    /// Score on the training queries.
    pub train: f64,
    /// Score on the validation queries.
    pub validation: f64,
}

/// What [`Evaluator::optimize_description`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Optimized {
    /// The skill (full name).
    pub skill: String,
    /// The description as written, scored.
    pub before: Candidate,
    /// The best by validation score (`before` when nothing beat it).
    pub best: Candidate,
    /// Every candidate, in the order tried.
    pub candidates: Vec<Candidate>,
    /// The queries used to propose (indexes into the set).
    pub train: Vec<usize>,
    /// The queries held out, only scored.
    pub validation: Vec<usize>,
}

/// Splits `queries` about 60/40, separately among those that should
/// trigger and those that should not, by place: of each five, the second
/// and the fourth are held out. Deterministic, so a re-run compares alike.
fn split(queries: &[TriggerQuery]) -> (Vec<usize>, Vec<usize>) {
    let (mut train, mut validation) = (Vec::new(), Vec::new());
    for should in [true, false] {
        let of = queries
            .iter()
            .enumerate()
            .filter(|(_, q)| q.should_trigger == should);
        for (place, (n, _)) in of.enumerate() {
            match place % 5 {
                1 | 3 => validation.push(n),
                _ => train.push(n),
            }
        }
    }
    train.sort_unstable();
    validation.sort_unstable();
    (train, validation)
}

impl Evaluator {
    /// Proposes and scores up to `rounds` new descriptions for `skill`
    /// over `queries` (at least 5, with both kinds), and returns the best
    /// by validation score. The proposing model is the judge's
    /// ([`judge_model`](Evaluator::judge_model)).
    ///
    /// ```no_run
    /// # async fn demo(evaluator: skillkit::eval::Evaluator, queries: Vec<skillkit::eval::TriggerQuery>) -> Result<(), skillkit::eval::EvalError> {
    /// let found = evaluator.optimize_description("docs:pdf", &queries, 3).await?;
    /// println!("{} (validation {:.2})", found.best.description, found.best.validation);
    /// # Ok(()) }
    /// ```
    pub async fn optimize_description(
        &self,
        skill: &str,
        queries: &[TriggerQuery],
        rounds: usize,
    ) -> Result<Optimized, EvalError> {
        let skill = self.skill(skill)?;
        let (train, validation) = split(queries);
        if train.is_empty() || validation.is_empty() {
            return Err(EvalError::File {
                path: "triggers".into(),
                reason: "too few queries to hold some out: give at least 5, both kinds".into(),
            });
        }
        let pick = |ids: &[usize]| ids.iter().map(|&n| queries[n].clone()).collect::<Vec<_>>();
        let (train_set, validation_set) = (pick(&train), pick(&validation));
        let score = |description: String, round: usize| {
            let kits = with_description(&self.kits, &skill.name, &description);
            let (train_set, validation_set) = (&train_set, &validation_set);
            let name = skill.name.clone();
            async move {
                let on_train = self
                    .triggers_over(kits.clone(), &name, &description, train_set)
                    .await?;
                let on_validation = self
                    .triggers_over(kits, &name, &description, validation_set)
                    .await?;
                Ok::<_, EvalError>((
                    Candidate {
                        round,
                        train: on_train.accuracy(),
                        validation: on_validation.accuracy(),
                        description,
                    },
                    on_train,
                ))
            }
        };
        let (before, mut last) = score(skill.description.to_string(), 0).await?;
        let mut candidates = vec![before.clone()];
        for round in 1..=rounds {
            let failing: Vec<&QueryOutcome> = last
                .queries
                .iter()
                .filter(|q| q.correct() < q.runs)
                .collect();
            if failing.is_empty() {
                break;
            }
            let proposed = self.propose(&skill, &last, &failing).await?;
            let (candidate, on_train) = score(proposed, round).await?;
            candidates.push(candidate);
            last = on_train;
        }
        let best = candidates
            .iter()
            .fold(&candidates[0], |best, c| {
                match c.validation > best.validation {
                    true => c,
                    false => best,
                }
            })
            .clone();
        Ok(Optimized {
            skill: skill.name.to_string(),
            before,
            best,
            candidates,
            train,
            validation,
        })
    }

    /// A new description from the proposing model, shown the current one
    /// (as `report` scored it on the training queries) and its failures.
    async fn propose(
        &self,
        skill: &crate::Skill,
        report: &TriggerReport,
        failing: &[&QueryOutcome],
    ) -> Result<String, EvalError> {
        let mut lines = String::new();
        for q in failing {
            let what = match q.should_trigger {
                true => {
                    let others: Vec<&str> = q.taken_by.keys().map(String::as_str).collect();
                    format!(
                        "should use the skill; used it in {} of {} runs{}",
                        q.triggers,
                        q.runs,
                        match others.is_empty() {
                            true => String::new(),
                            false => format!(" (used instead: {})", others.join(", ")),
                        }
                    )
                }
                false => format!(
                    "should NOT use the skill; used it in {} of {} runs",
                    q.triggers, q.runs
                ),
            };
            lines.push_str(&format!("- {:?}: {what}\n", q.query));
        }
        let body: String = skill
            .body
            .read_head(3000)
            .map(|text| text.into_owned())
            .unwrap_or_default();
        let prompt = format!(
            "An AI agent decides from a skill's description alone whether to use the skill. \
             Improve the description of the skill `{}` so the agent uses it for the requests it \
             is for, and only those.\n\n<description>\n{}\n</description>\n\n\
             <skill_instructions>\n{body}\n</skill_instructions>\n\n\
             Requests it got wrong:\n{lines}\n\
             Write the new description: what the skill does and when to use it, in at most \
             {MAX_DESCRIPTION} characters, third person. Reply with one JSON object and nothing \
             else: {{\"description\": \"…\"}}.",
            skill.name, report.description
        );
        let request = Request::new(vec![Message::user(prompt)]);
        let events = self
            .registry
            .stream(self.judge_uri(), request)
            .await
            .map_err(|e| EvalError::Model(e.to_string()))?;
        let reply = Response::collect(events)
            .await
            .map_err(|e| EvalError::Model(e.to_string()))?
            .message
            .text;
        Ok(description_in(&reply))
    }
}

/// The description of a proposal: its JSON `description`, else its text;
/// one line, within the limit.
fn description_in(reply: &str) -> String {
    let start = reply.find('{');
    let from_json = start.and_then(|s| {
        serde_json::Deserializer::from_str(&reply[s..])
            .into_iter::<Value>()
            .next()?
            .ok()?
            .get("description")?
            .as_str()
            .map(str::to_owned)
    });
    let text = from_json.unwrap_or_else(|| reply.trim().trim_matches('"').to_owned());
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    line.chars().take(MAX_DESCRIPTION).collect()
}

/// `kits` with skill `name`'s description replaced.
fn with_description(kits: &Arc<[Kit]>, name: &str, description: &str) -> Arc<[Kit]> {
    kits.iter()
        .map(|kit| {
            if !kit.skills.iter().any(|s| s.name == name) {
                return kit.clone();
            }
            let mut kit = kit.clone();
            let changed: Skills = kit
                .skills
                .iter()
                .map(|s| match s.name == name {
                    true => {
                        let mut skill = (**s).clone();
                        skill.description = description.to_owned().into();
                        Arc::new(skill)
                    }
                    false => s.clone(),
                })
                .collect();
            kit.skills = changed;
            kit
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_holds_out_two_of_five_of_each_kind() {
        let queries: Vec<TriggerQuery> = (0..10)
            .map(|n| TriggerQuery::new(format!("q{n}"), n < 5))
            .collect();
        let (train, validation) = split(&queries);
        assert_eq!(validation, [1, 3, 6, 8]);
        assert_eq!(train, [0, 2, 4, 5, 7, 9]);
    }

    #[test]
    fn a_proposal_is_read_from_json_or_text() {
        assert_eq!(
            description_in(r#"{"description": "Reads PDFs."}"#),
            "Reads PDFs."
        );
        assert_eq!(description_in("Sure: {\"description\": \"A\\nB\"}"), "A B");
        assert_eq!(description_in("\"Plain text.\""), "Plain text.");
        assert_eq!(description_in(&"x".repeat(2000)).len(), MAX_DESCRIPTION);
    }
}
