//! Opening a skill or agent file without ever blocking: the one way every
//! reader (providers, `validate`, the derive, a body read at activation) opens
//! one.
//!
//! A cloned repository can ship a FIFO, a socket, or a link to a device named
//! `SKILL.md`; a plain `open` of a FIFO waits for a writer forever. On Unix
//! the file is opened with `O_NONBLOCK` (and `O_NOCTTY`), so opening cannot
//! wait, then what was opened is checked on the handle (`fstat`), and anything
//! but a regular file is refused, saying what it is.

use std::fmt;
use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

use crate::Diagnostic;

/// The error [`open_file`] gives (inside an [`io::Error`] of kind
/// [`InvalidInput`](io::ErrorKind::InvalidInput)) for a path that is not a
/// regular file: what it is instead.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let err = skillkit_parser::open_file(dir.path()).unwrap_err();
/// let not_a_file = err.get_ref().and_then(|e| e.downcast_ref::<skillkit_parser::NotAFile>());
/// assert_eq!(not_a_file.unwrap().to_string(), "is a directory, not a file");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAFile {
    what: &'static str,
}

/// What [`NotAFile`] says of a link whose target does not exist.
const DANGLING: &str = "a link to a file that does not exist";

impl NotAFile {
    /// What `file_type` is, when it is not a regular file (`None` for a
    /// regular file): for a file opened some other way, checked on its
    /// handle.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let folder = std::fs::metadata(dir.path()).unwrap().file_type();
    /// let found = skillkit_parser::NotAFile::of(folder).unwrap();
    /// assert_eq!(found.to_string(), "is a directory, not a file");
    /// # std::fs::write(dir.path().join("f"), "").unwrap();
    /// let file = std::fs::metadata(dir.path().join("f")).unwrap().file_type();
    /// assert!(skillkit_parser::NotAFile::of(file).is_none());
    /// ```
    pub fn of(file_type: std::fs::FileType) -> Option<NotAFile> {
        if file_type.is_file() {
            return None;
        }
        let what = match file_type.is_dir() {
            true => "a directory",
            false => special(file_type),
        };
        Some(NotAFile { what })
    }

    /// What the path is: `"a directory"`, `"a FIFO (named pipe)"`, `"a
    /// socket"`, `"a device"`, `"a special file"` or `"a link to a file that
    /// does not exist"`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let err = skillkit_parser::open_file(dir.path()).unwrap_err();
    /// let found = err.get_ref().and_then(|e| e.downcast_ref::<skillkit_parser::NotAFile>());
    /// assert_eq!(found.unwrap().what(), "a directory");
    /// ```
    pub fn what(&self) -> &'static str {
        self.what
    }
}

/// What a file that is neither a regular file nor a directory is.
#[cfg(unix)]
fn special(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "a device"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special(_: std::fs::FileType) -> &'static str {
    "a special file"
}

impl fmt::Display for NotAFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.what {
            DANGLING => write!(f, "is {DANGLING}"),
            what => write!(f, "is {what}, not a file"),
        }
    }
}

impl std::error::Error for NotAFile {}

/// Opens the file at `path` for reading, never blocking: opening a FIFO does
/// not wait for a writer, and anything but a regular file (checked on the
/// opened handle, so a file swapped meanwhile cannot slip through) is an
/// error of kind [`InvalidInput`](io::ErrorKind::InvalidInput) holding a
/// [`NotAFile`] that says what it is; so is a link whose target does not
/// exist (only a path that is not there at all is
/// [`NotFound`](io::ErrorKind::NotFound)). Returns the file and its metadata
/// (the handle's). [`cannot_read`] turns an error into a diagnostic.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("SKILL.md");
/// std::fs::write(&path, "---\nname: a\n---\n").unwrap();
/// let (file, meta) = skillkit_parser::open_file(&path).unwrap();
/// assert_eq!(meta.len(), 16);
/// let err = skillkit_parser::open_file(dir.path()).unwrap_err();
/// assert_eq!(err.to_string(), "is a directory, not a file");
/// ```
pub fn open_file(path: &Path) -> io::Result<(File, Metadata)> {
    let file = match open_nonblocking(path) {
        Ok(file) => file,
        // A socket cannot be opened at all (ENXIO): say what it is.
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            return Err(std::fs::metadata(path)
                .ok()
                .and_then(|meta| NotAFile::of(meta.file_type()))
                .map_or(e, not_a_file));
        }
        // A link to nothing is there, and said; a path that is not is not.
        Err(e) => {
            let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
            return Err(match link {
                true => not_a_file(NotAFile { what: DANGLING }),
                false => e,
            });
        }
    };
    checked(file)
}

