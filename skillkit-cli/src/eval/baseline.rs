//! `--baseline REF`: the skill as it was at a git ref, to evaluate beside
//! the skill as it is now.

use std::path::{Path, PathBuf};

use skillkit::{Local, Skill};

use crate::failure::Failure;
use crate::output::inert;

/// The skill of `dir` as it was at git ref `reference`: its folder taken
/// out of the repository at that ref (`git archive`, into a temporary
/// folder, returned to be kept while it is used) and loaded under the
/// skill's kit name.
pub(super) fn previous_version(
    dir: &Path,
    reference: &str,
    skill: &Skill,
) -> Result<(tempfile::TempDir, Skill), Failure> {
    let plain = !reference.is_empty()
        && !reference.starts_with('-')
        && reference
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/~^@{}-".contains(c));
    if !plain {
        return Err(Failure::io(format!(
            "--baseline `{}` is not a git ref (a tag, a branch or a commit)",
            inert(reference)
        )));
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .map_err(|e| Failure::io(format!("git cannot be run ({e}); --baseline needs git")))
    };
    let prefix = git(&["rev-parse", "--show-prefix"])?;
    let top = git(&["rev-parse", "--show-toplevel"])?;
    if !prefix.status.success() || !top.status.success() {
        return Err(Failure::io(format!(
            "{} is not in a git repository; --baseline reads the previous version from git",
            dir.display()
        )));
    }
    let prefix = String::from_utf8_lossy(&prefix.stdout).trim().to_owned();
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    let old = tempfile::tempdir().map_err(|e| Failure::io(format!("a temporary folder: {e}")))?;
    let archive = std::process::Command::new("git")
        .arg("-C")
        .arg(&top)
        .args(["archive", "--format=tar", reference, "--"])
        .arg(if prefix.is_empty() {
            "."
        } else {
            prefix.as_str()
        })
        .output()
        .map_err(|e| Failure::io(format!("git cannot be run ({e})")))?;
    if !archive.status.success() {
        return Err(Failure::failed(format!(
            "the skill's folder at `{}` cannot be read from git: {}",
            inert(reference),
            inert(String::from_utf8_lossy(&archive.stderr).trim())
        )));
    }
    let mut unpack = std::process::Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(old.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| Failure::io(format!("tar cannot be run ({e})")))?;
    if let Some(mut stdin) = unpack.stdin.take() {
        use std::io::Write as _;
        let _ = stdin.write_all(&archive.stdout);
    }
    let unpacked = unpack
        .wait()
        .map_err(|e| Failure::io(format!("tar: {e}")))?;
    let folder = old.path().join(&prefix);
    if !unpacked.success() || !folder.join("SKILL.md").is_file() {
        return Err(Failure::failed(format!(
            "the skill has no SKILL.md at `{}`",
            inert(reference)
        )));
    }
    let kit = skill.kit().unwrap_or_default().to_owned();
    let loaded = Local::new(&folder)
        .named(kit)
        .watch(false)
        .load()
        .map_err(|e| Failure::failed(inert(&e.to_string())))?;
    let found = loaded
        .iter()
        .flat_map(|k| k.skills.iter())
        .find(|s| s.bare_name() == skill.bare_name())
        .map(|s| (**s).clone())
        .ok_or_else(|| {
            Failure::failed(format!(
                "the skill at `{}` is not named {}",
                inert(reference),
                inert(skill.bare_name())
            ))
        })?;
    Ok((old, found))
}
