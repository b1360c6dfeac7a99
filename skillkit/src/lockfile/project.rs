//! A project's skills as its lockfile pins them. [`Project`] adds a
//! source's skills to the project's skill folder, installs exactly what the
//! lock says (from the cache or downloaded, every file checked), updates a
//! source to its ref's new commit, and takes a skill out again.
//!
//! Nothing is half done: each skill is copied into a staging folder beside
//! its place, checked there (its digest against the lock, its signature),
//! and only when every skill of the operation passed are they swapped in,
//! then the lockfile written whole. A failure leaves the folders and the
//! lock as they were.

use std::io;
use std::path::{Path, PathBuf};

use super::paths::inside;
use super::{LOCKFILE_NAME, LockError, LockedSkill, Lockfile, normal_signer};

mod add;
mod install;
mod update;

pub use add::Added;
pub use install::{InstallMode, Installed};
pub use update::{UpdateMode, Updated};

/// The folders a project keeps its skills in, where agents look for them:
/// `.agents/skills` (Codex, SkillKit, the shared location) and
/// `.claude/skills` (Claude Code).
pub const SKILL_FOLDERS: [&str; 2] = [".agents/skills", ".claude/skills"];

/// A project: its root folder and its lockfile.
///
/// ```no_run
/// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::lockfile::LockError> {
/// use skillkit::lockfile::{InstallMode, Project};
/// let mut project = Project::open(".")?;
/// project.add(&github, "acme/skills@v1", None).await?;
/// // Later, on another machine, from the lock alone:
/// let mut project = Project::open(".")?;
/// project.install(&github, InstallMode { locked: true, offline: false }).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Project {
    root: PathBuf,
    lock: Lockfile,
    /// The lock as read (to tell whether it would change).
    read: Option<Lockfile>,
}

impl Project {
    /// The project at `root`, with its `skillkit.lock.json` if it has one
    /// (else an empty lock, written by the first change).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let project = skillkit::lockfile::Project::open(dir.path()).unwrap();
    /// assert!(project.lock().skills.is_empty());
    /// ```
    pub fn open(root: impl Into<PathBuf>) -> Result<Project, LockError> {
        let root = root.into();
        let path = root.join(LOCKFILE_NAME);
        let read = match path.exists() {
            true => Some(Lockfile::read(&path)?),
            false => None,
        };
        Ok(Project {
            lock: read.clone().unwrap_or_default(),
            read,
            root,
        })
    }

    /// The lock as it stands.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let project = skillkit::lockfile::Project::open(dir.path()).unwrap();
    /// assert_eq!(project.lock().version, 1);
    /// ```
    pub fn lock(&self) -> &Lockfile {
        &self.lock
    }

    /// The project's root folder.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let project = skillkit::lockfile::Project::open(dir.path()).unwrap();
    /// assert_eq!(project.root(), dir.path());
    /// ```
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where new skills go: `.claude/skills` when the project has that
    /// folder and no `.agents/skills`, else `.agents/skills`.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let project = skillkit::lockfile::Project::open(dir.path()).unwrap();
    /// assert_eq!(project.skill_folder(), ".agents/skills");
    /// std::fs::create_dir_all(dir.path().join(".claude/skills")).unwrap();
    /// assert_eq!(project.skill_folder(), ".claude/skills");
    /// ```
    pub fn skill_folder(&self) -> &'static str {
        let [agents, claude] = SKILL_FOLDERS;
        match !self.root.join(agents).is_dir() && self.root.join(claude).is_dir() {
            true => claude,
            false => agents,
        }
    }

    /// Takes skill `name` out of the project: deletes its folder and its
    /// entry in the lock. The cache keeps its files (another project may
    /// pin them).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut project = skillkit::lockfile::Project::open(dir.path()).unwrap();
    /// assert!(project.remove("nothing").is_err());
    /// ```
    pub fn remove(&mut self, name: &str) -> Result<LockedSkill, LockError> {
        let Some(locked) = self.lock.skills.get(name).cloned() else {
            return Err(LockError::Refused(format!(
                "the lock pins no skill `{name}`"
            )));
        };
        let folder = inside(&self.root, &locked.path)?;
        match std::fs::remove_dir_all(&folder) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(LockError::Io {
                    path: folder.display().to_string(),
                    source,
                });
            }
        }
        self.lock.skills.remove(name);
        self.write()?;
        Ok(locked)
    }

    /// The place of new skill `name` from `source` in `folder` (its path,
    /// relative and resolved), refused when the lock pins that name from
    /// elsewhere, or a folder the lock does not pin is in the way.
    fn place(
        &self,
        name: &str,
        source: &str,
        folder: &str,
    ) -> Result<(String, PathBuf), LockError> {
        let path = format!("{folder}/{name}");
        let locked = self.lock.skills.get(name);
        if let Some(locked) = locked
            && (locked.source != source || locked.path != path)
        {
            return Err(LockError::Mismatch(format!(
                "the lock already has a skill `{name}` (from `{}` in `{}`); \
                 `skillkit remove {name}` first",
                locked.source, locked.path
            )));
        }
        let target = inside(&self.root, &path)?;
        if target.exists() && locked.is_none() {
            return Err(LockError::Mismatch(format!(
                "`{path}` exists and the lock does not pin it; move it away, or choose \
                 another folder with --to"
            )));
        }
        Ok((path, target))
    }

    /// Writes the lock whole.
    fn write(&mut self) -> Result<(), LockError> {
        self.lock.write(&self.root.join(LOCKFILE_NAME))?;
        self.read = Some(self.lock.clone());
        Ok(())
    }
}

/// Whether `found` (the signer of the fetched files) is what the lock
/// pins.
fn check_signer(name: &str, pinned: Option<&str>, found: Option<&str>) -> Result<(), LockError> {
    let pinned = pinned.map(|p| normal_signer(p).unwrap_or_else(|| p.to_owned()));
    match pinned.as_deref() == found || pinned.is_none() {
        true => Ok(()),
        false => Err(LockError::BadSignature(format!(
            "`{name}` {}; nothing was installed",
            describe_change(pinned.as_deref(), found)
        ))),
    }
}

/// How a signer changed, in words.
fn describe_change(pinned: Option<&str>, found: Option<&str>) -> String {
    match (pinned, found) {
        (Some(pinned), Some(found)) => {
            format!("is signed by `{found}`, not by the pinned signer `{pinned}`")
        }
        (Some(pinned), None) => format!("is no longer signed (the lock pins `{pinned}`)"),
        (None, Some(found)) => format!("is now signed by `{found}` (the lock pins no signer)"),
        (None, None) => "is unsigned".into(),
    }
}
