//! Installing a skill without a half-done state: copied into a staging
//! folder beside its place, digested and its signature checked there, then
//! swapped in with the others of the operation, or all put back.

use std::io;
use std::path::{Path, PathBuf};

use super::signature::{self, SIGNATURE_FILE};
use super::{LockError, Walked, walk};

/// A skill copied beside its place, checked, waiting to be swapped in.
pub(super) struct Staged {
    pub(super) name: String,
    /// Its place, relative to the project.
    pub(super) path: String,
    pub(super) target: PathBuf,
    /// Holds the copy (`new`) and, once swapped, the old folder (`old`).
    pub(super) dir: tempfile::TempDir,
    /// The signer its `SKILL.sig` names, if signed.
    pub(super) signer: Option<String>,
    /// The copy's files, digested: what the lock pins once it is in place.
    pub(super) walked: Walked,
}

impl Staged {
    /// The aggregate digest of the copy.
    pub(super) fn digest(&self) -> String {
        self.walked.digest()
    }
}

/// Copies the skill at `from` into a staging folder beside `target`,
/// digests the copy and checks its signature.
pub(super) fn stage(
    name: &str,
    path: &str,
    target: &Path,
    from: &Path,
) -> Result<Staged, LockError> {
    let io_error = |at: &Path| {
        let at = at.display().to_string();
        move |source: io::Error| LockError::Io { path: at, source }
    };
    let parent = target.parent().unwrap_or(target);
    std::fs::create_dir_all(parent).map_err(io_error(parent))?;
    let dir = tempfile::Builder::new()
        .prefix(".skillkit-")
        .tempdir_in(parent)
        .map_err(io_error(parent))?;
    let copy = dir.path().join("new");
    copy_tree(from, &copy).map_err(io_error(from))?;
    let walked = walk(&copy);
    walked.pinnable(name)?;
    let signer = match walked.files.contains_key(SIGNATURE_FILE) {
        true => Some(
            signature::check(&copy, &walked.files)
                .map_err(|reason| LockError::BadSignature(format!("`{name}`: {reason}")))?,
        ),
        false => None,
    };
    Ok(Staged {
        name: name.to_owned(),
        path: path.to_owned(),
        target: target.to_path_buf(),
        dir,
        signer,
        walked,
    })
}

/// Swaps every staged skill into its place; if one fails, every one is
/// put back as it was (an old folder restored, a new one taken out).
pub(super) fn swap_in(staged: &[Staged]) -> Result<(), LockError> {
    for (n, one) in staged.iter().enumerate() {
        let (new, old) = (one.dir.path().join("new"), one.dir.path().join("old"));
        let result = (|| {
            if one.target.exists() || one.target.is_symlink() {
                std::fs::rename(&one.target, &old)?;
            }
            std::fs::rename(&new, &one.target)
        })();
        if let Err(source) = result {
            for back in staged[..=n].iter().rev() {
                let (new, old) = (back.dir.path().join("new"), back.dir.path().join("old"));
                if !new.exists() {
                    let _ = std::fs::rename(&back.target, &new);
                }
                if old.exists() || old.is_symlink() {
                    let _ = std::fs::rename(&old, &back.target);
                }
            }
            return Err(LockError::Io {
                path: one.path.clone(),
                source,
            });
        }
    }
    // Each staging folder (and the old folder in it) is deleted as it drops.
    Ok(())
}

/// Copies the folder `from` to `to`: folders and regular files only
/// (executable bits kept).
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &dest)?;
        } else {
            return Err(io::Error::other(format!(
                "{} is not a regular file",
                entry.path().display()
            )));
        }
    }
    Ok(())
}
