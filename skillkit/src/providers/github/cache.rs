//! The on-disk cache of imported repositories, safe to interrupt at any point.
//!
//! ```text
//! <cache_dir>/
//!   sources/<key>.json   one per imported source: the source and its commit SHA
//!   trees/<tree>/        an unpacked kit, immutable once in place
//!   tmp/                 staging directories and files being written
//!   lock                 held while staging folders are made, trees and
//!                        source files put in place, and leftovers deleted
//! ```
//!
//! A tree is unpacked into `tmp/` and renamed into `trees/` only when
//! complete, its files and folders synced to disk first, so a tree in
//! `trees/` is always whole, for this process and any other sharing the
//! cache, also after a crash. A source file is written
//! to `tmp/` and renamed over the old one, so readers see the old commit or
//! the new one, never a mix. A failed import leaves nothing but a staging
//! directory, which is deleted when it is dropped. Source files are the
//! manifest: they survive restarts, and listing them needs no network.
//!
//! Nothing is left behind for long: a tree no source refers to any more
//! (removed, or left by a refresh) is deleted at once, and what a killed
//! process left in `tmp/` is deleted by the next process that uses the
//! cache. A staging folder is [held](lock::hold) by its process while it is
//! written, so only those of dead processes are deleted.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tempfile::TempDir;

use super::reference::Reference;
use crate::lock::{self, Held};

/// Unreferenced trees younger than this are kept. On Unix none: a process
/// holds the cache lock from putting its tree in place until its source
/// file points at it. Elsewhere the lock does nothing, and another process
/// may have just put a tree in place and not yet written its source file.
#[cfg(unix)]
const TREE_GRACE: Duration = Duration::ZERO;
#[cfg(not(unix))]
const TREE_GRACE: Duration = Duration::from_secs(300);

/// The largest source file read.
const MAX_SOURCE_FILE: u64 = 64 * 1024;

/// A source file's content.
#[derive(Debug, Serialize, Deserialize)]
struct SourceFile {
    /// The canonical reference (`owner/repo[/path][@ref]`).
    source: String,
    /// The commit its tree was unpacked from.
    sha: String,
    /// When it was imported or last changed, in seconds since the Unix epoch.
    imported_at: u64,
}

/// One imported source, as read from its source file.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub reference: Reference,
    pub sha: String,
    pub imported_at: SystemTime,
    /// The kit's directory (its tree).
    pub dir: PathBuf,
}

/// A staging folder in `tmp/`: held while it is written, deleted when
/// dropped unless it became a tree.
#[derive(Debug)]
pub(crate) struct Staging {
    // Dropped first: the folder is deleted while it is still held.
    dir: TempDir,
    _held: Held,
}

impl Staging {
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The cache under one directory.
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    root: PathBuf,
}

