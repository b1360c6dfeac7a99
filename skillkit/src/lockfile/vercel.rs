//! vercel-labs/skills' lockfile, `skills-lock.json`, read as it is so a
//! project that has one is installed by `skillkit install` unchanged:
//! `{"version": 1, "skills": {NAME: {"source": "owner/repo", "ref": …,
//! "sourceType": "github", "computedHash": HEX}}}`.
//!
//! Its `computedHash` is SHA-256 over each file of the skill's folder
//! (`.git` and `node_modules` left out, links not followed), sorted by
//! relative path as JavaScript's `localeCompare` sorts, each fed as the path
//! then the content, with nothing between them. That framing is ambiguous
//! (`ab` + `c` and `a` + `bc` hash alike), which is why SkillKit's own lock
//! uses the length-framed [`aggregate_digest`](super::aggregate_digest);
//! here it is only checked, never written.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use super::paths::inside;
use super::sources::{find_named, from_github, join, skill_folder_of};
use super::staging::{stage, swap_in};
use super::{InstallMode, Installed, LOCKFILE_NAME, LockError, SKILL_FOLDERS};
use crate::providers::github::GitHub;

/// vercel-labs/skills' lockfile name, in the project's root.
pub const VERCEL_LOCK_NAME: &str = "skills-lock.json";

/// A `skills-lock.json`.
#[derive(Debug, Deserialize)]
pub(super) struct VercelLock {
    #[serde(default)]
    pub skills: BTreeMap<String, VercelEntry>,
}

/// One skill of a `skills-lock.json`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VercelEntry {
    pub source: String,
    #[serde(rename = "ref", default)]
    pub git_ref: Option<String>,
    #[serde(default)]
    pub source_type: Option<String>,
    /// The skill's `SKILL.md` within the source, when the source holds
    /// several.
    #[serde(default)]
    pub skill_path: Option<String>,
    pub computed_hash: String,
}

/// Reads a `skills-lock.json`.
fn read_lock(path: &Path) -> Result<VercelLock, LockError> {
    let invalid = |reason: String| LockError::Invalid {
        path: path.display().to_string(),
        reason,
    };
    let text = super::sources::read_small(path, super::MAX_LOCK_BYTES)?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    match super::version_of(&value).map_err(invalid)? {
        1 => {}
        other => return Err(invalid(format!("version {other}; this SkillKit reads 1"))),
    }
    serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
}

/// [`Project::install`](super::Project::install) from the
/// `skills-lock.json` in `root`.
pub(super) async fn install(
    root: &Path,
    github: &GitHub,
    mode: InstallMode,
) -> Result<Installed, LockError> {
    let theirs = read_lock(&root.join(VERCEL_LOCK_NAME))?;
    let mut report = Installed {
        lockfile: VERCEL_LOCK_NAME,
        ..Installed::default()
    };
    let [folder, _] = SKILL_FOLDERS;
    let mut staged = Vec::new();
    for (name, entry) in &theirs.skills {
        let path = format!("{folder}/{name}");
        let target = inside(root, &path)?;
        // A link in the skill's place is not read through (it may lead out
        // of the project): it is replaced, as a stale folder is.
        if !target.is_symlink() && target.is_dir() && vercel_hash(&target)? == entry.computed_hash {
            report.kept.push(name.clone());
            continue;
        }
        if entry.source_type.as_deref().is_some_and(|t| t != "github") {
            return Err(LockError::Source(format!(
                "`{name}` comes from a {} source; SkillKit installs GitHub sources",
                entry.source_type.as_deref().unwrap_or_default()
            )));
        }
        let source = match &entry.git_ref {
            Some(r) => format!("{}@{r}", entry.source),
            None => entry.source.clone(),
        };
        if mode.offline {
            return Err(LockError::Source(format!(
                "`{name}`: {VERCEL_LOCK_NAME} pins no commit, so it cannot be installed \
                 offline; install online, or `skillkit add {source}` to pin it in \
                 {LOCKFILE_NAME}"
            )));
        }
        let checkout = github.checkout(&source, None).await.map_err(from_github)?;
        let within = match &entry.skill_path {
            Some(skill_path) => skill_folder_of(skill_path),
            None => find_named(&checkout, name)?,
        };
        let from = join(&checkout.dir, &within);
        let hash = vercel_hash(&from)?;
        if hash != entry.computed_hash {
            return Err(LockError::Mismatch(format!(
                "`{name}` from `{source}` (commit {}) does not match {VERCEL_LOCK_NAME}: \
                 computedHash {}, the files hash to {hash}; nothing was installed",
                checkout.sha, entry.computed_hash
            )));
        }
        staged.push(stage(name, &path, &target, &from)?);
        report.installed.push(name.clone());
    }
    swap_in(&staged)?;
    Ok(report)
}

