//! Safe extraction of a repository tarball: only regular files and folders
//! under the archive's top folder, within [`Limits`].
//!
//! Absolute paths, `..`, symlinks, hardlinks, devices and FIFOs are skipped
//! with a warning; breaking a limit aborts the extraction. Nothing is ever
//! written outside the destination: every path is rebuilt from plain folder
//! names, and the destination holds no symlink to follow.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use flate2::read::GzDecoder;
use tar::EntryType;

use super::error::{Limit, chain};
use super::reference::printable;

/// Limits on what one import may unpack. Breaking one aborts the import
/// cleanly: nothing is cached.
///
/// ```
/// use skillkit::providers::github::Limits;
/// let limits = Limits { max_files: 500, ..Limits::default() };
/// assert_eq!(limits.max_total_bytes, 256 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest archive, in bytes, both as downloaded and once unpacked
    /// (this stops gzip bombs). Default 256 MiB.
    pub max_total_bytes: u64,
    /// The largest single file, in bytes. Default 32 MiB.
    pub max_file_bytes: u64,
    /// The most files and folders written. Default 20 000.
    pub max_files: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_total_bytes: 256 << 20,
            max_file_bytes: 32 << 20,
            max_files: 20_000,
        }
    }
}

/// At most this many skipped entries are listed (a hostile archive may hold
/// millions); the rest are counted.
const MAX_LISTED_SKIPS: usize = 100;

/// What an extraction wrote and skipped.
#[derive(Debug, Default)]
pub(crate) struct Extracted {
    /// Files and folders written.
    pub entries: u64,
    /// The entries skipped, with the reason (`path (why)`).
    pub skipped: Vec<String>,
}

/// Why an extraction stopped.
#[derive(Debug)]
pub(crate) enum ExtractError {
    /// A limit was broken.
    TooLarge(Limit),
    /// The download broke.
    Interrupted(String),
    /// The archive is not valid gzip + tar.
    Corrupt(String),
    /// No entry lies under the requested subpath.
    PathNotFound,
    /// Writing to the destination failed.
    Io { path: PathBuf, error: io::Error },
}

/// Why a reader in the chain failed. tar and flate2 wrap the errors of the
/// readers they read from, so the readers record the cause here.
#[derive(Debug, Clone)]
pub(crate) enum Trip {
    /// A byte budget was exceeded.
    TooLarge(Limit),
    /// The network stream failed.
    Interrupted(String),
}

/// The shared record of the first [`Trip`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Tripwire(Arc<Mutex<Option<Trip>>>);

impl Tripwire {
    /// Records `trip` unless one is recorded already.
    pub(crate) fn trip(&self, trip: Trip) {
        let mut cell = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        cell.get_or_insert(trip);
    }

    fn get(&self) -> Option<Trip> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The extraction error for reader error `error`.
    fn explain(&self, error: &io::Error) -> ExtractError {
        match self.get() {
            Some(Trip::TooLarge(limit)) => ExtractError::TooLarge(limit),
            Some(Trip::Interrupted(detail)) => ExtractError::Interrupted(detail),
            None => ExtractError::Corrupt(chain(error)),
        }
    }
}

/// A reader that counts its bytes, reports them to `observe`, and fails once
/// more than `max` went through.
pub(crate) struct Budget<R, F> {
    inner: R,
    read: u64,
    max: u64,
    tripwire: Tripwire,
    observe: F,
}

impl<R: Read, F: FnMut(u64)> Budget<R, F> {
    pub(crate) fn new(inner: R, max: u64, tripwire: Tripwire, observe: F) -> Self {
        Budget {
            inner,
            read: 0,
            max,
            tripwire,
            observe,
        }
    }
}

impl<R: Read, F: FnMut(u64)> Read for Budget<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.max {
            self.tripwire.trip(Trip::TooLarge(Limit::TotalBytes));
            return Err(io::Error::other("archive size limit exceeded"));
        }
        if n > 0 {
            (self.observe)(self.read);
        }
        Ok(n)
    }
}

/// Unpacks the gzip-compressed tar `compressed` into `dest` (an empty
/// directory): the entries under the archive's top folder and then under
/// `subpath`, with both prefixes stripped.
pub(crate) fn extract(
    compressed: impl Read,
    dest: &Path,
    subpath: &[&str],
    limits: &Limits,
    tripwire: &Tripwire,
) -> Result<Extracted, ExtractError> {
    let unpacked = Budget::new(
        GzDecoder::new(compressed),
        limits.max_total_bytes,
        tripwire.clone(),
        |_| {},
    );
    let mut archive = tar::Archive::new(unpacked);
    let mut unpacker = Unpacker {
        dest,
        subpath,
        limits,
        top: None,
        found_subpath: subpath.is_empty(),
        done: Extracted::default(),
        unlisted: 0,
    };
    let entries = archive.entries().map_err(|e| tripwire.explain(&e))?;
    for entry in entries {
        let entry = entry.map_err(|e| tripwire.explain(&e))?;
        unpacker.entry(entry, tripwire)?;
    }
    // Read to the end so gzip checks its length and checksum: a truncated
    // download is caught even when the tar part looked complete.
    io::copy(&mut archive.into_inner(), &mut io::sink()).map_err(|e| tripwire.explain(&e))?;
    if !unpacker.found_subpath {
        return Err(ExtractError::PathNotFound);
    }
    if unpacker.unlisted > 0 {
        let more = format!("… and {} more entries skipped", unpacker.unlisted);
        unpacker.done.skipped.push(more);
    }
    Ok(unpacker.done)
}

