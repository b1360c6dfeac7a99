//! What activating a skill reads from its folder (the body of its
//! `SKILL.md`, the names of the files beside it), kept while the disk shows
//! it unchanged.
//!
//! An entry is used only when every file and folder it was read from still
//! has the stamp it had (size, inode, mtime, ctime: one `stat` each), the
//! rule `Local`'s cache follows. A stamp too close to its read to prove
//! anything (the racy rule, [`Stamp::proof`]) is never kept, so an edit is
//! never answered with the text from before it. Reading a body otherwise
//! takes opening, inspecting, reading and closing the file, and listing a
//! folder opening, reading and closing it: an activation over MCP spent a
//! sixth of its time there.
//!
//! Both memos are bounded (bodies by their bytes, listings by their
//! number), the oldest entry leaving first, so a catalog of any size keeps
//! only what was read lately.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use skillkit_parser::layout::{Fingerprint, Stamp};

/// The most bytes of bodies kept.
const BODY_BYTES: usize = 4 << 20;

/// A value read from the files and folders whose fingerprints it keeps.
struct Entry<V> {
    /// Shared, so a lookup takes them out of the lock without a copy.
    proofs: Arc<[(Arc<Path>, Fingerprint)]>,
    value: V,
    weight: usize,
    /// Which insertion made it (its appearance in the order).
    number: u64,
}

/// Values by key, at most `budget` in weight, the oldest dropped first.
pub(crate) struct Memo<V> {
    state: Mutex<State<V>>,
    budget: usize,
}

struct State<V> {
    entries: HashMap<Arc<Path>, Entry<V>>,
    /// Keys by insertion, the oldest first, with the insertion's number; an
    /// appearance whose number is not its entry's is stale (replaced since).
    order: VecDeque<(Arc<Path>, u64)>,
    /// How many insertions there were, to tell a key's appearances apart.
    inserted: u64,
    weight: usize,
}

/// Bodies of `SKILL.md` files, by path, weighed by their bytes.
pub(crate) static BODIES: LazyLock<Memo<Arc<str>>> = LazyLock::new(|| Memo::new(BODY_BYTES));

impl<V: Clone> Memo<V> {
    pub(crate) fn new(budget: usize) -> Memo<V> {
        Memo {
            state: Mutex::new(State {
                entries: HashMap::new(),
                order: VecDeque::new(),
                inserted: 0,
                weight: 0,
            }),
            budget,
        }
    }

    /// The value kept for `key`, when every path it was read from still
    /// has the stamp it had then.
    pub(crate) fn get(&self, key: &Path) -> Option<V> {
        let (proofs, value) = {
            let state = self.lock();
            let entry = state.entries.get(key)?;
            (entry.proofs.clone(), entry.value.clone())
        };
        // The stamps are taken outside the lock: one `stat` each.
        proofs
            .iter()
            .all(|(path, proof)| Stamp::of(path).is_some_and(|s| s.fingerprint() == *proof))
            .then_some(value)
    }

    /// Keeps `value` for `key`, read from `proofs` (each path's fingerprint
    /// when it can prove the path unchanged later, `None` when its stamp was
    /// racy or unknown: then nothing is kept, and an older entry is dropped).
    pub(crate) fn keep(
        &self,
        key: &Arc<Path>,
        proofs: Vec<(Arc<Path>, Option<Fingerprint>)>,
        value: V,
        weight: usize,
    ) {
        let proofs: Option<Arc<[_]>> = proofs
            .into_iter()
            .map(|(path, proof)| proof.map(|p| (path, p)))
            .collect();
        let mut state = self.lock();
        if let Some(old) = state.entries.remove(&**key) {
            state.weight -= old.weight;
        }
        let Some(proofs) = proofs.filter(|_| weight <= self.budget) else {
            return;
        };
        state.inserted += 1;
        let number = state.inserted;
        state.order.push_back((Arc::clone(key), number));
        state.weight += weight;
        state.entries.insert(
            Arc::clone(key),
            Entry {
                proofs,
                value,
                weight,
                number,
            },
        );
        state.evict(self.budget);
    }

    fn lock(&self) -> MutexGuard<'_, State<V>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many entries are kept (what the tests check).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().entries.len()
    }
}

