//! How [`Local`](super::Local) learns of changes from the operating system,
//! so that a query of an unchanged folder costs no per-file work, while a
//! change made before a query starts is still seen by that query.
//!
//! On Linux, an inotify instance watches every folder of the tree, and each
//! event marks the kit it falls in as changed; a query walks only those
//! kits (the stat walk of [`refresh`](super::cache::refresh)) and returns the
//! previous [`Kit`](struct@crate::Kit) values, the same `Arc`s, for the others.
//!
//! The query reads the events itself, from the instance's queue, until it is
//! empty: the kernel queues a change's event before the call that made the
//! change returns, so every change made before the query started is among
//! them, and no other thread is waited for. Opening and reading files is not
//! watched (every walk and every body read opens files). A new folder is
//! watched as its event is read, before the query walks its kit. Other
//! platforms (whose watchers deliver events on a thread of their own, with
//! no such guarantee) always walk.
//!
//! Watching starts on a thread of its own after the second query (both walk,
//! as without watching: a folder queried once, by a command that then exits,
//! is never watched, since setting a watch up costs about a walk); the first query after it is set up walks the whole
//! folder once more, and from then on events are trusted. It falls back to the
//! walk, saying so once (a warning, and [`WatchStatus::Fallback`]), when no
//! watcher can be had or the system's watch limit (`max_user_watches`) is
//! reached. When the kernel's event queue overflows, the next query walks the
//! whole folder (with a warning) and watching resumes. A kit reached through a
//! symbolic link, or holding one (a linked skill folder or file), is walked on
//! every query: a change made in a link's target elsewhere happens in no
//! watched folder.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
mod hub;
#[cfg(target_os = "linux")]
#[cfg_attr(not(feature = "mcp"), allow(unused_imports))]
pub(crate) use hub::activity;

/// Where no folder is watched, no activity is signalled.
#[cfg(not(target_os = "linux"))]
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn activity() -> Option<tokio::sync::watch::Receiver<u64>> {
    None
}
#[cfg(target_os = "linux")]
mod inotify;
#[cfg(target_os = "linux")]
pub(super) use inotify::Watch;

#[cfg(not(target_os = "linux"))]
mod off;
#[cfg(not(target_os = "linux"))]
pub(super) use off::Watch;

/// Whether a [`Local`](crate::Local) learns of changes from the operating
/// system, as [`Local::watch_status`](crate::Local::watch_status) tells it.
///
/// ```
/// use skillkit::Local;
/// use skillkit::providers::WatchStatus;
/// assert_eq!(Local::new("/x").watch(false).watch_status(), WatchStatus::Off);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WatchStatus {
    /// Not watching: [`Local::watch(false)`](crate::Local::watch), or a
    /// platform where watching cannot be exact (only Linux's inotify is
    /// used). Every query walks the folder.
    Off,
    /// Watching is being set up (it starts after the second query); until it
    /// is, queries walk the folder.
    Starting,
    /// Queries learn of changes from the operating system: an unchanged
    /// folder costs no per-file work.
    Watching,
    /// Watching failed for good, for the reason given (no watcher could be
    /// had, or the system's limit of watches was reached); every query walks
    /// the folder. A warning said so once.
    Fallback(String),
}

impl std::fmt::Display for WatchStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WatchStatus::Off => f.write_str("off: every query checks each file"),
            WatchStatus::Starting => {
                f.write_str("starting: queries check each file until it is set up")
            }
            WatchStatus::Watching => f.write_str("watching: the operating system reports changes"),
            WatchStatus::Fallback(why) => write!(f, "off ({why}): every query checks each file"),
        }
    }
}

/// A fault to simulate in a watcher, for tests of the fallback
/// ([`Local::simulate_watch_fault`](crate::Local::simulate_watch_fault)),
/// with the internal `__test-hooks` feature only.
#[cfg(feature = "__test-hooks")]
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchFault {
    /// The kernel's event queue overflowed (inotify's `IN_Q_OVERFLOW`):
    /// events were lost.
    Overflow,
    /// The system's limit of watches was reached (`ENOSPC`).
    Exhausted,
    /// No watcher can be had (an error setting it up).
    Unavailable,
}

/// What may have changed since the previous query: what this query walks.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// Everything: walk the whole folder.
    pub(super) all: bool,
    /// The list of kits (an entry of the folder itself came or went).
    pub(super) listing: bool,
    /// The kit folders in which something changed (for
    /// [`Local::new`](super::Local::new), the folder itself).
    pub(super) kits: HashSet<PathBuf>,
}

impl Changes {
    /// Walk everything.
    pub(super) fn everything() -> Changes {
        Changes {
            all: true,
            ..Changes::default()
        }
    }

    /// Whether the kit in folder `dir` may have changed.
    pub(super) fn kit(&self, dir: &Path) -> bool {
        self.all || self.kits.contains(dir)
    }

    /// Whether the list of kit folders may have changed.
    pub(super) fn listing(&self) -> bool {
        self.all || self.listing
    }
}

/// The shape of the folder watched: which kit a changed path belongs to.
#[derive(Debug, Clone)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Roots {
    /// The folder as the provider names it (kit folders are keyed by it).
    dir: PathBuf,
    /// The same, absolute: events name paths below it.
    watched: PathBuf,
    /// Whether each child folder is a kit ([`Local::each`](super::Local::each)).
    each: bool,
}

/// Where a changed path falls.
#[derive(Debug, PartialEq, Eq)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Place {
    /// Outside the folder (nothing to do).
    Outside,
    /// The watched folder itself (moved, deleted, its mode changed).
    Root,
    /// In kit folder `kit`; `entry` when it is an entry of the watched
    /// folder itself (a kit folder came or went).
    Kit { kit: PathBuf, entry: bool },
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl Roots {
    fn place(&self, path: &Path) -> Place {
        let Ok(below) = path.strip_prefix(&self.watched) else {
            return Place::Outside;
        };
        let mut parts = below.components();
        let Some(first) = parts.next() else {
            return Place::Root;
        };
        if !self.each {
            return Place::Kit {
                kit: self.dir.clone(),
                entry: false,
            };
        }
        Place::Kit {
            kit: self.dir.join(first),
            entry: parts.next().is_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_falls_in_its_kit() {
        let roots = Roots {
            dir: "skills".into(),
            watched: "/app/skills".into(),
            each: true,
        };
        let kit = |kit: &str, entry| Place::Kit {
            kit: kit.into(),
            entry,
        };
        assert_eq!(
            roots.place("/app/skills/a/b/SKILL.md".as_ref()),
            kit("skills/a", false)
        );
        assert_eq!(roots.place("/app/skills/a".as_ref()), kit("skills/a", true));
        assert_eq!(roots.place("/app/skills".as_ref()), Place::Root);
        assert_eq!(roots.place("/app/other".as_ref()), Place::Outside);
        let one = Roots {
            each: false,
            ..roots
        };
        assert_eq!(
            one.place("/app/skills/a/SKILL.md".as_ref()),
            kit("skills", false)
        );
    }
}
