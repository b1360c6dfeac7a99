//! `skillkit eval KIT_DIR`: the trigger and task evals of a kit's skills
//! (`evals/triggers.json`, `evals/evals.json` beside each `SKILL.md`), on
//! one model or a matrix, with a report for people, `--json`, JUnit XML
//! and Markdown, and thresholds that decide the exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use skillkit::eval::{
    Evaluator, Optimized, TaskReport, TaskSet, TriggerReport, read_triggers, workspace,
};
use skillkit::llm::Registry;
use skillkit::{Kit, Local, Skill};

use crate::failure::Failure;
use crate::output::{err, inert, out};
use crate::sources;

/// Where task eval results go unless `--workspace` says, in the working
/// folder.
const DEFAULT_WORKSPACE: &str = "skillkit-eval";

mod baseline;
mod report;

/// `skillkit eval`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct EvalArgs {
    /// The kit whose skills are evaluated (and the catalog the agent sees).
    kit_dir: PathBuf,
    /// Only this skill (full or bare name).
    #[arg(long, value_name = "NAME")]
    skill: Option<String>,
    /// The trigger set of --skill, instead of its `evals/triggers.json`.
    #[arg(long, value_name = "FILE", requires = "skill")]
    triggers: Option<PathBuf>,
    /// The task evals of --skill, instead of its `evals/evals.json`.
    #[arg(long, value_name = "FILE", requires = "skill")]
    evals: Option<PathBuf>,
    /// More kits in the catalog beside KIT_DIR (the skills' neighbours).
    #[arg(long = "with", value_name = "DIR")]
    with: Vec<PathBuf>,
    /// Runs of each query and case (per configuration; 1 or more).
    #[arg(long, default_value_t = skillkit::eval::DEFAULT_RUNS, value_parser = crate::args::count)]
    runs: usize,
    /// Conversations at once (1 or more).
    #[arg(long, default_value_t = skillkit::eval::DEFAULT_JOBS, value_parser = crate::args::count)]
    jobs: usize,
    /// The model under test, any registry URI (`anthropic://…`,
    /// `openai://…`, `scripted://FILE`); repeat it for a model matrix.
    /// Default: SKILLKIT_MODEL, else Claude.
    #[arg(long = "model", value_name = "URI")]
    models: Vec<String>,
    /// The model that grades prose assertions and proposes descriptions
    /// (default: the model under test).
    #[arg(long, value_name = "URI")]
    judge_model: Option<String>,
    /// Where task eval results go (`<skill>/iteration-N/…`, skill-creator's
    /// layout). Default: `skillkit-eval` in the working folder, where a
    /// symbolic link that leads out of it is refused.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Compare with the skill's previous version, its folder at this git
    /// ref (a tag, a branch, a commit), instead of with no skill: the
    /// baseline configuration is `old_skill`.
    #[arg(long, value_name = "REF")]
    baseline: Option<String>,
    /// Propose better descriptions from the trigger set's training part and
    /// keep the best by its validation part.
    #[arg(long)]
    optimize_description: bool,
    /// Rounds of --optimize-description.
    #[arg(long, default_value_t = 3, requires = "optimize_description")]
    rounds: usize,
    /// With --optimize-description: write the winner into the SKILL.md.
    #[arg(long, requires = "optimize_description")]
    write: bool,
    /// Print one JSON object: each skill's trigger and task results.
    #[arg(long)]
    json: bool,
    /// Also write a JUnit XML report (for CI test views).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write a Markdown summary (for a pull request).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Fail (exit 1) when a skill's trigger rate is below this (0 to 1).
    #[arg(long, value_name = "RATE")]
    min_trigger_rate: Option<f64>,
    /// Fail when a skill's false-trigger rate is above this.
    #[arg(long, value_name = "RATE")]
    max_false_trigger_rate: Option<f64>,
    /// Fail when the pass rate with the skill is below this.
    #[arg(long, value_name = "RATE")]
    min_pass_rate: Option<f64>,
    /// Fail when the pass rate with the skill minus without it is below
    /// this.
    #[arg(long, value_name = "DELTA", allow_negative_numbers = true)]
    min_delta: Option<f64>,
    /// Run scripts where the kernel cannot put up every layer of the
    /// sandbox.
    #[arg(long)]
    allow_weaker_sandbox: bool,
    /// Keep every answer of the models (tested and judge) in DIR, to
    /// replay them later.
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    record: Option<PathBuf>,
    /// Answer from the answers kept in DIR by --record, without asking any
    /// model (a CI job re-grades without paying again); a request never
    /// recorded fails its run.
    #[arg(long, value_name = "DIR")]
    replay: Option<PathBuf>,
}

