//! A project's pinned skills: the lockfile, what it pins of each skill (its
//! source, the ref asked for, the commit it resolved to, where it is
//! installed, each file's digest and one aggregate digest), and
//! [`verify`], which says of each skill whether the folder still holds
//! exactly those bytes.
//!
//! The lockfile is JSON (`skillkit.lock.json`): the format of the other
//! skill lockfiles (vercel's `skills-lock.json`), read and written with the
//! `serde_json` SkillKit already has; written sorted, two-space indented,
//! one key a line, with no timestamps, so a diff shows exactly what changed.
//! Keys this version does not know are kept when it rewrites the file.
//!
//! ```
//! use skillkit::lockfile::{Lockfile, Status, verify};
//! let project = tempfile::tempdir().unwrap();
//! let skill = project.path().join(".agents/skills/greet");
//! std::fs::create_dir_all(&skill).unwrap();
//! std::fs::write(skill.join("SKILL.md"), "---\nname: greet\ndescription: Greet.\n---\nHi.\n").unwrap();
//!
//! let mut lock = Lockfile::new();
//! lock.pin("greet", "acme/skills@v1", Some("v1"), None, project.path(), ".agents/skills/greet").unwrap();
//! let verdicts = verify(&lock, project.path(), &[".agents/skills"]);
//! assert_eq!(verdicts[0].status, Status::Ok);
//!
//! std::fs::write(skill.join("SKILL.md"), "changed").unwrap();
//! let verdicts = verify(&lock, project.path(), &[".agents/skills"]);
//! assert!(matches!(&verdicts[0].status, Status::Modified { changed, .. } if changed == &["SKILL.md"]));
//! ```

mod digest;
mod locked;
mod marketplace;
mod paths;
mod project;
mod signature;
mod sources;
mod staging;
mod vercel;
mod verify;
mod walk;

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use paths::inside_followed;
pub(crate) use verify::check;
pub use verify::{Status, Verdict, verify, verify_signed};
use walk::{Walked, walk};

pub use digest::{AGGREGATE_TAG, aggregate_digest, file_digest};
pub use locked::Locked;
pub use project::{Added, InstallMode, Installed, Project, SKILL_FOLDERS, UpdateMode, Updated};
pub use signature::{
    AllowedSigners, SIGNATURE_FILE, SIGNATURE_NAMESPACE, normal_signer, sign, signature_of,
    signed_message,
};
/// The `ssh-key` crate SkillKit signs and verifies with (its keys are
/// [`sign`]'s), re-exported so the versions match.
pub use ssh_key;
pub use vercel::{VERCEL_LOCK_NAME, vercel_hash};

/// The lockfile's name, in the project's root.
pub const LOCKFILE_NAME: &str = "skillkit.lock.json";

/// The lockfile version this SkillKit writes and reads.
pub const LOCKFILE_VERSION: u32 = 1;

/// The most bytes of one skill's files a lock reads.
const MAX_SKILL_BYTES: u64 = 64 * 1024 * 1024;

