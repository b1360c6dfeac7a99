//! Task evals: each case of a skill's `evals/evals.json` run with the skill
//! and without it, graded, summed up per configuration with the delta.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::grade::{Assertion, Grade, grade};
use super::run::{Setup, Transcript, converse};
use super::{EvalError, Evaluator};
use crate::kit::{Kit, Skills};

/// The configuration with the skill, as skill-creator names it.
pub(super) const WITH_SKILL: &str = "with_skill";
/// The configuration without it.
pub(super) const WITHOUT_SKILL: &str = "without_skill";
/// The configuration with the skill's previous version, as skill-creator
/// names it.
pub(super) const OLD_SKILL: &str = "old_skill";

/// A skill's task evals, as the Agent Skills documentation writes them
/// (`evals/evals.json`: `{"skill_name": …, "evals": [{"id", "prompt",
/// "expected_output", "files", "assertions"}]}`; skill-creator's
/// `expectations` read as `assertions`).
///
/// ```
/// let set = skillkit::eval::TaskSet::parse(r#"{"skill_name": "pdf", "evals": [
///     {"id": 1, "prompt": "Fill the form", "expectations": ["The form is filled"]}
/// ]}"#, ".").unwrap();
/// assert_eq!(set.evals[0].assertions.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSet {
    /// The skill the cases are for.
    #[serde(default)]
    pub skill_name: String,
    /// The cases.
    pub evals: Vec<Case>,
    /// The folder the cases' `files` are relative to (the skill's folder).
    #[serde(skip)]
    pub base: PathBuf,
}

/// One task eval case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// Its id (a number or a name).
    pub id: Value,
    /// The message sent.
    pub prompt: String,
    /// What a good answer is, in words (for people and the judge).
    #[serde(default)]
    pub expected_output: Option<String>,
    /// Files put in the working folder first (relative to the skill's
    /// folder).
    #[serde(default)]
    pub files: Vec<String>,
    /// What must hold of a run.
    #[serde(default, alias = "expectations")]
    pub assertions: Vec<Assertion>,
}

