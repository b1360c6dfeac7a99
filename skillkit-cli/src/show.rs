//! `skillkit show NAME [PATH...]`: one skill, whole: its fields, where it
//! is, the files beside it and its body. Also the two places the commands
//! read a skill's body: [`body`] (as written) and [`invocation`] (rendered).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillkit::{Skill, Snapshot};

use crate::args::Global;
use crate::failure::Failure;
use crate::output::{err, out};

/// The most files listed beside a skill.
const MAX_FILES: usize = 200;

/// `skillkit show NAME [PATH...]`.
pub fn run(global: &Global, name: &str, paths: &[PathBuf]) -> Result<(), Failure> {
    let snapshot = crate::list::load(global, paths, &Default::default(), false, false)?;
    let skill = find(&snapshot, name)?;
    out!("name: {}", skill.name);
    out!("description: {}", skill.description);
    let optional = [
        ("license", skill.license()),
        ("compatibility", skill.compatibility()),
        ("model", skill.model()),
        ("required_scope", skill.required_scope()),
    ];
    for (field, value) in optional {
        if let Some(value) = value {
            out!("{field}: {value}");
        }
    }
    if !skill.allowed_tools().is_empty() {
        out!("allowed-tools: {}", skill.allowed_tools().join(" "));
    }
    for (field, map) in [("metadata", skill.metadata()), ("extra", skill.extra())] {
        for (key, value) in map {
            out!("{field}.{key}: {value}");
        }
    }
    match (&skill.location, skill.dir()) {
        (Some(location), Some(dir)) => {
            out!("location: {}", location.display());
            let files = files_beside(dir, location);
            if !files.is_empty() {
                out!("files:");
                for file in &files {
                    out!("  {file}");
                }
            }
        }
        _ => out!("location: (not from a file)"),
    }
    out!("");
    out!("{}", body(&skill)?.trim_end());
    Ok(())
}

/// The skill named `name`: a full name (`kit:skill`), or a bare name found in
/// exactly one kit.
pub fn find(snapshot: &Snapshot, name: &str) -> Result<Arc<Skill>, Failure> {
    if let Some(skill) = snapshot.skill(name) {
        return Ok(Arc::clone(skill));
    }
    match matching(snapshot.skills(), name).as_slice() {
        [one] => Ok(Arc::clone(one)),
        [] => {
            crate::list::warn_failures(snapshot);
            for diagnostic in snapshot.diagnostics() {
                err!("{diagnostic}");
            }
            Err(Failure::failed(format!(
                "no skill `{name}`; `skillkit list` shows the skills there are"
            )))
        }
        many => Err(Failure::failed(format!(
            "`{name}` is ambiguous: give the full name, one of {}",
            many.iter()
                .map(|s| format!("`{}`", s.name))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The skills `name` names among `skills`: the one of that full name
/// (`kit:skill`), else every one of that bare name (one, or an ambiguity).
pub fn matching<'a>(
    skills: impl IntoIterator<Item = &'a Arc<Skill>>,
    name: &str,
) -> Vec<&'a Arc<Skill>> {
    let mut bare = Vec::new();
    for skill in skills {
        if skill.name == name {
            return vec![skill];
        }
        if skill.bare_name() == name {
            bare.push(skill);
        }
    }
    bare
}

/// The skill's body, as written: read from its file now, when it lives in
/// one (a query reads only the frontmatter).
pub fn body(skill: &Skill) -> Result<String, Failure> {
    skill
        .body
        .read()
        .map(|text| text.into_owned())
        .map_err(Failure::failed)
}

/// A person invoking skill `name` (`run --skill`, and chat's `/name ARGS`
/// once found): the skill and its body rendered with `arguments`, to send as
/// the message.
pub fn invoke(
    runtime: &tokio::runtime::Runtime,
    snapshot: &Snapshot,
    name: &str,
    arguments: &str,
    session_id: &str,
) -> Result<(Arc<Skill>, String), Failure> {
    let skill = find(snapshot, name)?;
    let text = invocation(runtime, &skill, arguments, session_id)?;
    Ok((skill, text))
}

/// The message a person sends by invoking `skill` with `arguments`: its body
/// (fetched first when a server keeps it, an MCP server's skill) rendered. A
/// skill whose frontmatter says `user-invocable: false` is the agent's to
/// use, not a person's.
pub fn invocation(
    runtime: &tokio::runtime::Runtime,
    skill: &Skill,
    arguments: &str,
    session_id: &str,
) -> Result<String, Failure> {
    if !skill.user_invocable() {
        return Err(Failure::failed(format!(
            "`{}` is for the agent to use, not to run yourself (its frontmatter says \
             `user-invocable: false`); ask for the task and the agent uses it when it fits",
            skill.name
        )));
    }
    runtime
        .block_on(skill.activate(arguments, Some(session_id)))
        .map_err(Failure::failed)
}

/// The files in `dir` and below it, relative and sorted, except the skill's
/// own file and what the layout rules skip (VCS folders, build output).
fn files_beside(dir: &Path, location: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if skillkit::parser::layout::is_skipped(&name.to_string_lossy()) || path == location {
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(path),
                Ok(_) => {
                    if let Ok(relative) = path.strip_prefix(dir) {
                        files.push(relative.display().to_string());
                    }
                }
                Err(_) => {}
            }
        }
    }
    files.sort();
    if files.len() > MAX_FILES {
        let more = files.len() - MAX_FILES;
        files.truncate(MAX_FILES);
        files.push(format!("… and {more} more"));
    }
    files
}