/// `file` with its metadata, when it is a regular file (checked on the
/// handle, so a file swapped meanwhile cannot slip through).
fn checked(file: File) -> io::Result<(File, Metadata)> {
    let meta = file.metadata()?;
    match NotAFile::of(meta.file_type()) {
        Some(found) => Err(not_a_file(found)),
        None => Ok((file, meta)),
    }
}

/// A folder kept open so that the files below it open from its handle:
/// the kernel then looks up only the part of a file's path below the
/// folder (a component or two) rather than the whole path. A kit's loader
/// opens every skill file of the kit this way.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir(dir.path().join("a")).unwrap();
/// let path = dir.path().join("a/SKILL.md");
/// std::fs::write(&path, "---\nname: a\n---\n").unwrap();
/// let folder = skillkit_parser::Folder::open(dir.path());
/// let (_, meta) = folder.open_file(&path).unwrap();
/// assert_eq!(meta.len(), 16);
/// let err = folder.open_file(&dir.path().join("a")).unwrap_err();
/// assert_eq!(err.to_string(), "is a directory, not a file");
/// ```
#[derive(Debug)]
pub struct Folder {
    #[cfg(unix)]
    root: std::path::PathBuf,
    /// `None` when the folder could not be opened: files open by path.
    #[cfg(unix)]
    dir: Option<std::os::fd::OwnedFd>,
}

impl Folder {
    /// Opens the folder `root` (never waiting: a FIFO swapped in for it
    /// is refused). When it cannot be opened, files below it open by
    /// their whole path, as [`open_file`] does.
    pub fn open(root: &Path) -> Folder {
        #[cfg(unix)]
        let dir = {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK | OFlags::CLOEXEC;
            rustix::fs::open(root, flags, Mode::empty()).ok()
        };
        #[cfg(not(unix))]
        let _ = root;
        Folder {
            #[cfg(unix)]
            root: root.to_path_buf(),
            #[cfg(unix)]
            dir,
        }
    }

    /// [`open_file`]`(path)`, with `path` looked up from the folder when it
    /// lies below it. Anything that goes wrong is tried again by the whole
    /// path, so the errors are those of [`open_file`].
    pub fn open_file(&self, path: &Path) -> io::Result<(File, Metadata)> {
        #[cfg(unix)]
        if let Some(dir) = &self.dir
            && let Some(below) = self.below(path)
            && let Ok(opened) = open_nonblocking_at(dir, below).and_then(checked)
        {
            return Ok(opened);
        }
        open_file(path)
    }
}

#[cfg(unix)]
impl Folder {
    /// The part of `path` below the folder, when `path` is the folder's
    /// path joined with more (as a walk of it makes them): compared as
    /// bytes, where `Path::strip_prefix` compares component by component
    /// (about 6% of a first load's user time at 1,000 skills). Any other
    /// spelling, and a part that would start at `/`, is `None` (the file
    /// opens by its whole path).
    fn below<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        use std::os::unix::ffi::OsStrExt;
        let root = self.root.as_os_str().as_bytes();
        let rest = path.as_os_str().as_bytes().strip_prefix(root)?;
        let rest = match root.ends_with(b"/") {
            true => rest,
            false => rest.strip_prefix(b"/")?,
        };
        match rest.first() {
            None | Some(b'/') => None,
            Some(_) => Some(Path::new(std::ffi::OsStr::from_bytes(rest))),
        }
    }
}

fn not_a_file(found: NotAFile) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, found)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    open_nonblocking_at(rustix::fs::CWD, path)
}