impl Cache {
    pub(crate) fn new(root: PathBuf) -> Cache {
        Cache { root }
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    fn sources(&self) -> PathBuf {
        self.root.join("sources")
    }

    fn trees(&self) -> PathBuf {
        self.root.join("trees")
    }

    fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// Waits for the cache lock (between processes; within one, callers
    /// also take the provider's `commit` mutex). Never taken twice by one
    /// thread: a second take would wait for the first.
    fn lock(&self) -> io::Result<Held> {
        fs::create_dir_all(&self.root)?;
        lock::exclusive(&self.root.join("lock"))
    }

    fn source_file(&self, reference: &Reference) -> PathBuf {
        let key = format!(
            "{}--{}--{:016x}.json",
            reference.owner(),
            reference.repo(),
            fnv1a(reference.to_string().as_bytes())
        );
        self.sources().join(key)
    }

    /// The directory of the tree of `reference` at commit `sha`. Sources of
    /// one repository and folder at one commit (`@main` and `@v1` resolving
    /// alike) share it.
    pub(crate) fn tree_dir(&self, reference: &Reference, sha: &str) -> PathBuf {
        let mut name = format!("{}--{}--{sha}", reference.owner(), reference.repo());
        if let Some(path) = reference.path() {
            name.push_str(&format!("--{:016x}", fnv1a(path.as_bytes())));
        }
        self.trees().join(name)
    }

    /// The directory of the tree of `reference` at commit `sha` as a
    /// project's lock pinned it (`pinned/`): kept whole, never collected,
    /// since no source file records it.
    pub(crate) fn pinned_dir(&self, reference: &Reference, sha: &str) -> PathBuf {
        let tree = self.tree_dir(reference, sha);
        self.root
            .join("pinned")
            .join(tree.file_name().unwrap_or_default())
    }

    /// Moves the complete tree `staging` into place as the pinned tree of
    /// `reference` at `sha` (or keeps the one another process put there
    /// first).
    pub(crate) fn keep_pinned(
        &self,
        staging: Staging,
        reference: &Reference,
        sha: &str,
    ) -> io::Result<PathBuf> {
        let _lock = self.lock()?;
        let target = self.pinned_dir(reference, sha);
        fs::create_dir_all(self.root.join("pinned"))?;
        sync_folders(staging.path())?;
        match fs::rename(staging.path(), &target) {
            Ok(()) => {
                let _ = staging.dir.keep();
                sync_folder(&self.root.join("pinned"));
                Ok(target)
            }
            Err(_) if target.is_dir() => Ok(target),
            Err(e) => Err(e),
        }
    }

    /// Every imported source, sorted by reference. Unreadable source files
    /// are skipped with a warning.
    pub(crate) fn list(&self) -> io::Result<Vec<Stored>> {
        let entries = match fs::read_dir(self.sources()) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut stored = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            match self.read(&path) {
                Ok(one) => stored.push(one),
                Err(e) => tracing::warn!(
                    provider = "github",
                    path = %path.display(),
                    "cached source skipped: {e}; import it again"
                ),
            }
        }
        stored.sort_by_key(|s| s.reference.to_string());
        Ok(stored)
    }

