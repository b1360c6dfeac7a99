//! Trigger evals: does a skill's description make the agent activate it
//! for the requests it is for, and only those?

use std::collections::BTreeMap;
use std::path::Path;

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::run::{Setup, Transcript, converse};
use super::{EvalError, Evaluator};
use crate::kit::Kit;

/// One query of a trigger set (the format of the Agent Skills
/// documentation's `optimizing-descriptions`: `{"query": …,
/// "should_trigger": …}`).
///
/// ```
/// let q = skillkit::eval::TriggerQuery::new("Fill in this PDF form", true);
/// assert!(q.should_trigger);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerQuery {
    /// What a person asks.
    pub query: String,
    /// Whether the skill should be activated for it.
    pub should_trigger: bool,
}

impl TriggerQuery {
    /// A query.
    pub fn new(query: impl Into<String>, should_trigger: bool) -> TriggerQuery {
        TriggerQuery {
            query: query.into(),
            should_trigger,
        }
    }
}

/// Reads a trigger set: a JSON array of [`TriggerQuery`] (or an object
/// holding it as `queries`).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("triggers.json");
/// std::fs::write(&path, r#"[{"query": "a pdf", "should_trigger": true}]"#).unwrap();
/// assert_eq!(skillkit::eval::read_triggers(&path).unwrap().len(), 1);
/// ```
pub fn read_triggers(path: &Path) -> Result<Vec<TriggerQuery>, EvalError> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Set {
        List(Vec<TriggerQuery>),
        Object { queries: Vec<TriggerQuery> },
    }
    let fail = |reason: String| EvalError::File {
        path: path.display().to_string(),
        reason,
    };
    let text =
        crate::whole::read_small(path, super::MAX_SET_BYTES).map_err(|e| fail(e.to_string()))?;
    let set: Set = serde_json::from_str(&text).map_err(|e| {
        fail(format!(
            "not a trigger set ({e}); write [{{\"query\": \"…\", \"should_trigger\": true}}, …]"
        ))
    })?;
    let queries = match set {
        Set::List(q) | Set::Object { queries: q } => q,
    };
    if queries.is_empty() {
        return Err(fail("no queries".into()));
    }
    Ok(queries)
}

/// What the runs of one query did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct QueryOutcome {
    /// The query.
    pub query: String,
    /// Whether the skill should have been activated.
    pub should_trigger: bool,
    /// Runs made.
    pub runs: usize,
    /// Runs in which the agent activated the skill.
    pub triggers: usize,
    /// The other skills the agent activated in the runs that did not
    /// activate this one, with how often: who took a missed query.
    pub taken_by: BTreeMap<String, usize>,
    /// Runs that failed (the model, the turn limit), with why.
    pub errors: Vec<String>,
}

impl QueryOutcome {
    /// Runs that went as they should (activated when it should, not when
    /// it should not).
    ///
    /// ```
    /// fn right(q: &skillkit::eval::QueryOutcome) -> bool {
    ///     q.correct() == q.runs
    /// }
    /// ```
    pub fn correct(&self) -> usize {
        match self.should_trigger {
            true => self.triggers,
            false => self.runs - self.triggers,
        }
    }
}

/// A skill's trigger evaluation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TriggerReport {
    /// The skill (full name).
    pub skill: String,
    /// The description evaluated.
    pub description: String,
    /// Each query, in the set's order.
    pub queries: Vec<QueryOutcome>,
    /// Triggers over runs of the queries that should trigger (`None`
    /// without such queries).
    pub trigger_rate: Option<f64>,
    /// Triggers over runs of the queries that should not.
    pub false_trigger_rate: Option<f64>,
}

impl TriggerReport {
    /// Runs that went as they should, over all runs.
    ///
    /// ```
    /// fn score(report: &skillkit::eval::TriggerReport) -> String {
    ///     format!("{:.0}%", report.accuracy() * 100.0)
    /// }
    /// ```
    pub fn accuracy(&self) -> f64 {
        let runs: usize = self.queries.iter().map(|q| q.runs).sum();
        let correct: usize = self.queries.iter().map(QueryOutcome::correct).sum();
        ratio(correct, runs).unwrap_or(0.0)
    }

