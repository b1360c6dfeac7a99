//! The watch on Linux: inotify through the `notify` crate, with the barrier
//! that makes "no event" mean "no change" (see the parent module).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use notify::event::{AccessKind, AccessMode, Flag};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::barrier;
use super::{BARRIER_WAIT, Changes, Place, Roots, WatchFault, WatchStatus};

/// The watch of one provider's folder.
pub(in crate::providers::local) struct Watch {
    shared: Arc<Shared>,
    /// The watcher, once set up (never locked while holding the state's
    /// lock: the watcher's thread takes that lock to deliver an event, and a
    /// call to the watcher waits for that thread). Not in [`Shared`], which
    /// the watcher's event handler holds: dropping the provider drops it.
    watcher: Arc<Mutex<Option<RecommendedWatcher>>>,
    roots: Roots,
}

/// What the watcher's thread, the setup thread and queries share.
struct Shared {
    state: Mutex<State>,
    /// Signalled when the barrier's event arrives or the phase changes.
    changed: Condvar,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
enum Phase {
    /// Watching is off (`Local::watch(false)`).
    Off,
    /// Not started: it starts after the next query that succeeds.
    #[default]
    Idle,
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
    /// What changed since the previous query.
    changes: Changes,
    /// Paths created or moved in since the previous query: folders among
    /// them are watched before the query walks their kit.
    created: Vec<PathBuf>,
    /// Events were lost: the next query walks the whole folder.
    overflowed: bool,
    /// The watched folder itself moved or vanished: watching starts over.
    lost: bool,
    /// The barrier file whose event the query under way waits for.
    waiting: Option<u64>,
    /// Whether the failure was said.
    warned: bool,
}

impl State {
    fn fail(&mut self, reason: String) {
        if !matches!(self.phase, Phase::Failed(_) | Phase::Off) {
            self.phase = Phase::Failed(reason);
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
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
            watcher: Arc::new(Mutex::new(None)),
            roots: Roots {
                dir: dir.to_path_buf(),
                watched,
                each,
            },
        }
    }

    /// What the query about to run must walk: everything unless the watch
    /// is in use, else the kits with events since the previous query (after
    /// the barrier: every change made before this call is among them).
    /// Called with the provider's cache locked, so queries take turns.
    pub(in crate::providers::local) fn changes(&self, provider: &str) -> Changes {
        let shared = &*self.shared;
        let phase = shared.lock().phase.clone();
        match phase {
            Phase::Off | Phase::Idle | Phase::Starting => return Changes::everything(),
            Phase::Failed(reason) => return self.fall_back(provider, &reason),
            Phase::Armed | Phase::Synced => {}
        }
        // Armed: what changed is cleared below, so every change from then
        // on is recorded, and the walk starting after it sees the others.
        let arrived = phase == Phase::Synced && self.barrier();
        let mut state = shared.lock();
        if let Phase::Failed(reason) = &state.phase {
            let reason = reason.clone();
            drop(state);
            return self.fall_back(provider, &reason);
        }
        let (changes, created) = take(&mut state);
        if std::mem::take(&mut state.lost) {
            state.phase = Phase::Idle;
            drop(state);
            self.stop();
            return Changes::everything();
        }
        let overflowed = std::mem::take(&mut state.overflowed);
        let armed = state.phase == Phase::Armed;
        state.phase = Phase::Synced;
        drop(state);
        if overflowed {
            tracing::warn!(
                provider,
                "the operating system lost track of changes (its event queue overflowed): this query checks each file, then watching resumes"
            );
        } else if !arrived && !armed {
            tracing::debug!(
                provider,
                "no word from the watcher in time: this query checks each file"
            );
        }
        if let Err(reason) = self.watch_created(created) {
            shared.lock().fail(reason.clone());
            return self.fall_back(provider, &reason);
        }
        match armed || overflowed || !arrived {
            true => Changes::everything(),
            false => changes,
        }
    }

    /// Drops the watcher (outside the state's lock: see [`Watch::watcher`]).
    fn stop(&self) {
        let watcher = self
            .watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(watcher);
    }

    /// Every query walks: says so the first time, and drops the watcher.
    fn fall_back(&self, provider: &str, reason: &str) -> Changes {
        let mut state = self.shared.lock();
        if !std::mem::replace(&mut state.warned, true) {
            drop(state);
            tracing::warn!(
                provider,
                "watching the folder for changes is off ({reason}): every query checks each file"
            );
            self.stop();
        }
        Changes::everything()
    }

