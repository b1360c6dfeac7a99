//! The one inotify instance of the process, shared by the watch of every
//! `Local` (the system allows each user 128 instances by default, so an
//! instance per provider left the GitHub cache's kits, and any provider past
//! the 128th, unwatched). Each watch registers for an id; the folders it
//! adds are kept by descriptor with the ids that own them (two providers may
//! watch one folder: the kernel gives it one descriptor), and the queue is
//! read by whichever query comes, each event put in the queue of every
//! watch that owns its folder, until that watch takes them.
//!
//! A thread of the hub's own waits for the instance to be readable and then
//! signals [`activity`] (it reads nothing: the queries do), so a process
//! that polls its catalog for changes (the MCP server) queries at once
//! instead of at its next tick; it waits again once a query read the queue
//! (or after a second, for a queue nobody reads).

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use tokio::sync::watch;

/// The most events kept for one watch between two of its queries; past it,
/// they are dropped and the watch is told events were lost (as the kernel
/// does when its own queue overflows), so its next query walks everything.
const MAX_QUEUED: usize = 64 * 1024;

/// One event, read off the instance's queue.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub(super) wd: WatchDescriptor,
    pub(super) mask: EventMask,
    pub(super) name: Option<OsString>,
}

/// The events of one watch not taken yet.
#[derive(Debug, Default)]
pub(super) struct Queue {
    pub(super) events: Vec<Event>,
    /// Events were lost: the kernel's queue overflowed, or this one did.
    pub(super) overflowed: bool,
}

/// The process's instance and who owns what in it.
pub(super) struct Hub {
    state: Mutex<State>,
    /// A descriptor of the instance, for the signal thread's `poll`.
    fd: OwnedFd,
    /// Bumped when the instance has events to read.
    activity: watch::Sender<u64>,
    /// How many times the queue was read dry, for the signal thread.
    reads: Mutex<u64>,
    read: Condvar,
    signalling: std::sync::Once,
}

struct State {
    inotify: Inotify,
    next_id: u64,
    /// The watches that own each descriptor.
    owners: HashMap<WatchDescriptor, Vec<u64>>,
    /// The events not taken yet, by watch.
    queues: HashMap<u64, Queue>,
}

