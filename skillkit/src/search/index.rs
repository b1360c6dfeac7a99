//! The inverted index: one slot per skill version, postings per term, and
//! BM25F scoring over name, kit, description and body.
//!
//! A posting is one `u32`: the slot in the upper 24 bits, the term's
//! frequencies in the lower 8. A term has two posting lists: `head` (name,
//! kit and description, packed as 3 + 1 + 4 bits) and `body` (the count,
//! capped at 255); both are sorted by slot (the bounded search of `topk`
//! looks slots up in them). Slots are never reused: a changed skill gets a
//! new slot and the old one is marked dead (its postings are skipped), and
//! the index is compacted when dead slots outnumber live ones.

mod bodies;
mod dictionary;
mod query;
mod topk;

use std::sync::Arc;

pub(crate) use self::bodies::BodyBatch;
use self::dictionary::Dictionary;
use super::text;
use crate::skill::Skill;

/// The most acronyms kept (a bound on what texts can make the index hold).
const MAX_ACRONYMS: usize = 1 << 16;

/// Slots addressable in a posting (24 bits).
pub(crate) const MAX_SLOTS: usize = 1 << 24;

/// BM25 saturation.
const K1: f32 = 1.2;
/// Field weights: a name term counts most, a body term least.
const W_NAME: f32 = 4.0;
const W_KIT: f32 = 1.0;
const W_DESC: f32 = 1.5;
const W_BODY: f32 = 0.05;
/// Length normalisation per field.
const B_DESC: f32 = 0.6;
const B_BODY: f32 = 0.9;
const B_NAME: f32 = 0.3;

/// One skill version.
pub(crate) struct Slot {
    /// The skill; `None` once it left the catalog or changed.
    pub(crate) skill: Option<Arc<Skill>>,
    /// The embedding of name + description, once computed.
    pub(crate) embedding: Option<Box<[f32]>>,
}

/// A slot's field lengths in terms, and whether it is live: what scoring
/// reads for every posting, kept apart from [`Slot`] in 8 bytes so a query
/// walks a dense array.
#[derive(Clone, Copy, Default)]
struct Lens {
    live: bool,
    name: u8,
    desc: u16,
    /// Body terms indexed (0 until the body is).
    body: u32,
}

/// A term's postings (its text is the dictionary's).
#[derive(Default)]
struct Term {
    head: Vec<u32>,
    body: Vec<u32>,
}

/// How one term of a query reaches the index: the terms it matches (itself,
/// or dictionary terms within its typo budget) and a weight (lower for a
/// typo match).
struct QueryTerm {
    ids: Vec<(u32, f32)>,
}

#[derive(Default)]
pub(crate) struct Index {
    pub(crate) slots: Vec<Slot>,
    /// In step with `slots`.
    lens: Vec<Lens>,
    live: usize,
    dictionary: Dictionary,
    /// By term id, in step with the dictionary.
    terms: Vec<Term>,
    /// Sums of field lengths over live slots (for average lengths).
    sum_name: u64,
    sum_desc: u64,
    sum_body: u64,
    bodies_indexed: usize,
    /// Scratch for one query, kept to avoid allocating per search.
    scratch: Scratch,
    /// Counts the terms of the descriptions (and the bodies) indexed here:
    /// made for an update, given back after it ([`Index::release`]).
    counter: Option<text::Counter>,
    /// Bytes of the posting lists' allocations, kept as they grow (so
    /// [`Index::heap_bytes`], which callers poll to follow a build, does not
    /// walk every term under the index's lock).
    posting_bytes: usize,
    /// The acronyms the indexed texts define, with the terms each stands
    /// for (the first definition read); see [`text::short`].
    acronyms: text::TermMap<Box<[Box<str>]>>,
}

/// Changes the posting list `list` with `change`, keeping `bytes` (the
/// posting lists' allocations) in step with its capacity.
fn change_list(list: &mut Vec<u32>, bytes: &mut usize, change: impl FnOnce(&mut Vec<u32>)) {
    let before = list.capacity();
    change(list);
    *bytes =
        *bytes + list.capacity() * std::mem::size_of::<u32>() - before * std::mem::size_of::<u32>();
}

