//! Bodies added in batches: read and counted outside the index's lock
//! ([`BodyBatch::count`]), their postings grouped by term, then added under
//! it ([`Index::add_batch`]) a term at a time.

use super::{Index, change_list, text};

/// Bodies read and counted outside the index's lock
/// ([`BodyBatch::count`]), to add under it in one go
/// ([`Index::add_batch`]): their terms grouped, and the acronyms they define.
#[derive(Default)]
pub(crate) struct BodyBatch {
    /// Per body: its slot and its length in terms.
    bodies: Vec<(u32, u32)>,
    grouped: text::Grouped,
    /// The terms that do not pack: slot, term, count.
    others: Vec<(u32, Box<str>, u8)>,
    /// Per acronym defined: the slot, the acronym, the terms it stands for.
    acronyms: Vec<(u32, String, Vec<String>)>,
}

impl BodyBatch {
    /// Counts with `counter` the bodies `each` gives to the closure it is
    /// passed (a slot and the body's text, slots rising).
    pub(crate) fn count(
        counter: &mut text::Counter,
        each: impl FnOnce(&mut dyn FnMut(u32, &str)),
    ) -> BodyBatch {
        let mut batch = BodyBatch::default();
        batch.grouped = counter.group(|grouper| {
            each(&mut |slot, text| {
                text::short::defined(text, |short, terms| {
                    batch.acronyms.push((slot, short, terms));
                });
                let (total, others) = grouper.count(slot, text);
                batch.bodies.push((slot, total));
                let others = others.into_iter().map(|(term, n)| (slot, term, n));
                batch.others.extend(others);
            });
        });
        batch
    }
}

impl Index {
    /// Counts and adds the body `text` of `slot` (a batch of one).
    #[cfg(test)]
    pub(crate) fn add_body(&mut self, slot: u32, text: &str) {
        let batch = BodyBatch::count(self.counter(), |add| add(slot, text));
        self.add_batch(batch, &[]);
    }

    /// Adds the bodies of `batch`, but those of the slots `dropped` (no
    /// longer the skill version read) and of slots whose body is already
    /// in. Posting lists stay sorted by slot (the bounded search looks
    /// slots up): a term's postings that go after the end of its list are
    /// copied there in one go; those of bodies read before an older slot's
    /// (the build's threads add their batches as they get the lock) are
    /// merged into their lists once, a list at a time, not inserted one by
    /// one.
    pub(crate) fn add_batch(&mut self, batch: BodyBatch, dropped: &[u32]) {
        // The slots whose postings are left out, sorted (a body without
        // terms has none).
        let mut skip = dropped.to_vec();
        for &(slot, len) in &batch.bodies {
            if len == 0 || dropped.contains(&slot) {
                continue;
            }
            let lens = &mut self.lens[slot as usize];
            if lens.body > 0 {
                skip.push(slot);
                continue;
            }
            lens.body = len;
            self.sum_body += u64::from(len);
            self.bodies_indexed += 1;
        }
        skip.sort_unstable();
        let skipped = |slot: u32| skip.binary_search(&slot).is_ok();
        for (slot, short, terms) in batch.acronyms {
            if !dropped.contains(&slot) {
                self.learn(short, terms);
            }
        }
        // Postings in a group are in the order of the bodies: by slot, when
        // the bodies are; else each goes in its place.
        let rising = batch.bodies.windows(2).all(|w| w[0].0 < w[1].0);
        // (term id, posting) of the postings that go before a list's end.
        let mut late: Vec<(u32, u32)> = Vec::new();
        let mut kept = Vec::new();
        for (term, postings) in batch.grouped.groups() {
            let id = self.packed_id(term);
            let postings = match skip.is_empty() {
                true => postings,
                false => {
                    kept.clear();
                    kept.extend(postings.iter().filter(|&&p| !skipped(p >> 8)));
                    &kept[..]
                }
            };
            self.post_body(id, postings, rising, &mut late);
        }
        for (slot, term, tf) in batch.others {
            if !skipped(slot) {
                let id = self.term_id(&term);
                self.post_body(id, &[slot << 8 | u32::from(tf)], true, &mut late);
            }
        }
        late.sort_unstable();
        for group in late.chunk_by(|a, b| a.0 == b.0) {
            let list = &mut self.terms[group[0].0 as usize].body;
            let mut merged = Vec::with_capacity(list.len() + group.len());
            let (mut old, mut new) = (list.iter().peekable(), group.iter().map(|g| g.1).peekable());
            while let (Some(&&a), Some(&b)) = (old.peek(), new.peek()) {
                if a >> 8 < b >> 8 {
                    merged.push(a);
                    old.next();
                } else {
                    merged.push(b);
                    new.next();
                }
            }
            merged.extend(old);
            merged.extend(new);
            change_list(list, &mut self.posting_bytes, |list| *list = merged);
        }
    }

    /// Adds `postings` (by slot when `rising`) to the body list of the term
    /// `id`: copied to its end when they all go after it, else left in
    /// `late`, to merge.
    fn post_body(&mut self, id: u32, postings: &[u32], rising: bool, late: &mut Vec<(u32, u32)>) {
        let Some(&first) = postings.first() else {
            return;
        };
        let list = &mut self.terms[id as usize].body;
        if rising && list.last().is_none_or(|&p| p >> 8 < first >> 8) {
            change_list(list, &mut self.posting_bytes, |list| {
                list.extend_from_slice(postings)
            });
        } else {
            late.extend(postings.iter().map(|&p| (id, p)));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::skill::Skill;

    #[test]
    fn a_batch_adds_its_bodies_but_the_dropped_and_those_already_in() {
        let mut index = Index::default();
        let slots: Vec<u32> = (0..4)
            .map(|i| {
                let skill = Skill::new(format!("k:s{i}"), "A skill.");
                index.add(Arc::new(skill)).unwrap()
            })
            .collect();
        index.add_body(slots[3], "shared fourth");
        let texts = [
            "shared zeroth café",
            "shared first café",
            "shared second café",
            "shared again fourth",
        ];
        // Slots falling: every posting goes to its place.
        let batch = BodyBatch::count(index.counter(), |add| {
            for (&slot, text) in slots.iter().zip(texts).rev() {
                add(slot, text);
            }
        });
        index.add_batch(batch, &[slots[1]]);
        let found = |index: &mut Index, term: &str| -> Vec<u32> {
            let mut hits: Vec<u32> = index.score(term).iter().map(|h| h.0).collect();
            hits.sort();
            hits
        };
        assert_eq!(found(&mut index, "zeroth"), [slots[0]]);
        assert!(found(&mut index, "first").is_empty(), "dropped");
        assert_eq!(found(&mut index, "second"), [slots[2]]);
        // Terms that do not pack go the same way.
        assert_eq!(found(&mut index, "café"), [slots[0], slots[2]]);
        // The body already in is left as it was.
        assert!(found(&mut index, "again").is_empty());
        assert_eq!(found(&mut index, "shared"), [slots[0], slots[2], slots[3]]);
        assert_eq!(index.bodies_in_order(), (3, true));
        assert_eq!(index.posting_bytes, index.counted_posting_bytes());
    }
}
