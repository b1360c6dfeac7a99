//! Keeping the index as fresh as the catalog, at the cost of what changed:
//! kits compared by their list ([`Skills::ptr_eq`]), then skills by
//! identity ([`Arc::ptr_eq`]), and bodies read once per skill version,
//! inline for a few, on a background thread for many.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, TryLockError};

use super::index::{BodyBatch, Index};
use super::text::Counter;
use crate::kit::{Kit, Skills};
use crate::skill::Skill;

/// At most this many bodies are read inline by the search that finds them
/// new (an edit, a few puts); more (the first build) are read on a thread of
/// their own, and search answers from names and descriptions meanwhile.
pub(crate) const INLINE_BODIES: usize = 64;

/// Bodies a thread of the background build takes at a time: a sixteenth
/// of them, within these bounds. Larger batches make fewer groups of
/// postings to add under the lock (a term's postings in a batch are copied
/// to its list at once, see [`Index::add_batch`]); smaller ones share the
/// work out more evenly between the threads.
const BATCH: std::ops::RangeInclusive<usize> = 64..=256;

/// The size of a batch of a build of `bodies` bodies.
fn batch_size(bodies: usize) -> usize {
    (bodies / 16).clamp(*BATCH.start(), *BATCH.end())
}

/// Bodies a thread of the background build holds, read, while the lock is
/// taken, before it waits for it.
const HELD: usize = 4096;

/// Dead slots at least this many (and more than the live ones) compact the
/// index.
const COMPACT_AFTER: usize = 1024;

/// The slot of a skill the index had no room for ([`MAX_SLOTS`](super::index::MAX_SLOTS)):
/// kept in a kit's list so slots stay in step with skills, never found.
const NONE: u32 = u32::MAX;

/// A kit as the index last saw it: its list and the slot of each skill.
struct KitState {
    skills: Skills,
    slots: Vec<u32>,
    seen: u64,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) index: Index,
    /// Per provider (by its index in the catalog), its kits by name.
    kits: Vec<HashMap<Box<str>, KitState>>,
    pass: u64,
    /// Skill versions indexed so far (names and descriptions).
    pub(crate) reindexed: u64,
    /// Bodies the background build has still to read.
    pub(crate) pending: usize,
}

/// Bodies to read: a slot and the skill version it holds.
pub(crate) type Bodies = Vec<(u32, Arc<Skill>)>;

impl State {
    /// Brings the index to a snapshot's `kits`, each with the index of its
    /// provider: the skills gone are removed, the new ones given a slot;
    /// returns those, whose names and descriptions ([`add_heads`]) and
    /// bodies are to index.
    pub(crate) fn update<'a>(
        &mut self,
        kits: impl IntoIterator<Item = (usize, &'a Kit)>,
    ) -> Bodies {
        self.pass += 1;
        let pass = self.pass;
        let mut bodies = Vec::new();
        for (provider, kit) in kits {
            if self.kits.len() <= provider {
                self.kits.resize_with(provider + 1, HashMap::new);
            }
            let known = self.kits[provider].get_mut(kit.name.as_ref());
            match known {
                Some(state) if Skills::ptr_eq(&state.skills, &kit.skills) => state.seen = pass,
                Some(state) => {
                    let slots = diff(&mut self.index, state, kit, &mut bodies);
                    self.reindexed += slots.1;
                    state.slots = slots.0;
                    state.skills = kit.skills.clone();
                    state.seen = pass;
                }
                None => {
                    let mut slots = Vec::with_capacity(kit.skills.len());
                    for skill in &kit.skills {
                        let slot = self.index.reserve(Arc::clone(skill));
                        if let Some(slot) = slot {
                            bodies.push((slot, Arc::clone(skill)));
                            self.reindexed += 1;
                        }
                        slots.push(slot.unwrap_or(NONE));
                    }
                    self.kits[provider].insert(
                        kit.name.as_ref().into(),
                        KitState {
                            skills: kit.skills.clone(),
                            slots,
                            seen: pass,
                        },
                    );
                }
            }
        }
        let index = &mut self.index;
        for kits in &mut self.kits {
            kits.retain(|_, state| {
                if state.seen != pass {
                    state.slots.iter().for_each(|&slot| index.remove(slot));
                }
                state.seen == pass
            });
        }
        if self.pending == 0 && index.dead() >= COMPACT_AFTER && index.dead() > index.live() {
            let remap = index.compact();
            for kits in &mut self.kits {
                for state in kits.values_mut() {
                    for s in &mut state.slots {
                        *s = remap.get(*s as usize).copied().unwrap_or(NONE);
                    }
                }
            }
            for (slot, _) in &mut bodies {
                *slot = remap.get(*slot as usize).copied().unwrap_or(NONE);
            }
        }
        bodies
    }
}