#[derive(Default)]
struct Scratch {
    tf: Vec<f32>,
    score: Vec<f32>,
    touched: Vec<u32>,
    term_touched: Vec<u32>,
    row: Vec<usize>,
    /// Slots picked by the bounded search (see `topk`).
    picked: Vec<u32>,
    /// Scores copied to find the k-th best.
    kth: Vec<f32>,
    /// Postings read and looked up by the last bounded search (what its
    /// test checks).
    #[cfg(test)]
    visited: usize,
}

impl Index {
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    pub(crate) fn dead(&self) -> usize {
        self.slots.len() - self.live
    }

    /// The id of `term`, made when new.
    fn term_id(&mut self, term: &str) -> u32 {
        let id = self.dictionary.id(term);
        if id as usize == self.terms.len() {
            self.terms.push(Term::default());
        }
        id
    }

    /// The id of the packed term `term`, made when new.
    fn packed_id(&mut self, term: text::Packed) -> u32 {
        let id = self.dictionary.packed_id(term);
        if id as usize == self.terms.len() {
            self.terms.push(Term::default());
        }
        id
    }

    /// Indexes the name and description of `skill` in a new slot; `None`
    /// when the index is full.
    #[cfg(test)]
    pub(crate) fn add(&mut self, skill: Arc<Skill>) -> Option<u32> {
        let slot = self.reserve(skill)?;
        self.add_head(slot);
        Some(slot)
    }

    /// A new slot holding `skill`, its name and description not indexed yet
    /// ([`add_head`](Self::add_head) does, before the next search); `None`
    /// when the index is full.
    pub(crate) fn reserve(&mut self, skill: Arc<Skill>) -> Option<u32> {
        if self.slots.len() >= MAX_SLOTS {
            if self.slots.len() == MAX_SLOTS && self.live == MAX_SLOTS {
                tracing::warn!(
                    "search index: {MAX_SLOTS} skills indexed, the most it holds; more are not searchable"
                );
            }
            return None;
        }
        let slot = self.slots.len() as u32;
        self.slots.push(Slot {
            skill: Some(skill),
            embedding: None,
        });
        self.lens.push(Lens {
            live: true,
            name: 0,
            desc: 0,
            body: 0,
        });
        self.live += 1;
        Some(slot)
    }

    /// Indexes the name and description of the skill `slot` holds (once,
    /// after [`reserve`](Self::reserve)).
    pub(crate) fn add_head(&mut self, slot: u32) {
        let Some(skill) = self.slots[slot as usize].skill.clone() else {
            return;
        };
        // Per term id: name (3 bits), kit (1 bit), description (4 bits).
        let mut head: Vec<(u32, u8, u8, u8)> = Vec::new();
        let mut count = |id: u32, field: usize, n: u8| {
            let at = match head.iter().position(|h| h.0 == id) {
                Some(at) => at,
                None => {
                    head.push((id, 0, 0, 0));
                    head.len() - 1
                }
            };
            let h = &mut head[at];
            match field {
                0 => h.1 = h.1.saturating_add(n).min(7),
                1 => h.2 = 1,
                _ => h.3 = h.3.saturating_add(n).min(15),
            }
        };
        let mut name_len = 0usize;
        text::terms(skill.bare_name(), |t| {
            name_len += 1;
            count(self.term_id(t), 0, 1);
        });
        // `test-driven-development` is also found as `tdd`.
        if let Some(initials) = text::short::initials(skill.bare_name()) {
            count(self.term_id(&initials), 0, 1);
        }
        let description = skill.description.clone();
        text::short::defined(&description, |short, terms| self.learn(short, terms));
        if let Some(kit) = skill.kit() {
            text::terms(kit, |t| count(self.term_id(t), 1, 1));
        }
        // The description counted as a body is (it may be long).
        let description = self.counter().count(&skill.description);
        for (term, n) in description.packed() {
            count(self.packed_id(term), 2, n);
        }
        for (term, n) in description.others() {
            count(self.term_id(term), 2, n);
        }
        let desc_len = description.total as usize;
        for (id, name, kit, desc) in head {
            let tf = name | (kit << 3) | (desc << 4);
            let list = &mut self.terms[id as usize].head;
            let posting = slot << 8 | u32::from(tf);
            change_list(list, &mut self.posting_bytes, |list| list.push(posting));
        }
        let name_len = name_len.min(255) as u8;
        let desc_len = desc_len.min(u16::MAX as usize) as u16;
        self.sum_name += u64::from(name_len);
        self.sum_desc += u64::from(desc_len);
        let lens = &mut self.lens[slot as usize];
        lens.name = name_len;
        lens.desc = desc_len;
    }