impl Case {
    /// Its id as text (`eval-<id>` names its folder).
    ///
    /// ```
    /// let set = skillkit::eval::TaskSet::parse(r#"{"evals": [{"id": 7, "prompt": "p"}]}"#, ".").unwrap();
    /// assert_eq!(set.evals[0].id_text(), "7");
    /// ```
    pub fn id_text(&self) -> String {
        match &self.id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

impl TaskSet {
    /// A task set from its text; `base` is the folder its files are
    /// relative to.
    ///
    /// ```
    /// assert!(skillkit::eval::TaskSet::parse("[]", ".").is_err());
    /// ```
    pub fn parse(text: &str, base: impl Into<PathBuf>) -> Result<TaskSet, String> {
        let mut set: TaskSet = serde_json::from_str(text).map_err(|e| {
            format!(
                "not an evals.json ({e}); write {{\"skill_name\": …, \"evals\": [{{\"id\": 1, \
                 \"prompt\": …, \"assertions\": […]}}]}}"
            )
        })?;
        set.base = base.into();
        for case in &set.evals {
            let id = case.id_text();
            if id.is_empty()
                || !id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            {
                return Err(format!(
                    "eval id {} is not a plain name (letters, digits, `-`, `_`, `.`)",
                    case.id
                ));
            }
        }
        Ok(set)
    }

    /// Reads `path`; its files are relative to the skill's folder (the
    /// folder above `evals/`, or the file's own folder).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::create_dir(dir.path().join("evals")).unwrap();
    /// let file = dir.path().join("evals/evals.json");
    /// std::fs::write(&file, r#"{"skill_name": "pdf", "evals": []}"#).unwrap();
    /// assert_eq!(skillkit::eval::TaskSet::read(&file).unwrap().base, dir.path());
    /// ```
    pub fn read(path: &Path) -> Result<TaskSet, EvalError> {
        let text =
            crate::whole::read_small(path, super::MAX_SET_BYTES).map_err(|e| EvalError::File {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
        let folder = path.parent().unwrap_or(Path::new("."));
        let base = match folder.file_name() {
            Some(name) if name == "evals" => folder.parent().unwrap_or(folder),
            _ => folder,
        };
        TaskSet::parse(&text, base).map_err(|reason| EvalError::File {
            path: path.display().to_string(),
            reason,
        })
    }
}

/// One run of one case in one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CaseRun {
    /// The case's id.
    pub eval_id: String,
    /// `with_skill`, `without_skill` or `old_skill`.
    pub configuration: String,
    /// 1, 2, …
    pub run_number: usize,
    /// Each assertion's verdict.
    pub expectations: Vec<Grade>,
    /// The conversation.
    pub transcript: Transcript,
    /// Its time, in seconds.
    pub time_seconds: f64,
    /// Its output folder, when written to a workspace.
    #[serde(skip)]
    pub outputs: Option<PathBuf>,
}

impl CaseRun {
    /// Passed assertions over all (1 when there are none and the run
    /// answered).
    ///
    /// ```
    /// fn all_passed(run: &skillkit::eval::CaseRun) -> bool {
    ///     run.pass_rate() == 1.0
    /// }
    /// ```
    pub fn pass_rate(&self) -> f64 {
        let total = self.expectations.len();
        match total {
            0 => f64::from(u8::from(self.transcript.error.is_none())),
            n => self.passed() as f64 / n as f64,
        }
    }

    /// Assertions that held.
    ///
    /// ```
    /// fn count(run: &skillkit::eval::CaseRun) -> usize {
    ///     run.passed()
    /// }
    /// ```
    pub fn passed(&self) -> usize {
        self.expectations.iter().filter(|g| g.passed).count()
    }
}

/// Mean, standard deviation, least and most of a measure over runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Stats {
    /// The mean.
    pub mean: f64,
    /// The sample standard deviation (0 for one run).
    pub stddev: f64,
    /// The least.
    pub min: f64,
    /// The most.
    pub max: f64,
}

impl Stats {
    /// The stats of `values`.
    ///
    /// ```
    /// let s = skillkit::eval::Stats::of(&[1.0, 3.0]);
    /// assert_eq!((s.mean, s.min, s.max), (2.0, 1.0, 3.0));
    /// assert!((s.stddev - 2f64.sqrt()).abs() < 1e-9);
    /// ```
    pub fn of(values: &[f64]) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let stddev = match values.len() {
            1 => 0.0,
            _ => (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
        };
        Stats {
            mean,
            stddev,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// One configuration's runs summed up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ConfigSummary {
    /// Pass rate per run.
    pub pass_rate: Stats,
    /// Seconds per run.
    pub time_seconds: Stats,
    /// Tokens per run.
    pub tokens: Stats,
}

/// A skill's task evaluation: every run, and each configuration summed
/// up.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TaskReport {
    /// The skill (full name).
    pub skill: String,
    /// Every run, by case, configuration and run number.
    pub runs: Vec<CaseRun>,
    /// With the skill.
    pub with_skill: ConfigSummary,
    /// The baseline: without the skill, or with its previous version.
    pub baseline: ConfigSummary,
    /// The baseline's configuration name: `without_skill` or `old_skill`.
    pub baseline_configuration: String,
}

impl TaskReport {
    /// The mean pass rate with the skill minus the baseline's.
    ///
    /// ```
    /// fn helps(report: &skillkit::eval::TaskReport) -> bool {
    ///     report.delta() > 0.0
    /// }
    /// ```
    pub fn delta(&self) -> f64 {
        self.with_skill.pass_rate.mean - self.baseline.pass_rate.mean
    }
}

impl Evaluator {
    /// Runs each case of `set` [`runs`](Evaluator::runs) times with
    /// `skill` in the catalog and as many times without it, each in a fresh
    /// working folder holding the case's files (under `workspace` when
    /// given: `eval-<id>/<configuration>/run-<n>/outputs/`, else a
    /// temporary folder), the skill's scripts allowed to run there in the
    /// sandbox, and grades every run.
    ///
    /// ```no_run
    /// # async fn demo(evaluator: skillkit::eval::Evaluator) -> Result<(), skillkit::eval::EvalError> {
    /// let set = skillkit::eval::TaskSet::read("kits/docs/skills/pdf/evals/evals.json".as_ref())?;
    /// let report = evaluator.tasks("docs:pdf", &set, None).await?;
    /// println!("delta {:+.2}", report.delta());
    /// # Ok(()) }
    /// ```
    pub async fn tasks(
        &self,
        skill: &str,
        set: &TaskSet,
        workspace: Option<&Path>,
    ) -> Result<TaskReport, EvalError> {
        self.tasks_against(skill, None, set, workspace).await
    }

    /// [`tasks`](Evaluator::tasks) against `previous`, the skill's
    /// previous version (same full name), instead of against no skill: the
    /// baseline configuration is then `old_skill`.
    ///
    /// ```no_run
    /// # async fn demo(evaluator: skillkit::eval::Evaluator, old: skillkit::Skill) -> Result<(), skillkit::eval::EvalError> {
    /// let set = skillkit::eval::TaskSet::read("kits/docs/skills/pdf/evals/evals.json".as_ref())?;
    /// let report = evaluator.tasks_against("docs:pdf", Some(old), &set, None).await?;
    /// assert_eq!(report.baseline_configuration, "old_skill");
    /// # Ok(()) }
    /// ```
    pub async fn tasks_against(
        &self,
        skill: &str,
        previous: Option<crate::Skill>,
        set: &TaskSet,
        workspace: Option<&Path>,
    ) -> Result<TaskReport, EvalError> {
        let skill = self.skill(skill)?;
        let has_scripts = skill.dir().is_some_and(|d| d.join("scripts").is_dir());
        let baseline_name = match previous {
            Some(_) => OLD_SKILL,
            None => WITHOUT_SKILL,
        };
        let previous = previous.map(Arc::new);
        let without: Arc<[Kit]> = self
            .kits
            .iter()
            .map(|kit| {
                let mut kit = kit.clone();
                let kept: Skills = kit
                    .skills
                    .iter()
                    .filter_map(|s| match (s.name == skill.name, &previous) {
                        (false, _) => Some(s.clone()),
                        (true, Some(old)) => Some(old.clone()),
                        (true, None) => None,
                    })
                    .collect();
                kit.skills = kept;
                kit
            })
            .collect();
        let scratch = tempfile::tempdir().map_err(|source| EvalError::Io {
            path: std::env::temp_dir().display().to_string(),
            source,
        })?;
        let root = workspace.unwrap_or(scratch.path()).to_path_buf();
        let mut jobs = Vec::new();
        for case in &set.evals {
            for (configuration, kits) in [(WITH_SKILL, &self.kits), (baseline_name, &without)] {
                for run in 1..=self.runs {
                    let outputs = root
                        .join(format!("eval-{}", case.id_text()))
                        .join(configuration)
                        .join(format!("run-{run}"))
                        .join("outputs");
                    jobs.push((case, configuration, kits.clone(), run, outputs));
                }
            }
        }
        let total = jobs.len();
        let mut done = 0;
        let mut running = futures::stream::iter(jobs.into_iter().map(
            |(case, configuration, kits, run, outputs)| async move {
                let result = self
                    .one(set, case, configuration, kits, run, &outputs, has_scripts)
                    .await;
                (case, configuration, result)
            },
        ))
        .buffer_unordered(self.jobs);
        let mut runs = Vec::new();
        while let Some((case, configuration, result)) = running.next().await {
            done += 1;
            self.report(
                done,
                total,
                format!("eval {} {configuration}", case.id_text()),
            );
            runs.push(result?);
        }
        runs.sort_by(|a, b| {
            (a.eval_id.as_str(), a.configuration.as_str(), a.run_number).cmp(&(
                b.eval_id.as_str(),
                b.configuration.as_str(),
                b.run_number,
            ))
        });
        if workspace.is_none() {
            for run in &mut runs {
                run.outputs = None;
            }
        }
        let summary = |configuration: &str| {
            let of: Vec<&CaseRun> = runs
                .iter()
                .filter(|r| r.configuration == configuration)
                .collect();
            ConfigSummary {
                pass_rate: Stats::of(&of.iter().map(|r| r.pass_rate()).collect::<Vec<_>>()),
                time_seconds: Stats::of(&of.iter().map(|r| r.time_seconds).collect::<Vec<_>>()),
                tokens: Stats::of(
                    &of.iter()
                        .map(|r| r.transcript.tokens() as f64)
                        .collect::<Vec<_>>(),
                ),
            }
        };
        Ok(TaskReport {
            skill: skill.name.to_string(),
            with_skill: summary(WITH_SKILL),
            baseline: summary(baseline_name),
            baseline_configuration: baseline_name.to_owned(),
            runs,
        })
    }

    /// One run of `case`: its working folder made, the conversation, the
    /// grades.
    #[allow(clippy::too_many_arguments)]
    async fn one(
        &self,
        set: &TaskSet,
        case: &Case,
        configuration: &str,
        kits: Arc<[Kit]>,
        run_number: usize,
        outputs: &Path,
        has_scripts: bool,
    ) -> Result<CaseRun, EvalError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| EvalError::Io { path, source }
        };
        if outputs.exists() {
            std::fs::remove_dir_all(outputs).map_err(io(outputs))?;
        }
        std::fs::create_dir_all(outputs).map_err(io(outputs))?;
        for file in &case.files {
            let from = inside(&set.base, file).ok_or_else(|| EvalError::File {
                path: file.clone(),
                reason: "a case's file must be a path inside the skill's folder".into(),
            })?;
            let name = Path::new(file).file_name().unwrap_or_default();
            std::fs::copy(&from, outputs.join(name)).map_err(io(&from))?;
        }
        let setup = Setup {
            kits,
            registry: &self.registry,
            model: &self.model,
            max_turns: self.max_turns,
            scripts: (has_scripts && configuration != WITHOUT_SKILL)
                .then_some((outputs, self.allow_weaker_sandbox)),
        };
        let transcript = converse(setup, &case.prompt).await;
        let mut expectations = Vec::new();
        for assertion in &case.assertions {
            expectations.push(
                grade(
                    assertion,
                    &transcript,
                    outputs,
                    (&self.registry, self.judge_uri()),
                    &case.prompt,
                )
                .await,
            );
        }
        Ok(CaseRun {
            eval_id: case.id_text(),
            configuration: configuration.to_owned(),
            run_number,
            expectations,
            time_seconds: transcript.elapsed.as_secs_f64(),
            transcript,
            outputs: Some(outputs.to_path_buf()),
        })
    }
}

/// `file` (relative, no `..`) inside `base`, if it is a regular file, not
/// a link, and no link among its folders leads out of `base` (a skill's
/// `evals/files -> ~/.aws` must not copy what is not the skill's into a
/// run the model sees).
fn inside(base: &Path, file: &str) -> Option<PathBuf> {
    crate::whole::within_linked(base, file, false)
        .ok()
        .filter(|path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trigger set or task eval file comes with a skill: a FIFO, a device
    /// or a folder in its place is refused at once, saying what it is, and
    /// so is a file over [`MAX_SET_BYTES`](super::super::MAX_SET_BYTES).
    #[cfg(unix)]
    #[test]
    fn an_eval_set_that_is_no_file_is_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let evals = dir.path().join("evals");
        std::fs::create_dir(&evals).unwrap();
        let file = evals.join("evals.json");
        let makers: [(&str, &dyn Fn()); 4] = [
            ("is a FIFO (named pipe), not a file", &|| {
                let made = std::process::Command::new("mkfifo").arg(&file).status();
                assert!(made.unwrap().success());
            }),
            ("is a device, not a file", &|| {
                std::os::unix::fs::symlink("/dev/zero", &file).unwrap()
            }),
            ("is a directory, not a file", &|| {
                std::fs::create_dir(&file).unwrap()
            }),
            ("larger than 16 MiB", &|| {
                std::fs::write(&file, vec![b' '; (16 << 20) + 1]).unwrap()
            }),
        ];
        for (said, make) in makers {
            make();
            let path = file.clone();
            let (send, answer) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let tasks = TaskSet::read(&path).map(drop).map_err(|e| e.to_string());
                let triggers = crate::eval::read_triggers(&path)
                    .map(drop)
                    .map_err(|e| e.to_string());
                let _ = send.send((tasks, triggers));
            });
            let (tasks, triggers) = answer
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("reading an eval set that {said} blocked"));
            for error in [tasks.unwrap_err(), triggers.unwrap_err()] {
                assert!(error.contains(said), "{said}: {error}");
            }
            match std::fs::symlink_metadata(&file).unwrap().is_dir() {
                true => std::fs::remove_dir(&file).unwrap(),
                false => std::fs::remove_file(&file).unwrap(),
            }
        }
    }

    /// A case's file is the skill's own: a regular file below its folder,
    /// not a link, and not reached through a folder that links out (a
    /// cloned skill's `evals/files -> ~/.aws`).
    #[cfg(unix)]
    #[test]
    fn a_case_file_is_never_reached_through_a_link_out() {
        let top = tempfile::tempdir().unwrap();
        let (skill, secrets) = (top.path().join("skill"), top.path().join("secrets"));
        std::fs::create_dir_all(skill.join("evals/files")).unwrap();
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(secrets.join("credentials"), "secret").unwrap();
        std::fs::write(skill.join("evals/files/data.csv"), "a,b\n").unwrap();
        let link = |to: &Path, at: &str| std::os::unix::fs::symlink(to, skill.join(at)).unwrap();
        link(&secrets, "evals/aws");
        link(&secrets.join("credentials"), "evals/files/key");
        link(&skill.join("evals/files"), "evals/same");
        assert!(inside(&skill, "evals/files/data.csv").is_some());
        // A folder linked inside the skill is followed; a file that is a
        // link, or a folder that links out, is not.
        assert!(inside(&skill, "evals/same/data.csv").is_some());
        assert!(inside(&skill, "evals/files/key").is_none());
        assert!(inside(&skill, "evals/aws/credentials").is_none());
        assert!(inside(&skill, "../secrets/credentials").is_none());
    }
}