/// What one skill's evaluation on one model gave.
struct Outcome {
    skill: String,
    model: String,
    triggers: Option<TriggerReport>,
    tasks: Option<TaskReport>,
    optimized: Option<Optimized>,
}

/// Runs `skillkit eval`: exit 0 when every threshold holds, 1 when one
/// does not, 2 on a usage or I/O error.
pub fn run(args: &EvalArgs) -> ExitCode {
    match evaluate(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(crate::exit::FAILED),
        Err(failure) => failure.report(),
    }
}

fn evaluate(args: &EvalArgs) -> Result<bool, Failure> {
    let dir = sources::kit_dir(&args.kit_dir)?;
    let mut kits = load(&dir)?;
    let own: Vec<std::sync::Arc<Skill>> =
        kits.iter().flat_map(|k| k.skills.iter().cloned()).collect();
    for more in &args.with {
        kits.extend(load(&sources::kit_dir(more)?)?);
    }
    let chosen: Vec<&std::sync::Arc<Skill>> = match &args.skill {
        Some(name) => match crate::show::matching(&own, name).as_slice() {
            [one] => vec![*one],
            [] => {
                return Err(Failure::failed(format!(
                    "no skill `{}` in {}",
                    inert(name),
                    dir.display()
                )));
            }
            _ => {
                return Err(Failure::failed(format!(
                    "`{}` names several skills; give the full name",
                    inert(name)
                )));
            }
        },
        None => own
            .iter()
            .filter(|s| {
                s.dir().is_some_and(|d| {
                    d.join("evals/triggers.json").is_file() || d.join("evals/evals.json").is_file()
                })
            })
            .collect(),
    };
    if chosen.is_empty() {
        return Err(Failure::failed(format!(
            "no skill of {} has evals (evals/triggers.json or evals/evals.json beside its \
             SKILL.md); give --skill NAME with --triggers FILE or --evals FILE",
            dir.display()
        )));
    }
    let models = match args.models.is_empty() {
        true => vec![
            std::env::var("SKILLKIT_MODEL")
                .unwrap_or_else(|_| skillkit::agent::DEFAULT_MODEL.to_owned()),
        ],
        false => args.models.clone(),
    };
    let mut uris: Vec<&str> = models.iter().map(String::as_str).collect();
    if let Some(judge) = &args.judge_model {
        uris.push(judge);
    }
    let (registry, resolved) = registry(&uris, args.record.as_deref(), args.replay.as_deref())?;
    let judge = args
        .judge_model
        .as_ref()
        .map(|_| resolved[resolved.len() - 1].clone());
    let runtime = sources::runtime()?;
    let bar = progress();
    let mut outcomes = Vec::new();
    for (n, model) in models.iter().enumerate() {
        let shown = bar.clone();
        let mut evaluator = Evaluator::new(kits.clone())
            .registry(registry.clone())
            .model(resolved[n].clone())
            .runs(args.runs)
            .jobs(args.jobs)
            .allow_weaker_sandbox(args.allow_weaker_sandbox)
            .on_progress(move |p| {
                shown.set_length(p.total as u64);
                shown.set_position(p.done as u64);
            });
        if let Some(judge) = &judge {
            evaluator = evaluator.judge_model(judge.clone());
        }
        for skill in &chosen {
            bar.set_message(format!("{} on {}", inert(&skill.name), inert(model)));
            let outcome = runtime.block_on(one(args, &evaluator, skill, model, models.len()));
            bar.reset();
            outcomes.push(outcome?);
        }
    }
    bar.finish_and_clear();
    let verdicts = thresholds(args, &outcomes);
    if args.json {
        out!(
            "{}",
            crate::output::json(&report::json(&outcomes, &verdicts), true).unwrap_or_default()
        );
    } else {
        for outcome in &outcomes {
            report::print(outcome);
        }
        for failed in &verdicts {
            out!("FAILED {failed}");
        }
    }
    if let Some(path) = &args.junit {
        write(path, &report::junit(&outcomes))?;
    }
    if let Some(path) = &args.markdown {
        write(path, &report::markdown(&outcomes, &verdicts))?;
    }
    Ok(verdicts.is_empty())
}