    /// Marks `slot` dead: its postings are skipped from now on.
    pub(crate) fn remove(&mut self, slot: u32) {
        // `get_mut` also skips the slot of a skill that had no room.
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        if s.skill.take().is_some() {
            let lens = &mut self.lens[slot as usize];
            lens.live = false;
            self.live -= 1;
            self.sum_name -= u64::from(lens.name);
            self.sum_desc -= u64::from(lens.desc);
            self.sum_body -= u64::from(lens.body);
            if lens.body > 0 {
                self.bodies_indexed -= 1;
            }
            s.embedding = None;
        }
    }

    /// Whether `slot` still holds `skill` (a body read outside the lock
    /// belongs to it).
    pub(crate) fn holds(&self, slot: u32, skill: &Arc<Skill>) -> bool {
        self.slots
            .get(slot as usize)
            .and_then(|s| s.skill.as_ref())
            .is_some_and(|s| Arc::ptr_eq(s, skill))
    }

    /// Keeps `short` as an acronym of `terms`, unless one is kept already.
    fn learn(&mut self, short: String, terms: Vec<String>) {
        if self.acronyms.len() < MAX_ACRONYMS {
            self.acronyms
                .entry(short.into_boxed_str())
                .or_insert_with(|| terms.into_iter().map(String::into_boxed_str).collect());
        }
    }

    /// The terms the acronym `short` stands for, if a text defined it.
    pub(crate) fn acronym(&self, short: &str) -> Option<&[Box<str>]> {
        self.acronyms.get(short).map(|terms| &terms[..])
    }

    /// Bodies indexed, and whether every body posting list is sorted by
    /// slot (as the bounded search needs), for the tests.
    #[cfg(test)]
    pub(crate) fn bodies_in_order(&self) -> (usize, bool) {
        let sorted = self
            .terms
            .iter()
            .all(|t| t.body.windows(2).all(|w| w[0] >> 8 < w[1] >> 8));
        (self.bodies_indexed, sorted)
    }

    /// Gives back the spare capacity of the posting lists (after a build).
    pub(crate) fn shrink(&mut self) {
        for term in &mut self.terms {
            term.head.shrink_to_fit();
            term.body.shrink_to_fit();
        }
        self.terms.shrink_to_fit();
        self.dictionary.shrink();
        self.slots.shrink_to_fit();
        self.lens.shrink_to_fit();
        self.posting_bytes = self.counted_posting_bytes();
    }

    /// Bytes of the posting lists' allocations, counted term by term.
    fn counted_posting_bytes(&self) -> usize {
        let lists = self
            .terms
            .iter()
            .map(|t| t.head.capacity() + t.body.capacity());
        lists.sum::<usize>() * std::mem::size_of::<u32>()
    }

    /// Drops dead slots and renumbers the live ones; `remap[old]` is the new
    /// slot (`u32::MAX` for a dead one), returned so holders of slot numbers
    /// follow.
    pub(crate) fn compact(&mut self) -> Vec<u32> {
        let mut remap = vec![u32::MAX; self.slots.len()];
        let mut next = 0u32;
        for (old, slot) in self.slots.iter().enumerate() {
            if slot.skill.is_some() {
                remap[old] = next;
                next += 1;
            }
        }
        self.slots.retain(|s| s.skill.is_some());
        self.lens.retain(|l| l.live);
        let fix = |list: &mut Vec<u32>| {
            list.retain_mut(|p| {
                let new = remap[(*p >> 8) as usize];
                *p = new << 8 | (*p & 0xff);
                new != u32::MAX
            });
            list.shrink_to_fit();
        };
        // Terms left without postings are dropped; the others keep their
        // order, so the dictionary renumbers them as `terms` does.
        for term in &mut self.terms {
            fix(&mut term.head);
            fix(&mut term.body);
        }
        let terms = &self.terms;
        let kept = |id: u32| {
            let term = &terms[id as usize];
            !term.head.is_empty() || !term.body.is_empty()
        };
        self.dictionary = self.dictionary.retain(kept);
        self.terms
            .retain(|term| !term.head.is_empty() || !term.body.is_empty());
        self.scratch = Scratch::default();
        self.posting_bytes = self.counted_posting_bytes();
        remap
    }

