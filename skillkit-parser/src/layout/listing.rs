//! Reading one directory for a walk: its entries, and its stamp taken on the
//! open directory before the entries are read (so a change made meanwhile
//! shows as a new stamp next time).
//!
//! On Unix a child directory is opened relative to its parent's open handle,
//! so the kernel resolves one path component rather than the whole path, and
//! the stamp comes from `fstat` on the handle: a folder costs open, fstat,
//! the reads of its entries and close, half the work of listing it by path
//! and stat-ing it by path. Elsewhere, through `std::fs` by path.

use std::io;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use super::{Stamp, is_skipped};
use crate::SKILL_FILE;

/// The kinds of directory entries the layout cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Dir,
    /// Resolved at each walk, so a retargeted link is followed.
    Symlink,
    /// A folder or link whose name is not UTF-8 (kept under its name made
    /// valid, U+FFFD for each bad byte): skipped, and the walk says so.
    NotUtf8,
}

/// The entries of a directory a walk can use: its UTF-8 named folders but
/// skipped ones ([`is_skipped`]), links, and `*.md` files (`SKILL.md`,
/// `AGENT.md`, sub-agents); a skill's scripts and assets are left out. A
/// folder or link whose name is not UTF-8 is kept as [`Kind::NotUtf8`], so
/// every walk over the listing reports it.
///
/// A scanner keeps a listing per folder, and a kit's folder lists all its
/// skill folders, so a listing is kept small: every name in one buffer, each
/// entry the end of its name and its kind (8 bytes, where a name of its own
/// would take an allocation and 24 bytes), and cloning it shares it. Most
/// folders of a kit hold one `SKILL.md` and nothing else a walk uses: they
/// all share one listing.
#[derive(Debug, Clone)]
pub(super) struct Listing {
    pub(super) shared: Arc<Entries>,
}

#[derive(Debug)]
pub(super) struct Entries {
    names: Box<str>,
    /// Each entry's name is `names[previous end..end]`.
    ends: Box<[(u32, Kind)]>,
}

/// Whether a walk can use the entry `name` of kind `kind`.
fn usable(name: &str, kind: Kind) -> bool {
    match kind {
        Kind::File => name.ends_with(".md"),
        _ => !is_skipped(name),
    }
}

/// The entries of a listing being read.
#[derive(Default)]
struct Builder {
    names: String,
    ends: Vec<(u32, Kind)>,
    /// The first entry is the file `SKILL.md`, not yet written in `names`
    /// and `ends`: most folders hold nothing else a walk uses, and their
    /// listing is then the shared one, with nothing allocated.
    skill_first: bool,
}

impl Builder {
    /// Adds the entry `name` of kind `kind` if a walk can use it.
    fn push(&mut self, name: &str, kind: Kind) -> io::Result<()> {
        if !usable(name, kind) {
            return Ok(());
        }
        if self.ends.is_empty() && !self.skill_first && kind == Kind::File && name == SKILL_FILE {
            self.skill_first = true;
            return Ok(());
        }
        if std::mem::take(&mut self.skill_first) {
            self.write(SKILL_FILE, Kind::File)?;
        }
        self.write(name, kind)
    }

    fn write(&mut self, name: &str, kind: Kind) -> io::Result<()> {
        self.names.push_str(name);
        let end = u32::try_from(self.names.len())
            .map_err(|_| io::Error::other("the folder holds more than 4 GiB of names; split it"))?;
        self.ends.push((end, kind));
        Ok(())
    }

    fn build(self) -> Listing {
        static SKILL_ONLY: LazyLock<Arc<Entries>> = LazyLock::new(|| {
            Arc::new(Entries {
                names: SKILL_FILE.into(),
                ends: Box::new([(SKILL_FILE.len() as u32, Kind::File)]),
            })
        });
        if self.skill_first {
            return Listing {
                shared: Arc::clone(&SKILL_ONLY),
            };
        }
        let entries = Entries {
            names: self.names.into_boxed_str(),
            ends: self.ends.into_boxed_slice(),
        };
        Listing {
            shared: Arc::new(entries),
        }
    }
}

/// A directory kept open while its children are walked, so they open
/// relative to it.
pub(super) struct Handle {
    #[cfg(unix)]
    dir: std::fs::File,
}

/// Calls `each` with the name and type of every entry of the open
/// directory `dir` (`.` and `..` too), in the order the system lists them.
/// On Linux the entries are read into a buffer on the stack, so a listing
/// allocates nothing but what it keeps.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn each_entry(
    dir: &std::fs::File,
    each: &mut dyn FnMut(&std::ffi::CStr, rustix::fs::FileType) -> io::Result<()>,
) -> io::Result<()> {
    use std::mem::MaybeUninit;
    // Room for a few hundred entries a call (an entry takes its name and
    // about 20 bytes): most folders of a kit are read in one.
    let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
    let mut entries = rustix::fs::RawDir::new(dir, &mut buf);
    while let Some(entry) = entries.next() {
        let entry = entry?;
        each(entry.file_name(), entry.file_type())?;
    }
    Ok(())
}

