//! `skillkit import`, `forget`, `refresh` and `list --github`: the GitHub
//! provider's cache from the command line, with a progress bar while a
//! tarball downloads and unpacks.

use std::time::{Duration, UNIX_EPOCH};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use skillkit::GitHub;
use skillkit::providers::github::{Imported, Progress};

use crate::args::Global;
use crate::explain;
use crate::failure::Failure;
use crate::output::{err, out};
use crate::sources;

/// `skillkit import owner/repo[/path][@ref]`.
pub fn import(global: &Global, source: &str) -> Result<(), Failure> {
    let (github, bar) = with_progress(global)?;
    let done = sources::runtime()?.block_on(github.import(source));
    bar.finish_and_clear();
    let done = done.map_err(explain::github)?;
    if done.downloaded {
        out!(
            "imported {} at commit {} ({} skills)",
            done.kit,
            done.sha,
            done.skills.len()
        );
    } else {
        out!(
            "{} was already imported at commit {} ({} skills); `skillkit refresh {}` updates it",
            done.kit,
            done.sha,
            done.skills.len(),
            done.kit
        );
    }
    print_details(&done);
    Ok(())
}

/// `skillkit forget SOURCE`.
pub fn forget(global: &Global, source: &str) -> Result<(), Failure> {
    let github = sources::github(global)?;
    sources::runtime()?
        .block_on(github.remove(source))
        .map_err(explain::github)?;
    out!("forgot {source}");
    Ok(())
}

/// `skillkit refresh [SOURCE]`: one source (its failure is the command's),
/// or every imported one (each failure reported, the others still
/// refreshed).
pub fn refresh(global: &Global, source: Option<&str>) -> Result<(), Failure> {
    let (github, bar) = with_progress(global)?;
    let runtime = sources::runtime()?;
    let targets = match source {
        Some(source) => vec![source.to_owned()],
        None => runtime
            .block_on(github.imported())
            .map_err(explain::github)?
            .into_iter()
            .map(|s| s.reference.to_string())
            .collect(),
    };
    if targets.is_empty() {
        out!("nothing imported; `skillkit import owner/repo` imports a repository");
        return Ok(());
    }
    let mut failed = 0;
    for target in &targets {
        let done = runtime.block_on(github.refresh(target));
        bar.finish_and_clear();
        match done {
            Ok(done) if done.previous_sha.as_deref() == Some(done.sha.as_str()) => {
                out!("{} is up to date at commit {}", done.kit, done.sha);
            }
            Ok(done) => {
                out!(
                    "{} updated from commit {} to {} ({} skills)",
                    done.kit,
                    done.previous_sha.as_deref().unwrap_or("?"),
                    done.sha,
                    done.skills.len()
                );
                print_details(&done);
            }
            Err(error) if source.is_some() => return Err(explain::github(error)),
            Err(error) => {
                failed += 1;
                err!("error: {target}: {}", explain::github(error).message());
            }
        }
    }
    match failed {
        0 => Ok(()),
        n => Err(Failure::failed(format!(
            "{n} of {} sources not refreshed",
            targets.len()
        ))),
    }
}

/// `skillkit list --github`: the imported sources, from the cache alone.
pub fn list(global: &Global, json: bool) -> Result<(), Failure> {
    let github = sources::github(global)?;
    let imported = sources::runtime()?
        .block_on(github.imported())
        .map_err(explain::github)?;
    let seconds = |at: std::time::SystemTime| {
        at.duration_since(UNIX_EPOCH)
            .map_or(0, |d: Duration| d.as_secs())
    };
    if json {
        let sources: Vec<_> = imported
            .iter()
            .map(|s| {
                json!({
                    "source": s.reference.to_string(),
                    "sha": s.sha,
                    "imported_at": seconds(s.imported_at),
                    "dir": s.dir.display().to_string(),
                })
            })
            .collect();
        out!(
            "{}",
            crate::output::json(&json!({"sources": sources}), true).unwrap_or_default()
        );
        return Ok(());
    }
    if imported.is_empty() {
        out!(
            "nothing imported into {}; `skillkit import owner/repo` imports a repository",
            github.cache_dir().display()
        );
    }
    for source in &imported {
        out!("{} at commit {}", source.reference, source.sha);
    }
    Ok(())
}

/// The provider, reporting downloads on a progress bar (drawn on stderr when
/// it is a terminal, hidden otherwise).
pub fn with_progress(global: &Global) -> Result<(GitHub, ProgressBar), Failure> {
    let bar = ProgressBar::new_spinner();
    let style =
        ProgressStyle::with_template("{spinner} {msg}: {bytes} ({bytes_per_sec}, {elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    let shown = bar.clone();
    let github = sources::github_builder(global)
        .on_progress(move |progress: &Progress| {
            if shown.is_finished() {
                shown.reset();
            }
            shown.set_message(format!("downloading and unpacking {}", progress.source));
            if let Some(total) = progress.total
                && shown.length() != Some(total)
            {
                // The size is known: a bar instead of a spinner.
                shown.set_length(total);
                if let Ok(bar) = ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
                ) {
                    shown.set_style(bar.progress_chars("=> "));
                }
            }
            shown.set_position(progress.received);
        })
        .build()
        .map_err(explain::github)?;
    bar.enable_steady_tick(Duration::from_millis(120));
    Ok((github, bar))
}

/// The skills of an import, and what the archive held that was left out.
fn print_details(done: &Imported) {
    for skill in &done.skills {
        out!("  skill {skill}");
    }
    for skipped in &done.skipped {
        err!("  skipped {skipped}");
    }
}
