//! Where a lock's paths land: inside the project, never led out of it by
//! `..`, a root, or a symbolic link the project holds.

use std::path::{Path, PathBuf};

use super::LockError;
use crate::whole::OutOf;

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
    crate::whole::within_linked(project, path, follow_last).map_err(|out| match out {
        OutOf::NotPlain => LockError::Refused(format!(
            "`{path}` is not a folder inside the project (a relative path without `..`)"
        )),
        OutOf::Link(link) => LockError::Refused(format!(
            "`{path}` leads out of the project through the symbolic link `{}` (or the link \
             leads nowhere); replace the link with a folder",
            link.display()
        )),
    })
}