/// Why a lockfile could not be read, written or made.
///
/// ```
/// use skillkit::lockfile::{LockError, Lockfile};
/// let err = Lockfile::parse(r#"{"version": 2}"#).unwrap_err();
/// assert!(matches!(err, LockError::Newer { found: 2, .. }));
/// assert!(err.to_string().ends_with("upgrade skillkit"));
/// // A path that climbs out of the project is refused, whatever it names.
/// let project = tempfile::tempdir().unwrap();
/// let err = Lockfile::new().pin("x", "acme/x", None, None, project.path(), "../x").unwrap_err();
/// assert!(matches!(err, LockError::Refused(_)), "{err}");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// The file is not a lockfile.
    #[error("{path}: not a SkillKit lockfile: {reason}")]
    Invalid {
        /// The lockfile.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A newer SkillKit wrote it.
    #[error(
        "{path}: lockfile version {found} is newer than this SkillKit reads ({LOCKFILE_VERSION}); \
         upgrade skillkit"
    )]
    Newer {
        /// The lockfile.
        path: String,
        /// Its version.
        found: u32,
    },
    /// An install path that leaves the project (or that a symbolic link
    /// leads out of it), or a skill folder that cannot be pinned (a
    /// symbolic link in it, too big).
    #[error("{0}")]
    Refused(String),
    /// A skill's `SKILL.sig` does not hold for its files, or was made by
    /// another key than the one pinned.
    #[error("bad signature: {0}")]
    BadSignature(String),
    /// Installing would change the lockfile, and `locked` forbids it.
    #[error("{0}")]
    WouldChange(String),
    /// A source or a commit could not be had (from GitHub, or from the
    /// cache when offline).
    #[error("{0}")]
    Source(String),
    /// What is in the project's folders is not what a source or a lock
    /// says (a digest that does not match, a folder in the way).
    #[error("{0}")]
    Mismatch(String),
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The error.
        source: io::Error,
    },
}

/// A project's lockfile.
///
/// ```
/// use skillkit::lockfile::{LOCKFILE_NAME, Lockfile};
/// let project = tempfile::tempdir().unwrap();
/// let skill = project.path().join(".agents/skills/greet");
/// std::fs::create_dir_all(&skill).unwrap();
/// std::fs::write(skill.join("SKILL.md"), "---\nname: greet\ndescription: Greet.\n---\nHi.\n").unwrap();
/// let mut lock = Lockfile::new();
/// lock.pin("greet", "acme/skills/greet", Some("v1"), None, project.path(), ".agents/skills/greet").unwrap();
/// let path = project.path().join(LOCKFILE_NAME);
/// lock.write(&path).unwrap();
/// assert_eq!(Lockfile::read(&path).unwrap(), lock);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lockfile {
    /// The format's version ([`LOCKFILE_VERSION`]).
    pub version: u32,
    /// The pinned skills, by name.
    #[serde(default)]
    pub skills: BTreeMap<String, LockedSkill>,
    /// Keys this version does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a lockfile pins of one skill.
///
/// ```
/// let lock = skillkit::lockfile::Lockfile::parse(r#"{
///   "version": 1,
///   "skills": {"greet": {"source": "acme/skills/greet", "ref": "v1", "path": ".agents/skills/greet"}}
/// }"#).unwrap();
/// let greet = &lock.skills["greet"];
/// assert_eq!(greet.requested.as_deref(), Some("v1"));
/// // Written by hand: no files pinned yet (`install` pins them).
/// assert!(greet.files.is_empty() && greet.digest.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockedSkill {
    /// Where it comes from, as `skillkit add` takes it (`owner/repo/path`).
    pub source: String,
    /// The ref asked for (a tag, a branch), if any.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// The commit it resolved to, if it came from a repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The skill's folder within the source (`""` when the source is the
    /// skill's folder itself).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub folder: String,
    /// Its folder, relative to the project's root, `/` between parts.
    pub path: String,
    /// Each file, relative to the skill's folder: digest and size. (Empty
    /// in an entry written by hand: `install` pins it.)
    #[serde(default)]
    pub files: BTreeMap<String, FileEntry>,
    /// The aggregate digest over exactly `files` ([`aggregate_digest`]);
    /// empty in an entry written by hand.
    #[serde(default)]
    pub digest: String,
    /// The GitHub API root it comes from, when not `https://api.github.com`
    /// (a GitHub Enterprise server): `install` and `update` refuse to fetch
    /// it from another server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// The key that must have signed it (`ssh-ed25519 AAAA…`), if any: its
    /// `SKILL.sig` must hold for the pinned files and be made by this key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// Keys this version does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One pinned file.
