//! Moving a project's locked skills to the commit their ref points at
//! now, with a changed ref or signer refused unless allowed.

use std::collections::BTreeMap;

use crate::providers::github::{Checkout, GitHub, Reference};

use super::{Project, describe_change};
use crate::lockfile::paths::inside;
use crate::lockfile::sources::{base_source, from_github, is_mcp, join, same_server};
use crate::lockfile::staging::{stage, swap_in};
use crate::lockfile::{LockError, LockedSkill, Status, normal_signer};

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
                && crate::lockfile::check(locked, &self.root, None) == Status::Ok
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
}