/// Opens `path` (relative to the open folder `dir`) for reading, without
/// waiting for a FIFO's writer or taking a terminal.
#[cfg(unix)]
fn open_nonblocking_at(dir: impl std::os::fd::AsFd, path: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    Ok(File::from(rustix::fs::openat(
        dir,
        path,
        flags,
        Mode::empty(),
    )?))
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// The diagnostic for a skill or agent file at `path` that could not be
/// opened or read: what it is when it is not a regular file, else the
/// system's reason.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let err = skillkit_parser::open_file(dir.path()).unwrap_err();
/// let d = skillkit_parser::cannot_read(dir.path(), &err);
/// assert!(d.message.starts_with("is a directory, not a file"));
/// ```
pub fn cannot_read(path: &Path, err: &io::Error) -> Diagnostic {
    let message = match err.get_ref().and_then(|e| e.downcast_ref::<NotAFile>()) {
        Some(found) => format!("{found}; only regular files are read"),
        None => format!("cannot read the file: {err}"),
    };
    Diagnostic::error(0, 0, message).with_path(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn what_a_special_file_is_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for (path, what) in [
            (fifo.as_path(), "a FIFO (named pipe)"),
            (socket.as_path(), "a socket"),
            (Path::new("/dev/null"), "a device"),
            (dir.path(), "a directory"),
        ] {
            let err = open_file(path).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{path:?}");
            assert_eq!(err.to_string(), format!("is {what}, not a file"));
        }
        let gone = open_file(&dir.path().join("gone")).unwrap_err();
        assert_eq!(gone.kind(), io::ErrorKind::NotFound);
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("gone", &dangling).unwrap();
        let err = open_file(&dangling).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(err.to_string(), "is a link to a file that does not exist");
    }

    #[test]
    fn a_folder_opens_what_open_file_opens_and_refuses_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kit");
        std::fs::create_dir_all(root.join("a/deep")).unwrap();
        std::fs::write(root.join("a/SKILL.md"), "skill").unwrap();
        std::fs::write(dir.path().join("outside.md"), "outside").unwrap();
        std::os::unix::fs::symlink("../../../outside.md", root.join("a/deep/SKILL.md")).unwrap();
        let fifo = root.join("a/fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        std::os::unix::fs::symlink("gone", root.join("a/dangling")).unwrap();
        let folder = Folder::open(&root);
        assert!(folder.dir.is_some());
        let read = |path: &Path| {
            let (mut file, meta) = folder.open_file(path)?;
            let mut text = String::new();
            io::Read::read_to_string(&mut file, &mut text)?;
            assert_eq!(meta.len(), text.len() as u64);
            Ok::<_, io::Error>(text)
        };
        assert_eq!(read(&root.join("a/SKILL.md")).unwrap(), "skill");
        // A link is followed as by its whole path; a path not below the
        // folder opens by its whole path.
        assert_eq!(read(&root.join("a/deep/SKILL.md")).unwrap(), "outside");
        assert_eq!(read(&dir.path().join("outside.md")).unwrap(), "outside");
        for name in ["a", "a/fifo", "a/dangling", "a/gone"] {
            let path = root.join(name);
            let (ours, theirs) = (
                folder.open_file(&path).unwrap_err(),
                open_file(&path).unwrap_err(),
            );
            assert_eq!(ours.kind(), theirs.kind(), "{name}");
            assert_eq!(ours.to_string(), theirs.to_string(), "{name}");
        }
        // A folder that is a FIFO is not waited on, nor one that is not
        // there: files then open by their whole path.
        for root in [fifo.as_path(), Path::new("/no/such/kit")] {
            let folder = Folder::open(root);
            assert!(folder.dir.is_none());
            assert_eq!(
                folder
                    .open_file(&dir.path().join("outside.md"))
                    .unwrap()
                    .1
                    .len(),
                7
            );
        }
    }

    #[test]
    fn only_a_path_spelled_below_the_folder_opens_from_it() {
        let folder = |root: &str| Folder {
            root: root.into(),
            dir: None,
        };
        let below = |root: &str, path: &str| {
            folder(root)
                .below(Path::new(path))
                .map(|p| p.to_str().unwrap().to_owned())
        };
        assert_eq!(below("/k", "/k/a/SKILL.md").as_deref(), Some("a/SKILL.md"));
        assert_eq!(below("/k/", "/k/a/SKILL.md").as_deref(), Some("a/SKILL.md"));
        assert_eq!(below("k", "k/SKILL.md").as_deref(), Some("SKILL.md"));
        // Another folder whose name starts alike, the folder itself, and
        // a part that would be read as a whole path from `/`.
        assert_eq!(below("/k", "/kit/a/SKILL.md"), None);
        assert_eq!(below("/k", "/k"), None);
        assert_eq!(below("/k", "/k/"), None);
        assert_eq!(below("/k/", "/k//etc/passwd"), None);
        assert_eq!(below("/k", "/k//etc/passwd"), None);
        assert_eq!(below("/k", "/j/SKILL.md"), None);
    }
}
