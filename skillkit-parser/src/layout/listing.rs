//! Reading one directory for a walk: its entries, and its stamp taken on the
//! open directory before the entries are read (so a change made meanwhile
//! shows as a new stamp next time).
//!
//! On Unix a child directory is opened relative to its parent's open handle,
//! so the kernel resolves one path component rather than the whole path, and
//! the stamp comes from `fstat` on the handle: a folder costs open, fstat,
//! the reads of its entries and close, half the work of listing it by path
//! and stat-ing it by path. Elsewhere, through `std::fs` by path.

use std::borrow::Cow;
use std::io;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use super::{Stamp, is_skipped};
use crate::{AGENT_FILE, SKILL_FILE};

/// The kinds of directory entries the layout cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Dir,
    /// Resolved at each walk, so a retargeted link is followed.
    Symlink,
}

/// One entry of a [`Listing`]: its name and kind.
pub(super) type Entry = (Cow<'static, str>, Kind);

/// The entries of a directory a walk can use: its UTF-8 named folders but
/// skipped ones ([`is_skipped`]), links, and `*.md` files (`SKILL.md`,
/// `AGENT.md`, sub-agents); a skill's scripts and assets are left out.
///
/// A scanner keeps a listing per folder, so a listing is one allocation,
/// exactly as long as needed, and cloning it shares it. Most folders of a
/// kit hold one `SKILL.md` and nothing else a walk uses: they all share one
/// listing, and the name `SKILL.md` is never copied.
#[derive(Debug, Clone)]
pub(super) struct Listing {
    pub(super) entries: Arc<[Entry]>,
}

/// The entry `name` of kind `kind`, if a walk can use it.
fn usable(name: &str, kind: Kind) -> Option<Entry> {
    let name = match kind {
        Kind::File if name == SKILL_FILE => Cow::Borrowed(SKILL_FILE),
        Kind::File if name == AGENT_FILE => Cow::Borrowed(AGENT_FILE),
        Kind::File if name.ends_with(".md") => Cow::Owned(name.to_owned()),
        Kind::File => return None,
        _ if is_skipped(name) => return None,
        _ => Cow::Owned(name.to_owned()),
    };
    Some((name, kind))
}

/// A directory kept open while its children are walked, so they open
/// relative to it.
pub(super) struct Handle {
    #[cfg(unix)]
    dir: rustix::fs::Dir,
}

impl Listing {
    fn new(entries: Vec<Entry>) -> Listing {
        static SKILL_ONLY: LazyLock<Arc<[Entry]>> =
            LazyLock::new(|| Arc::new([(Cow::Borrowed(SKILL_FILE), Kind::File)]));
        let entries = if entries[..] == SKILL_ONLY[..] {
            Arc::clone(&SKILL_ONLY)
        } else {
            Arc::from(entries)
        };
        Listing { entries }
    }

    /// Reads directory `path`, opened as `name` inside the open `parent`
    /// when given (which must be `path`'s parent): its entries, its stamp,
    /// and the handle its children open relative to.
    #[cfg(unix)]
    pub(super) fn open(
        path: &Path,
        parent: Option<(&Handle, &str)>,
    ) -> io::Result<(Listing, Stamp, Handle)> {
        use rustix::fs::{CWD, FileType, Mode, OFlags, openat};

        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = match parent {
            Some((parent, name)) => openat(parent.dir.fd()?, name, flags, Mode::empty())?,
            None => openat(CWD, path, flags, Mode::empty())?,
        };
        // Through `std`, so the stamp is the one `Stamp::of` takes by path.
        let file = std::fs::File::from(fd);
        let stamp = Stamp::from_metadata(&file.metadata()?);
        let mut dir = rustix::fs::Dir::new(file)?;
        let mut entries = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            if name == "." || name == ".." {
                continue;
            }
            let file_type = match entry.file_type() {
                // Some filesystems leave the type out of the listing.
                FileType::Unknown => {
                    match rustix::fs::statat(dir.fd()?, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    {
                        Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                        Err(_) => continue,
                    }
                }
                known => known,
            };
            let kind = match file_type {
                FileType::Symlink => Kind::Symlink,
                FileType::Directory => Kind::Dir,
                _ => Kind::File,
            };
            entries.extend(usable(name, kind));
        }
        let listing = Listing::new(entries);
        Ok((listing, stamp, Handle { dir }))
    }

    /// Reads directory `path`: its entries, its stamp, and a handle.
    #[cfg(not(unix))]
    pub(super) fn open(
        path: &Path,
        _parent: Option<(&Handle, &str)>,
    ) -> io::Result<(Listing, Stamp, Handle)> {
        let stamp = Stamp::of(path).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let Ok(entry) = entry else { continue };
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let kind = if file_type.is_symlink() {
                Kind::Symlink
            } else if file_type.is_dir() {
                Kind::Dir
            } else {
                Kind::File
            };
            entries.extend(usable(&name, kind));
        }
        let listing = Listing::new(entries);
        Ok((listing, stamp, Handle {}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_of_an_open_directory_is_the_stamp_by_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("child")).unwrap();
        std::fs::write(dir.path().join("child/SKILL.md"), "x").unwrap();
        let (root, stamp, handle) = Listing::open(dir.path(), None).unwrap();
        assert_eq!(Some(stamp), Stamp::of(dir.path()));
        assert_eq!(&*root.entries, [("child".into(), Kind::Dir)]);
        let child = dir.path().join("child");
        let (listing, stamp, _) = Listing::open(&child, Some((&handle, "child"))).unwrap();
        assert_eq!(Some(stamp), Stamp::of(&child));
        assert_eq!(&*listing.entries, [("SKILL.md".into(), Kind::File)]);
        let (other, _, _) = Listing::open(&child, None).unwrap();
        assert!(Arc::ptr_eq(&listing.entries, &other.entries), "shared");
    }

    #[test]
    fn only_what_a_walk_uses_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::create_dir(dir.path().join("node_modules")).unwrap();
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        for file in ["SKILL.md", "AGENT.md", "notes.md", "run.sh", "target.md"] {
            std::fs::write(dir.path().join(file), "x").unwrap();
        }
        let (listing, _, _) = Listing::open(dir.path(), None).unwrap();
        let mut names: Vec<&str> = listing.entries.iter().map(|(n, _)| &**n).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [".claude", "AGENT.md", "SKILL.md", "notes.md", "target.md"]
        );
    }

    #[test]
    fn a_missing_directory_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let err = Listing::open(&dir.path().join("gone"), None).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
