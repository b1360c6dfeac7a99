//! Adding a source's skills to a project: from a GitHub repository (at its
//! ref's commit, or one its publisher pinned), a plugin of a Claude Code
//! marketplace, or an MCP server.

use crate::providers::github::{GitHub, Reference};

use super::Project;
use crate::lockfile::LockError;
use crate::lockfile::paths::inside_followed;
use crate::lockfile::sources::{api_of, base_source, from_github, join, read_small, skills_in};
#[cfg(feature = "mcp-client")]
use crate::lockfile::sources::{is_mcp, materialized, mcp_skills, plain_name};
use crate::lockfile::staging::{stage, swap_in};

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

impl Project {
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
        let entry = crate::lockfile::marketplace::entry(&text, plugin).map_err(|reason| {
            LockError::Invalid {
                path: format!("{marketplace}: .claude-plugin/marketplace.json"),
                reason,
            }
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
}
