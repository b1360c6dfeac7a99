//! Installing a source: download its tree unless cached, check it holds
//! skills, put it in place and record it, one source at a time (the
//! orchestration behind [`GitHub::import`], `refresh` and `remove`).

use std::path::Path;
use std::sync::{Arc, PoisonError, Weak};

use skillkit_parser::Severity;

use super::cache::{Staging, Stored};
use super::download;
use super::{GitHub, GitHubError, Imported, Reference};
use crate::kit::Kit;
use crate::provider::KitProvider;
use crate::providers::Local;

impl GitHub {
    /// Downloads `reference` at `sha` unless its tree is cached, checks it
    /// holds skills, puts it in place and records it.
    pub(super) async fn install(
        &self,
        reference: &Reference,
        sha: String,
        previous_sha: Option<String>,
    ) -> Result<Imported, GitHubError> {
        let inner = &self.inner;
        let tree = inner.cache.tree_dir(reference, &sha);
        let mut skipped = Vec::new();
        // Reuses the cached tree, if any; when another process deletes it
        // before it is recorded, a second round downloads it (and ends: a
        // downloaded tree is always recorded).
        let mut reuse = tree.is_dir();
        let (dir, downloaded) = loop {
            let staged = match std::mem::take(&mut reuse) {
                true => None,
                false => {
                    let (staging, extracted) = self.download(reference, &sha).await?;
                    skipped = extracted;
                    Some(staging)
                }
            };
            let downloaded = staged.is_some();
            let _commit = inner.commit.lock().await;
            let cache = inner.cache.clone();
            let (for_cache, sha_for_cache) = (reference.clone(), sha.clone());
            let committed = self
                .blocking(move || cache.commit(staged, &for_cache, &sha_for_cache))
                .await?;
            if let Some(dir) = committed {
                break (dir, downloaded);
            }
        };
        tracing::info!(provider = "github", source = %reference, sha = %sha, downloaded, "imported");
        let kit = self.load(&dir, reference).await?;
        Ok(Imported {
            kit: reference.to_string(),
            sha,
            previous_sha,
            downloaded,
            skills: kit.skills.iter().map(|s| s.name.to_string()).collect(),
            skipped,
        })
    }

    pub(super) async fn stored(
        &self,
        reference: &Reference,
    ) -> Result<Option<Stored>, GitHubError> {
        let cache = self.inner.cache.clone();
        let reference = reference.clone();
        self.blocking(move || cache.get(&reference)).await
    }

    pub(super) async fn skill_names(&self, stored: &Stored) -> Result<Vec<String>, GitHubError> {
        let kit = self.load(&stored.dir, &stored.reference).await?;
        Ok(kit.skills.iter().map(|s| s.name.to_string()).collect())
    }

    /// The kit in `dir`, named after `reference`, loaded with the Local rules.
    pub(super) async fn load(&self, dir: &Path, reference: &Reference) -> Result<Kit, GitHubError> {
        // One query: nothing to watch.
        let local = Local::new(dir).named(reference.to_string()).watch(false);
        let path = dir.to_path_buf();
        match local.list_kits().await {
            Ok(mut kits) if !kits.is_empty() => Ok(kits.remove(0)),
            Ok(_) => Ok(Kit::new(reference.to_string())),
            Err(e) => Err(GitHubError::Cache {
                path,
                error: std::io::Error::other(e.to_string()),
            }),
        }
    }

    /// Downloads `reference` at `sha` into a staging folder and checks it
    /// holds a kit; also the entries left out of it.
    pub(super) async fn download(
        &self,
        reference: &Reference,
        sha: &str,
    ) -> Result<(Staging, Vec<String>), GitHubError> {
        let (staging, skipped) = self.download_tree(reference, sha).await?;
        let kit = self.load(staging.path(), reference).await?;
        if kit.skills.is_empty() && kit.agent.is_none() && kit.agents.is_empty() {
            let failed = kit
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count();
            return Err(GitHubError::NoSkills {
                reference: reference.to_string(),
                failed,
            });
        }
        Ok((staging, skipped))
    }

    /// Downloads `reference` at `sha` into a staging folder, whatever it
    /// holds; also the entries left out of it.
    pub(super) async fn download_tree(
        &self,
        reference: &Reference,
        sha: &str,
    ) -> Result<(Staging, Vec<String>), GitHubError> {
        let inner = &self.inner;
        let cache = inner.cache.clone();
        let staging = self.blocking(move || cache.staging()).await?;
        let (staging, extracted) = download::download(
            &inner.client,
            reference,
            sha,
            staging,
            inner.limits,
            inner.progress.clone(),
        )
        .await?;
        Ok((staging, extracted.skipped))
    }

    /// Deletes what killed processes left in the cache, the first time
    /// this provider reads it (blocking).
    pub(super) fn tidy_once(&self) {
        self.inner.tidied.call_once(|| {
            if let Err(e) = self.inner.cache.tidy() {
                tracing::debug!(
                    provider = "github",
                    path = %self.inner.cache.root().display(),
                    "cache leftovers not deleted: {e}"
                );
            }
        });
    }

    pub(super) fn source_lock(&self, reference: &Reference) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self
            .inner
            .source_locks
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        locks.retain(|_, lock| lock.strong_count() > 0);
        let key = reference.to_string();
        if let Some(lock) = locks.get(&key).and_then(Weak::upgrade) {
            return lock;
        }
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        locks.insert(key, Arc::downgrade(&lock));
        lock
    }

    /// Runs cache work on a blocking thread.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
    ) -> Result<T, GitHubError> {
        let path = self.inner.cache.root().to_path_buf();
        match tokio::task::spawn_blocking(work).await {
            Ok(result) => result.map_err(|error| GitHubError::Cache { path, error }),
            Err(join) => Err(GitHubError::Cache {
                path,
                error: std::io::Error::other(format!("cache work stopped: {join}")),
            }),
        }
    }
}
