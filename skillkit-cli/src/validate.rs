//! `skillkit validate`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;
use skillkit::parser::{Diagnostic, KitLayout, SKILL_FILE, validate};

use crate::failure::EXIT_IO;
use crate::output::out;

/// The skill directories a PATH names: itself when it is a SKILL.md or holds
/// one, plus every skill directory found below it; and the warnings of the
/// scan (what it skipped, each naming its path).
fn skill_dirs(path: &Path) -> Result<(Vec<PathBuf>, Vec<Diagnostic>), String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    if !meta.is_dir() {
        // A SKILL.md that is a FIFO or a device too: reading it says what it is.
        return match path.file_name().and_then(|n| n.to_str()) {
            Some(name) if name.eq_ignore_ascii_case(SKILL_FILE) => Ok((
                vec![path.parent().unwrap_or(Path::new(".")).to_path_buf()],
                Vec::new(),
            )),
            _ => Err(format!(
                "{}: not a SKILL.md file or a directory",
                path.display()
            )),
        };
    }
    let layout =
        KitLayout::scan(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut dirs: Vec<PathBuf> = layout
        .skills
        .iter()
        .filter_map(|file| file.parent().map(Path::to_path_buf))
        .collect();
    if dirs.is_empty() {
        // Nothing below: report on the directory itself (a lowercase skill.md
        // counts, as in the reference validator; otherwise "missing SKILL.md").
        dirs.push(path.to_path_buf());
    }
    Ok((dirs, layout.diagnostics))
}

pub fn run(paths: &[PathBuf], json: bool) -> ExitCode {
    let mut results: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
    for path in paths {
        match skill_dirs(path) {
            Ok((dirs, skipped)) => {
                // What was not checked is said (on stderr); the verdict is
                // on the skills that were.
                for warning in skipped {
                    crate::output::err!("{warning}");
                }
                for dir in dirs {
                    let problems = validate::skill_dir(&dir);
                    results.insert(dir, problems);
                }
            }
            Err(message) => {
                crate::output::err!("error: {message}");
                return ExitCode::from(EXIT_IO);
            }
        }
    }
    let invalid = results.values().any(|problems| !problems.is_empty());
    if json {
        let object: serde_json::Map<String, serde_json::Value> = results
            .iter()
            .map(|(dir, problems)| {
                let list = problems
                    .iter()
                    .map(|d| json!({"line": d.line, "column": d.column, "message": d.message}))
                    .collect();
                (dir.display().to_string(), serde_json::Value::Array(list))
            })
            .collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&object).unwrap_or_default()
        );
    } else {
        for problem in results.values().flatten() {
            out!("{problem}");
        }
        let bad = results.values().filter(|p| !p.is_empty()).count();
        crate::output::err!("{} skill(s) checked, {bad} invalid", results.len());
    }
    if invalid {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
