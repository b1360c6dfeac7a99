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

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::providers::github::{Checkout, GitHub, Reference};

use super::paths::{inside, inside_followed};
use super::sources::{
    Servers, api_of, base_source, fetch, from_github, is_mcp, join, mcp_folder, read_small,
    same_server, skills_in,
};
#[cfg(feature = "mcp-client")]
use super::sources::{materialized, mcp_skills, plain_name};
use super::staging::{stage, swap_in};
use super::vercel::{self, VERCEL_LOCK_NAME};
use super::{LOCKFILE_NAME, LockError, LockedSkill, Lockfile, Status, normal_signer};

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

/// How [`Project::install`] may go about it (cargo's `--locked`,
/// `--offline`; both are `--frozen`).
///
/// ```
/// let frozen = skillkit::lockfile::InstallMode { locked: true, offline: true };
/// assert!(frozen.locked);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InstallMode {
    /// Fail rather than change the lockfile.
    pub locked: bool,
    /// No network: the cache only.
    pub offline: bool,
}

/// What [`Project::update`] may accept.
///
/// ```
/// let careful = skillkit::lockfile::UpdateMode::default();
/// assert!(!careful.allow_ref_change && !careful.allow_signer_change);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateMode {
    /// Accept a ref other than the locked one (`owner/repo@v2` over `@v1`).
    pub allow_ref_change: bool,
    /// Accept a signer other than the pinned one (or a skill that stopped
    /// or started being signed).
    pub allow_signer_change: bool,
}

/// What [`Project::add`] did.
///
/// ```
/// let added = skillkit::lockfile::Added::default();
/// assert!(added.skills.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Added {
    /// The skills installed, by name.
    pub skills: Vec<String>,
    /// The commit they come from.
    pub sha: String,
    /// The folder they were installed in, relative to the project.
    pub folder: String,
    /// Folders of the source that were left out, with why.
    pub skipped: Vec<String>,
}

/// What [`Project::install`] did.
///
/// ```
/// let installed = skillkit::lockfile::Installed::default();
/// assert!(installed.installed.is_empty() && installed.kept.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Installed {
    /// Skills written (they were missing or differed from the lock).
    pub installed: Vec<String>,
    /// Skills already exactly as the lock says.
    pub kept: Vec<String>,
    /// Whether the lockfile was written (an entry written by hand was
    /// pinned).
    pub lock_written: bool,
    /// Which lockfile was followed: `skillkit.lock.json` or vercel's
    /// `skills-lock.json`.
    pub lockfile: &'static str,
}