    /// Watches the folders among `created` (a new kit or skill folder, or
    /// one moved in), before the query walks their kits: a change in them
    /// after this is an event. The watcher's thread adds them too, but only
    /// after the batch of events it is reading, which may hold the barrier's.
    fn watch_created(&self, created: Vec<PathBuf>) -> Result<(), String> {
        let mut watcher = self.watcher.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(watcher) = watcher.as_mut() else {
            return Ok(());
        };
        for path in created {
            // A link is not followed: its kit is walked on every query.
            if !std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
                continue;
            }
            match watcher.watch(&path, RecursiveMode::Recursive) {
                Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
                    return Err(exhausted());
                }
                // Gone again: its kit is walked anyway.
                Err(e) => tracing::debug!(path = %path.display(), "not watched: {e}"),
                Ok(()) => {}
            }
        }
        Ok(())
    }

    /// Makes a barrier file and waits for its event; false when it did not
    /// come in time (or no file could be made).
    fn barrier(&self) -> bool {
        let shared = &*self.shared;
        let Ok(folder) = barrier::folder() else {
            return false;
        };
        let n = barrier::next();
        let path = folder.join(n.to_string());
        shared.lock().waiting = Some(n);
        let made = std::fs::File::create(&path).is_ok();
        let state = shared.lock();
        let (mut state, _) = shared
            .changed
            .wait_timeout_while(state, BARRIER_WAIT, |state| {
                made && state.waiting == Some(n) && !matches!(state.phase, Phase::Failed(_))
            })
            .unwrap_or_else(PoisonError::into_inner);
        let arrived = made && state.waiting.is_none();
        state.waiting = None;
        drop(state);
        let _ = std::fs::remove_file(&path);
        arrived
    }

    /// After a query: one that failed leaves the cache unsure, so the next
    /// walks everything; the first that succeeded starts the watch.
    pub(in crate::providers::local) fn after(&self, ok: bool) {
        let mut state = self.shared.lock();
        match state.phase {
            Phase::Synced if !ok => state.phase = Phase::Armed,
            Phase::Idle if ok => {
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
        let slot = Arc::clone(&self.watcher);
        let roots = self.roots.clone();
        let spawned = std::thread::Builder::new()
            .name("skillkit-watch-setup".into())
            .spawn(move || {
                let set_up = set_up(&shared, &roots);
                let mut state = shared.lock();
                match set_up {
                    Ok(watcher) if state.phase == Phase::Starting => {
                        drop(state);
                        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(watcher);
                        state = shared.lock();
                        if state.phase == Phase::Starting {
                            state.phase = Phase::Armed;
                        }
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
            Phase::Idle | Phase::Starting | Phase::Armed => WatchStatus::Starting,
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
    pub(in crate::providers::local) fn simulate(&self, fault: WatchFault) {
        match fault {
            WatchFault::Overflow => {
                let event = Event::new(EventKind::Other).set_flag(Flag::Rescan);
                on_event(&self.shared, &self.roots, None, Ok(event));
            }
            WatchFault::Exhausted => {
                let error = notify::Error::new(notify::ErrorKind::MaxFilesWatch);
                on_event(&self.shared, &self.roots, None, Err(error));
            }
            WatchFault::Unavailable => self.shared.lock().fail("simulated".into()),
        }
        self.shared.changed.notify_all();
    }
}

/// Takes what changed since the previous query, and the paths created.
fn take(state: &mut State) -> (Changes, Vec<PathBuf>) {
    (
        std::mem::take(&mut state.changes),
        std::mem::take(&mut state.created),
    )
}

fn exhausted() -> String {
    "the system's limit of watched folders was reached: raise fs.inotify.max_user_watches".into()
}

/// A watcher of `roots`' folder and of the barrier folder.
fn set_up(shared: &Arc<Shared>, roots: &Roots) -> Result<RecommendedWatcher, String> {
    let barrier = barrier::folder()?;
    let handler = {
        let shared = Arc::clone(shared);
        let roots = roots.clone();
        move |event| on_event(&shared, &roots, Some(barrier), event)
    };
    // Links are not followed: a kit holding one is walked on every query.
    let config = notify::Config::default().with_follow_symlinks(false);
    let failed = |e: notify::Error| match e.kind {
        notify::ErrorKind::MaxFilesWatch => exhausted(),
        _ => format!("no watcher could be had: {e}"),
    };
    let mut watcher = RecommendedWatcher::new(handler, config).map_err(failed)?;
    watcher
        .watch(barrier, RecursiveMode::NonRecursive)
        .map_err(failed)?;
    watcher
        .watch(&roots.watched, RecursiveMode::Recursive)
        .map_err(failed)?;
    Ok(watcher)
}

/// Records one event of the watcher (`barrier`: the private folder, if any).
fn on_event(shared: &Shared, roots: &Roots, barrier: Option<&Path>, event: notify::Result<Event>) {
    let mut state = shared.lock();
    let event = match event {
        Ok(event) => event,
        Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
            state.fail(exhausted());
            shared.changed.notify_all();
            return;
        }
        Err(e) => {
            tracing::debug!("watcher error: {e}");
            state.overflowed = true;
            return;
        }
    };
    if event.need_rescan() {
        state.overflowed = true;
    }
    let reads = matches!(
        event.kind,
        EventKind::Access(
            AccessKind::Open(_)
                | AccessKind::Read
                | AccessKind::Close(AccessMode::Read | AccessMode::Execute)
        )
    );
    let created = matches!(
        event.kind,
        EventKind::Create(_) | EventKind::Modify(notify::event::ModifyKind::Name(_))
    );
    for path in &event.paths {
        if let Some(name) = barrier.and_then(|b| path.strip_prefix(b).ok()) {
            // Every watch sees every barrier file: only the one its query
            // waits for counts.
            if state.waiting.is_some() && state.waiting == barrier::number(name) {
                state.waiting = None;
                shared.changed.notify_all();
            }
            continue;
        }
        // Reading changes nothing (and every walk reads).
        if reads {
            continue;
        }
        match roots.place(path) {
            Place::Outside => {}
            Place::Root => state.lost = true,
            Place::Kit { kit, entry } => {
                state.changes.listing |= entry;
                state.changes.kits.insert(kit);
                if created {
                    state.created.push(path.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_the_watch_frees_its_watcher() {
        let dir = tempfile::tempdir().unwrap();
        let watch = Watch::new(dir.path(), false, true);
        watch.after(true);
        watch.wait_set_up(std::time::Duration::from_secs(60));
        assert!(watch.watcher.lock().unwrap().is_some(), "set up");
        let shared = Arc::downgrade(&watch.shared);
        drop(watch);
        // The watcher's thread drops its event handler (which holds the
        // shared state) when it stops, on its own time.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while shared.upgrade().is_some() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(shared.upgrade().is_none(), "the watcher stopped");
    }
}
