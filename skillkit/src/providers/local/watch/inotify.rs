//! The watch on Linux: each provider's folders in the process's one inotify
//! instance (`hub.rs`, the `inotify` crate), whose queue the query itself
//! reads (see the parent module).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use inotify::{EventMask, WatchDescriptor, WatchMask};

use super::hub::{self, Hub};

#[cfg(feature = "__test-hooks")]
use super::WatchFault;
use super::{Changes, Place, Roots, WatchStatus};

/// The watch of one provider's folder.
pub(in crate::providers::local) struct Watch {
    shared: Arc<Shared>,
    roots: Roots,
}

/// What the setup thread and queries share.
struct Shared {
    state: Mutex<State>,
    /// Signalled when the phase changes.
    changed: Condvar,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
enum Phase {
    /// Watching is off (`Local::watch(false)`).
    Off,
    /// Not started: queried never (or not since the folder moved).
    #[default]
    Idle,
    /// Queried once: the watch starts after the next query that succeeds
    /// (a folder queried once, by a command that then exits, is never
    /// watched: setting the watch up costs about a walk).
    Queried,
    /// Being set up, on a thread of its own.
    Starting,
    /// Set up: the next query walks the whole folder, and events are
    /// trusted from then on.
    Armed,
    /// Events are trusted.
    Synced,
    /// Failed for good, for this reason.
    Failed(String),
}

#[derive(Default)]
struct State {
    phase: Phase,
    /// The instance, once set up.
    watcher: Option<Watcher>,
    /// Events read and not yet taken by a query's [`Watch::changes`].
    pending: Pending,
    /// Events were lost (a simulated overflow): the next query walks the
    /// whole folder.
    overflowed: bool,
    /// Whether the failure was said.
    warned: bool,
}

impl State {
    fn fail(&mut self, reason: String) {
        if !matches!(self.phase, Phase::Failed(_) | Phase::Off) {
            self.phase = Phase::Failed(reason);
            self.watcher = None;
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Linux's error numbers for the limits: of watches (`inotify_add_watch`)
/// and of instances (`inotify_init1`).
const ENOSPC: i32 = 28;
pub(super) const EMFILE: i32 = 24;

/// What a folder's watch reports: a change to an entry (a file written,
/// made, removed, renamed, its mode changed) or to the folder itself. Not
/// opening or reading: every walk and every body read opens files.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::CLOSE_WRITE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        // Folders only, links not followed: a kit holding a link is walked
        // on every query.
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
        | WatchMask::EXCL_UNLINK
}

/// One provider's watches, in the process's instance: every folder of its
/// tree.
struct Watcher {
    hub: &'static Hub,
    /// This watcher's id in the hub.
    id: u64,
    /// The folder each watch is on (absolute).
    folders: HashMap<WatchDescriptor, PathBuf>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.hub.release(self.id, self.folders.keys());
    }
}

/// What the events read so far say.
#[derive(Debug, Default)]
struct Pending {
    /// The kits where something changed.
    changes: Changes,
    /// Folders made or moved in, to watch before their kits are walked.
    created: Vec<PathBuf>,
    /// Folders moved away, no longer watched under their old names.
    moved_away: Vec<PathBuf>,
    /// The queue overflowed (or could not be read): events were lost.
    overflowed: bool,
    /// The watched folder itself was moved or deleted.
    lost: bool,
}

impl Pending {
    /// Whether nothing happened.
    fn is_empty(&self) -> bool {
        !self.changes.listing
            && self.changes.kits.is_empty()
            && self.created.is_empty()
            && self.moved_away.is_empty()
            && !self.overflowed
            && !self.lost
    }
}

impl Watcher {
    /// A watch on every folder of `root`.
    fn new(root: &Path) -> Result<Watcher, String> {
        let hub = hub::hub()?;
        let mut watcher = Watcher {
            hub,
            id: hub.register(),
            folders: HashMap::new(),
        };
        watcher.watch_root(root)?;
        if watcher.folders.is_empty() {
            return Err(format!("{} could not be watched", root.display()));
        }
        Ok(watcher)
    }

    /// Watches `dir` and every folder below it (a folder already watched
    /// keeps its watch, now under this path). A folder that went away or
    /// cannot be read is left out; the system's watch limit is an error.
    fn watch_tree(&mut self, dir: &Path) -> Result<(), String> {
        self.watch_below(dir, mask())
    }

