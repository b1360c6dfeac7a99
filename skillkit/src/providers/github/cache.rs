//! The on-disk cache of imported repositories, safe to interrupt at any point.
//!
//! ```text
//! <cache_dir>/
//!   sources/<key>.json   one per imported source: the source and its commit SHA
//!   trees/<tree>/        an unpacked kit, immutable once in place
//!   tmp/                 staging directories and files being written
//! ```
//!
//! A tree is unpacked into `tmp/` and renamed into `trees/` only when
//! complete, its files and folders synced to disk first, so a tree in
//! `trees/` is always whole, for this process and any other sharing the
//! cache, also after a crash. A source file is written
//! to `tmp/` and renamed over the old one, so readers see the old commit or
//! the new one, never a mix. A failed import leaves nothing but a staging
//! directory, which is deleted when it is dropped (or, after a crash, by the
//! next import). Source files are the manifest: they survive restarts, and
//! listing them needs no network.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tempfile::TempDir;

use super::reference::Reference;

/// Staging leftovers older than this are from a crashed import and deleted.
const STALE_STAGING: Duration = Duration::from_secs(3600);

/// Unreferenced trees younger than this are kept: another process may have
/// just unpacked one and not yet written its source file.
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

    fn source_file(&self, reference: &Reference) -> PathBuf {
        let key = format!(
            "{}--{}--{:016x}.json",
            reference.owner(),
            reference.repo(),
            fnv1a(reference.to_string().as_bytes())
        );
        self.sources().join(key)
    }

    /// The directory of the tree of `reference` at commit `sha`.
    pub(crate) fn tree_dir(&self, reference: &Reference, sha: &str) -> PathBuf {
        let mut name = format!("{}--{}--{sha}", reference.owner(), reference.repo());
        if let Some(path) = reference.path() {
            name.push_str(&format!("--{:016x}", fnv1a(path.as_bytes())));
        }
        self.trees().join(name)
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

    /// A fresh staging directory, deleted when dropped. Also clears the
    /// leftovers of crashed imports.
    pub(crate) fn staging(&self) -> io::Result<TempDir> {
        let tmp = self.tmp();
        fs::create_dir_all(&tmp)?;
        remove_old(&tmp, STALE_STAGING);
        tempfile::Builder::new().prefix("import-").tempdir_in(&tmp)
    }

    /// Moves the complete tree `staging` into place as the tree of
    /// `reference` at `sha`. When another import put the same tree there
    /// first, that one is kept and `staging` is deleted.
    pub(crate) fn install_tree(
        &self,
        staging: TempDir,
        reference: &Reference,
        sha: &str,
    ) -> io::Result<PathBuf> {
        let target = self.tree_dir(reference, sha);
        fs::create_dir_all(self.trees())?;
        sync_folders(staging.path())?;
        match fs::rename(staging.path(), &target) {
            Ok(()) => {
                let _ = staging.keep();
                sync_folder(&self.trees());
                Ok(target)
            }
            Err(_) if target.is_dir() => Ok(target),
            Err(e) => Err(e),
        }
    }

    /// Records (or replaces, atomically) the import of `reference` at `sha`.
    pub(crate) fn record(&self, reference: &Reference, sha: &str) -> io::Result<()> {
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

    /// Forgets `reference`; `false` when it was not imported.
    pub(crate) fn forget(&self, reference: &Reference) -> io::Result<bool> {
        match self.get(reference)? {
            None => Ok(false),
            Some(_) => match fs::remove_file(self.source_file(reference)) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
                Err(e) => Err(e),
            },
        }
    }

    /// Deletes the trees no source refers to (except very young ones, which
    /// another process may be about to record). Each goes in one rename, so
    /// a reader sees a whole tree or none.
    pub(crate) fn collect_garbage(&self) -> io::Result<()> {
        let used: HashSet<PathBuf> = self.list()?.into_iter().map(|s| s.dir).collect();
        fs::create_dir_all(self.tmp())?;
        let entries = match fs::read_dir(self.trees()) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
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

/// Deletes the entries of `dir` older than `max_age` (best effort).
fn remove_old(dir: &Path, max_age: Duration) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if age(&path).is_some_and(|age| age > max_age) {
            let removed = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            if removed.is_ok() {
                tracing::debug!(provider = "github", path = %path.display(), "stale staging removed");
            }
        }
    }
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
        assert!(again.forget(&reference).unwrap());
        assert!(!again.forget(&reference).unwrap());
        assert!(again.list().unwrap().is_empty());
    }

    #[test]
    fn a_second_install_of_the_same_tree_keeps_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf());
        let reference = Reference::parse("o/r").unwrap();
        let first = cache.staging().unwrap();
        fs::write(first.path().join("a"), "first").unwrap();
        let second = cache.staging().unwrap();
        fs::write(second.path().join("a"), "second").unwrap();
        let tree = cache.install_tree(first, &reference, SHA).unwrap();
        assert_eq!(cache.install_tree(second, &reference, SHA).unwrap(), tree);
        assert_eq!(fs::read_to_string(tree.join("a")).unwrap(), "first");
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn hashes_are_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
