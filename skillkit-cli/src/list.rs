//! `skillkit list` and `skillkit to-prompt`.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use skillkit::{Catalog, Local, Snapshot};

use crate::EXIT_IO;
use crate::output::out;

/// Loads every PATH as a Local kit (or directory of kits) into one snapshot.
/// Paths are made absolute so skill locations are too.
fn load(paths: &[PathBuf], each: bool) -> Result<Snapshot, ExitCode> {
    let mut builder = Catalog::builder();
    if paths.is_empty() {
        let here = std::env::current_dir().map_err(|e| {
            eprintln!("error: cannot read the current folder: {e}");
            ExitCode::from(EXIT_IO)
        })?;
        builder = builder.providers(Local::discover(here));
    }
    for path in paths {
        let dir = match std::fs::canonicalize(path) {
            Ok(dir) if dir.is_dir() => dir,
            Ok(_) => {
                eprintln!("error: {}: not a directory", path.display());
                return Err(ExitCode::from(EXIT_IO));
            }
            Err(e) => {
                eprintln!("error: {}: cannot read: {e}", path.display());
                return Err(ExitCode::from(EXIT_IO));
            }
        };
        builder = builder.provider(if each {
            Local::each(dir)
        } else {
            Local::new(dir)
        });
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("error: cannot start the runtime: {e}");
            ExitCode::from(EXIT_IO)
        })?;
    Ok(runtime.block_on(builder.build().snapshot()))
}

pub fn run(paths: &[PathBuf], each: bool, json: bool) -> ExitCode {
    let snapshot = match load(paths, each) {
        Ok(snapshot) => snapshot,
        Err(code) => return code,
    };
    if json {
        let kits: Vec<_> = snapshot
            .kits()
            .iter()
            .map(|kit| {
                json!({
                    "name": kit.name,
                    "skills": kit.skills.iter().map(|s| json!({
                        "name": s.name,
                        "description": s.description,
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
        let out = json!({"kits": kits, "diagnostics": diagnostics});
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        for kit in snapshot.kits() {
            out!(
                "kit {} ({} skills, {} agents)",
                kit.name,
                kit.skills.len(),
                kit.agents.len()
            );
            if let Some(agent) = &kit.agent {
                out!("  agent {}: {}", agent.name, one_line(&agent.description));
            }
            for skill in &kit.skills {
                out!("  skill {}: {}", skill.name, one_line(&skill.description));
            }
            for agent in &kit.agents {
                out!(
                    "  sub-agent {}: {}",
                    agent.name,
                    one_line(&agent.description)
                );
            }
        }
        if !snapshot.diagnostics().is_empty() {
            out!("diagnostics:");
            for diagnostic in snapshot.diagnostics() {
                out!("  {diagnostic}");
            }
        }
    }
    ExitCode::SUCCESS
}

pub fn to_prompt(paths: &[PathBuf], each: bool) -> ExitCode {
    match load(paths, each) {
        Ok(snapshot) => {
            for diagnostic in snapshot.diagnostics() {
                eprintln!("{diagnostic}");
            }
            out!(
                "{}",
                skillkit::prompt::available_skills(snapshot.skills().map(|s| &**s))
            );
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// The description on one line, for the text listing.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