    fn new(skill: String, description: String, queries: Vec<QueryOutcome>) -> TriggerReport {
        let rate = |should: bool| {
            let of: Vec<_> = queries
                .iter()
                .filter(|q| q.should_trigger == should)
                .collect();
            ratio(
                of.iter().map(|q| q.triggers).sum(),
                of.iter().map(|q| q.runs).sum(),
            )
        };
        TriggerReport {
            trigger_rate: rate(true),
            false_trigger_rate: rate(false),
            skill,
            description,
            queries,
        }
    }
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

impl Evaluator {
    /// Runs each query of `queries` [`runs`](Evaluator::runs) times as a
    /// fresh conversation over every kit, and reports how often the agent
    /// activated `skill` (a full name, or a bare name found once).
    ///
    /// ```no_run
    /// # async fn demo(evaluator: skillkit::eval::Evaluator) -> Result<(), skillkit::eval::EvalError> {
    /// use skillkit::eval::TriggerQuery;
    /// let report = evaluator
    ///     .triggers("docs:pdf", &[TriggerQuery::new("Fill this PDF form", true)])
    ///     .await?;
    /// println!("{:?} {:?}", report.trigger_rate, report.false_trigger_rate);
    /// # Ok(()) }
    /// ```
    pub async fn triggers(
        &self,
        skill: &str,
        queries: &[TriggerQuery],
    ) -> Result<TriggerReport, EvalError> {
        let skill = self.skill(skill)?;
        self.triggers_over(self.kits.clone(), &skill.name, &skill.description, queries)
            .await
    }

    /// [`triggers`](Evaluator::triggers) over `kits` (a description
    /// changed, for the optimiser).
    pub(super) async fn triggers_over(
        &self,
        kits: std::sync::Arc<[Kit]>,
        skill: &str,
        description: &str,
        queries: &[TriggerQuery],
    ) -> Result<TriggerReport, EvalError> {
        let total = queries.len() * self.runs;
        let jobs = queries
            .iter()
            .enumerate()
            .flat_map(|(n, q)| (0..self.runs).map(move |_| (n, q)));
        let mut done = 0;
        let mut transcripts: Vec<Vec<Transcript>> = vec![Vec::new(); queries.len()];
        let mut running = futures::stream::iter(jobs.map(|(n, query)| {
            let kits = kits.clone();
            async move {
                let setup = Setup {
                    kits,
                    registry: &self.registry,
                    model: &self.model,
                    max_turns: self.max_turns,
                    scripts: None,
                };
                (n, converse(setup, &query.query).await)
            }
        }))
        .buffer_unordered(self.jobs);
        while let Some((n, transcript)) = running.next().await {
            done += 1;
            self.report(done, total, queries[n].query.clone());
            transcripts[n].push(transcript);
        }
        let outcomes = queries
            .iter()
            .zip(transcripts)
            .map(|(query, runs)| outcome(skill, query, &runs))
            .collect();
        Ok(TriggerReport::new(
            skill.to_owned(),
            description.to_owned(),
            outcomes,
        ))
    }
}

/// What the runs of `query` say of `skill`.
fn outcome(skill: &str, query: &TriggerQuery, runs: &[Transcript]) -> QueryOutcome {
    let mut taken_by = BTreeMap::new();
    let mut triggers = 0;
    for run in runs {
        if run.activated.iter().any(|s| s == skill) {
            triggers += 1;
        } else {
            for other in &run.activated {
                *taken_by.entry(other.clone()).or_insert(0) += 1;
            }
        }
    }
    QueryOutcome {
        query: query.query.clone(),
        should_trigger: query.should_trigger,
        runs: runs.len(),
        triggers,
        taken_by,
        errors: runs.iter().filter_map(|r| r.error.clone()).collect(),
    }
}