    /// Watches the watched folder itself and every folder below it: the
    /// folder itself may be a link (`~/.claude/skills` kept elsewhere), which
    /// is followed; links below it are not.
    fn watch_root(&mut self, root: &Path) -> Result<(), String> {
        self.watch_below(root, mask() & !WatchMask::DONT_FOLLOW)
    }

    /// Watches `dir` with `first` and the folders below it with [`mask`].
    fn watch_below(&mut self, dir: &Path, first: WatchMask) -> Result<(), String> {
        let mut stack = vec![dir.to_path_buf()];
        let mut how = first;
        while let Some(dir) = stack.pop() {
            let added = self
                .hub
                .add(self.id, &dir, std::mem::replace(&mut how, mask()));
            match added {
                Ok(wd) => {
                    self.folders.insert(wd, dir.clone());
                }
                Err(e) if e.raw_os_error() == Some(ENOSPC) => return Err(exhausted()),
                // Gone, not a folder (a link), or not readable: its kit is
                // walked as it is.
                Err(e) => {
                    tracing::debug!(path = %dir.display(), "not watched: {e}");
                    continue;
                }
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                // The walk skips VCS folders and build output (`.git`,
                // `node_modules`, `target`, …): so does the watch, or a large
                // repository would spend the system's watch limit on them.
                if entry.file_type().is_ok_and(|t| t.is_dir()) && !skipped(&entry.path()) {
                    stack.push(entry.path());
                }
            }
        }
        Ok(())
    }

    /// Stops watching `dir` and the folders below it (moved away).
    fn unwatch_tree(&mut self, dir: &Path) {
        let (hub, id) = (self.hub, self.id);
        self.folders.retain(|wd, folder| {
            let below = folder.starts_with(dir);
            if below {
                hub.remove(id, wd);
            }
            !below
        });
    }

    /// Reads the queue dry into `pending`. No system call but the reads:
    /// cheap enough for a query's thread, whatever it is.
    fn read(&mut self, roots: &Roots, pending: &mut Pending) {
        let queue = self.hub.take(self.id);
        pending.overflowed |= queue.overflowed;
        for event in queue.events {
            let Some(folder) = self.folders.get(&event.wd) else {
                continue;
            };
            if event.mask.contains(EventMask::IGNORED) {
                pending.lost |= roots.place(folder) == Place::Root;
                self.folders.remove(&event.wd);
                continue;
            }
            let path = match &event.name {
                Some(name) => folder.join(name),
                None => folder.clone(),
            };
            match roots.place(&path) {
                Place::Outside => {}
                Place::Root => {
                    pending.lost |= event
                        .mask
                        .intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF);
                }
                Place::Kit { kit, entry } => {
                    pending.changes.listing |= entry;
                    pending.changes.kits.insert(kit);
                }
            }
            if event.mask.contains(EventMask::ISDIR) && event.name.is_some() {
                if event.mask.contains(EventMask::MOVED_FROM) {
                    pending.moved_away.push(path);
                } else if event
                    .mask
                    .intersects(EventMask::CREATE | EventMask::MOVED_TO)
                {
                    pending.created.push(path);
                }
            }
        }
    }