/// Calls `each` with the name and type of every entry of the open
/// directory `dir` (`.` and `..` too).
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
fn each_entry(
    dir: &std::fs::File,
    each: &mut dyn FnMut(&std::ffi::CStr, rustix::fs::FileType) -> io::Result<()>,
) -> io::Result<()> {
    let mut entries = rustix::fs::Dir::read_from(dir)?;
    while let Some(entry) = entries.read() {
        let entry = entry?;
        each(entry.file_name(), entry.file_type())?;
    }
    Ok(())
}

impl Listing {
    /// Every entry: its name and kind.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&str, Kind)> {
        let Entries { names, ends } = &*self.shared;
        let starts = std::iter::once(0).chain(ends.iter().map(|(end, _)| *end));
        starts
            .zip(ends.iter())
            .map(|(start, (end, kind))| (&names[start as usize..*end as usize], *kind))
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
            Some((parent, name)) => openat(&parent.dir, name, flags, Mode::empty())?,
            None => openat(CWD, path, flags, Mode::empty())?,
        };
        // Through `std`, so the stamp is the one `Stamp::of` takes by path.
        let dir = std::fs::File::from(fd);
        let stamp = Stamp::from_metadata(&dir.metadata()?);
        let mut entries = Builder::default();
        each_entry(&dir, &mut |raw, file_type| {
            if raw == c"." || raw == c".." {
                return Ok(());
            }
            let file_type = match file_type {
                // Some filesystems leave the type out of the listing.
                FileType::Unknown => {
                    match rustix::fs::statat(&dir, raw, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                        Err(_) => return Ok(()),
                    }
                }
                known => known,
            };
            let kind = match file_type {
                FileType::Symlink => Kind::Symlink,
                FileType::Directory => Kind::Dir,
                _ => Kind::File,
            };
            match raw.to_str() {
                Ok(name) => entries.push(name, kind),
                Err(_) if kind != Kind::File => entries.push(&raw.to_string_lossy(), Kind::NotUtf8),
                Err(_) => Ok(()),
            }
        })?;
        Ok((entries.build(), stamp, Handle { dir }))
    }

    /// Reads directory `path`: its entries, its stamp, and a handle.
    #[cfg(not(unix))]
    pub(super) fn open(
        path: &Path,
        _parent: Option<(&Handle, &str)>,
    ) -> io::Result<(Listing, Stamp, Handle)> {
        let stamp = Stamp::of(path).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let mut entries = Builder::default();
        for entry in std::fs::read_dir(path)? {
            let Ok(entry) = entry else { continue };
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
            match entry.file_name().into_string() {
                Ok(name) => entries.push(&name, kind)?,
                Err(name) if kind != Kind::File => {
                    entries.push(&name.to_string_lossy(), Kind::NotUtf8)?;
                }
                Err(_) => {}
            }
        }
        Ok((entries.build(), stamp, Handle {}))
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
        assert_eq!(root.iter().collect::<Vec<_>>(), [("child", Kind::Dir)]);
        let child = dir.path().join("child");
        let (listing, stamp, _) = Listing::open(&child, Some((&handle, "child"))).unwrap();
        assert_eq!(Some(stamp), Stamp::of(&child));
        assert_eq!(
            listing.iter().collect::<Vec<_>>(),
            [("SKILL.md", Kind::File)]
        );
        let (other, _, _) = Listing::open(&child, None).unwrap();
        assert!(Arc::ptr_eq(&listing.shared, &other.shared), "shared");
    }

    #[test]
    fn folders_of_one_skill_file_share_one_listing() {
        let dir = tempfile::tempdir().unwrap();
        let listing_of = |files: &[&str]| {
            let folder = tempfile::tempdir_in(dir.path()).unwrap();
            for file in files {
                std::fs::write(folder.path().join(file), "x").unwrap();
            }
            Listing::open(folder.path(), None).unwrap().0
        };
        // Scripts and assets are no part of a listing.
        let (a, b) = (
            listing_of(&["SKILL.md"]),
            listing_of(&["SKILL.md", "run.sh"]),
        );
        assert!(Arc::ptr_eq(&a.shared, &b.shared));
        assert_eq!(a.iter().collect::<Vec<_>>(), [("SKILL.md", Kind::File)]);
        // With another entry, each is kept, whichever the system lists first.
        let both = listing_of(&["SKILL.md", "notes.md"]);
        assert!(!Arc::ptr_eq(&a.shared, &both.shared));
        let mut names: Vec<&str> = both.iter().map(|(n, _)| n).collect();
        names.sort_unstable();
        assert_eq!(names, ["SKILL.md", "notes.md"]);
        assert!(listing_of(&[]).iter().next().is_none());
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
        let mut names: Vec<&str> = listing.iter().map(|(n, _)| n).collect();
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