    /// The stored import of `reference`, if any.
    pub(crate) fn get(&self, reference: &Reference) -> io::Result<Option<Stored>> {
        match self.read(&self.source_file(reference)) {
            Ok(stored) if stored.reference == *reference => Ok(Some(stored)),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read(&self, path: &Path) -> io::Result<Stored> {
        let mut text = String::new();
        fs::File::open(path)?
            .take(MAX_SOURCE_FILE)
            .read_to_string(&mut text)?;
        let file: SourceFile = serde_json::from_str(&text).map_err(io::Error::other)?;
        let reference = Reference::parse(&file.source).map_err(io::Error::other)?;
        let sha = file.sha.to_ascii_lowercase();
        if !(sha.len() == 40 || sha.len() == 64) || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(io::Error::other("its commit SHA is malformed"));
        }
        Ok(Stored {
            dir: self.tree_dir(&reference, &sha),
            imported_at: SystemTime::UNIX_EPOCH + Duration::from_secs(file.imported_at),
            reference,
            sha,
        })
    }

    /// A fresh staging folder, held until dropped. Also deletes the
    /// leftovers of killed processes in `tmp/`.
    pub(crate) fn staging(&self) -> io::Result<Staging> {
        let tmp = self.tmp();
        let _lock = self.lock()?;
        fs::create_dir_all(&tmp)?;
        self.sweep();
        let dir = tempfile::Builder::new()
            .prefix("import-")
            .tempdir_in(&tmp)?;
        let held = lock::hold(dir.path())?;
        Ok(Staging { dir, _held: held })
    }

    /// Records the import of `reference` at `sha`, its tree being the
    /// complete tree `staged` (moved into place) or, without one, the tree
    /// already in place. `None` when that tree was deleted meanwhile (another
    /// process collected it): download it again. Then deletes the trees no
    /// source uses any more, such as the one a refresh left.
    pub(crate) fn commit(
        &self,
        staged: Option<Staging>,
        reference: &Reference,
        sha: &str,
    ) -> io::Result<Option<PathBuf>> {
        let _lock = self.lock()?;
        let dir = match staged {
            Some(staging) => self.install_tree(staging, reference, sha)?,
            None => {
                let dir = self.tree_dir(reference, sha);
                if !dir.is_dir() {
                    return Ok(None);
                }
                dir
            }
        };
        self.record(reference, sha)?;
        self.collect();
        Ok(Some(dir))
    }

    /// Moves the complete tree `staging` into place as the tree of
    /// `reference` at `sha`. When another import put the same tree there
    /// first, that one is kept and `staging` is deleted. Under the lock.
    fn install_tree(
        &self,
        staging: Staging,
        reference: &Reference,
        sha: &str,
    ) -> io::Result<PathBuf> {
        let target = self.tree_dir(reference, sha);
        fs::create_dir_all(self.trees())?;
        sync_folders(staging.path())?;
        match fs::rename(staging.path(), &target) {
            Ok(()) => {
                let _ = staging.dir.keep();
                sync_folder(&self.trees());
                Ok(target)
            }
            Err(_) if target.is_dir() => Ok(target),
            Err(e) => Err(e),
        }
    }

    /// Records (or replaces, atomically) the import of `reference` at `sha`.
    /// Under the lock.
    fn record(&self, reference: &Reference, sha: &str) -> io::Result<()> {
        let tmp = self.tmp();
        fs::create_dir_all(&tmp)?;
        fs::create_dir_all(self.sources())?;
        let imported_at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let file = SourceFile {
            source: reference.to_string(),
            sha: sha.to_owned(),
            imported_at,
        };
        let mut staged = tempfile::Builder::new()
            .prefix("source-")
            .tempfile_in(&tmp)?;
        serde_json::to_writer_pretty(&mut staged, &file).map_err(io::Error::other)?;
        staged.write_all(b"\n")?;
        staged.as_file().sync_all()?;
        staged
            .persist(self.source_file(reference))
            .map_err(|e| e.error)?;
        sync_folder(&self.sources());
        Ok(())
    }

    /// Forgets `reference` and deletes its tree unless another source uses
    /// it; `false` when it was not imported.
    pub(crate) fn remove(&self, reference: &Reference) -> io::Result<bool> {
        let _lock = self.lock()?;
        let forgot = match self.get(reference)? {
            None => false,
            Some(_) => match fs::remove_file(self.source_file(reference)) {
                Ok(()) => true,
                Err(e) if e.kind() == io::ErrorKind::NotFound => false,
                Err(e) => return Err(e),
            },
        };
        if forgot {
            sync_folder(&self.sources());
            self.collect();
        }
        Ok(forgot)
    }

    /// Deletes what killed processes left: their staging folders and
    /// files, and trees no source uses. Does nothing when the cache does not
    /// exist yet.
    pub(crate) fn tidy(&self) -> io::Result<()> {
        if !self.root.is_dir() {
            return Ok(());
        }
        let _lock = self.lock()?;
        self.collect();
        Ok(())
    }

    /// Deletes the leftovers in `tmp/` and the trees no source refers to
    /// (best effort, failures logged). Each tree goes in one rename, so a
    /// reader sees a whole tree or none. Under the lock.
    fn collect(&self) {
        self.sweep();
        if let Err(e) = self.collect_trees() {
            tracing::warn!(
                provider = "github",
                path = %self.trees().display(),
                "unused cached trees not deleted: {e}"
            );
        }
    }

    fn collect_trees(&self) -> io::Result<()> {
        let used: HashSet<PathBuf> = self.list()?.into_iter().map(|s| s.dir).collect();
        let entries = match fs::read_dir(self.trees()) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        fs::create_dir_all(self.tmp())?;
        for entry in entries.flatten() {
            let path = entry.path();
            if used.contains(&path) || age(&path).is_none_or(|age| age < TREE_GRACE) {
                continue;
            }
            let doomed = tempfile::Builder::new()
                .prefix("old-")
                .tempdir_in(self.tmp())?;
            let target = doomed.path().join("tree");
            if fs::rename(&path, &target).is_ok() {
                tracing::debug!(provider = "github", path = %path.display(), "unused tree deleted");
            }
            drop(doomed);
        }
        Ok(())
    }

    /// Deletes what no live process holds in `tmp/`: the staging folders of
    /// killed imports, half-written source files, trees half deleted (best
    /// effort). Under the lock, so nothing is being made meanwhile.
    fn sweep(&self) {
        let Ok(entries) = fs::read_dir(self.tmp()) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(_unused) = lock::take_unused(&path) else {
                continue;
            };
            let removed = match entry.file_type() {
                Ok(kind) if kind.is_dir() => fs::remove_dir_all(&path),
                _ => fs::remove_file(&path),
            };
            match removed {
                Ok(()) => {
                    tracing::debug!(provider = "github", path = %path.display(), "leftover deleted")
                }
                Err(e) => tracing::warn!(
                    provider = "github",
                    path = %path.display(),
                    "leftover of an interrupted import not deleted: {e}"
                ),
            }
        }
    }
}