///
/// ```
/// let project = tempfile::tempdir().unwrap();
/// std::fs::create_dir(project.path().join("greet")).unwrap();
/// std::fs::write(project.path().join("greet/SKILL.md"), "Hi.\n").unwrap();
/// let mut lock = skillkit::lockfile::Lockfile::new();
/// let pinned = lock.pin("greet", "acme/greet", None, None, project.path(), "greet").unwrap();
/// let file = &pinned.files["SKILL.md"];
/// assert_eq!(file.size, 4);
/// assert!(file.digest.starts_with("sha256:") && file.digest.len() == 7 + 64);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// `sha256:<64 hex>`.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
}

impl Default for Lockfile {
    fn default() -> Self {
        Lockfile::new()
    }
}

impl Lockfile {
    /// An empty lockfile of the current version.
    ///
    /// ```
    /// assert!(skillkit::lockfile::Lockfile::new().skills.is_empty());
    /// ```
    pub fn new() -> Self {
        Lockfile {
            version: LOCKFILE_VERSION,
            skills: BTreeMap::new(),
            extra: Map::new(),
        }
    }

    /// Reads the lockfile at `path`.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("skillkit.lock.json");
    /// skillkit::lockfile::Lockfile::new().write(&path).unwrap();
    /// assert_eq!(skillkit::lockfile::Lockfile::read(&path).unwrap().version, 1);
    /// ```
    pub fn read(path: &Path) -> Result<Lockfile, LockError> {
        let text = sources::read_small(path, MAX_LOCK_BYTES)?;
        Lockfile::parse(&text).map_err(|e| match e {
            LockError::Invalid { reason, .. } => LockError::Invalid {
                path: path.display().to_string(),
                reason,
            },
            LockError::Newer { found, .. } => LockError::Newer {
                path: path.display().to_string(),
                found,
            },
            other => other,
        })
    }

    /// A lockfile from its text.
    ///
    /// ```
    /// let lock = skillkit::lockfile::Lockfile::parse(r#"{"version": 1, "skills": {}, "team": "docs"}"#).unwrap();
    /// assert_eq!(lock.extra["team"], "docs");
    /// assert!(skillkit::lockfile::Lockfile::parse(r#"{"version": 9}"#).is_err());
    /// let err = skillkit::lockfile::Lockfile::parse(r#"{"version": "1"}"#).unwrap_err();
    /// assert!(err.to_string().contains("`version` is text"), "{err}");
    /// ```
    pub fn parse(text: &str) -> Result<Lockfile, LockError> {
        let invalid = |reason: String| LockError::Invalid {
            path: LOCKFILE_NAME.into(),
            reason,
        };
        let value: Value = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let found = version_of(&value).map_err(invalid)?;
        if found > u64::from(LOCKFILE_VERSION) {
            return Err(LockError::Newer {
                path: LOCKFILE_NAME.into(),
                found: u32::try_from(found).unwrap_or(u32::MAX),
            });
        }
        serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
    }

