//! Where a lock's paths land: inside the project, never led out of it by
//! `..`, a root, or a symbolic link the project holds.

use std::path::{Path, PathBuf};

use super::LockError;

/// `path` (relative, `/` between parts) resolved inside `project`, or why
/// not: a path that climbs out (`..`, a root) is refused, and so is one
/// whose folders a symbolic link below the project leads out of it. A
/// cloned project can ship `.agents -> ~/.claude`; installing into or
/// removing through it would write or delete what is not the project's.
/// Links that stay inside (`.claude/skills -> ../.agents/skills`) are
/// followed. The last part may itself be a link anywhere: it is an entry
/// of the project, replaced or removed as one, never written through
/// (what is read through it is [`inside_followed`]'s). Checked when
/// called: a link made between this check and the use of the path (by
/// another process of the user's) is not caught.
pub(super) fn inside(project: &Path, path: &str) -> Result<PathBuf, LockError> {
    resolve(project, path, false)
}

/// [`inside`], and the last part, when it is a link, leads inside the
/// project too: for a folder that is read (digested, verified).
pub(super) fn inside_followed(project: &Path, path: &str) -> Result<PathBuf, LockError> {
    resolve(project, path, true)
}

fn resolve(project: &Path, path: &str, follow_last: bool) -> Result<PathBuf, LockError> {
    let joined = crate::whole::within(project, path).ok_or_else(|| {
        LockError::Refused(format!(
            "`{path}` is not a folder inside the project (a relative path without `..`)"
        ))
    })?;
    let Ok(root) = project.canonicalize() else {
        // No project folder: nothing below it exists to lead anywhere.
        return Ok(joined);
    };
    let parts: Vec<_> = Path::new(path).components().collect();
    let checked = parts.len() - usize::from(!follow_last);
    let mut at = project.to_path_buf();
    for part in &parts[..checked] {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let leads_in = at.canonicalize().is_ok_and(|real| real.starts_with(&root));
                if !leads_in {
                    let link = at.strip_prefix(project).unwrap_or(&at);
                    return Err(LockError::Refused(format!(
                        "`{path}` leads out of the project through the symbolic link `{}` \
                         (or the link leads nowhere); replace the link with a folder",
                        link.display()
                    )));
                }
            }
            Ok(_) => {}
            // The rest of the path does not exist yet.
            Err(_) => break,
        }
    }
    Ok(joined)
}