/// The `computedHash` vercel-labs/skills gives the skill in `folder`
/// (64 lowercase hex digits).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("SKILL.md"), "hi").unwrap();
/// // SHA-256 of "SKILL.md" followed by "hi".
/// let hash = skillkit::lockfile::vercel_hash(dir.path()).unwrap();
/// assert_eq!(hash.len(), 64);
/// ```
pub fn vercel_hash(folder: &Path) -> Result<String, LockError> {
    let mut files = Vec::new();
    collect(folder, "", &mut files)?;
    files.sort_by(|a, b| locale_compare(&a.0, &b.0));
    let mut hash = Sha256::new();
    for (relative, path) in &files {
        hash.update(relative.as_bytes());
        let (file, _) = skillkit_parser::open_file(path).map_err(|source| LockError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let mut content = Vec::new();
        file.take(super::MAX_SKILL_BYTES)
            .read_to_end(&mut content)
            .map_err(|source| LockError::Io {
                path: path.display().to_string(),
                source,
            })?;
        hash.update(&content);
    }
    let digest = crate::whole::sha256(&hash.finalize());
    Ok(digest.trim_start_matches("sha256:").to_owned())
}

/// The regular files under `dir`, by path relative to the skill's folder.
fn collect(
    dir: &Path,
    prefix: &str,
    files: &mut Vec<(String, std::path::PathBuf)>,
) -> Result<(), LockError> {
    let entries = std::fs::read_dir(dir).map_err(|source| LockError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if name != ".git" && name != "node_modules" {
                collect(&entry.path(), &format!("{prefix}{name}/"), files)?;
            }
        } else if kind.is_file() {
            files.push((format!("{prefix}{name}"), entry.path()));
        }
    }
    Ok(())
}

/// `a` against `b` as JavaScript's `localeCompare` orders file paths in
/// the root locale (ICU): punctuation before digits before letters,
/// letters compared without case first, then lower case before upper.
fn locale_compare(a: &str, b: &str) -> Ordering {
    fn primary(c: char) -> (u8, char) {
        match c {
            c if c.is_ascii_digit() => (1, c),
            c if c.is_alphabetic() => (2, c.to_lowercase().next().unwrap_or(c)),
            c => (0, c),
        }
    }
    let primaries = a.chars().map(primary).cmp(b.chars().map(primary));
    primaries.then_with(|| {
        // Lower case first, at the first difference of case.
        let tertiary = |c: char| (c.is_uppercase(), c);
        a.chars().map(tertiary).cmp(b.chars().map(tertiary))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_that_is_no_whole_number_is_said_for_what_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skills-lock.json");
        let error = |path: &Path| match read_lock(path) {
            Ok(_) => panic!("{} was read", path.display()),
            Err(e) => e.to_string(),
        };
        for (version, said) in [
            ("\"1\"", "`version` is text"),
            ("1.5", "`version` is a number, but not a whole one"),
            ("-1", "`version` is a number, but not a whole one"),
            ("null", "`version` is null"),
        ] {
            std::fs::write(
                &path,
                format!(r#"{{"version": {version}, "skills": {{}}}}"#),
            )
            .unwrap();
            let err = error(&path);
            assert!(err.contains(said), "{version}: {err}");
        }
        std::fs::write(&path, r#"{"skills": {}}"#).unwrap();
        let err = error(&path);
        assert!(err.contains("no `version`"), "{err}");
        std::fs::write(&path, r#"{"version": 2, "skills": {}}"#).unwrap();
        let err = error(&path);
        assert!(err.contains("version 2; this SkillKit reads 1"), "{err}");
    }

    #[test]
    fn paths_sort_as_locale_compare_sorts_them() {
        let mut paths = vec![
            "scripts/run.py",
            "SKILL.md",
            "references/api.md",
            "README.md",
            "_private.md",
            "2-intro.md",
            "reference.md",
        ];
        paths.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(
            paths,
            [
                "_private.md",
                "2-intro.md",
                "README.md",
                "reference.md",
                "references/api.md",
                "scripts/run.py",
                "SKILL.md",
            ]
        );
    }
}