/// One skill [`Project::update`] moved.
///
/// ```
/// let moved = skillkit::lockfile::Updated::default();
/// assert!(moved.name.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Updated {
    /// The skill.
    pub name: String,
    /// The commit it came from.
    pub from: Option<String>,
    /// The commit it comes from now.
    pub to: String,
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

    /// Installs the skills of `source` (`owner/repo[/path][@ref]`) at the
    /// commit its ref points at now into `to` (relative to the project;
    /// default [`skill_folder`](Project::skill_folder)), one folder per
    /// skill, and pins them in the lock. A skill with a `SKILL.sig` must be
    /// signed over exactly its files; its signer is pinned. A folder in
    /// the way that the lock does not pin from the same source is refused.
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::lockfile::LockError> {
    /// let mut project = skillkit::lockfile::Project::open(".")?;
    /// let added = project.add(&github, "acme/skills@v1", None).await?;
    /// println!("{} skills at {}", added.skills.len(), added.sha);
    /// # Ok(()) }
    /// ```
    pub async fn add(
        &mut self,
        github: &GitHub,
        source: &str,
        to: Option<&str>,
    ) -> Result<Added, LockError> {
        self.add_at(github, source, None, to).await
    }

    /// [`add`](Project::add) at exactly `commit` when given (the ref, if
    /// any, is recorded but not asked about): a source pinned by its
    /// publisher, such as a marketplace entry's `sha`.
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::lockfile::LockError> {
    /// let mut project = skillkit::lockfile::Project::open(".")?;
    /// let sha = "0123456789abcdef0123456789abcdef01234567";
    /// project.add_at(&github, "acme/skills@v1", Some(sha), None).await?;
    /// # Ok(()) }
    /// ```
    pub async fn add_at(
        &mut self,
        github: &GitHub,
        source: &str,
        commit: Option<&str>,
        to: Option<&str>,
    ) -> Result<Added, LockError> {
        let reference = Reference::parse(source).map_err(from_github)?;
        let base = base_source(&reference);
        let folder = match to {
            Some(to) => to.trim_end_matches('/').to_owned(),
            None => self.skill_folder().to_owned(),
        };
        inside_followed(&self.root, &folder)?;
        let checkout = github.checkout(source, commit).await.map_err(from_github)?;
        let (found, skipped) = skills_in(&checkout);
        if found.is_empty() {
            return Err(LockError::Source(format!(
                "`{source}` holds no skill folder (a folder with a SKILL.md)"
            )));
        }
        let mut staged = Vec::new();
        for (name, within) in &found {
            let (path, target) = self.place(name, &base, &folder)?;
            staged.push(stage(name, &path, &target, &join(&checkout.dir, within))?);
        }
        swap_in(&staged)?;
        for (one, (_, within)) in staged.iter().zip(&found) {
            let entry = self.lock.record(
                &one.name,
                &base,
                reference.git_ref(),
                Some(&checkout.sha),
                &one.path,
                &one.walked,
            );
            entry.folder = within.clone();
            entry.signer = one.signer.clone();
            entry.api = api_of(github);
        }
        self.write()?;
        Ok(Added {
            skills: staged.iter().map(|s| s.name.clone()).collect(),
            sha: checkout.sha,
            folder,
            skipped,
        })
    }

    /// Adds the skills of plugin `plugin` of a Claude Code marketplace: the
    /// GitHub source `marketplace` holding `.claude-plugin/marketplace.json`
    /// (`owner/repo[@ref]`). An entry whose source is a GitHub repository
    /// pinned by `sha` is added at exactly that commit; a path in the
    /// marketplace's own repository, at the marketplace's commit. The
    /// plugin's skills are those of its folder (`skills/<name>/SKILL.md`).
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::lockfile::LockError> {
    /// let mut project = skillkit::lockfile::Project::open(".")?;
    /// project.add_plugin(&github, "acme/marketplace", "pdf-tools", None).await?;
    /// # Ok(()) }
    /// ```
    pub async fn add_plugin(
        &mut self,
        github: &GitHub,
        marketplace: &str,
        plugin: &str,
        to: Option<&str>,
    ) -> Result<Added, LockError> {
        let checkout = github
            .checkout(marketplace, None)
            .await
            .map_err(from_github)?;
        let file = checkout.dir.join(".claude-plugin/marketplace.json");
        let text = read_small(&file, 1024 * 1024)?;
        let entry =
            super::marketplace::entry(&text, plugin).map_err(|reason| LockError::Invalid {
                path: format!("{marketplace}: .claude-plugin/marketplace.json"),
                reason,
            })?;
        let (source, commit) = entry.source(&checkout.reference, &checkout.sha)?;
        self.add_at(github, &source, commit.as_deref(), to).await
    }

    /// Adds the skills an MCP server serves (each read with its files,
    /// checked against the server's manifest digests), recorded in the lock
    /// as from `source` (`mcp+https://…` for a server at a URL,
    /// `mcp+stdio:NAME` for one started by a command: the lock never holds
    /// a command to run).
    #[cfg(feature = "mcp-client")]
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), skillkit::lockfile::LockError> {
    /// use skillkit::{McpSkills, mcp_client::Endpoint};
    /// let url = "https://skills.example.com/mcp";
    /// let mut project = skillkit::lockfile::Project::open(".")?;
    /// project.add_mcp(&McpSkills::new(Endpoint::url(url)), &format!("mcp+{url}"), None).await?;
    /// # Ok(()) }
    /// ```
    pub async fn add_mcp(
        &mut self,
        server: &crate::McpSkills,
        source: &str,
        to: Option<&str>,
    ) -> Result<Added, LockError> {
        if !is_mcp(source) {
            return Err(LockError::Refused(format!(
                "`{}` does not name an MCP server (`mcp+URL`, `mcp+stdio:NAME`)",
                source.escape_debug()
            )));
        }
        let folder = match to {
            Some(to) => to.trim_end_matches('/').to_owned(),
            None => self.skill_folder().to_owned(),
        };
        inside_followed(&self.root, &folder)?;
        let skills = mcp_skills(server).await?;
        if skills.is_empty() {
            return Err(LockError::Source(format!("`{source}` serves no skill")));
        }
        let mut staged = Vec::new();
        let mut skipped = Vec::new();
        for skill in &skills {
            let name = skill.bare_name().to_owned();
            if !plain_name(&name) {
                skipped.push(format!("{}: not a plain folder name", name.escape_debug()));
                continue;
            }
            let (path, target) = self.place(&name, source, &folder)?;
            let dir = materialized(skill).await?;
            staged.push(stage(&name, &path, &target, &dir)?);
        }
        swap_in(&staged)?;
        for one in &staged {
            let entry = self
                .lock
                .record(&one.name, source, None, None, &one.path, &one.walked);
            entry.signer = one.signer.clone();
        }
        self.write()?;
        Ok(Added {
            skills: staged.iter().map(|s| s.name.clone()).collect(),
            sha: String::new(),
            folder,
            skipped,
        })
    }

    /// Makes the project's skill folders hold exactly what the lock pins:
    /// each locked skill that is missing or differs is fetched at its
    /// locked commit (from the cache; else downloaded, unless offline),
    /// checked against the lock's digest and pinned signer, and swapped in.
    /// Skills the lock does not know are left alone. An entry written by
    /// hand (a source and a ref, no commit) is resolved and pinned, which
    /// changes the lock: refused when `locked`.
    ///
    /// Without a `skillkit.lock.json`, a vercel `skills-lock.json` is
    /// followed as it is: each skill fetched at its ref, its `computedHash`
    /// checked (a mismatch is an error and nothing is written), and that
    /// file never rewritten.
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::lockfile::LockError> {
    /// use skillkit::lockfile::{InstallMode, Project};
    /// let report = Project::open(".")?
    ///     .install(&github, InstallMode { locked: true, offline: true })
    ///     .await?;
    /// println!("{} installed, {} kept", report.installed.len(), report.kept.len());
    /// # Ok(()) }
    /// ```
    pub async fn install(
        &mut self,
        github: &GitHub,
        mode: InstallMode,
    ) -> Result<Installed, LockError> {
        self.install_from(github, &[], mode).await
    }

    /// [`install`](Project::install), with the MCP servers the lock's
    /// skills from MCP servers are fetched from again, by their source as
    /// the lock names it (`mcp+https://…`, `mcp+stdio:NAME`). Install never
    /// starts a server the lock names: an application (or the command line)
    /// gives each one.
    #[cfg(feature = "mcp-client")]
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub, docs: skillkit::McpSkills) -> Result<(), skillkit::lockfile::LockError> {
    /// use skillkit::lockfile::{InstallMode, Project};
    /// let servers = [("mcp+stdio:docs".to_owned(), docs)];
    /// Project::open(".")?.install_with(&github, &servers, InstallMode::default()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn install_with(
        &mut self,
        github: &GitHub,
        servers: &[(String, crate::McpSkills)],
        mode: InstallMode,
    ) -> Result<Installed, LockError> {
        self.install_from(github, servers, mode).await
    }

    async fn install_from(
        &mut self,
        github: &GitHub,
        servers: Servers<'_>,
        mode: InstallMode,
    ) -> Result<Installed, LockError> {
        if self.read.is_none() && self.root.join(VERCEL_LOCK_NAME).is_file() {
            return vercel::install(&self.root, github, mode).await;
        }
        let mut report = Installed {
            lockfile: LOCKFILE_NAME,
            ..Installed::default()
        };
        let mut staged = Vec::new();
        let mut pins = Vec::new();
        for (name, locked) in &self.lock.skills {
            let from_mcp = is_mcp(&locked.source);
            let hand_written = locked.digest.is_empty() || (locked.commit.is_none() && !from_mcp);
            if !hand_written && super::check(locked, &self.root, None) == Status::Ok {
                report.kept.push(name.clone());
                continue;
            }
            if hand_written && mode.locked {
                return Err(LockError::WouldChange(format!(
                    "`{name}` is not pinned to a commit and files yet, so installing would \
                     change {LOCKFILE_NAME}; run `skillkit install` without --locked/--frozen \
                     and commit the lock"
                )));
            }
            let target = inside(&self.root, &locked.path)?;
            let (one, at) = if from_mcp {
                if mode.offline {
                    return Err(LockError::Source(format!(
                        "`{name}` comes from the MCP server `{}`, and --offline forbids \
                         asking it",
                        locked.source
                    )));
                }
                let (dir, _held) = mcp_folder(servers, name, locked).await?;
                (stage(name, &locked.path, &target, &dir)?, None)
            } else {
                if !mode.offline {
                    same_server(name, locked, github)?;
                }
                let checkout = fetch(github, locked, mode.offline).await?;
                let from = join(&checkout.dir, &locked.folder);
                (
                    stage(name, &locked.path, &target, &from)?,
                    Some(checkout.sha),
                )
            };
            if !hand_written && one.digest() != locked.digest {
                return Err(LockError::Mismatch(format!(
                    "`{name}` from `{}`{} is not what the lock pins (its files digest to {}, \
                     the lock says {}); nothing was installed",
                    locked.source,
                    at.as_deref()
                        .map(|sha| format!(" at commit {sha}"))
                        .unwrap_or_default(),
                    one.digest(),
                    locked.digest
                )));
            }
            check_signer(name, locked.signer.as_deref(), one.signer.as_deref())?;
            if hand_written {
                pins.push((staged.len(), at));
            }
            report.installed.push(name.clone());
            staged.push(one);
        }
        swap_in(&staged)?;
        for (n, sha) in pins {
            let one = &staged[n];
            let locked = self.lock.skills[&one.name].clone();
            let entry = self.lock.record(
                &one.name,
                &locked.source,
                locked.requested.as_deref(),
                sha.as_deref(),
                &one.path,
                &one.walked,
            );
            if entry.signer.is_none() {
                entry.signer = one.signer.clone();
            }
            report.lock_written = true;
        }
        if report.lock_written {
            self.write()?;
        }
        Ok(report)
    }

    /// Moves the skills of `source` (every source when `None`) to the
    /// commit their ref points at now, re-checked and re-pinned. `source`
    /// with another ref than the locked one (`acme/skills@v2` over `@v1`)
    /// needs `allow_ref_change`; a skill signed by another key than the
    /// pinned one (or newly signed, or no longer signed) needs
    /// `allow_signer_change`. Either refusal changes nothing.
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::lockfile::LockError> {
    /// use skillkit::lockfile::{Project, UpdateMode};
    /// for moved in Project::open(".")?.update(&github, None, UpdateMode::default()).await? {
    ///     println!("{} now at {}", moved.name, moved.to);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn update(
        &mut self,
        github: &GitHub,
        source: Option<&str>,
        mode: UpdateMode,
    ) -> Result<Vec<Updated>, LockError> {
        let asked = source
            .map(Reference::parse)
            .transpose()
            .map_err(from_github)?;
        let chosen: Vec<(String, LockedSkill)> = self
            .lock
            .skills
            .iter()
            .filter(|(_, locked)| {
                asked
                    .as_ref()
                    .is_none_or(|r| base_source(r) == locked.source)
            })
            .map(|(name, locked)| (name.clone(), locked.clone()))
            .collect();
        if chosen.is_empty() {
            return Err(LockError::Source(match source {
                Some(source) => format!("the lock pins nothing from `{source}`"),
                None => "the lock pins no skill".into(),
            }));
        }
        let mut staged = Vec::new();
        let mut moved = Vec::new();
        let mut trees: BTreeMap<String, Checkout> = BTreeMap::new();
        for (name, locked) in &chosen {
            if is_mcp(&locked.source) {
                // An MCP server has no refs: `install` fetches it again,
                // and a changed skill is `add`ed again.
                continue;
            }
            same_server(name, locked, github)?;
            let requested = match asked.as_ref().and_then(Reference::git_ref) {
                Some(new) if Some(new) != locked.requested.as_deref() => {
                    if !mode.allow_ref_change {
                        return Err(LockError::Refused(format!(
                            "`{name}` is locked at ref `{}`, not `{new}`; pass \
                             --allow-ref-change to move it",
                            locked
                                .requested
                                .as_deref()
                                .unwrap_or("(the default branch)")
                        )));
                    }
                    Some(new.to_owned())
                }
                _ => locked.requested.clone(),
            };
            let wanted = match &requested {
                Some(r) => format!("{}@{r}", locked.source),
                None => locked.source.clone(),
            };
            let checkout = match trees.get(&wanted) {
                Some(checkout) => checkout.clone(),
                None => {
                    let checkout = github.checkout(&wanted, None).await.map_err(from_github)?;
                    trees.insert(wanted.clone(), checkout.clone());
                    checkout
                }
            };
            let within = join(&checkout.dir, &locked.folder);
            if !within.join("SKILL.md").is_file() {
                return Err(LockError::Source(format!(
                    "`{name}` is no longer in `{wanted}` at commit {} (no `{}/SKILL.md`)",
                    checkout.sha, locked.folder
                )));
            }
            if checkout.sha.as_str() == locked.commit.as_deref().unwrap_or_default()
                && requested == locked.requested
                && super::check(locked, &self.root, None) == Status::Ok
            {
                continue;
            }
            let target = inside(&self.root, &locked.path)?;
            let one = stage(name, &locked.path, &target, &within)?;
            let pinned = locked.signer.as_deref().and_then(normal_signer);
            if pinned != one.signer && !mode.allow_signer_change {
                return Err(LockError::BadSignature(format!(
                    "`{name}` {}; pass --allow-signer-change to accept it",
                    describe_change(pinned.as_deref(), one.signer.as_deref())
                )));
            }
            moved.push((
                Updated {
                    name: name.clone(),
                    from: locked.commit.clone(),
                    to: checkout.sha.clone(),
                },
                requested,
            ));
            staged.push(one);
        }
        swap_in(&staged)?;
        let mut report = Vec::new();
        for ((updated, requested), one) in moved.into_iter().zip(&staged) {
            let source = self.lock.skills[&updated.name].source.clone();
            let entry = self.lock.record(
                &updated.name,
                &source,
                requested.as_deref(),
                Some(&updated.to),
                &one.path,
                &one.walked,
            );
            entry.signer = one.signer.clone();
            report.push(updated);
        }
        if !report.is_empty() {
            self.write()?;
        }
        Ok(report)
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