/// Re-indexes the skills of `kit` that are not those of `state` (by
/// identity); returns the new slots (in `kit`'s order) and how many skills
/// were indexed.
fn diff(index: &mut Index, state: &KitState, kit: &Kit, bodies: &mut Bodies) -> (Vec<u32>, u64) {
    let old = &state.skills;
    let mut slots = Vec::with_capacity(kit.skills.len());
    let mut added = 0;
    let mut add = |index: &mut Index, skill: &Arc<Skill>, slots: &mut Vec<u32>| {
        let slot = index.reserve(Arc::clone(skill));
        if let Some(slot) = slot {
            bodies.push((slot, Arc::clone(skill)));
            added += 1;
        }
        slots.push(slot.unwrap_or(NONE));
    };
    let sorted = |s: &[Arc<Skill>]| s.windows(2).all(|w| w[0].name < w[1].name);
    if sorted(old) && sorted(&kit.skills) {
        // A merge by name: both lists are sorted (as every provider of this
        // crate serves them).
        let (mut i, mut j) = (0, 0);
        while j < kit.skills.len() {
            let new = &kit.skills[j];
            match old.get(i).map(|o| o.name.cmp(&new.name)) {
                Some(std::cmp::Ordering::Less) => {
                    index.remove(state.slots[i]);
                    i += 1;
                }
                Some(std::cmp::Ordering::Equal) => {
                    if Arc::ptr_eq(&old[i], new) {
                        slots.push(state.slots[i]);
                    } else {
                        index.remove(state.slots[i]);
                        add(index, new, &mut slots);
                    }
                    i += 1;
                    j += 1;
                }
                Some(std::cmp::Ordering::Greater) | None => {
                    add(index, new, &mut slots);
                    j += 1;
                }
            }
        }
        state.slots[i.min(state.slots.len())..]
            .iter()
            .for_each(|&slot| index.remove(slot));
    } else {
        let mut by_name: HashMap<&str, usize> = old
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_ref(), i))
            .collect();
        for new in &kit.skills {
            match by_name.remove(new.name.as_ref()) {
                Some(i) if Arc::ptr_eq(&old[i], new) => slots.push(state.slots[i]),
                Some(i) => {
                    index.remove(state.slots[i]);
                    add(index, new, &mut slots);
                }
                None => add(index, new, &mut slots),
            }
        }
        by_name.values().for_each(|&i| index.remove(state.slots[i]));
    }
    (slots, added)
}

/// Reads the bodies of `bodies` (their first `limit` bytes) and indexes
/// those whose slot still holds that skill version. A body that cannot be
/// read (the file went away) is left out: its name and description stay
/// indexed.
pub(crate) fn index_bodies(index: &mut Index, bodies: &[(u32, Arc<Skill>)], limit: usize) {
    let batch = read_batch(bodies, index.counter(), limit);
    index.add_batch(batch, &dropped(index, bodies));
}

/// The slots of `bodies` that no longer hold the skill version read.
fn dropped<'a>(index: &Index, bodies: impl IntoIterator<Item = &'a (u32, Arc<Skill>)>) -> Vec<u32> {
    let dropped = bodies
        .into_iter()
        .filter(|(slot, skill)| !index.holds(*slot, skill));
    dropped.map(|(slot, _)| *slot).collect()
}

/// Reads the bodies of `bodies` and counts them with `counter`: each body's
/// first `limit` bytes, whole words only (the file read no further).
fn read_batch(bodies: &[(u32, Arc<Skill>)], counter: &mut Counter, limit: usize) -> BodyBatch {
    BodyBatch::count(counter, |add| {
        for (slot, skill) in bodies {
            // One byte more than the limit says whether the body goes on.
            match skill.body.read_head(limit.saturating_add(1)) {
                Ok(text) => add(*slot, lead(&text, limit)),
                Err(error) => tracing::debug!(skill = %skill.name, "body not indexed: {error}"),
            }
        }
    })
}

/// The first `limit` bytes of `text` when it is longer, without the word
/// the limit cuts (a word is what the tokenizer takes as one: ASCII letters
/// and digits and every character beyond ASCII).
fn lead(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let in_word = |c: char| c.is_ascii_alphanumeric() || !c.is_ascii();
    if text[end..].starts_with(in_word) {
        text[..end].trim_end_matches(in_word)
    } else {
        &text[..end]
    }
}

