//! [`GitHub`]: skill repositories imported from GitHub at run time.
//!
//! A repository (or a folder of it) is downloaded as a tarball of one commit,
//! unpacked safely into a cache and served with the [`Local`] rules. Cached
//! kits are served without any network request, across restarts. The
//! provider also serves the built-in kit `github` (`github:import`,
//! `github:list`, `github:remove`, `github:refresh`), which it executes
//! itself, so an agent can import a repository mid-conversation and use its
//! skills on the next turn.
//!
//! Modules: [`Reference`] (what to import), `allow` (`allowed_sources`),
//! `client` (the REST API), `download` + `extract` (streaming, safe
//! unpacking), `cache` (atomic on-disk cache) and `lock` (its locks between
//! processes), `builtins` (the `github` kit).

mod allow;
mod builder;
mod builtins;
mod cache;
mod checkout;
mod client;
mod download;
mod error;
mod extract;
mod install;
mod reference;
mod token;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once, PoisonError, Weak};
use std::time::SystemTime;

use crate::kit::Kit;
use crate::provider::{KitProvider, ProviderError};
use crate::providers::Local;
use crate::skill::{Metadata, Skill};
use crate::tool::Tool;

pub use builder::GitHubBuilder;
pub use checkout::Checkout;
pub use download::Progress;
pub use error::{GitHubError, Limit};
pub use extract::Limits;
pub use reference::Reference;
pub use token::ApiToken;

use allow::AllowList;
use cache::{Cache, Stored};
use client::Client;
use download::ProgressFn;

/// Kits imported from GitHub repositories, plus the built-in `github` kit.
///
/// A cheap, cloneable handle: clones share the cache, the HTTP client and the
/// locks, so an agent and a catalog can hold the same provider.
///
/// ```no_run
/// # async fn demo() -> Result<(), skillkit::providers::github::GitHubError> {
/// use skillkit::GitHub;
/// use skillkit::providers::github::ApiToken;
///
/// let github = GitHub::builder()
///     .allow("obra/*")
///     .allow("anthropics/skills")
///     .api_token(ApiToken::from_env("GITHUB_TOKEN"))
///     .build()?;
/// let done = github.import("obra/superpowers").await?;
/// println!("{} skills from {} at {}", done.skills.len(), done.kit, done.sha);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct GitHub {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    allow: AllowList,
    cache: Cache,
    limits: Limits,
    progress: Option<ProgressFn>,
    base_url: String,
    /// One lock per source being imported, refreshed or removed.
    source_locks: Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>,
    /// Held while trees and source files are put in place or collected
    /// (the cache's own lock orders processes; this one spares the blocking
    /// threads of one process from waiting on it).
    commit: tokio::sync::Mutex<()>,
    /// Run once per provider: what killed processes left in the cache is
    /// deleted at the first listing.
    tidied: Once,
    /// The [`Local`] loader of each imported kit, so unchanged files are not
    /// parsed again.
    locals: Mutex<HashMap<(PathBuf, String), Local>>,
    builtins: Kit,
}

impl std::fmt::Debug for GitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHub")
            .field("base_url", &self.inner.base_url)
            .field("allowed_sources", &self.inner.allow.patterns())
            .field("cache_dir", &self.inner.cache.root())
            .field("limits", &self.inner.limits)
            .field("api_token", &self.inner.client.token())
            .finish_non_exhaustive()
    }
}

/// What an import or refresh did.
///
/// ```
/// let done = skillkit::providers::github::Imported::default();
/// assert!(done.skills.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Imported {
    /// The kit's name: the source, `owner/repo[/path][@ref]`.
    pub kit: String,
    /// The commit the kit now comes from.
    pub sha: String,
    /// For a refresh, the commit it came from before.
    pub previous_sha: Option<String>,
    /// Whether a tarball was downloaded (`false` when the cache already held
    /// that commit).
    pub downloaded: bool,
    /// The full names of the kit's skills.
    pub skills: Vec<String>,
    /// Archive entries left out (symlinks, devices, unsafe paths), with why.
    pub skipped: Vec<String>,
}

/// One imported source, as the cache holds it.
///
/// ```
/// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::providers::github::GitHubError> {
/// for source in github.imported().await? {
///     println!("{} at {}", source.reference, source.sha);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportedSource {
    /// The source; its text is the kit's name.
    pub reference: Reference,
    /// The commit it was imported at.
    pub sha: String,
    /// When it was imported or last updated.
    pub imported_at: SystemTime,
    /// The kit's directory in the cache.
    pub dir: PathBuf,
}

impl GitHub {
    /// A builder. Nothing may be imported until `allowed_sources` allows it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let github = skillkit::GitHub::builder()
    ///     .allow("obra/*")
    ///     .cache_dir(dir.path())
    ///     .build()?;
    /// assert_eq!(github.allowed_sources(), ["obra/*"]);
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn builder() -> GitHubBuilder {
        GitHubBuilder::default()
    }

