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

use crate::providers::github::{Checkout, GitHub, GitHubError, Reference};

use super::signature::{self, SIGNATURE_FILE};
use super::vercel::{self, VERCEL_LOCK_NAME};
use super::{LOCKFILE_NAME, LockError, LockedSkill, Lockfile, Status, inside, normal_signer, walk};

/// The folders a project keeps its skills in, where agents look for them:
/// `.agents/skills` (Codex, SkillKit, the shared location) and
/// `.claude/skills` (Claude Code).
pub const SKILL_FOLDERS: [&str; 2] = [".agents/skills", ".claude/skills"];

/// How deep in a source a skill's folder is looked for.
const MAX_DEPTH: usize = 6;

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

/// A skill copied beside its place, checked, waiting to be swapped in.
struct Staged {
    name: String,
    /// Its place, relative to the project.
    path: String,
    target: PathBuf,
    /// Holds the copy (`new`) and, once swapped, the old folder (`old`).
    dir: tempfile::TempDir,
    /// The signer its `SKILL.sig` names, if signed.
    signer: Option<String>,
    /// The aggregate digest of the copy.
    digest: String,
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
        inside(&self.root, &folder)?;
        let checkout = github.checkout(source, commit).await.map_err(from_github)?;
        let (found, skipped) = skills_in(&checkout);
        if found.is_empty() {
            return Err(LockError::Source(format!(
                "`{source}` holds no skill folder (a folder with a SKILL.md)"
            )));
        }
        let mut staged = Vec::new();
        for (name, within) in &found {
            let path = format!("{folder}/{name}");
            if let Some(locked) = self.lock.skills.get(name)
                && (locked.source != base || locked.path != path)
            {
                return Err(LockError::Mismatch(format!(
                    "the lock already has a skill `{name}` (from `{}` in `{}`); \
                     `skillkit remove {name}` first",
                    locked.source, locked.path
                )));
            }
            let target = inside(&self.root, &path)?;
            if target.exists() && !self.lock.skills.contains_key(name) {
                return Err(LockError::Mismatch(format!(
                    "`{path}` exists and the lock does not pin it; move it away, or choose \
                     another folder with --to"
                )));
            }
            staged.push(stage(name, &path, &target, &join(&checkout.dir, within))?);
        }
        let names: Vec<String> = staged.iter().map(|s| s.name.clone()).collect();
        let signers: Vec<Option<String>> = staged.iter().map(|s| s.signer.clone()).collect();
        swap_in(staged)?;
        for ((name, within), signer) in found.iter().zip(signers) {
            let path = format!("{folder}/{name}");
            let entry = self.lock.pin(
                name,
                &base,
                reference.git_ref(),
                Some(&checkout.sha),
                &self.root,
                &path,
            )?;
            entry.folder = within.clone();
            entry.signer = signer;
            entry.api = api_of(github);
        }
        self.write()?;
        Ok(Added {
            skills: names,
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
        let text = read_small(&file)?;
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
    /// use skillkit::{Mcp, mcp_client::Endpoint};
    /// let url = "https://skills.example.com/mcp";
    /// let mut project = skillkit::lockfile::Project::open(".")?;
    /// project.add_mcp(&Mcp::new(Endpoint::url(url)), &format!("mcp+{url}"), None).await?;
    /// # Ok(()) }
    /// ```
    pub async fn add_mcp(
        &mut self,
        server: &crate::Mcp,
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
        inside(&self.root, &folder)?;
        let skills = mcp_skills(server).await?;
        if skills.is_empty() {
            return Err(LockError::Source(format!("`{source}` serves no skill")));
        }
        let mut staged = Vec::new();
        let mut skipped = Vec::new();
        let mut names = Vec::new();
        for skill in &skills {
            let name = skill.bare_name().to_owned();
            if !plain_name(&name) {
                skipped.push(format!("{}: not a plain folder name", name.escape_debug()));
                continue;
            }
            let path = format!("{folder}/{name}");
            if let Some(locked) = self.lock.skills.get(&name)
                && (locked.source != source || locked.path != path)
            {
                return Err(LockError::Mismatch(format!(
                    "the lock already has a skill `{name}` (from `{}` in `{}`); \
                     `skillkit remove {name}` first",
                    locked.source, locked.path
                )));
            }
            let target = inside(&self.root, &path)?;
            if target.exists() && !self.lock.skills.contains_key(&name) {
                return Err(LockError::Mismatch(format!(
                    "`{path}` exists and the lock does not pin it; move it away, or choose \
                     another folder with --to"
                )));
            }
            let dir = materialized(skill).await?;
            staged.push(stage(&name, &path, &target, &dir)?);
            names.push(name);
        }
        let signers: Vec<Option<String>> = staged.iter().map(|s| s.signer.clone()).collect();
        swap_in(staged)?;
        for (name, signer) in names.iter().zip(signers) {
            let path = format!("{folder}/{name}");
            let entry = self.lock.pin(name, source, None, None, &self.root, &path)?;
            entry.signer = signer;
        }
        self.write()?;
        Ok(Added {
            skills: names,
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
    /// # async fn demo(github: skillkit::GitHub, docs: skillkit::Mcp) -> Result<(), skillkit::lockfile::LockError> {
    /// use skillkit::lockfile::{InstallMode, Project};
    /// let servers = [("mcp+stdio:docs".to_owned(), docs)];
    /// Project::open(".")?.install_with(&github, &servers, InstallMode::default()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn install_with(
        &mut self,
        github: &GitHub,
        servers: &[(String, crate::Mcp)],
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
            return self.install_vercel(github, mode).await;
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
            if !hand_written && one.digest != locked.digest {
                return Err(LockError::Mismatch(format!(
                    "`{name}` from `{}`{} is not what the lock pins (its files digest to {}, \
                     the lock says {}); nothing was installed",
                    locked.source,
                    at.as_deref()
                        .map(|sha| format!(" at commit {sha}"))
                        .unwrap_or_default(),
                    one.digest,
                    locked.digest
                )));
            }
            check_signer(name, locked.signer.as_deref(), one.signer.as_deref())?;
            if hand_written {
                pins.push((name.clone(), at, one.signer.clone()));
            }
            report.installed.push(name.clone());
            staged.push(one);
        }
        swap_in(staged)?;
        for (name, sha, signer) in pins {
            let locked = self.lock.skills[&name].clone();
            let entry = self.lock.pin(
                &name,
                &locked.source,
                locked.requested.as_deref(),
                sha.as_deref(),
                &self.root,
                &locked.path,
            )?;
            if entry.signer.is_none() {
                entry.signer = signer;
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
                one.signer.clone(),
            ));
            staged.push(one);
        }
        swap_in(staged)?;
        let mut report = Vec::new();
        for (updated, requested, signer) in moved {
            let locked = self.lock.skills[&updated.name].clone();
            let entry = self.lock.pin(
                &updated.name,
                &locked.source,
                requested.as_deref(),
                Some(&updated.to),
                &self.root,
                &locked.path,
            )?;
            entry.signer = signer;
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

    /// Writes the lock whole.
    fn write(&mut self) -> Result<(), LockError> {
        self.lock.write(&self.root.join(LOCKFILE_NAME))?;
        self.read = Some(self.lock.clone());
        Ok(())
    }

    /// [`install`](Project::install) from vercel's `skills-lock.json`.
    async fn install_vercel(
        &mut self,
        github: &GitHub,
        mode: InstallMode,
    ) -> Result<Installed, LockError> {
        let theirs = vercel::read_lock(&self.root.join(VERCEL_LOCK_NAME))?;
        let mut report = Installed {
            lockfile: VERCEL_LOCK_NAME,
            ..Installed::default()
        };
        let [folder, _] = SKILL_FOLDERS;
        let mut staged = Vec::new();
        for (name, entry) in &theirs.skills {
            let path = format!("{folder}/{name}");
            let target = inside(&self.root, &path)?;
            if target.is_dir() && vercel::vercel_hash(&target)? == entry.computed_hash {
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
            let hash = vercel::vercel_hash(&from)?;
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
        swap_in(staged)?;
        Ok(report)
    }
}

/// The MCP servers an install may ask, by the source the lock names.
#[cfg(feature = "mcp-client")]
type Servers<'a> = &'a [(String, crate::Mcp)];
#[cfg(not(feature = "mcp-client"))]
type Servers<'a> = &'a [(String, ())];

/// Whether a lock's source is an MCP server.
fn is_mcp(source: &str) -> bool {
    source.starts_with("mcp+")
}

/// The skills of an MCP server.
#[cfg(feature = "mcp-client")]
async fn mcp_skills(server: &crate::Mcp) -> Result<Vec<std::sync::Arc<crate::Skill>>, LockError> {
    use crate::provider::KitProvider as _;
    let kits = server
        .list_kits()
        .await
        .map_err(|e| LockError::Source(format!("the MCP server: {e}")))?;
    Ok(kits
        .iter()
        .flat_map(|kit| kit.skills.iter().cloned())
        .collect())
}

/// The folder an MCP skill's files were written to, read and checked.
#[cfg(feature = "mcp-client")]
async fn materialized(skill: &crate::Skill) -> Result<PathBuf, LockError> {
    skill.body.load().await.map_err(|e| {
        LockError::Source(format!(
            "`{}` cannot be read from its server: {e}",
            skill.name
        ))
    })?;
    skill
        .dir()
        .map(Path::to_path_buf)
        .ok_or_else(|| LockError::Source(format!("`{}`: its server gave no files", skill.name)))
}

/// The folder of locked skill `name` fetched again from its MCP server
/// (one of `servers`), and what keeps it alive.
#[cfg(feature = "mcp-client")]
async fn mcp_folder(
    servers: Servers<'_>,
    name: &str,
    locked: &LockedSkill,
) -> Result<(PathBuf, std::sync::Arc<crate::Skill>), LockError> {
    let Some((_, server)) = servers.iter().find(|(source, _)| *source == locked.source) else {
        return Err(no_server(name, locked));
    };
    let skills = mcp_skills(server).await?;
    let skill = skills
        .into_iter()
        .find(|s| s.bare_name() == name)
        .ok_or_else(|| {
            LockError::Source(format!(
                "`{name}` is no longer served by `{}`",
                locked.source
            ))
        })?;
    let dir = materialized(&skill).await?;
    Ok((dir, skill))
}

#[cfg(not(feature = "mcp-client"))]
async fn mcp_folder(
    _: Servers<'_>,
    name: &str,
    locked: &LockedSkill,
) -> Result<(PathBuf, ()), LockError> {
    Err(no_server(name, locked))
}

/// Why an MCP skill cannot be fetched: no server given for it.
fn no_server(name: &str, locked: &LockedSkill) -> LockError {
    LockError::Source(format!(
        "`{name}` comes from the MCP server `{}`; give it (--mcp-url URL, or --mcp 'COMMAND' \
         for a server on stdio: install never starts a command the lock names)",
        locked.source
    ))
}

/// A small text file (a marketplace), read as skill files are.
fn read_small(path: &Path) -> Result<String, LockError> {
    use std::io::Read as _;
    let io_error = |source: io::Error| LockError::Io {
        path: path.display().to_string(),
        source,
    };
    let (file, _) = skillkit_parser::open_file(path).map_err(io_error)?;
    let mut text = String::new();
    file.take(1024 * 1024)
        .read_to_string(&mut text)
        .map_err(io_error)?;
    Ok(text)
}

/// The API root a lock records for `github`: none for github.com.
fn api_of(github: &GitHub) -> Option<String> {
    let api = github.base_url().trim_end_matches('/');
    (api != "https://api.github.com").then(|| api.to_owned())
}

/// Refuses to fetch `locked` from another server than the one it was
/// added from (a repository of the same name elsewhere is another one).
fn same_server(name: &str, locked: &LockedSkill, github: &GitHub) -> Result<(), LockError> {
    let here = api_of(github);
    match locked.api == here {
        true => Ok(()),
        false => Err(LockError::Source(format!(
            "`{name}` comes from the GitHub API at {}, and this run uses {}; give that server \
             with --github-url (or GITHUB_API_URL)",
            locked.api.as_deref().unwrap_or("https://api.github.com"),
            github.base_url()
        ))),
    }
}

/// `owner/repo[/path]`: a reference without its ref, as the lock keeps it.
fn base_source(reference: &Reference) -> String {
    match reference.path() {
        Some(path) => format!("{}/{path}", reference.repository()),
        None => reference.repository(),
    }
}

/// The cached or downloaded files of `locked` at its commit (or, for an
/// entry written by hand, at its ref's commit now).
async fn fetch(
    github: &GitHub,
    locked: &LockedSkill,
    offline: bool,
) -> Result<Checkout, LockError> {
    match (&locked.commit, offline) {
        (Some(sha), true) => github
            .cached_checkout(&locked.source, sha)
            .await
            .map_err(from_github)?
            .ok_or_else(|| {
                LockError::Source(format!(
                    "`{}` at commit {sha} is not in the cache, and --offline forbids \
                     downloading it; run `skillkit install` online once",
                    locked.source
                ))
            }),
        (None, true) => Err(LockError::Source(format!(
            "`{}` is not pinned to a commit, and --offline forbids asking GitHub",
            locked.source
        ))),
        (commit, false) => {
            let source = match (&locked.requested, commit) {
                (Some(r), None) => format!("{}@{r}", locked.source),
                _ => locked.source.clone(),
            };
            github
                .checkout(&source, commit.as_deref())
                .await
                .map_err(from_github)
        }
    }
}

/// The skill folders of a checkout: (name, folder within it). A folder
/// with a `SKILL.md` is a skill (its sub-folders are its files); names
/// that are not a plain folder name, and a second skill of one name, are
/// left out, with why.
fn skills_in(checkout: &Checkout) -> (Vec<(String, String)>, Vec<String>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    if checkout.dir.join("SKILL.md").is_file() {
        let name = checkout
            .reference
            .path()
            .and_then(|p| p.rsplit('/').next())
            .unwrap_or(checkout.reference.repo())
            .to_owned();
        return (vec![(name, String::new())], skipped);
    }
    let mut stack = vec![(checkout.dir.clone(), String::new(), 0)];
    while let Some((dir, within, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if !entry.file_type().is_ok_and(|t| t.is_dir())
                || name.starts_with('.')
                || name == "node_modules"
            {
                continue;
            }
            let path = match within.is_empty() {
                true => name.clone(),
                false => format!("{within}/{name}"),
            };
            if entry.path().join("SKILL.md").is_file() {
                if !plain_name(&name) {
                    skipped.push(format!("{}: not a plain folder name", path.escape_debug()));
                } else if found.iter().any(|(n, _)| *n == name) {
                    skipped.push(format!("{path}: a second skill named `{name}`"));
                } else {
                    found.push((name, path));
                }
            } else if depth < MAX_DEPTH {
                stack.push((entry.path(), path, depth + 1));
            }
        }
    }
    found.sort();
    (found, skipped)
}

/// The folder within a checkout of the skill named `name` (its folder's
/// name, or its `SKILL.md`'s `name:`).
fn find_named(checkout: &Checkout, name: &str) -> Result<String, LockError> {
    let (found, _) = skills_in(checkout);
    found
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, within)| within)
        .ok_or_else(|| {
            LockError::Source(format!(
                "`{}` at commit {} has no skill `{name}`",
                checkout.reference, checkout.sha
            ))
        })
}

/// vercel's `skillPath` (`skills/x/SKILL.md`) as the skill's folder.
fn skill_folder_of(skill_path: &str) -> String {
    let folder = skill_path
        .strip_suffix("SKILL.md")
        .unwrap_or(skill_path)
        .trim_end_matches('/');
    folder.to_owned()
}

/// A name that is one plain folder name: ASCII letters, digits, `-`,
/// `_`, `.`, not starting with a dot, at most 64 bytes.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `within` (relative, `/` between parts, from the lock) inside `dir`.
pub(super) fn join(dir: &Path, within: &str) -> PathBuf {
    within
        .split('/')
        .filter(|part| !part.is_empty() && *part != "." && *part != "..")
        .fold(dir.to_path_buf(), |path, part| path.join(part))
}

/// Copies the skill at `from` into a staging folder beside `target`,
/// digests the copy and checks its signature.
fn stage(name: &str, path: &str, target: &Path, from: &Path) -> Result<Staged, LockError> {
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
    if let Some(odd) = walked.odd.first() {
        return Err(LockError::Refused(format!(
            "cannot install `{name}`: `{odd}` is not a regular file"
        )));
    }
    let signer = match walked.files.contains_key(SIGNATURE_FILE) {
        true => Some(
            signature::check(&copy, &walked.files)
                .map_err(|reason| LockError::BadSignature(format!("`{name}`: {reason}")))?,
        ),
        false => None,
    };
    let framed: Vec<(&str, u64, [u8; 32])> = walked
        .files
        .iter()
        .map(|(p, r)| (p.as_str(), r.size, r.sha256))
        .collect();
    Ok(Staged {
        name: name.to_owned(),
        path: path.to_owned(),
        target: target.to_path_buf(),
        dir,
        signer,
        digest: super::digest::aggregate(&framed),
    })
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

/// Swaps every staged skill into its place; if one fails, those already
/// swapped are put back.
fn swap_in(staged: Vec<Staged>) -> Result<(), LockError> {
    let mut done: Vec<&Staged> = Vec::new();
    for one in &staged {
        let old = one.dir.path().join("old");
        let result = (|| {
            if one.target.exists() {
                std::fs::rename(&one.target, &old)?;
            }
            std::fs::rename(one.dir.path().join("new"), &one.target)
        })();
        if let Err(source) = result {
            for back in done.iter().rev().copied().chain(std::iter::once(one)) {
                let old = back.dir.path().join("old");
                if old.exists() {
                    let _ = std::fs::rename(&back.target, back.dir.path().join("new"));
                    let _ = std::fs::rename(&old, &back.target);
                }
            }
            return Err(LockError::Io {
                path: one.path.clone(),
                source,
            });
        }
        done.push(one);
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

/// A GitHub error as a lock error.
fn from_github(error: GitHubError) -> LockError {
    LockError::Source(error.to_string())
}
