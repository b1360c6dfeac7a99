//! Installing exactly what a project's lock pins, from the cache or
//! downloaded, every skill checked against its digest and pinned signer.

use crate::providers::github::GitHub;

use super::{Project, check_signer};
use crate::lockfile::paths::inside;
use crate::lockfile::sources::{Servers, fetch, is_mcp, join, mcp_folder, same_server};
use crate::lockfile::staging::{stage, swap_in};
use crate::lockfile::vercel::{self, VERCEL_LOCK_NAME};
use crate::lockfile::{LOCKFILE_NAME, LockError, Status};

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

impl Project {
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
            if !hand_written && crate::lockfile::check(locked, &self.root, None) == Status::Ok {
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
}
