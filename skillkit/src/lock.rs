//! Advisory locks between processes: the GitHub cache's (its lock file, and
//! the staging folders an import holds) and a session file's writers
//! (`agent::session`).
//!
//! On Unix they are `flock` locks: the kernel releases them when their
//! process ends, however it ends, so a killed import never leaves one held,
//! and whatever it was writing is known to be a leftover. Elsewhere the
//! locks do nothing and a leftover is recognised by its age instead.

use std::fs;
use std::io;
use std::path::Path;
#[cfg(not(unix))]
use std::time::{Duration, SystemTime};

/// A lock, released when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    #[cfg(unix)]
    _file: fs::File,
}

/// Waits until this process holds the lock file `path` (created if
/// missing) exclusively. A link or a FIFO there is refused
/// ([`open_own`](crate::whole::open_own)), never followed or waited on.
#[cfg(any(feature = "github", feature = "agent"))]
pub(crate) fn exclusive(path: &Path) -> io::Result<Held> {
    let file = crate::whole::open_own(
        path,
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
        "a lock file",
    )?;
    #[cfg(unix)]
    {
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
        Ok(Held { _file: file })
    }
    #[cfg(not(unix))]
    {
        drop(file);
        Ok(Held {})
    }
}

/// Holds the folder or file `path` (something this process is writing)
/// until dropped, so that [`take_unused`] leaves it alone.
#[cfg_attr(not(feature = "github"), allow(dead_code))]
pub(crate) fn hold(path: &Path) -> io::Result<Held> {
    #[cfg(unix)]
    {
        let file = fs::File::open(path)?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
        Ok(Held { _file: file })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(Held {})
    }
}

/// The lock of `path` when no live process [holds](hold) it (the caller may
/// then delete it); `None` when one does.
#[cfg_attr(not(feature = "github"), allow(dead_code))]
pub(crate) fn take_unused(path: &Path) -> Option<Held> {
    #[cfg(unix)]
    {
        let file = fs::File::open(path).ok()?;
        let op = rustix::fs::FlockOperation::NonBlockingLockExclusive;
        rustix::fs::flock(&file, op).ok()?;
        Some(Held { _file: file })
    }
    #[cfg(not(unix))]
    {
        /// Without locks, what was last written this long ago is a
        /// leftover.
        const UNUSED: Duration = Duration::from_secs(3600);
        let modified = fs::metadata(path).ok()?.modified().ok()?;
        let age = SystemTime::now().duration_since(modified).ok()?;
        (age > UNUSED).then_some(Held {})
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_held_folder_is_not_taken_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let held = hold(dir.path()).unwrap();
        assert!(take_unused(dir.path()).is_none());
        drop(held);
        let taken = take_unused(dir.path()).unwrap();
        assert!(take_unused(dir.path()).is_none());
        drop(taken);
        assert!(take_unused(dir.path()).is_some());
    }
}