struct Unpacker<'a> {
    dest: &'a Path,
    subpath: &'a [&'a str],
    limits: &'a Limits,
    /// The archive's top folder (`owner-repo-sha`), set by the first entry.
    top: Option<OsString>,
    found_subpath: bool,
    done: Extracted,
    unlisted: usize,
}

impl Unpacker<'_> {
    fn entry<R: Read>(
        &mut self,
        mut entry: tar::Entry<'_, R>,
        tripwire: &Tripwire,
    ) -> Result<(), ExtractError> {
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() {
            return Ok(());
        }
        let raw = match entry.path() {
            Ok(path) => path.into_owned(),
            Err(_) => {
                let shown = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
                self.skip(&shown, "its name cannot be used as a file name");
                return Ok(());
            }
        };
        let shown = printable(&raw.to_string_lossy());
        let parts = match self.relative(&raw) {
            Ok(parts) => parts,
            Err(why) => {
                self.skip(&shown, why);
                return Ok(());
            }
        };
        let Some(inner) = self.under_subpath(&parts) else {
            return Ok(());
        };
        if inner.is_empty() {
            if !kind.is_dir() {
                self.skip(&shown, "a file in place of the top folder");
            }
            return Ok(());
        }
        let target: PathBuf = std::iter::once(self.dest.as_os_str())
            .chain(inner.iter().map(OsString::as_os_str))
            .collect();
        let why = match kind {
            EntryType::Regular | EntryType::Continuous => {
                self.count()?;
                if entry.size() > self.limits.max_file_bytes {
                    let name = inner.join(std::ffi::OsStr::new("/"));
                    return Err(ExtractError::TooLarge(Limit::FileBytes(printable(
                        &name.to_string_lossy(),
                    ))));
                }
                let executable = entry.header().mode().is_ok_and(|m| m & 0o111 != 0);
                return self.write_file(&mut entry, &target, executable, &shown, tripwire);
            }
            EntryType::Directory => {
                self.count()?;
                return match fs::create_dir_all(&target) {
                    Err(e) if is_conflict(&e) => {
                        self.skip(&shown, "it conflicts with an earlier entry");
                        Ok(())
                    }
                    result => result.map_err(|error| ExtractError::Io {
                        path: target,
                        error,
                    }),
                };
            }
            EntryType::Symlink => "a symbolic link",
            EntryType::Link => "a hard link",
            EntryType::Char | EntryType::Block => "a device",
            EntryType::Fifo => "a FIFO",
            _ => "not a regular file or folder",
        };
        self.skip(&shown, why);
        Ok(())
    }

    /// The folder names of `path` below the top folder; `Err` says why the
    /// path is refused.
    fn relative(&mut self, path: &Path) -> Result<Vec<OsString>, &'static str> {
        let mut parts = Vec::new();
        for component in path.components() {
            match component {
                Component::Normal(name) => parts.push(name.to_os_string()),
                Component::CurDir => {}
                Component::ParentDir => return Err("its path contains `..`"),
                Component::RootDir | Component::Prefix(_) => return Err("an absolute path"),
            }
        }
        if parts.is_empty() {
            return Err("an empty path");
        }
        let first = parts.remove(0);
        match &self.top {
            None => self.top = Some(first),
            Some(top) if *top == first => {}
            Some(_) => return Err("outside the archive's top folder"),
        }
        Ok(parts)
    }

    /// `parts` below the subpath, or `None` when it lies elsewhere.
    fn under_subpath<'p>(&mut self, parts: &'p [OsString]) -> Option<&'p [OsString]> {
        if parts.len() < self.subpath.len()
            || parts
                .iter()
                .zip(self.subpath)
                .any(|(a, b)| a.as_os_str() != *b)
        {
            return None;
        }
        self.found_subpath = true;
        Some(&parts[self.subpath.len()..])
    }

    fn count(&mut self) -> Result<(), ExtractError> {
        if self.done.entries >= self.limits.max_files {
            return Err(ExtractError::TooLarge(Limit::Files));
        }
        self.done.entries += 1;
        Ok(())
    }

    fn write_file(
        &mut self,
        entry: &mut impl Read,
        target: &Path,
        executable: bool,
        shown: &str,
        tripwire: &Tripwire,
    ) -> Result<(), ExtractError> {
        let io_error = |error| ExtractError::Io {
            path: target.to_path_buf(),
            error,
        };
        if let Some(parent) = target.parent() {
            match fs::create_dir_all(parent) {
                Err(e) if is_conflict(&e) => {
                    self.skip(shown, "it conflicts with an earlier entry");
                    return Ok(());
                }
                result => result.map_err(io_error)?,
            }
        }
        let mut file = match File::create(target) {
            Err(e) if is_conflict(&e) || target.is_dir() => {
                self.skip(shown, "it conflicts with an earlier entry");
                return Ok(());
            }
            result => result.map_err(io_error)?,
        };
        let mut buf = [0u8; 64 * 1024];
        loop {
            let n = match entry.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(tripwire.explain(&e)),
            };
            file.write_all(&buf[..n]).map_err(io_error)?;
        }
        // On disk before the rename that publishes the tree: another process
        // (or this one after a crash) never reads a file cut short.
        file.sync_all().map_err(io_error)?;
        #[cfg(unix)]
        if executable {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(target, fs::Permissions::from_mode(0o755)).map_err(io_error)?;
        }
        #[cfg(not(unix))]
        let _ = executable;
        Ok(())
    }

    fn skip(&mut self, shown: &str, why: &str) {
        tracing::warn!(provider = "github", entry = %shown, "archive entry skipped: {why}");
        if self.done.skipped.len() < MAX_LISTED_SKIPS {
            self.done.skipped.push(format!("{shown} ({why})"));
        } else {
            self.unlisted += 1;
        }
    }
}