    fn has_live(&self, id: u32) -> bool {
        let t = &self.terms[id as usize];
        t.head
            .iter()
            .chain(&t.body)
            .any(|p| self.lens[(p >> 8) as usize].live)
    }

    /// BM25F scores of the live slots matching `query`, unsorted.
    pub(crate) fn score(&mut self, query: &str) -> Vec<(u32, f32)> {
        let query_terms = self.query_terms(query);
        if query_terms.is_empty() || self.live == 0 {
            return Vec::new();
        }
        let n = self.live as f32;
        let norms = self.norms();
        let Index {
            lens,
            terms,
            scratch,
            ..
        } = self;
        scratch.tf.resize(lens.len(), 0.0);
        scratch.score.resize(lens.len(), 0.0);
        for query_term in &query_terms {
            for &(id, weight) in &query_term.ids {
                let term = &terms[id as usize];
                let idf = idf(n, term, weight);
                norms.accumulate(term, idf, lens, scratch);
            }
        }
        let hits = scratch
            .touched
            .iter()
            .map(|&s| (s, std::mem::take(&mut scratch.score[s as usize])))
            .filter(|(_, score)| *score > 0.0)
            .collect();
        scratch.touched.clear();
        hits
    }

    /// The average field lengths scoring normalises by.
    fn norms(&self) -> Norms {
        let avg = |sum: u64, count: usize| (sum as f32 / count.max(1) as f32).max(1.0);
        Norms {
            name: avg(self.sum_name, self.live),
            desc: avg(self.sum_desc, self.live),
            body: avg(self.sum_body, self.bodies_indexed),
        }
    }

    /// Bytes held by the index itself (postings, dictionary, slots), an
    /// estimate from capacities (the skills are the catalog's).
    pub(crate) fn heap_bytes(&self) -> usize {
        debug_assert_eq!(self.posting_bytes, self.counted_posting_bytes());
        self.posting_bytes
            + self.terms.capacity() * std::mem::size_of::<Term>()
            + self.dictionary.heap_bytes()
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.lens.capacity() * std::mem::size_of::<Lens>()
            + self.counter.as_ref().map_or(0, text::Counter::heap_bytes)
            + self.acronyms.capacity() * std::mem::size_of::<(Box<str>, Box<[Box<str>]>)>()
    }

    /// The counter of this update (made on first use).
    pub(crate) fn counter(&mut self) -> &mut text::Counter {
        self.counter.get_or_insert_with(text::Counter::default)
    }

    /// Gives back what an update used and the index does not keep.
    pub(crate) fn release(&mut self) {
        self.counter = None;
    }
}

/// The inverse document frequency of `term` among `n` live slots, times
/// `weight` (below 1 for a typo match): the most one term adds to a score.
fn idf(n: f32, term: &Term, weight: f32) -> f32 {
    let df = (term.head.len() + term.body.len()).max(1) as f32;
    (1.0 + (n - df + 0.5).max(0.0) / (df + 0.5)).ln() * weight
}

/// Average field lengths (in terms).
#[derive(Clone, Copy)]
struct Norms {
    name: f32,
    desc: f32,
    body: f32,
}

