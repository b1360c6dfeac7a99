//! [`verify`]: whether each locked skill's folder still holds exactly the
//! pinned bytes (and, for a signed skill, a signature that holds by the
//! right key), and which skills in the scanned folders the lock does not
//! know.

use std::path::Path;

use serde::Serialize;

use super::paths::inside_followed;
use super::signature::{self, AllowedSigners, SIGNATURE_FILE, normal_signer};
use super::walk::{Walked, walk};
use super::{LockedSkill, Lockfile};

/// What [`verify`] found of one skill.
///
/// ```
/// use skillkit::lockfile::{Lockfile, Status, verify};
/// let project = tempfile::tempdir().unwrap();
/// std::fs::create_dir_all(project.path().join("skills/new")).unwrap();
/// std::fs::write(project.path().join("skills/new/SKILL.md"), "Hi.\n").unwrap();
/// let verdicts = verify(&Lockfile::new(), project.path(), &["skills"]);
/// assert_eq!((verdicts[0].name.as_str(), &verdicts[0].status), ("skills/new", &Status::Unlocked));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The skill's name (for an unlocked skill, its folder, relative to
    /// the project).
    pub name: String,
    /// What holds.
    pub status: Status,
}

/// The state of a skill against the lock.
///
/// ```
/// use skillkit::lockfile::{Lockfile, Status, verify};
/// let lock = Lockfile::parse(r#"{"version": 1, "skills": {
///   "gone": {"source": "acme/gone", "path": "skills/gone"},
///   "away": {"source": "acme/away", "path": "../elsewhere"}
/// }}"#).unwrap();
/// let project = tempfile::tempdir().unwrap();
/// let verdicts = verify(&lock, project.path(), &[]);
/// assert!(matches!(verdicts[0].status, Status::Outside { .. }));
/// assert_eq!(verdicts[1].status, Status::Missing);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Status {
    /// The folder holds exactly the pinned bytes.
    Ok,
    /// The folder differs: files changed, added (not pinned) or removed (a
    /// rename is one of each).
    Modified {
        /// Pinned files whose bytes changed (or that are no longer regular
        /// files).
        changed: Vec<String>,
        /// Files the lock does not pin.
        added: Vec<String>,
        /// Pinned files that are gone.
        removed: Vec<String>,
    },
    /// The folder is gone.
    Missing,
    /// The lock pins the skill at a path that is no folder inside the
    /// project: absolute, climbing out with `..`, or led out of it by a
    /// symbolic link in the project. Nothing outside the project is read.
    Outside {
        /// Which, in words (the link named, and what to do about it).
        reason: String,
    },
    /// A skill in one of the scanned folders that the lock does not know.
    Unlocked,
    /// The files are the pinned ones, but the skill's `SKILL.sig` does not
    /// hold for them, or was not made by the pinned signer (or by a key of
    /// the allowed signers, for a skill whose lock pins none): the lock's
    /// digests were rewritten, or the signer changed.
    BadSignature {
        /// Why.
        reason: String,
    },
}

impl Status {
    /// The status as `verify --json` names it: `ok`, `modified`,
    /// `missing`, `outside`, `unlocked`, `bad-signature`.
    ///
    /// ```
    /// assert_eq!(skillkit::lockfile::Status::Missing.as_str(), "missing");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Modified { .. } => "modified",
            Status::Missing => "missing",
            Status::Outside { .. } => "outside",
            Status::Unlocked => "unlocked",
            Status::BadSignature { .. } => "bad-signature",
        }
    }
}

/// Each locked skill of `lock` against the folders of `project`, then each
/// skill (a folder with a `SKILL.md`) in the `scanned` folders (relative to
/// the project) that the lock does not know, as [`Status::Unlocked`]. A
/// skill whose lock pins a signer must carry a `SKILL.sig` by that key over
/// its files; an unsigned skill is `ok` otherwise. Offline.
///
/// ```
/// use skillkit::lockfile::{Lockfile, Status, verify};
/// let project = tempfile::tempdir().unwrap();
/// let skill = project.path().join("skills/greet");
/// std::fs::create_dir_all(&skill).unwrap();
/// std::fs::write(skill.join("SKILL.md"), "Hi.\n").unwrap();
/// let mut lock = Lockfile::new();
/// lock.pin("greet", "acme/greet", None, None, project.path(), "skills/greet").unwrap();
/// std::fs::write(skill.join("notes.md"), "added later").unwrap();
/// let verdicts = verify(&lock, project.path(), &["skills"]);
/// assert_eq!(verdicts.len(), 1, "a locked skill is not listed again as unlocked");
/// assert!(matches!(&verdicts[0].status, Status::Modified { added, .. } if added == &["notes.md"]));
/// ```
pub fn verify(lock: &Lockfile, project: &Path, scanned: &[&str]) -> Vec<Verdict> {
    verify_signed(lock, project, scanned, None)
}