/// Indexes the names and descriptions of the skills in `slots` (reserved
/// by [`State::update`], in order).
pub(crate) fn add_heads(index: &mut Index, slots: impl IntoIterator<Item = u32>) {
    slots.into_iter().for_each(|slot| index.add_head(slot));
}

/// A batch of bodies read by the background build: the slots and skill
/// versions it was given, and the terms of the bodies that could be read.
type Read<'a> = (&'a [(u32, Arc<Skill>)], BodyBatch);

/// The batches of a build read but not yet added, until every batch before
/// them is.
#[derive(Default)]
struct InOrder<'a> {
    /// The batch to add next.
    next: usize,
    waiting: std::collections::BTreeMap<usize, Read<'a>>,
}

impl<'a> InOrder<'a> {
    /// Takes in the batches `read` (by their number) and gives back, in
    /// order, every batch now ready: those from the next one on with no
    /// batch missing between.
    fn put(&mut self, read: impl IntoIterator<Item = (usize, Read<'a>)>) -> Vec<Read<'a>> {
        self.waiting.extend(read);
        let mut ready = Vec::new();
        while let Some(batch) = self.waiting.remove(&self.next) {
            ready.push(batch);
            self.next += 1;
        }
        ready
    }
}

/// Indexes `bodies` on a thread of its own. Bodies are taken in order, a
/// batch ([`batch_size`]) at a time, by the threads of the file-reading pool of
/// `Local` (all cores; else by that thread alone): each thread reads and
/// counts its batches outside the lock, and adds what it has read whenever
/// the lock is free, reading on meanwhile (up to `HELD` bodies). `locked`
/// is the state `shared` holds, locked by the caller, which indexes the
/// names and descriptions next: one thread reads beside it at once, and the
/// others start when that thread first finds the lock free (so the caller
/// keeps a core until then). The count of pending bodies is raised before
/// the lock is released, so no compaction renumbers slots under the build.
pub(crate) fn build_in_background(
    shared: &Arc<Mutex<State>>,
    locked: &mut State,
    bodies: Bodies,
    limit: usize,
) {
    let count = bodies.len();
    let shared = Arc::clone(shared);
    let work = move || {
        let size = batch_size(bodies.len());
        let batches = bodies.len().div_ceil(size);
        let next = AtomicUsize::new(0);
        // Batches read, waiting for the ones before them: each is added
        // only after every batch before it, so a body's postings go at the
        // end of their lists (a posting that went before a list's end would
        // cost a merge of the whole list, under the lock). Taken only with
        // the state locked, so never waited for.
        let waiting = Mutex::new(InOrder::default());
        // Reads batches until none is left; `start` (once) when the lock
        // is first taken.
        let take_batches = |mut start: Option<&dyn Fn()>| {
            let mut counter = None;
            let mut read: Vec<(usize, Read<'_>)> = Vec::new();
            loop {
                let at = next.fetch_add(1, Ordering::Relaxed);
                if let Some(batch) = bodies.get(at * size..((at + 1) * size).min(bodies.len())) {
                    let counter = counter.get_or_insert_with(Counter::default);
                    read.push((at, (batch, read_batch(batch, counter, limit))));
                }
                let last = at + 1 >= batches;
                if next.load(Ordering::Relaxed) >= batches {
                    // No batch left to read: the scratch is given back
                    // before what was read is added (the build may end
                    // with that).
                    counter = None;
                }
                if last && read.is_empty() {
                    break;
                }
                let held = || read.iter().map(|(_, batch)| batch.0.len()).sum::<usize>();
                let state = match shared.try_lock() {
                    Ok(state) => Some(state),
                    Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
                    Err(TryLockError::WouldBlock) if last || held() >= HELD => {
                        Some(shared.lock().unwrap_or_else(PoisonError::into_inner))
                    }
                    Err(TryLockError::WouldBlock) => None,
                };
                if let Some(mut state) = state {
                    if let Some(start) = start.take() {
                        start();
                    }
                    let ready = waiting
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .put(read.drain(..));
                    let mut added = 0;
                    for (bodies, batch) in ready {
                        added += bodies.len();
                        let dropped = dropped(&state.index, bodies);
                        state.index.add_batch(batch, &dropped);
                    }
                    state.pending -= added;
                    if added > 0 && state.pending == 0 {
                        state.index.shrink();
                    }
                }
                if last {
                    break;
                }
            }
        };
        match crate::providers::read_pool().map(|pool| pool.threads()) {
            // Batches are handed out in order (not split in halves, as a
            // parallel iterator would): postings then arrive nearly sorted.
            Some(pool) => pool.in_place_scope(|scope| {
                let rest = || {
                    for _ in 1..pool.current_num_threads() {
                        scope.spawn(|_| take_batches(None));
                    }
                };
                take_batches(Some(&rest));
            }),
            None => take_batches(None),
        }
    };
    let spawned = std::thread::Builder::new()
        .name("skillkit-search-index".into())
        .spawn(work);
    match spawned {
        Ok(_) => locked.pending += count,
        Err(error) => tracing::warn!(
            "search index: no thread to read skill bodies ({error}); searching names and descriptions only"
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_build_beside_a_held_lock_indexes_every_body_in_slot_order() {
        // More bodies than a thread holds read before it waits for the lock.
        let n = HELD + 3 * BATCH.end() + 5;
        let mut kit = Kit::new("k");
        for i in 0..n {
            let skill = Skill::new(format!("k:s{i:05}"), "A skill.");
            kit.insert_skill(skill.with_body(format!("unique{i} shared words")));
        }
        let shared = Arc::new(Mutex::new(State::default()));
        {
            let mut state = shared.lock().unwrap();
            let bodies = state.update([(0, &kit)]);
            assert_eq!(bodies.len(), n);
            let heads: Vec<u32> = bodies.iter().map(|(slot, _)| *slot).collect();
            build_in_background(&shared, &mut state, bodies, usize::MAX);
            // The build reads on while the lock is held, as it is while a
            // first search indexes names and descriptions.
            std::thread::sleep(Duration::from_millis(50));
            add_heads(&mut state.index, heads);
            assert_eq!(state.pending, n);
        }
        let started = Instant::now();
        while shared.lock().unwrap().pending > 0 {
            assert!(started.elapsed() < Duration::from_secs(60), "never built");
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut state = shared.lock().unwrap();
        assert_eq!(state.index.bodies_in_order(), (n, true));
        for i in [0, 1, n / 2, n - 1] {
            let hits = state.index.score(&format!("unique{i}"));
            assert_eq!(hits.len(), 1, "unique{i}");
            let slot = hits[0].0 as usize;
            let found = state.index.slots[slot].skill.as_ref().unwrap();
            assert_eq!(found.name, format!("k:s{i:05}"));
        }
        // The names and descriptions too.
        assert_eq!(state.index.score("skill").len(), n);
    }

    #[test]
    fn batches_read_out_of_order_are_given_back_in_order() {
        let skill = Arc::new(Skill::new("k:s", "A skill."));
        let bodies: Vec<(u32, Arc<Skill>)> =
            (0..7).map(|slot| (slot, Arc::clone(&skill))).collect();
        let batch =
            |range: std::ops::Range<usize>| -> Read<'_> { (&bodies[range], BodyBatch::default()) };
        let slots = |ready: Vec<Read<'_>>| -> Vec<u32> {
            ready.iter().flat_map(|r| r.0.iter().map(|b| b.0)).collect()
        };
        let mut in_order = InOrder::default();
        // Batch 1 and 3 first: nothing is ready before batch 0.
        assert!(
            in_order
                .put([(1, batch(2..4)), (3, batch(6..7))])
                .is_empty()
        );
        assert_eq!(slots(in_order.put([(0, batch(0..2))])), [0, 1, 2, 3]);
        assert_eq!(slots(in_order.put([(2, batch(4..6))])), [4, 5, 6]);
        assert!(in_order.waiting.is_empty());
    }

    #[test]
    fn the_lead_keeps_whole_words() {
        assert_eq!(lead("short text", 100), "short text");
        assert_eq!(lead("alpha beta", 10), "alpha beta");
        // The limit cuts `beta`: it is left out.
        assert_eq!(lead("alpha beta gamma", 8), "alpha ");
        // It falls between words: nothing is cut.
        assert_eq!(lead("alpha beta gamma", 10), "alpha beta");
        assert_eq!(lead("alpha beta gamma", 11), "alpha beta ");
        // Within a character beyond ASCII (part of a word to the tokenizer).
        assert_eq!(lead("tables naïve", 10), "tables ");
        assert_eq!(lead("one—two", 4), "");
        // One long word: none of it.
        assert_eq!(lead("abcdefgh", 4), "");
    }
}