fn is_conflict(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotADirectory | io::ErrorKind::IsADirectory | io::ErrorKind::AlreadyExists
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::GzEncoder;

    /// A tar.gz of `(path, type, data)` entries, paths written raw (no checks).
    fn archive(entries: &[(&str, EntryType, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        for (path, kind, data) in entries {
            let mut header = tar::Header::new_gnu();
            let name = &mut header.as_old_mut().name;
            name[..path.len()].copy_from_slice(path.as_bytes());
            header.set_entry_type(*kind);
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    fn run(
        bytes: &[u8],
        subpath: &[&str],
        limits: Limits,
    ) -> (tempfile::TempDir, Result<Extracted, ExtractError>) {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("dest");
        fs::create_dir(&dest).unwrap();
        let result = extract(bytes, &dest, subpath, &limits, &Tripwire::default());
        (dir, result)
    }

    #[test]
    fn top_folder_and_subpath_are_stripped() {
        let bytes = archive(&[
            ("o-r-1/", EntryType::Directory, b""),
            ("o-r-1/README.md", EntryType::Regular, b"readme"),
            ("o-r-1/kit/skills/a/SKILL.md", EntryType::Regular, b"skill"),
        ]);
        let (dir, result) = run(&bytes, &["kit"], Limits::default());
        result.unwrap();
        let dest = dir.path().join("dest");
        assert_eq!(fs::read(dest.join("skills/a/SKILL.md")).unwrap(), b"skill");
        assert!(!dest.join("README.md").exists());
    }

    #[test]
    fn hostile_entries_are_skipped() {
        let bytes = archive(&[
            ("o-r-1/ok.md", EntryType::Regular, b"ok"),
            ("/abs.md", EntryType::Regular, b"x"),
            ("o-r-1/../up.md", EntryType::Regular, b"x"),
            ("o-r-1/link", EntryType::Symlink, b""),
            ("o-r-1/hard", EntryType::Link, b""),
            ("o-r-1/dev", EntryType::Char, b""),
            ("o-r-1/fifo", EntryType::Fifo, b""),
            ("other/x.md", EntryType::Regular, b"x"),
        ]);
        let (dir, result) = run(&bytes, &[], Limits::default());
        let done = result.unwrap();
        assert_eq!(done.skipped.len(), 7, "{:?}", done.skipped);
        let names: Vec<_> = fs::read_dir(dir.path().join("dest"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["ok.md"]);
        assert!(!dir.path().join("up.md").exists());
    }

    #[test]
    fn limits_abort() {
        let bytes = archive(&[
            ("o-r-1/a", EntryType::Regular, &[0u8; 100]),
            ("o-r-1/b", EntryType::Regular, b"b"),
        ]);
        let small_file = Limits {
            max_file_bytes: 99,
            ..Limits::default()
        };
        assert!(
            matches!(run(&bytes, &[], small_file).1, Err(ExtractError::TooLarge(Limit::FileBytes(f))) if f == "a")
        );
        let few = Limits {
            max_files: 1,
            ..Limits::default()
        };
        assert!(matches!(
            run(&bytes, &[], few).1,
            Err(ExtractError::TooLarge(Limit::Files))
        ));
        let small = Limits {
            max_total_bytes: 1000,
            ..Limits::default()
        };
        assert!(matches!(
            run(&bytes, &[], small).1,
            Err(ExtractError::TooLarge(Limit::TotalBytes))
        ));
    }

    #[test]
    fn truncation_and_missing_subpath_are_errors() {
        let bytes = archive(&[("o-r-1/a", EntryType::Regular, b"data")]);
        let cut = &bytes[..bytes.len() - 4];
        assert!(matches!(
            run(cut, &[], Limits::default()).1,
            Err(ExtractError::Corrupt(_))
        ));
        assert!(matches!(
            run(b"not gzip", &[], Limits::default()).1,
            Err(ExtractError::Corrupt(_))
        ));
        assert!(matches!(
            run(&bytes, &["nope"], Limits::default()).1,
            Err(ExtractError::PathNotFound)
        ));
    }
}
