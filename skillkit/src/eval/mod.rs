//! Evaluating skills: does a skill trigger when it should
//! ([`Evaluator::triggers`]), and does it make the answer better
//! ([`Evaluator::tasks`])? The method of the Agent
//! Skills documentation (`evaluating-skills`, `optimizing-descriptions`) and
//! of Anthropic's skill-creator, run on SkillKit's own agent loop, on any
//! model of a [`Registry`], offline with a scripted one.
//!
//! - **Triggers.** Each query of a skill's trigger set runs as a fresh
//!   conversation over the whole catalog (the skill among its neighbours); a
//!   trigger is the agent's own `activate_skill` call of that skill, never
//!   an injected one. The report gives the trigger rate on the queries that
//!   should trigger, the false-trigger rate on the others, and which other
//!   skill took each miss.
//! - **Optimising a description** ([`Evaluator::optimize_description`]): the
//!   queries split about 60/40 into training and validation; each round the
//!   model proposes a description from the failing training queries (never a
//!   validation one); the best by validation score wins.
//! - **Tasks.** Each case of `evals/evals.json` runs with the skill and
//!   without it, in a fresh working folder holding the case's files, graded
//!   by its assertions: deterministic ones first ([`Assertion`]), prose ones
//!   by a judge model. Results are written in skill-creator's workspace
//!   layout ([`workspace`]) so its eval viewer reads them.
//!
//! ```no_run
//! # async fn demo() -> Result<(), skillkit::eval::EvalError> {
//! use skillkit::eval::{Evaluator, TriggerQuery};
//! let kits = skillkit::Local::new("kits/docs").load().map_err(skillkit::eval::EvalError::from)?;
//! let evaluator = Evaluator::new(kits).model("anthropic://claude-haiku-4-5").runs(3);
//! let report = evaluator
//!     .triggers("docs:pdf", &[TriggerQuery::new("Fill in this PDF form", true)])
//!     .await?;
//! println!("trigger rate {:?}", report.trigger_rate);
//! # Ok(()) }
//! ```

mod grade;
mod optimize;
mod record;
mod run;
mod tasks;
mod triggers;
pub mod workspace;

use std::sync::Arc;

use crate::kit::Kit;
use crate::llm::Registry;

pub use grade::{Assertion, Check, Grade, ToolStep};
pub use optimize::{Candidate, Optimized};
pub use record::Recorded;
pub use run::Transcript;
pub use tasks::{Case, CaseRun, ConfigSummary, Stats, TaskReport, TaskSet};
pub use triggers::{QueryOutcome, TriggerQuery, TriggerReport, read_triggers};

/// The runs per query or case, unless set.
pub const DEFAULT_RUNS: usize = 3;

/// The conversations run at once, unless set.
pub const DEFAULT_JOBS: usize = 4;

/// The largest trigger set or task eval file read ([`read_triggers`],
/// [`TaskSet::read`]): 16 MiB, far above any written by hand. Such a file
/// comes with a skill, so it is read as skill files are: a FIFO, a device
/// or a folder in its place is refused, never waited on.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let err = skillkit::eval::read_triggers(dir.path()).unwrap_err();
/// assert!(err.to_string().contains("is a directory, not a file"));
/// assert_eq!(skillkit::eval::MAX_SET_BYTES, 16 << 20);
/// ```
pub const MAX_SET_BYTES: u64 = 16 * 1024 * 1024;

/// Why an evaluation could not run.
///
/// ```
/// use skillkit::eval::{EvalError, TaskSet};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("evals.json");
/// std::fs::write(&path, "[]").unwrap();
/// let err = TaskSet::read(&path).unwrap_err();
/// assert!(matches!(&err, EvalError::File { reason, .. } if reason.starts_with("not an evals.json")));
/// // The message says what to write instead.
/// assert!(err.to_string().contains("\"evals\""));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// An eval file could not be read or is not in the format.
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The skill is not in the catalog.
    #[error("no skill `{0}` in the kits evaluated; `skillkit list KIT_DIR` shows their names")]
    UnknownSkill(String),
    /// A kit could not be loaded.
    #[error("{0}")]
    Kits(#[from] crate::provider::ProviderError),
    /// Writing results failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The model (for a proposal) failed.
    #[error("the model failed: {0}")]
    Model(String),
}

/// One step of an evaluation, for a progress bar.
///
/// ```
/// fn show(step: &skillkit::eval::Progress) -> String {
///     format!("{}/{} {}", step.done, step.total, step.what)
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Conversations finished.
    pub done: usize,
    /// Conversations in all.
    pub total: usize,
    /// The one that just finished.
    pub what: String,
}

impl Progress {
    fn new(done: usize, total: usize, what: String) -> Progress {
        Progress { done, total, what }
    }
}

