//! A source's files at one commit, for a project's lock: downloaded once
//! into the cache's `pinned/` folder and kept there (content addressed by
//! the commit), so `skillkit install --offline` finds them later. Unlike an
//! import, a checkout is not recorded as a source: the provider does not
//! serve it as a kit.

use std::path::PathBuf;

use super::{GitHub, GitHubError, Reference};

/// A source's files at one commit, in the cache.
///
/// ```no_run
/// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::providers::github::GitHubError> {
/// let tree = github.checkout("acme/skills@v1", None).await?;
/// println!("{} at {} in {}", tree.reference, tree.sha, tree.dir.display());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Checkout {
    /// The source, as asked for.
    pub reference: Reference,
    /// The commit.
    pub sha: String,
    /// The source's folder at that commit (read only: shared by every
    /// project pinning it).
    pub dir: PathBuf,
    /// Whether it was downloaded now (`false`: it was in the cache).
    pub downloaded: bool,
}

impl GitHub {
    /// The files of `source` (`owner/repo[/path][@ref]`) at `commit`, or at
    /// the commit its ref points at now when `commit` is `None`: from the
    /// cache when it holds them, else downloaded and kept (whatever they
    /// hold: a marketplace's manifest, a folder of skills). The lock, not the ref, decides: with a commit, the ref is
    /// not asked about.
    ///
    /// ```no_run
    /// # async fn demo(github: skillkit::GitHub) -> Result<(), skillkit::providers::github::GitHubError> {
    /// let pinned = github.checkout("acme/skills", Some("0123456789abcdef0123456789abcdef01234567")).await?;
    /// assert!(pinned.dir.is_dir());
    /// # Ok(()) }
    /// ```
    pub async fn checkout(
        &self,
        source: &str,
        commit: Option<&str>,
    ) -> Result<Checkout, GitHubError> {
        let reference = Reference::parse(source)?;
        self.inner.allow.check(&reference)?;
        let sha = match commit {
            Some(sha) => sha.to_ascii_lowercase(),
            None => self.inner.client.resolve(&reference).await?,
        };
        if let Some(cached) = self.cached_checkout(source, &sha).await? {
            return Ok(cached);
        }
        let lock = self.source_lock(&reference);
        let _guard = lock.lock().await;
        let (staging, _) = self.download_tree(&reference, &sha).await?;
        let cache = self.inner.cache.clone();
        let (for_cache, sha_for_cache) = (reference.clone(), sha.clone());
        let dir = self
            .blocking(move || cache.keep_pinned(staging, &for_cache, &sha_for_cache))
            .await?;
        tracing::info!(provider = "github", source = %reference, sha = %sha, "checked out");
        Ok(Checkout {
            reference,
            sha,
            dir,
            downloaded: true,
        })
    }

    /// The files of `source` at `commit` if the cache holds them; no
    /// network.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let github = skillkit::GitHub::builder().allow("*").cache_dir(dir.path()).build().unwrap();
    /// let sha = "0123456789abcdef0123456789abcdef01234567";
    /// assert!(github.cached_checkout("acme/skills", sha).await.unwrap().is_none());
    /// # });
    /// ```
    pub async fn cached_checkout(
        &self,
        source: &str,
        commit: &str,
    ) -> Result<Option<Checkout>, GitHubError> {
        let reference = Reference::parse(source)?;
        self.inner.allow.check(&reference)?;
        let sha = commit.to_ascii_lowercase();
        if !(sha.len() == 40 || sha.len() == 64) || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GitHubError::InvalidSource {
                input: format!("{source} at {}", commit.escape_debug()),
                reason: "a pinned commit is 40 (or 64) hexadecimal digits".into(),
            });
        }
        let dir = self.inner.cache.pinned_dir(&reference, &sha);
        Ok(dir.is_dir().then_some(Checkout {
            reference,
            sha,
            dir,
            downloaded: false,
        }))
    }
}