    /// Follows the folders of `pending` that moved away or appeared: new
    /// folders are watched before the query walks their kits (so a change
    /// in one after this is an event, and one before it is seen by that
    /// walk).
    fn follow(&mut self, pending: &mut Pending) -> Result<(), String> {
        for dir in std::mem::take(&mut pending.moved_away) {
            self.unwatch_tree(&dir);
        }
        for dir in std::mem::take(&mut pending.created) {
            if !skipped(&dir) {
                self.watch_tree(&dir)?;
            }
        }
        Ok(())
    }
}

/// Whether the walk skips folder `dir` by its name (the one rule
/// [`is_skipped`](skillkit_parser::layout::is_skipped)).
fn skipped(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(skillkit_parser::layout::is_skipped)
}

impl Watch {
    /// The watch of `dir` (each child folder a kit when `each`), off when
    /// `enabled` is false. Nothing starts until a query succeeds.
    pub(in crate::providers::local) fn new(dir: &Path, each: bool, enabled: bool) -> Watch {
        let watched = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let state = State {
            phase: if enabled { Phase::Idle } else { Phase::Off },
            ..State::default()
        };
        Watch {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                changed: Condvar::new(),
            }),
            roots: Roots {
                dir: dir.to_path_buf(),
                watched,
                each,
            },
        }
    }

    /// What the query about to run must walk: everything unless the watch
    /// is in use, else the kits with events since the previous query. The
    /// kernel queues a change's event before the call that made the change
    /// returns, so the queue read dry here holds every change made before
    /// this call. Called with the provider's cache locked, so queries take
    /// turns.
    pub(in crate::providers::local) fn changes(&self, provider: &str) -> Changes {
        let mut state = self.shared.lock();
        match &state.phase {
            Phase::Off | Phase::Idle | Phase::Queried | Phase::Starting => {
                return Changes::everything();
            }
            Phase::Failed(reason) => {
                let reason = reason.clone();
                drop(state);
                return self.fall_back(provider, &reason);
            }
            Phase::Armed | Phase::Synced => {}
        }
        let armed = state.phase == Phase::Armed;
        let State {
            watcher, pending, ..
        } = &mut *state;
        let followed = match watcher.as_mut() {
            Some(watcher) => {
                watcher.read(&self.roots, pending);
                watcher.follow(pending)
            }
            None => {
                pending.lost = true;
                Ok(())
            }
        };
        let pending = std::mem::take(&mut state.pending);
        if let Err(reason) = followed {
            state.fail(reason.clone());
            drop(state);
            return self.fall_back(provider, &reason);
        }
        if pending.lost {
            // The folder itself moved or vanished: watching starts over
            // after the next query that succeeds.
            state.phase = Phase::Queried;
            state.watcher = None;
            return Changes::everything();
        }
        let overflowed = std::mem::take(&mut state.overflowed) || pending.overflowed;
        if overflowed {
            // Folders made while events were lost have no watch yet.
            let resynced = match state.watcher.as_mut() {
                Some(watcher) => watcher.watch_root(&self.roots.watched),
                None => Ok(()),
            };
            if let Err(reason) = resynced {
                state.fail(reason.clone());
                drop(state);
                return self.fall_back(provider, &reason);
            }
            tracing::warn!(
                provider,
                "the operating system lost track of changes (its event queue overflowed): this query checks each file, then watching resumes"
            );
        }
        let changes = pending.changes;
        state.phase = Phase::Synced;
        match armed || overflowed {
            true => Changes::everything(),
            false => changes,
        }
    }

    /// Whether nothing changed since the previous query, for certain: the
    /// watch is in use and its queue, read dry now, holds no event (those
    /// read are kept for the next [`changes`](Self::changes)). `false` when
    /// unsure. Reads only: no file is touched, no thread waited for.
    pub(in crate::providers::local) fn quiet(&self) -> bool {
        let mut state = self.shared.lock();
        if state.phase != Phase::Synced || state.overflowed {
            return false;
        }
        let State {
            watcher, pending, ..
        } = &mut *state;
        match watcher.as_mut() {
            Some(watcher) => watcher.read(&self.roots, pending),
            None => return false,
        }
        pending.is_empty()
    }

    /// Every query walks: says so the first time.
    fn fall_back(&self, provider: &str, reason: &str) -> Changes {
        let mut state = self.shared.lock();
        if !std::mem::replace(&mut state.warned, true) {
            drop(state);
            tracing::warn!(
                provider,
                "watching the folder for changes is off ({reason}): every query checks each file"
            );
        }
        Changes::everything()
    }

    /// After a query: one that failed leaves the cache unsure, so the next
    /// walks everything; the second that succeeded starts the watch.
    pub(in crate::providers::local) fn after(&self, ok: bool) {
        let mut state = self.shared.lock();
        match state.phase {
            Phase::Synced if !ok => state.phase = Phase::Armed,
            Phase::Idle if ok => state.phase = Phase::Queried,
            Phase::Queried if ok => {
                state.phase = Phase::Starting;
                drop(state);
                self.start();
            }
            _ => {}
        }
    }

    /// Sets the watch up on a thread of its own (adding a watch per folder
    /// takes about as long as a walk), so no query waits for it.
    fn start(&self) {
        let shared = Arc::clone(&self.shared);
        let root = self.roots.watched.clone();
        let spawned = std::thread::Builder::new()
            .name("skillkit-watch-setup".into())
            .spawn(move || {
                let set_up = Watcher::new(&root);
                let mut state = shared.lock();
                match set_up {
                    Ok(watcher) if state.phase == Phase::Starting => {
                        let hub = watcher.hub;
                        state.watcher = Some(watcher);
                        state.phase = Phase::Armed;
                        drop(state);
                        // The next query walks everything: whoever waits
                        // for changes queries now.
                        hub.bump();
                        shared.changed.notify_all();
                        return;
                    }
                    Ok(_) => {}
                    Err(reason) => state.fail(reason),
                }
                shared.changed.notify_all();
            });
        if let Err(e) = spawned {
            self.shared
                .lock()
                .fail(format!("no thread could be started to set it up: {e}"));
        }
    }

    /// What [`Local::watch_status`](crate::Local::watch_status) says.
    pub(in crate::providers::local) fn status(&self) -> WatchStatus {
        match &self.shared.lock().phase {
            Phase::Off => WatchStatus::Off,
            Phase::Idle | Phase::Queried | Phase::Starting | Phase::Armed => WatchStatus::Starting,
            Phase::Synced => WatchStatus::Watching,
            Phase::Failed(reason) => WatchStatus::Fallback(reason.clone()),
        }
    }

    /// Waits up to `timeout` for the setup under way to end.
    pub(in crate::providers::local) fn wait_set_up(&self, timeout: std::time::Duration) {
        let state = self.shared.lock();
        let _ = self
            .shared
            .changed
            .wait_timeout_while(state, timeout, |state| state.phase == Phase::Starting);
    }

    /// Simulates `fault` through the paths a real one takes.
    #[cfg(feature = "__test-hooks")]
    pub(in crate::providers::local) fn simulate(&self, fault: WatchFault) {
        let mut state = self.shared.lock();
        match fault {
            WatchFault::Overflow => state.overflowed = true,
            WatchFault::Exhausted => state.fail(exhausted()),
            WatchFault::Unavailable => state.fail("simulated".into()),
        }
        self.shared.changed.notify_all();
    }
}