type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Runs evaluations over a set of kits (the catalog the agent sees) on one
/// model: a cheap, cloneable description of how; each method runs one
/// evaluation.
///
/// ```
/// use skillkit::eval::Evaluator;
/// use skillkit::llm::{Registry, Scripted};
/// let evaluator = Evaluator::new(vec![skillkit::Kit::new("docs")])
///     .registry(Registry::new().with("scripted", Scripted::new()))
///     .model("scripted://m")
///     .runs(5)
///     .jobs(2);
/// assert_eq!(evaluator.model_uri(), "scripted://m");
/// ```
#[derive(Clone)]
pub struct Evaluator {
    kits: Arc<[Kit]>,
    registry: Registry,
    model: String,
    judge: Option<String>,
    runs: usize,
    jobs: usize,
    max_turns: u32,
    allow_weaker_sandbox: bool,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("kits", &self.kits.len())
            .field("model", &self.model)
            .field("judge", &self.judge)
            .field("runs", &self.runs)
            .field("jobs", &self.jobs)
            .finish_non_exhaustive()
    }
}

impl Evaluator {
    /// An evaluator over `kits`, on the built-in registry's default model
    /// until [`model`](Evaluator::model) says otherwise.
    ///
    /// ```
    /// let evaluator = skillkit::eval::Evaluator::new(Vec::new());
    /// assert_eq!(evaluator.runs_per_item(), skillkit::eval::DEFAULT_RUNS);
    /// ```
    pub fn new(kits: Vec<Kit>) -> Evaluator {
        Evaluator {
            kits: kits.into(),
            registry: Registry::new(),
            model: crate::agent::DEFAULT_MODEL.to_owned(),
            judge: None,
            runs: DEFAULT_RUNS,
            jobs: DEFAULT_JOBS,
            max_turns: 8,
            allow_weaker_sandbox: false,
            progress: None,
        }
    }

    /// The models' registry.
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).registry(skillkit::llm::Registry::new());
    /// assert_eq!(e.runs_per_item(), 3);
    /// ```
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// The model under test (a registry URI).
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).model("openai://gpt-4o-mini");
    /// assert_eq!(e.model_uri(), "openai://gpt-4o-mini");
    /// ```
    pub fn model(mut self, uri: impl Into<String>) -> Self {
        self.model = uri.into();
        self
    }

    /// The model that grades prose assertions (default: the model under
    /// test).
    ///
    /// ```
    /// let e = skillkit::eval::Evaluator::new(Vec::new()).judge_model("openai://gpt-4o-mini");
    /// assert_eq!(e.judge_uri(), "openai://gpt-4o-mini");
    /// ```
    pub fn judge_model(mut self, uri: impl Into<String>) -> Self {
        self.judge = Some(uri.into());
        self
    }

    /// Runs per query or case (at least 1).
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).runs(0);
    /// assert_eq!(e.runs_per_item(), 1);
    /// ```
    pub fn runs(mut self, runs: usize) -> Self {
        self.runs = runs.max(1);
        self
    }

    /// Conversations run at once (at least 1).
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).jobs(8);
    /// # let _ = e;
    /// ```
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }

    /// The most model turns of one conversation (default 8).
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).max_turns(4);
    /// # let _ = e;
    /// ```
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = turns.max(1);
        self
    }

    /// Run a skill's scripts where the kernel cannot put up every layer of
    /// the sandbox.
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).allow_weaker_sandbox(true);
    /// # let _ = e;
    /// ```
    pub fn allow_weaker_sandbox(mut self, allow: bool) -> Self {
        self.allow_weaker_sandbox = allow;
        self
    }

    /// Called as each conversation finishes.
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).on_progress(|p| eprintln!("{}/{}", p.done, p.total));
    /// # let _ = e;
    /// ```
    pub fn on_progress(mut self, progress: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// The model under test.
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).model("scripted://m");
    /// assert_eq!(e.model_uri(), "scripted://m");
    /// ```
    pub fn model_uri(&self) -> &str {
        &self.model
    }

    /// The judge's model.
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).model("scripted://m");
    /// assert_eq!(e.judge_uri(), "scripted://m");
    /// ```
    pub fn judge_uri(&self) -> &str {
        self.judge.as_deref().unwrap_or(&self.model)
    }

    /// Runs per query or case.
    ///
    /// ```
    /// use skillkit::eval::Evaluator;
    /// let e = Evaluator::new(Vec::new()).runs(5);
    /// assert_eq!(e.runs_per_item(), 5);
    /// ```
    pub fn runs_per_item(&self) -> usize {
        self.runs
    }

    /// The skill named `name` (full name, or a bare name found once).
    fn skill(&self, name: &str) -> Result<Arc<crate::Skill>, EvalError> {
        let all = self.kits.iter().flat_map(|k| k.skills.iter());
        let full = all.clone().find(|s| s.name == name);
        let bare: Vec<_> = all.filter(|s| s.bare_name() == name).collect();
        match (full, bare.as_slice()) {
            (Some(skill), _) => Ok(skill.clone()),
            (None, [one]) => Ok((*one).clone()),
            _ => Err(EvalError::UnknownSkill(name.to_owned())),
        }
    }

    fn report(&self, done: usize, total: usize, what: String) {
        if let Some(progress) = &self.progress {
            progress(&Progress::new(done, total, what));
        }
    }
}