    /// The cache directory.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let github = skillkit::GitHub::builder().cache_dir(dir.path()).build()?;
    /// assert_eq!(github.cache_dir(), dir.path());
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn cache_dir(&self) -> &Path {
        self.inner.cache.root()
    }

    /// The API root requests go to (`https://api.github.com`, or a GitHub
    /// Enterprise server's).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let github = skillkit::GitHub::builder().cache_dir(dir.path()).build()?;
    /// assert_eq!(github.base_url(), "https://api.github.com");
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The `allowed_sources` patterns, as given.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let github = skillkit::GitHub::builder().cache_dir(dir.path()).build()?;
    /// assert!(github.allowed_sources().is_empty());
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn allowed_sources(&self) -> &[String] {
        self.inner.allow.patterns()
    }

    /// Imports `source` (`owner/repo[/path][@ref]`): resolves the ref to a
    /// commit, downloads and unpacks that commit, and records it. A source
    /// already imported is served from the cache without any request (use
    /// [`refresh`](GitHub::refresh) to update it). On failure nothing is
    /// cached.
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::providers::github::GitHubError> {
    /// let done = github.import("obra/superpowers@main").await?;
    /// assert_eq!(done.kit, "obra/superpowers@main");
    /// # Ok(()) }
    /// ```
    pub async fn import(&self, source: &str) -> Result<Imported, GitHubError> {
        let reference = Reference::parse(source)?;
        self.inner.allow.check(&reference)?;
        let lock = self.source_lock(&reference);
        let _guard = lock.lock().await;
        if let Some(stored) = self.stored(&reference).await?
            && stored.dir.is_dir()
        {
            let skills = self.skill_names(&stored).await?;
            return Ok(Imported {
                kit: reference.to_string(),
                sha: stored.sha,
                skills,
                ..Imported::default()
            });
        }
        let sha = self.inner.client.resolve(&reference).await?;
        self.install(&reference, sha, None).await
    }

    /// Updates imported `source` to the commit its ref points at now. Makes
    /// one small request when the commit is unchanged; otherwise downloads
    /// the new commit, swaps it in atomically and deletes the old one's
    /// files. If anything fails, the imported version stays.
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::providers::github::GitHubError> {
    /// let done = github.refresh("obra/superpowers").await?;
    /// if done.previous_sha.as_deref() != Some(done.sha.as_str()) {
    ///     println!("updated to {}", done.sha);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn refresh(&self, source: &str) -> Result<Imported, GitHubError> {
        let reference = Reference::parse(source)?;
        self.inner.allow.check(&reference)?;
        let lock = self.source_lock(&reference);
        let _guard = lock.lock().await;
        let Some(stored) = self.stored(&reference).await? else {
            return Err(GitHubError::NotImported {
                reference: reference.to_string(),
            });
        };
        let sha = self.inner.client.resolve(&reference).await?;
        if sha == stored.sha && stored.dir.is_dir() {
            let skills = self.skill_names(&stored).await?;
            return Ok(Imported {
                kit: reference.to_string(),
                previous_sha: Some(stored.sha),
                sha,
                skills,
                ..Imported::default()
            });
        }
        self.install(&reference, sha, Some(stored.sha)).await
    }

    /// Removes imported `source` from the cache, with its files unless
    /// another source uses the same commit; its kit is gone from the next
    /// query. Needs no network.
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::providers::github::GitHubError> {
    /// github.remove("obra/superpowers").await?;
    /// # Ok(()) }
    /// ```
    pub async fn remove(&self, source: &str) -> Result<(), GitHubError> {
        let reference = Reference::parse(source)?;
        let lock = self.source_lock(&reference);
        let _guard = lock.lock().await;
        let _commit = self.inner.commit.lock().await;
        let cache = self.inner.cache.clone();
        let forgot = {
            let reference = reference.clone();
            self.blocking(move || cache.remove(&reference)).await?
        };
        if !forgot {
            return Err(GitHubError::NotImported {
                reference: reference.to_string(),
            });
        }
        tracing::info!(provider = "github", source = %reference, "removed");
        Ok(())
    }

    /// Every imported source (allowed or not), read from the cache without
    /// any network request.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let github = skillkit::GitHub::builder().cache_dir(dir.path()).build().unwrap();
    /// assert!(github.imported().await.unwrap().is_empty());
    /// # });
    /// ```
    pub async fn imported(&self) -> Result<Vec<ImportedSource>, GitHubError> {
        let this = self.clone();
        let stored = self
            .blocking(move || {
                this.tidy_once();
                this.inner.cache.list()
            })
            .await?;
        Ok(stored
            .into_iter()
            .map(|s| ImportedSource {
                reference: s.reference,
                sha: s.sha,
                imported_at: s.imported_at,
                dir: s.dir,
            })
            .collect())
    }

    /// The kits of the allowed imported sources, loaded with the Local rules
    /// (blocking). An unreadable cache serves no kit (and a warning), so the
    /// built-in kit stays available.
    fn cached_kits(&self) -> Vec<Kit> {
        self.tidy_once();
        let stored = match self.inner.cache.list() {
            Ok(stored) => stored,
            Err(e) => {
                tracing::warn!(
                    provider = "github",
                    path = %self.inner.cache.root().display(),
                    "imported kits not served, the cache cannot be read: {e}"
                );
                Vec::new()
            }
        };
        let mut locals = self
            .inner
            .locals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut used = Vec::new();
        let mut kits = Vec::new();
        for stored in stored {
            if !self.inner.allow.allows(&stored.reference) {
                tracing::debug!(provider = "github", source = %stored.reference, "cached source not served: it is not allowed");
                continue;
            }
            let mut loaded = load_cached(&mut locals, &mut used, &stored);
            if loaded.is_err() && !stored.dir.is_dir() {
                // Another process swapped the tree (a refresh) or removed
                // the source after the source file was read: read it again.
                match self.inner.cache.get(&stored.reference) {
                    Ok(Some(fresh)) => loaded = load_cached(&mut locals, &mut used, &fresh),
                    Ok(None) => loaded = Ok(None),
                    Err(_) => {}
                }
            }
            match loaded {
                Ok(Some(kit)) => kits.push(kit),
                Ok(None) => {}
                Err(e) => tracing::warn!(
                    provider = "github",
                    source = %stored.reference,
                    "cached kit skipped: {e}; refresh or import it again"
                ),
            }
        }
        locals.retain(|key, _| used.contains(key));
        kits
    }
}

/// The kit of `stored`, with the Local loader kept in `locals` (and its key
/// in `used`).
fn load_cached(
    locals: &mut HashMap<(PathBuf, String), Local>,
    used: &mut Vec<(PathBuf, String)>,
    stored: &Stored,
) -> Result<Option<Kit>, ProviderError> {
    let name = stored.reference.to_string();
    let key = (stored.dir.clone(), name.clone());
    let local = locals
        .entry(key.clone())
        // Not watched: one inotify instance per imported repository would
        // soon reach the system's limit of instances (128 per user).
        .or_insert_with(|| Local::new(&stored.dir).named(name).watch(false));
    used.push(key);
    let mut kits = local.load()?;
    if kits.is_empty() {
        return Ok(None);
    }
    let mut kit = kits.remove(0);
    kit.metadata = metadata(stored);
    kit.origin = crate::kit::Origin::GitHub;
    Ok(Some(kit))
}

/// What the kit says about where it came from. Never the token.
fn metadata(stored: &Stored) -> Metadata {
    let reference = &stored.reference;
    let mut metadata = Metadata::new();
    metadata.insert("provider".into(), "github".into());
    metadata.insert("source".into(), reference.to_string().into());
    metadata.insert("repository".into(), reference.repository().into());
    if let Some(path) = reference.path() {
        metadata.insert("path".into(), path.into());
    }
    if let Some(git_ref) = reference.git_ref() {
        metadata.insert("ref".into(), git_ref.into());
    }
    metadata.insert("sha".into(), stored.sha.clone().into());
    let imported_at = stored
        .imported_at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    metadata.insert("imported_at".into(), imported_at.into());
    metadata.insert("dir".into(), stored.dir.display().to_string().into());
    metadata
}

// Not listed when a type is not a provider: the note on `KitProvider` says
// what to write, and the list of SkillKit's own providers would not help.
#[diagnostic::do_not_recommend]
#[async_trait::async_trait]
impl KitProvider for GitHub {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("github")
    }

    /// The built-in `github` kit, then every allowed imported kit, from the
    /// cache alone: no network request, also when the network is down.
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        let this = self.clone();
        let cached = match tokio::task::spawn_blocking(move || this.cached_kits()).await {
            Ok(kits) => kits,
            Err(join) => return Err(ProviderError::other(format!("loading kits failed: {join}"))),
        };
        let mut kits = Vec::with_capacity(cached.len() + 1);
        kits.push(self.inner.builtins.clone());
        kits.extend(cached);
        Ok(kits)
    }

    /// The provider executes its built-in `github:*` skills itself; imported
    /// skills are knowledge.
    fn tool(self: Arc<Self>, skill: &Skill) -> Option<Arc<dyn Tool>> {
        (skill.kit() == Some(builtins::KIT)).then_some(self as Arc<dyn Tool>)
    }
}
