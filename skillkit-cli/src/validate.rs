//! `skillkit validate`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;
use skillkit::parser::{Diagnostic, KitLayout, NotAFile, SKILL_FILE, open_file, validate};

use crate::exit;
use crate::output::out;
use crate::progress::Spinner;

/// The skill directories a PATH names: itself when it is a SKILL.md or holds
/// one, plus every skill directory found below it; and the warnings of the
/// scan (what it skipped, each naming its path: a skill deeper than the depth
/// limit, a name that is not UTF-8, a folder that cannot be read).
fn skill_dirs(path: &Path) -> Result<(Vec<PathBuf>, Vec<Diagnostic>), String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let skill_file = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|name| name.eq_ignore_ascii_case(SKILL_FILE));
    if skill_file {
        // A SKILL.md that is a folder, a FIFO or a device too: the check of
        // its skill folder says what it is.
        return Ok((
            vec![path.parent().unwrap_or(Path::new(".")).to_path_buf()],
            Vec::new(),
        ));
    }
    if meta.is_file() {
        return Err(format!(
            "{}: not a SKILL.md file or a directory",
            path.display()
        ));
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

/// Why the skill file of `dir` cannot be read, when it is there but is not
/// a file one can read (a folder, a FIFO, a link to nothing, a device): an
/// I/O error, not an invalid or a missing skill. The check is the readers'
/// own ([`open_file`]), so it never blocks.
fn unreadable_skill_file(dir: &Path) -> Option<String> {
    [SKILL_FILE, "skill.md"].into_iter().find_map(|name| {
        let file = dir.join(name);
        std::fs::symlink_metadata(&file).ok()?;
        let err = open_file(&file).err()?;
        let why = match err.get_ref().and_then(|e| e.downcast_ref::<NotAFile>()) {
            Some(found) => found.to_string(),
            None => err.to_string(),
        };
        Some(format!("error: {}: cannot read it: {why}", file.display()))
    })
}

/// `skillkit validate PATH... [--json]`: exit 0 when every skill is valid,
/// 1 when one is not, 2 when a PATH or a skill file cannot be read (the
/// skills that could be read are still reported). What a scan skipped (a
/// folder it cannot read, a skill too deep) is a warning on stderr.
pub fn run(paths: &[PathBuf], json: bool) -> ExitCode {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let what = crate::output::inert(&shown.join(" ")).into_owned();
    let spinner = Spinner::start(&format!("validating {what}"), !json);
    let mut results: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
    // What could not be read, each a line for stderr.
    let mut unreadable: Vec<String> = Vec::new();
    // What the scans skipped, each a warning for stderr.
    let mut skipped_lines: Vec<String> = Vec::new();
    for path in paths {
        match skill_dirs(path) {
            Ok((dirs, skipped)) => {
                // What was not checked is said; the verdict is on the skills
                // that were.
                skipped_lines.extend(skipped.iter().map(ToString::to_string));
                for dir in dirs {
                    match unreadable_skill_file(&dir) {
                        Some(why) => unreadable.push(why),
                        None => {
                            let problems = validate::skill_dir(&dir);
                            results.insert(dir, problems);
                            spinner.message(format!(
                                "validating {what}: {} skills checked",
                                results.len()
                            ));
                        }
                    }
                }
            }
            Err(message) => {
                drop(spinner);
                crate::output::err!("error: {message}");
                return ExitCode::from(exit::IO);
            }
        }
    }
    drop(spinner);
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
        out!("{}", crate::output::json(&object, true).unwrap_or_default());
    } else {
        for problem in results.values().flatten() {
            out!("{problem}");
        }
        let bad = results.values().filter(|p| !p.is_empty()).count();
        crate::output::err!("{} skill(s) checked, {bad} invalid", results.len());
    }
    for why in skipped_lines.iter().chain(&unreadable) {
        crate::output::err!("{why}");
    }
    if !unreadable.is_empty() {
        ExitCode::from(exit::IO)
    } else if invalid {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
