//! The index's dictionary: each term once, and its id.
//!
//! A term of at most 16 ASCII bytes (nearly all of them) is its own key,
//! packed into 16 bytes; a longer one is kept in `long` and its key says
//! where. The hash table holds only ids (4 bytes and a control byte a
//! term) and compares through the keys, so a term costs about 21 bytes
//! here, plus the text of the long ones.

use std::hash::Hasher;

use hashbrown::HashTable;

use crate::search::text::{self, HashKeys, Packed, TermHasher};

/// A term's key: its packed form or, with the low word 0 (which no packed
/// term has: a term's first byte is never 0), the index of its text in
/// [`Dictionary::long`]. Two `u64`s, so a key is 8-byte aligned.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key([u64; 2]);

impl Key {
    fn packed(term: Packed) -> Key {
        Key([term as u64, (term >> 64) as u64])
    }

    fn long(at: usize) -> Key {
        Key([0, at as u64])
    }

    /// Where the text of a long term is.
    fn long_at(self) -> Option<usize> {
        (self.0[0] == 0).then_some(self.0[1] as usize)
    }

    fn as_packed(self) -> Packed {
        Packed::from(self.0[0]) | Packed::from(self.0[1]) << 64
    }
}

/// A term being looked up.
#[derive(Clone, Copy)]
enum Probe<'a> {
    Packed(Packed),
    Long(&'a str),
}

impl<'a> Probe<'a> {
    fn of(term: &'a str) -> Probe<'a> {
        match text::pack(term) {
            Some(packed) => Probe::Packed(packed),
            None => Probe::Long(term),
        }
    }

    fn hash(self, keys: HashKeys) -> u64 {
        let h = match self {
            Probe::Packed(packed) => keys.hash(packed),
            Probe::Long(term) => {
                let mut hasher = TermHasher(keys.seed());
                hasher.write(term.as_bytes());
                hasher.finish()
            }
        };
        // The table takes its bucket from the low bits and its tag from
        // the top 7: both must vary.
        h ^ (h >> 32)
    }
}

/// The hash of the term `id` of a dictionary's `keys` and `long` texts (to
/// move it when the table grows or shrinks).
fn hash_of(keys: &[Key], long: &[Box<str>], hash_keys: HashKeys, id: u32) -> u64 {
    let key = keys[id as usize];
    match key.long_at() {
        Some(at) => Probe::Long(&long[at]).hash(hash_keys),
        None => Probe::Packed(key.as_packed()).hash(hash_keys),
    }
}

/// Term ids by term, and each id's term.
#[derive(Default)]
pub(super) struct Dictionary {
    table: HashTable<u32>,
    /// The keys of the table's hash, its own.
    hash_keys: HashKeys,
    /// By id.
    keys: Vec<Key>,
    /// The texts of the terms that do not pack.
    long: Vec<Box<str>>,
    /// Term ids by length in characters (for typo candidates).
    by_len: Vec<Vec<u32>>,
}

impl Dictionary {
    /// The number of terms (the next term's id).
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The id of `term`, when it is here.
    pub(super) fn get(&self, term: &str) -> Option<u32> {
        self.find(Probe::of(term))
    }

    /// The id of `term`, made (the next id) when new.
    pub(super) fn id(&mut self, term: &str) -> u32 {
        self.id_of(Probe::of(term))
    }

    /// The id of the packed term `term`, made when new.
    pub(super) fn packed_id(&mut self, term: Packed) -> u32 {
        self.id_of(Probe::Packed(term))
    }

    /// The text of term `id`, in `buf` when it is packed.
    pub(super) fn text<'a>(&'a self, id: u32, buf: &'a mut [u8; 16]) -> &'a str {
        let key = self.keys[id as usize];
        match key.long_at() {
            Some(at) => &self.long[at],
            None => text::unpack(key.as_packed(), buf),
        }
    }

    /// The ids of the terms `len` characters long.
    pub(super) fn of_len(&self, len: usize) -> &[u32] {
        self.by_len.get(len).map_or(&[], Vec::as_slice)
    }

    /// The longest term's length in characters.
    pub(super) fn max_len(&self) -> usize {
        self.by_len.len().saturating_sub(1)
    }

    fn find(&self, probe: Probe<'_>) -> Option<u32> {
        self.table
            .find(probe.hash(self.hash_keys), |&id| self.is(id, probe))
            .copied()
    }

    fn is(&self, id: u32, probe: Probe<'_>) -> bool {
        let key = self.keys[id as usize];
        match probe {
            Probe::Packed(packed) => key == Key::packed(packed),
            Probe::Long(term) => key.long_at().is_some_and(|at| *self.long[at] == *term),
        }
    }