impl<V> State<V> {
    /// Drops the oldest entries until the weight fits `budget`, and the
    /// order's stale appearances (of entries replaced since).
    fn evict(&mut self, budget: usize) {
        while self.weight > budget {
            let Some((key, number)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&*key).is_some_and(|e| e.number == number)
                && let Some(old) = self.entries.remove(&*key)
            {
                self.weight -= old.weight;
            }
        }
        if self.order.len() > 2 * self.entries.len() + 16 {
            let entries = &self.entries;
            self.order
                .retain(|(key, number)| entries.get(&**key).is_some_and(|e| e.number == *number));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;
    use std::path::PathBuf;
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::skill::Body;

    /// Sets the mtime of `path` (a file or a folder) a minute back, out of
    /// the racy window.
    pub(crate) fn age(path: &Path) {
        fs::File::open(path)
            .and_then(|f| f.set_modified(SystemTime::now() - Duration::from_secs(60)))
            .unwrap();
    }

    pub(crate) fn skill(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("SKILL.md");
        fs::write(&path, format!("---\nname: s\ndescription: d\n---\n{body}")).unwrap();
        age(&path);
        path
    }

    #[test]
    fn a_body_is_kept_while_its_stamp_holds_and_read_again_after_any_change() {
        let dir = tempfile::tempdir().unwrap();
        let path: Arc<Path> = skill(dir.path(), "first").into();
        let body = Body::from_shared(Arc::clone(&path));
        assert_eq!(body.read().unwrap(), "first");
        assert_eq!(BODIES.get(&path).as_deref(), Some("first"), "kept");
        // Same length and mtime put back: the ctime still tells.
        let mtime = fs::metadata(&path).unwrap().modified().unwrap();
        fs::write(&path, "---\nname: s\ndescription: d\n---\nfresh").unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(mtime))
            .unwrap();
        assert_eq!(BODIES.get(&path), None);
        assert_eq!(body.read().unwrap(), "fresh");
        // Deleted: an error, not the kept text.
        fs::remove_file(&path).unwrap();
        assert!(body.read().is_err());
    }

    #[test]
    fn a_file_written_just_now_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path: Arc<Path> = dir.path().join("SKILL.md").into();
        fs::write(&path, "---\nname: s\ndescription: d\n---\nnew").unwrap();
        let body = Body::from_shared(Arc::clone(&path));
        assert_eq!(body.read().unwrap(), "new");
        assert_eq!(BODIES.get(&path), None, "a racy stamp proves nothing later");
    }

    #[test]
    fn the_oldest_entries_leave_first_and_the_weight_stays_in_budget() {
        let dir = tempfile::tempdir().unwrap();
        let memo = Memo::new(10);
        let proof = |p: &Path| {
            let stamp = Stamp::of(p).unwrap();
            vec![(
                Arc::from(p),
                stamp.proof(SystemTime::now() + Duration::from_secs(60)),
            )]
        };
        let keys: Vec<Arc<Path>> = (0..4)
            .map(|i| {
                let path = dir.path().join(i.to_string());
                fs::write(&path, "").unwrap();
                path.into()
            })
            .collect();
        for key in &keys {
            memo.keep(key, proof(key), key.to_path_buf(), 4);
        }
        // 4 + 4 fit in 10; the first two left.
        assert_eq!(memo.len(), 2);
        assert!(memo.get(&keys[0]).is_none() && memo.get(&keys[1]).is_none());
        assert_eq!(memo.get(&keys[3]).as_deref(), Some(&*keys[3]));
        // Replacing an entry many times keeps one entry and a short order.
        for _ in 0..100 {
            memo.keep(&keys[3], proof(&keys[3]), keys[3].to_path_buf(), 4);
        }
        assert_eq!(memo.len(), 2);
        assert!(memo.lock().order.len() <= 2 * 2 + 16);
        assert_eq!(memo.lock().weight, 8);
        // Too heavy for the budget: not kept, and the entry it replaces goes.
        memo.keep(&keys[2], proof(&keys[2]), keys[2].to_path_buf(), 11);
        assert!(memo.get(&keys[2]).is_none());
        assert_eq!(memo.lock().weight, 4);
    }
}
