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

use super::LockError;

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
pub(super) fn read_lock(path: &Path) -> Result<VercelLock, LockError> {
    let invalid = |reason: String| LockError::Invalid {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|source| LockError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(1) => {}
        Some(other) => return Err(invalid(format!("version {other}; this SkillKit reads 1"))),
        None => return Err(invalid("no `version`".into())),
    }
    serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
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
