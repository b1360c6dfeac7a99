//! The threads `Local` reads and parses files on (the search index's first
//! build reads bodies on them too): a pool of its own, started at the first
//! load and kept for the life of the process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The most threads [`pool`] has.
const MAX_THREADS: usize = 8;

/// A rayon pool whose threads past the first start when work first comes:
/// the first task handed over ([`spawn`](Pool::spawn)) already runs on the
/// first thread while the others start, so a fresh process's first load
/// waits for one thread to start, not for all (each takes 0.1 ms or so).
pub(crate) struct Pool {
    threads: rayon::ThreadPool,
    /// The threads built but not started yet.
    waiting: Mutex<Vec<rayon::ThreadBuilder>>,
    /// Set once `waiting` is empty for good.
    started: AtomicBool,
}

/// The pool, built at the first call. A pool of its own: loads never queue
/// behind the program's other rayon work, and no task of the program runs
/// inside a load. `None` when no thread could be started (files then load
/// on the caller's thread).
pub(crate) fn pool() -> Option<&'static Pool> {
    static POOL: OnceLock<Option<Pool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let count = cpus().min(MAX_THREADS);
        let mut waiting = Vec::new();
        let threads = rayon::ThreadPoolBuilder::new()
            .num_threads(count)
            .thread_name(|i| format!("skillkit-local-{i}"))
            .spawn_handler(|thread| match thread.index() {
                0 => start(thread),
                _ => {
                    waiting.push(thread);
                    Ok(())
                }
            })
            .build()
            .inspect_err(|e| tracing::warn!("files will load on the calling thread: {e}"))
            .ok()?;
        Some(Pool {
            threads,
            started: AtomicBool::new(waiting.is_empty()),
            waiting: Mutex::new(waiting),
        })
    })
    .as_ref()
}

/// How many CPUs this process may run on. On Linux, the CPUs of its
/// affinity mask: one system call, where
/// [`available_parallelism`](std::thread::available_parallelism) also reads
/// the cgroup's CPU quota (three files, about 50 µs, a fiftieth of a
/// fresh process's first load of 100 skills). A quota slows the threads
/// down, but files read on more threads still wait for the disk together.
fn cpus() -> usize {
    #[cfg(target_os = "linux")]
    if let Ok(set) = rustix::thread::sched_getaffinity(None) {
        return (set.count() as usize).max(1);
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether this thread is one of [`pool`]'s.
pub(super) fn on_pool() -> bool {
    pool().is_some_and(|pool| pool.threads.current_thread_index().is_some())
}

/// Starts one of the pool's threads.
fn start(thread: rayon::ThreadBuilder) -> std::io::Result<()> {
    let mut builder = std::thread::Builder::new();
    if let Some(name) = thread.name() {
        builder = builder.name(name.to_owned());
    }
    if let Some(size) = thread.stack_size() {
        builder = builder.stack_size(size);
    }
    builder.spawn(move || thread.run()).map(drop)
}

impl Pool {
    /// Hands `job` to the pool, then starts the threads not started yet (the
    /// job meanwhile starts on the first).
    pub(crate) fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        self.threads.spawn(job);
        self.start_all();
    }

    /// The pool's threads, every one started: to install work on, or to
    /// scope it.
    pub(crate) fn threads(&self) -> &rayon::ThreadPool {
        self.start_all();
        &self.threads
    }

    fn start_all(&self) {
        if self.started.load(Ordering::Acquire) {
            return;
        }
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        for thread in waiting.drain(..) {
            // The pool works on with the threads it has: its tasks are
            // taken from a queue all its threads share.
            if let Err(error) = start(thread) {
                tracing::warn!("files will load on fewer threads: {error}");
            }
        }
        self.started.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_pool_counts_the_cpus_a_thread_may_run_on() {
        use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
        let all = sched_getaffinity(None).unwrap();
        assert_eq!(cpus(), all.count() as usize);
        // On a thread held to one CPU (the last it may use), one.
        let last = (0..CpuSet::MAX_CPU)
            .rev()
            .find(|&cpu| all.is_set(cpu))
            .unwrap();
        let one = std::thread::spawn(move || {
            let mut set = CpuSet::new();
            set.set(last);
            sched_setaffinity(None, &set).unwrap();
            cpus()
        });
        assert_eq!(one.join().unwrap(), 1);
    }

    #[test]
    fn work_handed_over_runs_and_starts_every_thread() {
        let pool = pool().expect("the pool starts");
        let (sender, answer) = std::sync::mpsc::channel();
        pool.spawn(move || sender.send(rayon::current_thread_index()).unwrap());
        assert!(answer.recv().unwrap().is_some());
        assert!(pool.started.load(Ordering::Acquire));
        assert!(pool.waiting.lock().unwrap().is_empty());
        // Every thread takes work: as many tasks as threads, each waiting
        // (a while at most) until all are running at once.
        let threads = pool.threads();
        let count = threads.current_num_threads();
        let running = std::sync::atomic::AtomicUsize::new(0);
        let together = std::sync::atomic::AtomicUsize::new(0);
        threads.scope(|scope| {
            for _ in 0..count {
                scope.spawn(|_| {
                    running.fetch_add(1, Ordering::SeqCst);
                    let started = std::time::Instant::now();
                    while running.load(Ordering::SeqCst) < count
                        && started.elapsed() < std::time::Duration::from_secs(20)
                    {
                        std::thread::yield_now();
                    }
                    if running.load(Ordering::SeqCst) == count {
                        together.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(together.load(Ordering::SeqCst), count, "{count} threads");
    }
}