/// One skill on one model: its trigger evals, its task evals, the
/// optimiser.
async fn one(
    args: &EvalArgs,
    evaluator: &Evaluator,
    skill: &Skill,
    model: &str,
    models: usize,
) -> Result<Outcome, Failure> {
    let folder = skill.dir().map(Path::to_path_buf);
    let beside = |name: &str| {
        folder
            .as_ref()
            .map(|d| d.join("evals").join(name))
            .filter(|p| p.is_file())
    };
    let failed = |e: skillkit::eval::EvalError| match e {
        skillkit::eval::EvalError::File { .. } | skillkit::eval::EvalError::Io { .. } => {
            Failure::io(inert(&e.to_string()))
        }
        _ => Failure::failed(inert(&e.to_string())),
    };
    let trigger_file = args.triggers.clone().or_else(|| beside("triggers.json"));
    let task_file = args.evals.clone().or_else(|| beside("evals.json"));
    let queries = trigger_file
        .as_deref()
        .map(read_triggers)
        .transpose()
        .map_err(failed)?;
    let triggers = match &queries {
        Some(queries) => Some(
            evaluator
                .triggers(&skill.name, queries)
                .await
                .map_err(failed)?,
        ),
        None => None,
    };
    let optimized = match (&queries, args.optimize_description) {
        (Some(queries), true) => {
            let found = evaluator
                .optimize_description(&skill.name, queries, args.rounds)
                .await
                .map_err(failed)?;
            if args.write && found.best.round > 0 {
                let path = folder
                    .as_ref()
                    .map(|d| d.join("SKILL.md"))
                    .ok_or_else(|| Failure::io("the skill has no SKILL.md to write"))?;
                write_description(&path, &found.best.description)?;
            }
            Some(found)
        }
        (None, true) => {
            return Err(Failure::io(format!(
                "--optimize-description needs a trigger set for {}",
                inert(&skill.name)
            )));
        }
        _ => None,
    };
    let tasks = match task_file {
        Some(file) => {
            let set = TaskSet::read(&file).map_err(failed)?;
            let workspace_dir = args.workspace.as_deref();
            let mut root = workspace_dir
                .unwrap_or(Path::new(DEFAULT_WORKSPACE))
                .join(skill.bare_name());
            if models > 1 {
                root = root.join(slug(model));
            }
            if workspace_dir.is_none() {
                // The default is in the project under evaluation, which may
                // ship a link there: nothing is written through one that
                // leads out of it.
                workspace::inside(Path::new("."), &root.to_string_lossy()).map_err(|e| {
                    Failure::io(format!(
                        "{}; give --workspace DIR to write the results elsewhere",
                        inert(&e.to_string())
                    ))
                })?;
            }
            let iteration = workspace::next_iteration(&root);
            // Held until the runs are done: the old version's files.
            let mut old_files = None;
            let previous = match (&args.baseline, &folder) {
                (Some(reference), Some(dir)) => {
                    let (files, old) = baseline::previous_version(dir, reference, skill)?;
                    old_files = Some(files);
                    Some(old)
                }
                (Some(_), None) => {
                    return Err(Failure::io("--baseline needs a skill read from a folder"));
                }
                (None, _) => None,
            };
            let report = evaluator
                .tasks_against(&skill.name, previous, &set, Some(&iteration))
                .await
                .map_err(failed)?;
            drop(old_files);
            let meta = workspace::Metadata {
                skill_path: folder
                    .as_ref()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
                executor_model: model.to_owned(),
                analyzer_model: args.judge_model.clone().unwrap_or_else(|| model.to_owned()),
            };
            workspace::write(&iteration, &report, &meta).map_err(failed)?;
            err!("results in {}", iteration.display());
            Some(report)
        }
        None => None,
    };
    Ok(Outcome {
        skill: skill.name.to_string(),
        model: model.to_owned(),
        triggers,
        tasks,
        optimized,
    })
}