    /// The lockfile's text: sorted, indented, ending with a line end.
    ///
    /// ```
    /// let text = skillkit::lockfile::Lockfile::new().to_text();
    /// assert_eq!(text, "{\n  \"skills\": {},\n  \"version\": 1\n}\n");
    /// ```
    pub fn to_text(&self) -> String {
        // Through a `Value`: serde_json's maps are sorted by key.
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Writes the lockfile to `path` whole: a temporary file beside it,
    /// synced, then renamed over it.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("skillkit.lock.json");
    /// skillkit::lockfile::Lockfile::new().write(&path).unwrap();
    /// assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\n  \"skills\": {},\n  \"version\": 1\n}\n");
    /// // Nothing is left beside it.
    /// assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    /// ```
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        crate::whole::write(path, self.to_text().as_bytes()).map_err(|source| LockError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Pins skill `name` as the folder `path` (relative to `project`) holds
    /// it now, from `source` at `requested`, resolved to `commit`. The
    /// folder must be inside the project and hold regular files and folders
    /// only. An entry it replaces keeps its unknown keys, its `folder` and
    /// its `signer`; the entry is returned to set them.
    ///
    /// ```
    /// let project = tempfile::tempdir().unwrap();
    /// let skill = project.path().join("skills/greet");
    /// std::fs::create_dir_all(&skill).unwrap();
    /// std::fs::write(skill.join("SKILL.md"), "---\nname: greet\ndescription: Greet.\n---\nHi.\n").unwrap();
    /// let mut lock = skillkit::lockfile::Lockfile::new();
    /// let pinned = lock.pin("greet", "acme/skills/greet", Some("v1"), Some("0123abc"), project.path(), "skills/greet").unwrap();
    /// pinned.signer = Some("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA".into());
    /// assert!(lock.skills["greet"].digest.starts_with("sha256:"));
    /// // Pinned again (after an update), the entry keeps its signer.
    /// lock.pin("greet", "acme/skills/greet", Some("v2"), Some("4567def"), project.path(), "skills/greet").unwrap();
    /// assert!(lock.skills["greet"].signer.is_some());
    /// assert_eq!(lock.skills["greet"].requested.as_deref(), Some("v2"));
    /// ```
    pub fn pin(
        &mut self,
        name: &str,
        source: &str,
        requested: Option<&str>,
        commit: Option<&str>,
        project: &Path,
        path: &str,
    ) -> Result<&mut LockedSkill, LockError> {
        let folder = inside_followed(project, path)?;
        if !folder.is_dir() {
            return Err(LockError::Io {
                path: folder.display().to_string(),
                source: io::Error::from(io::ErrorKind::NotFound),
            });
        }
        let walked = walk(&folder);
        walked.pinnable(name)?;
        Ok(self.record(name, source, requested, commit, path, &walked))
    }

    /// Puts skill `name` in the lock as `walked` (its folder's files, read
    /// and checked) shows it, at `path`; an entry it replaces keeps its
    /// unknown keys, `folder`, `signer` and `api`.
    fn record(
        &mut self,
        name: &str,
        source: &str,
        requested: Option<&str>,
        commit: Option<&str>,
        path: &str,
        walked: &Walked,
    ) -> &mut LockedSkill {
        let (extra, folder, signer, api) = self
            .skills
            .remove(name)
            .map(|old| (old.extra, old.folder, old.signer, old.api))
            .unwrap_or_default();
        let skill = LockedSkill {
            source: source.to_owned(),
            requested: requested.map(str::to_owned),
            commit: commit.map(str::to_owned),
            folder,
            signer,
            api,
            path: path.trim_end_matches('/').to_owned(),
            digest: walked.digest(),
            files: walked
                .files
                .iter()
                .map(|(p, f)| {
                    let entry = FileEntry {
                        digest: crate::whole::sha256(&f.sha256),
                        size: f.size,
                    };
                    (p.clone(), entry)
                })
                .collect(),
            extra,
        };
        self.skills.insert(name.to_owned(), skill);
        self.skills.get_mut(name).expect("just inserted")
    }
}

/// The most bytes of a lockfile read.
const MAX_LOCK_BYTES: u64 = 64 << 20;

/// The `version` of a lockfile's JSON `value`, or why there is none: missing,
/// or not a whole number (`"1"`, `1.5`), said by what it is instead.
pub(crate) fn version_of(value: &Value) -> Result<u64, String> {
    let version = value.get("version").ok_or("no `version`")?;
    version.as_u64().ok_or_else(|| {
        let instead = match version {
            Value::String(_) => "text",
            Value::Number(_) => "a number, but not a whole one from 0 up",
            Value::Bool(_) => "true or false",
            Value::Null => "null",
            Value::Array(_) => "a list",
            Value::Object(_) => "a map",
        };
        format!("`version` is {instead}; write it as a whole number, as `\"version\": 1`")
    })
}
