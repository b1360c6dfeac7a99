//! [`Locked`]: a provider serving exactly the skills a lockfile pins, from
//! the GitHub cache's checkouts of the locked commits, each skill served
//! only while its files digest to what the lock says. Nothing else is
//! served: no other source, no other commit, no other file.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::kit::{Kit, Origin, Skills};
use crate::provider::{KitProvider, ProviderError};
use crate::providers::Local;
use crate::providers::github::GitHub;

use super::{Lockfile, sources::join, walk};

/// The skills of a lockfile, served from the GitHub cache (one kit per
/// source, named after it), each checked against the lock's aggregate
/// digest: a skill whose files differ, or whose commit is not in the cache
/// (`skillkit install`, or [`GitHub::checkout`], puts it there), is not
/// served, with a warning.
///
/// ```no_run
/// # async fn demo(github: skillkit::GitHub) -> Result<(), Box<dyn std::error::Error>> {
/// use skillkit::lockfile::{Locked, Lockfile};
/// let lock = Lockfile::read("skillkit.lock.json".as_ref())?;
/// let catalog = skillkit::Catalog::builder().provider(Locked::new(github, lock)).build();
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Locked {
    github: GitHub,
    lock: Arc<Lockfile>,
    /// Folders already checked: (folder, digest) → whether it matched.
    /// The cache's checkouts are written once, so one check a process.
    checked: Arc<Mutex<HashMap<(PathBuf, String), bool>>>,
}

impl std::fmt::Debug for Locked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Locked")
            .field("skills", &self.lock.skills.len())
            .field("cache_dir", &self.github.cache_dir())
            .finish_non_exhaustive()
    }
}

impl Locked {
    /// Serves the skills `lock` pins, from `github`'s cache.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let github = skillkit::GitHub::builder().allow("*").cache_dir(dir.path()).build().unwrap();
    /// let locked = skillkit::lockfile::Locked::new(github, skillkit::lockfile::Lockfile::new());
    /// # drop(locked);
    /// ```
    pub fn new(github: GitHub, lock: Lockfile) -> Locked {
        Locked {
            github,
            lock: Arc::new(lock),
            checked: Arc::default(),
        }
    }

    /// Whether the files at `folder` digest to `digest` (checked once).
    fn matches(&self, folder: &Path, digest: &str) -> bool {
        let key = (folder.to_path_buf(), digest.to_owned());
        if let Some(known) = self
            .checked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return *known;
        }
        let walked = walk(folder);
        let ok = walked.odd.is_empty() && walked.digest() == digest;
        self.checked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, ok);
        ok
    }
}

#[async_trait::async_trait]
impl KitProvider for Locked {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("locked")
    }

    /// One kit per locked source, from the cache alone (no network).
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        // (source, commit) → (checkout folder, [(skill folder, name, digest)]).
        let mut wanted: BTreeMap<(String, String), Vec<(String, String, String)>> = BTreeMap::new();
        for (name, locked) in &self.lock.skills {
            let Some(commit) = &locked.commit else {
                tracing::warn!(provider = "locked", skill = %name, "not served: the lock pins no commit; run `skillkit install`");
                continue;
            };
            wanted
                .entry((locked.source.clone(), commit.clone()))
                .or_default()
                .push((locked.folder.clone(), name.clone(), locked.digest.clone()));
        }
        let mut trees = Vec::new();
        for ((source, commit), skills) in wanted {
            match self.github.cached_checkout(&source, &commit).await {
                Ok(Some(checkout)) => trees.push((source, checkout.dir, skills)),
                Ok(None) => tracing::warn!(
                    provider = "locked",
                    source = %source,
                    commit = %commit,
                    "not served: that commit is not in the cache; run `skillkit install`"
                ),
                Err(e) => tracing::warn!(provider = "locked", source = %source, "not served: {e}"),
            }
        }
        let this = self.clone();
        let load = move || {
            let mut kits = Vec::new();
            for (source, dir, skills) in trees {
                let served: Vec<PathBuf> = skills
                    .iter()
                    .filter_map(|(folder, name, digest)| {
                        let at = join(&dir, folder);
                        match this.matches(&at, digest) {
                            true => Some(at),
                            false => {
                                tracing::warn!(
                                    provider = "locked",
                                    skill = %name,
                                    "not served: its files in the cache are not what the lock pins"
                                );
                                None
                            }
                        }
                    })
                    .collect();
                let Ok(mut loaded) = Local::new(&dir).named(source.clone()).watch(false).load()
                else {
                    continue;
                };
                let Some(mut kit) = loaded.pop() else {
                    continue;
                };
                let kept: Skills = kit
                    .skills
                    .iter()
                    .filter(|skill| skill.dir().is_some_and(|d| served.iter().any(|s| s == d)))
                    .cloned()
                    .collect();
                kit.skills = kept;
                kit.agent = None;
                kit.agents.clear();
                kit.origin = Origin::GitHub;
                kit.metadata.insert("provider".into(), "locked".into());
                kit.metadata.insert("source".into(), source.into());
                kits.push(kit);
            }
            kits
        };
        tokio::task::spawn_blocking(load)
            .await
            .map_err(|e| ProviderError::other(format!("loading locked kits failed: {e}")))
    }
}