/// The process's hub, made on first use; `Err` saying why when no instance
/// can be had.
pub(super) fn hub() -> Result<&'static Hub, String> {
    static HUB: OnceLock<Result<Hub, String>> = OnceLock::new();
    HUB.get_or_init(|| {
        let inotify = Inotify::init().map_err(|e| match e.raw_os_error() {
            Some(super::inotify::EMFILE) => "the system's limit of inotify instances was \
                 reached: raise fs.inotify.max_user_instances"
                .to_owned(),
            _ => format!("no watcher could be had: {e}"),
        })?;
        let fd = inotify
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| format!("no watcher could be had: {e}"))?;
        Ok(Hub {
            fd,
            state: Mutex::new(State {
                inotify,
                next_id: 0,
                owners: HashMap::new(),
                queues: HashMap::new(),
            }),
            activity: watch::Sender::new(0),
            reads: Mutex::new(0),
            read: Condvar::new(),
            signalling: std::sync::Once::new(),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new watch's id.
    pub(super) fn register(&'static self) -> u64 {
        self.signalling.call_once(|| {
            let spawned = std::thread::Builder::new()
                .name("skillkit-watch-signal".into())
                .spawn(move || self.signal());
            if let Err(e) = spawned {
                tracing::debug!("no thread to signal the watch's events: {e}");
            }
        });
        let mut state = self.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.queues.insert(id, Queue::default());
        id
    }

    /// Watches `dir` with `mask` for watch `id`.
    pub(super) fn add(&self, id: u64, dir: &Path, mask: WatchMask) -> io::Result<WatchDescriptor> {
        let mut state = self.lock();
        let wd = state.inotify.watches().add(dir, mask)?;
        let owners = state.owners.entry(wd.clone()).or_default();
        if !owners.contains(&id) {
            owners.push(id);
        }
        Ok(wd)
    }

    /// Watch `id` no longer watches `wd`; the kernel's watch goes when no
    /// other watch owns it.
    pub(super) fn remove(&self, id: u64, wd: &WatchDescriptor) {
        let mut state = self.lock();
        Self::disown(&mut state, id, wd);
    }

    fn disown(state: &mut State, id: u64, wd: &WatchDescriptor) {
        let Some(owners) = state.owners.get_mut(wd) else {
            return;
        };
        owners.retain(|owner| *owner != id);
        if owners.is_empty() {
            state.owners.remove(wd);
            let _ = state.inotify.watches().remove(wd.clone());
        }
    }

    /// Watch `id` is gone: its descriptors (`wds`) and its queue with it.
    pub(super) fn release<'a>(&self, id: u64, wds: impl Iterator<Item = &'a WatchDescriptor>) {
        let mut state = self.lock();
        for wd in wds {
            Self::disown(&mut state, id, wd);
        }
        state.queues.remove(&id);
    }

    /// Signals [`activity`] now: a watch was just set up, and a change made
    /// before its folders were watched is seen only by the next query.
    pub(super) fn bump(&self) {
        self.activity.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Signals [`activity`] whenever the instance has events, and waits for
    /// a query to read them before it looks again. Runs for the life of the
    /// process (the hub is the process's).
    fn signal(&self) {
        loop {
            let mut ready = [rustix::event::PollFd::new(
                &self.fd,
                rustix::event::PollFlags::IN,
            )];
            match rustix::event::poll(&mut ready, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return,
            }
            let seen = *self.reads.lock().unwrap_or_else(PoisonError::into_inner);
            self.activity.send_modify(|n| *n = n.wrapping_add(1));
            let reads = self.reads.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = self
                .read
                .wait_timeout_while(reads, Duration::from_secs(1), |reads| *reads == seen);
        }
    }

    /// Reads the instance's queue dry into every watch's queue, then takes
    /// watch `id`'s. No system call but the reads.
    pub(super) fn take(&self, id: u64) -> Queue {
        let mut state = self.lock();
        let State {
            inotify,
            owners,
            queues,
            ..
        } = &mut *state;
        let mut buffer = [0u8; 16 * 1024];
        loop {
            let events = match inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    tracing::debug!("reading the watch's events failed: {e}");
                    queues.values_mut().for_each(|q| q.overflowed = true);
                    break;
                }
            };
            let mut any = false;
            for event in events {
                any = true;
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    queues.values_mut().for_each(|q| q.overflowed = true);
                    continue;
                }
                let Some(ids) = owners.get(&event.wd) else {
                    continue;
                };
                let owned = Event {
                    wd: event.wd.clone(),
                    mask: event.mask,
                    name: event.name.map(ToOwned::to_owned),
                };
                for owner in ids {
                    if let Some(queue) = queues.get_mut(owner) {
                        if queue.events.len() >= MAX_QUEUED {
                            queue.events.clear();
                            queue.overflowed = true;
                        }
                        if !queue.overflowed {
                            queue.events.push(owned.clone());
                        }
                    }
                }
                // The kernel dropped this watch (its folder went away).
                if event.mask.contains(EventMask::IGNORED) {
                    owners.remove(&event.wd);
                }
            }
            if !any {
                break;
            }
        }
        let queue = queues.get_mut(&id).map(std::mem::take).unwrap_or_default();
        drop(state);
        *self.reads.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.read.notify_all();
        queue
    }
}

#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
/// A receiver bumped whenever the process's watch has events (a folder some
/// `Local` watches changed); `None` when there is no watch.
pub(crate) fn activity() -> Option<watch::Receiver<u64>> {
    hub().ok().map(|hub| hub.activity.subscribe())
}
