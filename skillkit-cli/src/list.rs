//! `skillkit list` and `skillkit to-prompt`.

use std::path::PathBuf;

use serde_json::json;
use skillkit::prompt::shown_description;
use skillkit::{Catalog, Snapshot};

use crate::args::Global;
use crate::failure::Failure;
use crate::mcp_args::McpArgs;
use crate::output::{err, out};
use crate::progress::Spinner;
use crate::sources;

/// Loads every PATH as a Local kit (or directory of kits) and every MCP
/// server of `mcp` into one snapshot; without either, the standard
/// locations and the imported kits. A spinner shows on a terminal when it
/// takes a while, unless `json`.
pub fn load(
    global: &Global,
    paths: &[PathBuf],
    mcp: &McpArgs,
    each: bool,
    json: bool,
) -> Result<Snapshot, Failure> {
    let runtime = sources::query_runtime()?;
    load_catalog(&runtime, global, paths, mcp, each, json).map(|(_, snapshot)| snapshot)
}

/// Like [`load`], on `runtime`, with the catalog the snapshot was taken of
/// (to search it on the same runtime).
pub fn load_catalog(
    runtime: &tokio::runtime::Runtime,
    global: &Global,
    paths: &[PathBuf],
    mcp: &McpArgs,
    each: bool,
    json: bool,
) -> Result<(Catalog, Snapshot), Failure> {
    let builder = match paths.is_empty() && !sources::no_mcp(mcp) {
        true => sources::embedder(global, skillkit::Catalog::builder()),
        false => sources::catalog(global, paths, each, false)?,
    };
    let catalog = sources::mcp(builder, mcp)?.build();
    let _spinner = Spinner::start("reading skills", !json);
    let snapshot = runtime.block_on(catalog.snapshot());
    Ok((catalog, snapshot))
}

/// `skillkit list [PATH...] [--mcp 'COMMAND ARGS'] [--mcp-url URL]`.
pub fn run(
    global: &Global,
    paths: &[PathBuf],
    mcp: &McpArgs,
    each: bool,
    json: bool,
) -> Result<(), Failure> {
    let snapshot = load(global, paths, mcp, each, json)?;
    let searched = match paths.is_empty() && sources::no_mcp(mcp) {
        true => sources::searched()?,
        false => Vec::new(),
    };
    if !json && !searched.is_empty() {
        err!("searched for skills, nearest first (give a PATH to list another folder):");
        for folder in &searched {
            let absent = if folder.is_dir() {
                ""
            } else {
                "  (none there)"
            };
            err!("  {}{absent}", folder.display());
        }
    }
    if json {
        let kits: Vec<_> = snapshot
            .kits()
            .iter()
            .map(|kit| {
                json!({
                    "name": kit.name,
                    "skills": kit.skills.iter().map(|s| json!({
                        "name": s.name,
                        "description": shown_description(&s.description),
                        "location": s.location.as_ref().map(|p| p.display().to_string()),
                    })).collect::<Vec<_>>(),
                    "agent": kit.agent.as_ref().map(|a| json!({"name": a.name, "description": a.description})),
                    "agents": kit.agents.iter().map(|a| json!({"name": a.name, "description": a.description})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let diagnostics: Vec<String> = snapshot
            .diagnostics()
            .iter()
            .map(ToString::to_string)
            .collect();
        let failures: Vec<_> = snapshot
            .failures()
            .iter()
            .map(|f| json!({"provider": f.provider, "error": f.error.to_string()}))
            .collect();
        let mut out = json!({"kits": kits, "diagnostics": diagnostics, "failures": failures});
        if !searched.is_empty() {
            let searched: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
            out["searched"] = json!(searched);
        }
        out!("{}", crate::output::json(&out, true).unwrap_or_default());
        failed(&snapshot)?;
    } else {
        warn_failures(&snapshot);
        for kit in snapshot.kits() {
            out!(
                "kit {} ({} skills, {} agents)",
                kit.name,
                kit.skills.len(),
                kit.agents.len()
            );
            if let Some(agent) = &kit.agent {
                out!(
                    "  agent {}: {}",
                    agent.name,
                    one_line(&shown_description(&agent.description))
                );
            }
            for skill in &kit.skills {
                out!(
                    "  skill {}: {}",
                    skill.name,
                    one_line(&shown_description(&skill.description))
                );
            }
            for agent in &kit.agents {
                out!(
                    "  sub-agent {}: {}",
                    agent.name,
                    one_line(&shown_description(&agent.description))
                );
            }
        }
        if !snapshot.diagnostics().is_empty() {
            out!("diagnostics:");
            for diagnostic in snapshot.diagnostics() {
                out!("  {diagnostic}");
            }
        }
        failed(&snapshot)?;
    }
    Ok(())
}

/// Exit 2 when a source could not be read (what could be read is listed
/// and each failure said; `--json` has them under `failures`).
fn failed(snapshot: &Snapshot) -> Result<(), Failure> {
    match snapshot.failures() {
        [] => Ok(()),
        failures => Err(Failure::io(format!(
            "{} of the sources could not be read ({}); what could be read is listed",
            failures.len(),
            failures
                .iter()
                .map(|f| f.provider.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// `skillkit to-prompt PATH...`: the block a model sees, so without the
/// skills only people run (`disable-model-invocation: true`).
pub fn to_prompt(paths: &[PathBuf], each: bool) -> Result<(), Failure> {
    let global = Global::default();
    let snapshot = load(&global, paths, &McpArgs::default(), each, false)?;
    warn_failures(&snapshot);
    for diagnostic in snapshot.diagnostics() {
        err!("{diagnostic}");
    }
    out!(
        "{}",
        skillkit::prompt::available_skills(
            snapshot
                .skills()
                .filter(|s| s.model_invocable())
                .map(|s| &**s)
        )
    );
    Ok(())
}

/// Says on stderr, one line each, which providers the query skipped and
/// why (their kits are missing from what follows).
pub fn warn_failures(snapshot: &Snapshot) {
    for failure in snapshot.failures() {
        err!("warning: {failure}");
    }
}

/// `text` on one line (whitespace runs become one space).
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