fn exhausted() -> String {
    "the system's limit of watched folders was reached: raise fs.inotify.max_user_watches".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setup_thread_keeps_nothing_and_dropping_the_watch_closes_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        let watch = Watch::new(dir.path(), false, true);
        watch.after(true);
        assert!(
            watch.shared.lock().phase == Phase::Queried,
            "one query: no watch set up"
        );
        watch.after(true);
        watch.wait_set_up(std::time::Duration::from_secs(60));
        let folders = watch
            .shared
            .lock()
            .watcher
            .as_ref()
            .map(|w| w.folders.len());
        assert_eq!(folders, Some(3), "the folder and the two below it");
        let shared = Arc::downgrade(&watch.shared);
        drop(watch);
        // The setup thread may still be on its way out.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while shared.upgrade().is_some() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(shared.upgrade().is_none(), "the watch is gone");
    }

    #[test]
    fn a_folder_moved_away_is_no_longer_watched_under_its_old_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("k/skills/a")).unwrap();
        let root = std::path::absolute(dir.path()).unwrap();
        let roots = Roots {
            dir: dir.path().to_path_buf(),
            watched: root.clone(),
            each: true,
        };
        let mut watcher = Watcher::new(&root).unwrap();
        std::fs::rename(root.join("k/skills/a"), root.join("k/skills/b")).unwrap();
        let mut pending = Pending::default();
        watcher.read(&roots, &mut pending);
        assert!(pending.changes.kits.contains(&dir.path().join("k")));
        assert!(!pending.overflowed && !pending.lost);
        watcher.follow(&mut pending).unwrap();
        let mut folders: Vec<_> = watcher.folders.values().cloned().collect();
        folders.sort();
        assert_eq!(
            folders,
            [
                root.clone(),
                root.join("k"),
                root.join("k/skills"),
                root.join("k/skills/b")
            ]
        );
    }

    #[test]
    fn folders_the_walk_skips_are_not_watched() {
        let dir = tempfile::tempdir().unwrap();
        for folder in [
            "k/skills/a",
            "k/node_modules/x/y",
            "k/.git/objects",
            "k/target/debug",
        ] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        }
        let root = std::path::absolute(dir.path()).unwrap();
        let roots = Roots {
            dir: dir.path().to_path_buf(),
            watched: root.clone(),
            each: true,
        };
        let mut watcher = Watcher::new(&root).unwrap();
        // One made later is not watched either.
        std::fs::create_dir_all(root.join("k/skills/a/node_modules/z")).unwrap();
        std::fs::create_dir_all(root.join("k/skills/c")).unwrap();
        let mut pending = Pending::default();
        watcher.read(&roots, &mut pending);
        watcher.follow(&mut pending).unwrap();
        let mut folders: Vec<_> = watcher.folders.values().cloned().collect();
        folders.sort();
        assert_eq!(
            folders,
            [
                root.clone(),
                root.join("k"),
                root.join("k/skills"),
                root.join("k/skills/a"),
                root.join("k/skills/c"),
            ]
        );
    }
}