    fn id_of(&mut self, probe: Probe<'_>) -> u32 {
        if let Some(id) = self.find(probe) {
            return id;
        }
        let id = self.keys.len() as u32;
        let (key, len) = match probe {
            Probe::Packed(packed) => {
                // ASCII: a byte a character, up to the first 0.
                let len = 16 - (packed.leading_zeros() / 8) as usize;
                (Key::packed(packed), len)
            }
            Probe::Long(term) => {
                self.long.push(term.into());
                (Key::long(self.long.len() - 1), term.chars().count())
            }
        };
        self.keys.push(key);
        let Dictionary {
            table,
            hash_keys,
            keys,
            long,
            ..
        } = self;
        table.insert_unique(probe.hash(*hash_keys), id, |&id| {
            hash_of(keys, long, *hash_keys, id)
        });
        if self.by_len.len() <= len {
            self.by_len.resize_with(len + 1, Vec::new);
        }
        self.by_len[len].push(id);
        id
    }

    /// Gives back spare capacity (after a build).
    pub(super) fn shrink(&mut self) {
        let Dictionary {
            table,
            hash_keys,
            keys,
            long,
            by_len,
        } = self;
        table.shrink_to_fit(|&id| hash_of(keys, long, *hash_keys, id));
        keys.shrink_to_fit();
        long.shrink_to_fit();
        for ids in by_len {
            ids.shrink_to_fit();
        }
    }

    /// A dictionary of the terms `keep` says to keep, renumbered in order:
    /// `keep(id)` is asked once per term, in order of id.
    pub(super) fn retain(&self, mut keep: impl FnMut(u32) -> bool) -> Dictionary {
        let mut out = Dictionary::default();
        let mut buf = [0u8; 16];
        for id in 0..self.len() as u32 {
            if keep(id) {
                out.id(self.text(id, &mut buf));
            }
        }
        out
    }

    /// Bytes on the heap, an estimate from capacities.
    pub(super) fn heap_bytes(&self) -> usize {
        // A bucket is an id and a control byte; `hashbrown` keeps at most
        // 7/8 of its buckets full.
        self.table.capacity() * 8 / 7 * (std::mem::size_of::<u32>() + 1)
            + self.keys.capacity() * std::mem::size_of::<Key>()
            + self.long.capacity() * std::mem::size_of::<Box<str>>()
            + self.long.iter().map(|t| t.len()).sum::<usize>()
            + self.by_len.capacity() * std::mem::size_of::<Vec<u32>>()
            + self.by_len.iter().map(|l| l.capacity() * 4).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_keeps_its_id_and_its_text() {
        let mut d = Dictionary::default();
        let long = "internationalisation-ready"; // longer than 16 bytes
        let accented = "café";
        let ids: Vec<u32> = ["pdf", long, accented, "x"]
            .iter()
            .map(|t| d.id(t))
            .collect();
        assert_eq!(ids, [0, 1, 2, 3]);
        assert_eq!(d.id(long), 1);
        assert_eq!(d.packed_id(text::pack("pdf").unwrap()), 0);
        assert_eq!(d.get("café"), Some(2));
        assert_eq!(d.get("cafe"), None);
        let mut buf = [0u8; 16];
        assert_eq!(d.text(1, &mut buf), long);
        assert_eq!(d.text(0, &mut buf), "pdf");
        assert_eq!(d.of_len(4), [2]);
        assert_eq!(d.max_len(), long.len());
    }

    #[test]
    fn many_terms_survive_growth_and_retain() {
        let mut d = Dictionary::default();
        let terms: Vec<String> = (0..5_000)
            .map(|i| match i % 3 {
                0 => format!("t{i}"),
                1 => format!("a-rather-long-term-number-{i}"),
                _ => format!("ü{i}"),
            })
            .collect();
        for (i, t) in terms.iter().enumerate() {
            assert_eq!(d.id(t), i as u32);
        }
        d.shrink();
        for (i, t) in terms.iter().enumerate() {
            assert_eq!(d.get(t), Some(i as u32), "{t}");
        }
        let kept = d.retain(|id| id % 2 == 1);
        assert_eq!(kept.len(), 2_500);
        let mut buf = [0u8; 16];
        for (new, old) in (1..5_000).step_by(2).enumerate() {
            assert_eq!(kept.get(&terms[old]), Some(new as u32));
            assert_eq!(kept.text(new as u32, &mut buf), terms[old]);
        }
        assert_eq!(kept.get(&terms[0]), None);
    }
}