/// Syncs every folder of the tree at `root` (the files were synced as they
/// were written), so the entries exist on disk before the tree is published.
fn sync_folders(root: &Path) -> io::Result<()> {
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in fs::read_dir(&folder)?.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry.path());
            }
        }
        sync_folder(&folder);
    }
    Ok(())
}

/// Syncs one folder's entries (best effort: some systems cannot open a
/// folder as a file).
fn sync_folder(folder: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = fs::File::open(folder) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}

/// How long ago `path` was last modified.
fn age(path: &Path) -> Option<Duration> {
    let modified = fs::metadata(path).ok()?.modified().ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}

/// FNV-1a, 64 bits: a hash that never changes between builds, for file names.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn recorded_sources_survive_and_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf());
        let reference = Reference::parse("o/r/kit@v1").unwrap();
        assert!(cache.get(&reference).unwrap().is_none());
        cache.record(&reference, SHA).unwrap();
        let again = Cache::new(dir.path().to_path_buf());
        let stored = again.get(&reference).unwrap().unwrap();
        assert_eq!(stored.sha, SHA);
        assert_eq!(again.list().unwrap().len(), 1);
        assert!(again.remove(&reference).unwrap());
        assert!(!again.remove(&reference).unwrap());
        assert!(again.list().unwrap().is_empty());
    }

    #[test]
    fn a_second_install_of_the_same_tree_keeps_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf());
        let reference = Reference::parse("o/r").unwrap();
        let first = cache.staging().unwrap();
        fs::write(first.path().join("a"), "first").unwrap();
        // Making the second one leaves the first one, being written, alone.
        let second = cache.staging().unwrap();
        fs::write(second.path().join("a"), "second").unwrap();
        let tree = cache.commit(Some(first), &reference, SHA).unwrap().unwrap();
        let again = cache.commit(Some(second), &reference, SHA).unwrap();
        assert_eq!(again, Some(tree.clone()));
        assert_eq!(fs::read_to_string(tree.join("a")).unwrap(), "first");
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn a_tree_deleted_before_it_is_recorded_is_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf());
        let reference = Reference::parse("o/r").unwrap();
        assert_eq!(cache.commit(None, &reference, SHA).unwrap(), None);
        assert!(cache.get(&reference).unwrap().is_none());
    }

    /// The cache's lock file is opened never through a link and never
    /// waiting: a FIFO there (which a plain open for writing waits on for a
    /// reader) or a link is refused at once, saying what it is.
    #[cfg(unix)]
    #[test]
    fn a_lock_file_that_is_no_file_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("lock");
        let elsewhere = dir.path().join("elsewhere");
        let makers: [(&str, &dyn Fn()); 2] = [
            ("is a FIFO (named pipe), not a lock file", &|| {
                let made = std::process::Command::new("mkfifo").arg(&lock).status();
                assert!(made.unwrap().success());
            }),
            ("is a symbolic link, not a lock file", &|| {
                std::os::unix::fs::symlink(&elsewhere, &lock).unwrap()
            }),
        ];
        for (said, make) in makers {
            make();
            let root = dir.path().to_path_buf();
            let (send, answer) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let staged = Cache::new(root).staging().map(drop);
                let _ = send.send(staged.map_err(|e| e.to_string()));
            });
            let error = answer
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("the cache lock blocked: it {said}"))
                .unwrap_err();
            assert!(error.contains(said), "{error}");
            assert!(!elsewhere.exists(), "the link's target was made");
            fs::remove_file(&lock).unwrap();
        }
    }

    #[test]
    fn hashes_are_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