/// [`verify`], and a signed skill whose lock pins no signer must be signed
/// by a key of `allowed`.
///
/// ```
/// use skillkit::lockfile::{AllowedSigners, Lockfile, verify_signed};
/// let project = tempfile::tempdir().unwrap();
/// let verdicts = verify_signed(&Lockfile::new(), project.path(), &[], Some(&AllowedSigners::default()));
/// assert!(verdicts.is_empty());
/// ```
pub fn verify_signed(
    lock: &Lockfile,
    project: &Path,
    scanned: &[&str],
    allowed: Option<&AllowedSigners>,
) -> Vec<Verdict> {
    let mut verdicts: Vec<Verdict> = lock
        .skills
        .iter()
        .map(|(name, locked)| Verdict {
            name: name.clone(),
            status: check(locked, project, allowed),
        })
        .collect();
    let locked: std::collections::HashSet<&str> =
        lock.skills.values().map(|s| s.path.as_str()).collect();
    for folder in scanned {
        let Ok(entries) = std::fs::read_dir(project.join(folder)) else {
            continue;
        };
        let mut found: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| e.path().join("SKILL.md").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .map(|name| format!("{}/{name}", folder.trim_end_matches('/')))
            .filter(|path| !locked.contains(path.as_str()))
            .collect();
        found.sort();
        verdicts.extend(found.into_iter().map(|name| Verdict {
            name,
            status: Status::Unlocked,
        }));
    }
    verdicts
}

/// `locked` against its folder in `project`: its files, then its
/// signature.
pub(crate) fn check(
    locked: &LockedSkill,
    project: &Path,
    allowed: Option<&AllowedSigners>,
) -> Status {
    let folder = match inside_followed(project, &locked.path) {
        Ok(folder) => folder,
        Err(refused) => {
            return Status::Outside {
                reason: refused.to_string(),
            };
        }
    };
    if !folder.is_dir() {
        return Status::Missing;
    }
    // A link or an unreadable entry is a change; what can be read is
    // compared.
    let Walked { files, mut odd, .. } = walk(&folder);
    let mut changed = std::mem::take(&mut odd);
    let mut added = Vec::new();
    for (path, file) in &files {
        match locked.files.get(path) {
            Some(entry)
                if entry.size == file.size
                    && entry.digest == crate::whole::sha256(&file.sha256) => {}
            Some(_) => changed.push(path.clone()),
            None => added.push(path.clone()),
        }
    }
    let removed: Vec<String> = locked
        .files
        .keys()
        .filter(|path| !files.contains_key(*path) && !changed.contains(path))
        .cloned()
        .collect();
    changed.sort();
    if !(changed.is_empty() && added.is_empty() && removed.is_empty()) {
        return Status::Modified {
            changed,
            added,
            removed,
        };
    }
    let signed = files.contains_key(SIGNATURE_FILE);
    let bad = |reason: String| Status::BadSignature { reason };
    match (&locked.signer, allowed) {
        (Some(pinned), _) if !signed => bad(format!(
            "the lock pins signer `{pinned}` and the skill has no {SIGNATURE_FILE}"
        )),
        (Some(pinned), _) => match signature::check(&folder, &files) {
            Err(reason) => bad(reason),
            Ok(signer) if Some(&signer) != normal_signer(pinned).as_ref() => bad(format!(
                "signed by `{signer}`, not by the pinned signer `{pinned}`; \
                 `skillkit update --allow-signer-change` accepts the new one"
            )),
            Ok(_) => Status::Ok,
        },
        (None, Some(allowed)) if signed => match signature::check(&folder, &files) {
            Err(reason) => bad(reason),
            Ok(signer) if allowed.principals(&signer).is_none() => bad(format!(
                "signed by `{signer}`, which the allowed signers do not name"
            )),
            Ok(_) => Status::Ok,
        },
        _ => Status::Ok,
    }
}