impl Norms {
    /// The weighted, length-normalised frequency a head posting adds.
    #[inline]
    fn head(&self, p: u32, slot: Lens) -> f32 {
        let tf = p & 0xff;
        let (name, kit, desc) = (tf & 7, (tf >> 3) & 1, tf >> 4);
        let norm = |len: f32, avg: f32, b: f32| 1.0 - b + b * len / avg;
        W_NAME * name as f32 / norm(f32::from(slot.name), self.name, B_NAME)
            + W_KIT * kit as f32
            + W_DESC * desc as f32 / norm(f32::from(slot.desc), self.desc, B_DESC)
    }

    /// The weighted, length-normalised frequency a body posting adds.
    #[inline]
    fn body(&self, p: u32, slot: Lens) -> f32 {
        let tf = (p & 0xff) as f32;
        W_BODY * tf / (1.0 - B_BODY + B_BODY * slot.body as f32 / self.body)
    }

    /// Adds what `term` (with `idf`) scores to `scratch.score`, for every
    /// live slot in its postings (new ones pushed on `scratch.touched`).
    fn accumulate(&self, term: &Term, idf: f32, lens: &[Lens], scratch: &mut Scratch) {
        for &p in &term.head {
            let s = (p >> 8) as usize;
            let slot = lens[s];
            if !slot.live {
                continue;
            }
            let value = self.head(p, slot);
            if scratch.tf[s] == 0.0 {
                scratch.term_touched.push(s as u32);
            }
            scratch.tf[s] += value;
        }
        for &p in &term.body {
            let s = (p >> 8) as usize;
            let slot = lens[s];
            if !slot.live || slot.body == 0 {
                continue;
            }
            let value = self.body(p, slot);
            if scratch.tf[s] == 0.0 {
                scratch.term_touched.push(s as u32);
            }
            scratch.tf[s] += value;
        }
        for &s in &scratch.term_touched {
            let s = s as usize;
            let tf = std::mem::take(&mut scratch.tf[s]);
            if scratch.score[s] == 0.0 {
                scratch.touched.push(s as u32);
            }
            scratch.score[s] += idf * tf / (K1 + tf);
        }
        scratch.term_touched.clear();
    }

    /// What `term` (with `idf`) adds to the score of slot `s`, found by
    /// binary search in its postings (sorted by slot).
    fn lookup(&self, term: &Term, idf: f32, lens: &[Lens], s: u32) -> Option<f32> {
        let slot = lens[s as usize];
        if !slot.live {
            return None;
        }
        let find = |list: &[u32]| {
            list.binary_search_by_key(&s, |p| p >> 8)
                .ok()
                .map(|at| list[at])
        };
        let mut tf = 0.0;
        let mut found = false;
        if let Some(p) = find(&term.head) {
            tf += self.head(p, slot);
            found = true;
        }
        if slot.body > 0
            && let Some(p) = find(&term.body)
        {
            tf += self.body(p, slot);
            found = true;
        }
        found.then(|| idf * tf / (K1 + tf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_posting_bytes_kept_are_those_counted_after_every_change() {
        let mut index = Index::default();
        let skills: Vec<Arc<Skill>> = (0..300)
            .map(|i| {
                Arc::new(Skill::new(
                    format!("k:s{i}"),
                    format!("alpha beta {i} gamma"),
                ))
            })
            .collect();
        let slots: Vec<u32> = skills
            .iter()
            .map(|s| index.add(Arc::clone(s)).unwrap())
            .collect();
        assert_eq!(index.posting_bytes, index.counted_posting_bytes());
        assert!(index.posting_bytes > 0);
        // Bodies last to first: each posting inserted in place.
        for (slot, skill) in slots.iter().zip(&skills).rev() {
            let text = format!("delta epsilon {} words", skill.name);
            index.add_body(*slot, &text);
        }
        assert_eq!(index.posting_bytes, index.counted_posting_bytes());
        for &slot in &slots[..200] {
            index.remove(slot);
        }
        let before = index.posting_bytes;
        index.compact();
        assert_eq!(index.posting_bytes, index.counted_posting_bytes());
        assert!(index.posting_bytes < before);
        index.add(Arc::new(Skill::new("k:late", "Zeta."))).unwrap();
        index.shrink();
        assert_eq!(index.posting_bytes, index.counted_posting_bytes());
        assert!(index.heap_bytes() > index.posting_bytes);
    }
}