/// The registry for `uris`, and each URI as it resolves in it: a
/// `scripted://FILE` plays that JSON script, under a scheme of its own so
/// a judge's script and the tested model's do not mix.
fn registry(
    uris: &[&str],
    record: Option<&Path>,
    replay: Option<&Path>,
) -> Result<(Registry, Vec<String>), Failure> {
    let mut real = Registry::new();
    let mut resolved = Vec::new();
    for (n, uri) in uris.iter().enumerate() {
        match uri.strip_prefix("scripted://") {
            Some(file) if replay.is_none() => {
                let scheme = format!("scripted{n}");
                real = real.with(&scheme, crate::agent::script(file)?);
                resolved.push(format!("{scheme}://{file}"));
            }
            _ => resolved.push((*uri).to_owned()),
        }
    }
    // Recording or replaying: each model behind a recorder of its own,
    // its recordings named by the URI as given.
    let wrap = |dir: &Path, recording: bool| {
        let mut wrapped = Registry::empty();
        let uris = uris
            .iter()
            .zip(&resolved)
            .enumerate()
            .map(|(n, (given, inner))| {
                let scheme = format!("recorded{n}");
                let recorder = match recording {
                    true => skillkit::eval::Recorded::record(
                        real.clone(),
                        inner.clone(),
                        dir.join(slug(given)),
                    ),
                    false => skillkit::eval::Recorded::replay(dir.join(slug(given))),
                };
                wrapped = std::mem::take(&mut wrapped).with(&scheme, recorder);
                format!("{scheme}://model")
            })
            .collect::<Vec<_>>();
        (wrapped, uris)
    };
    Ok(match (record, replay) {
        (Some(dir), _) => wrap(dir, true),
        (None, Some(dir)) => wrap(dir, false),
        (None, None) => (real, resolved),
    })
}

fn load(dir: &Path) -> Result<Vec<Kit>, Failure> {
    Local::new(dir)
        .watch(false)
        .load()
        .map_err(|e| Failure::io(inert(&e.to_string())))
}

/// What failed the thresholds, one line each.
fn thresholds(args: &EvalArgs, outcomes: &[Outcome]) -> Vec<String> {
    let mut failed = Vec::new();
    for o in outcomes {
        let who = format!("{} on {}", o.skill, o.model);
        if let Some(t) = &o.triggers {
            if let (Some(min), Some(rate)) = (args.min_trigger_rate, t.trigger_rate)
                && rate < min
            {
                failed.push(format!("{who}: trigger rate {rate:.2} < {min}"));
            }
            if let (Some(max), Some(rate)) = (args.max_false_trigger_rate, t.false_trigger_rate)
                && rate > max
            {
                failed.push(format!("{who}: false-trigger rate {rate:.2} > {max}"));
            }
        }
        if let Some(r) = &o.tasks {
            let pass = r.with_skill.pass_rate.mean;
            if let Some(min) = args.min_pass_rate
                && pass < min
            {
                failed.push(format!("{who}: pass rate {pass:.2} < {min}"));
            }
            if let Some(min) = args.min_delta
                && r.delta() < min
            {
                failed.push(format!("{who}: delta {:+.2} < {min:+}", r.delta()));
            }
        }
    }
    failed
}

/// A model URI as a folder name.
fn slug(uri: &str) -> String {
    uri.chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                true => c,
                false => '_',
            },
        )
        .collect()
}

fn progress() -> ProgressBar {
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::io(format!("{}: cannot write it: {e}", path.display())))
}

/// Puts `description` into the frontmatter of the `SKILL.md` at `path`
/// (its `description:` line and any lines continuing it), checks the file
/// still parses to that description, and writes it whole.
fn write_description(path: &Path, description: &str) -> Result<(), Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::io(format!("{}: {e}", path.display())))?;
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let end = lines
        .iter()
        .skip(1)
        .position(|l| l.trim_end() == "---")
        .map(|n| n + 1)
        .filter(|_| lines.first().is_some_and(|l| l.trim_end() == "---"))
        .ok_or_else(|| Failure::failed(format!("{}: no frontmatter", path.display())))?;
    let at = lines[..end]
        .iter()
        .position(|l| l.starts_with("description:"))
        .ok_or_else(|| Failure::failed(format!("{}: no description line", path.display())))?;
    let mut stop = at + 1;
    while stop < end && lines[stop].starts_with([' ', '\t']) {
        stop += 1;
    }
    let quoted = serde_json::to_string(description).unwrap_or_default();
    let new_line = format!("description: {quoted}\n");
    lines.splice(at..stop, [new_line.as_str()]);
    let updated: String = lines.concat();
    let parsed = skillkit::parser::SkillDocument::parse_file(path, updated.as_bytes())
        .map_err(|d| Failure::failed(format!("{}: {}", path.display(), d.message)))?;
    if parsed.description != description {
        return Err(Failure::failed(format!(
            "{}: the new description would not read back as written; not written",
            path.display()
        )));
    }
    crate::output::write_whole(path, updated.as_bytes())
        .map_err(|e| Failure::io(format!("{}: {e}", path.display())))?;
    err!("wrote the new description into {}", path.display());
    Ok(())
}
