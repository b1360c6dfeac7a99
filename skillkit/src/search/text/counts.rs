//! The distinct terms of a body and their counts, counted fast: the index
//! reads every body of a catalog once, so this is the hot loop of its first
//! build.
//!
//! Nearly every word of a skill is ASCII and at most 16 bytes long. Such a
//! word is lowercased through a table and packed into one integer as it is
//! scanned ([`Packed`]), then counted in an open-addressed table keyed by
//! that integer; only each *distinct* word is then checked against the stop
//! words and stemmed. Longer words and words with other letters take the
//! general path ([`term_of`]). The terms and counts are exactly those of
//! [`terms`](super::terms), one entry per distinct term.

use super::{TermMap, is_stop_word, next_word, stem, term_of};

/// A term of at most 16 ASCII bytes, packed little-endian into an integer
/// and padded with zeros: a term's bytes are letters and digits, never 0,
/// so its length is where the zeros start.
pub(crate) type Packed = u128;

/// The most bytes a [`Packed`] term holds.
const PACKED: usize = 16;

/// `term` packed, when it is ASCII and at most 16 bytes.
pub(crate) fn pack(term: &str) -> Option<Packed> {
    let bytes = term.as_bytes();
    if bytes.is_empty() || bytes.len() > PACKED || !bytes.is_ascii() || bytes.contains(&0) {
        return None;
    }
    let mut buf = [0u8; PACKED];
    buf[..bytes.len()].copy_from_slice(bytes);
    Some(Packed::from_le_bytes(buf))
}

/// The text of a packed term, in `buf`.
pub(crate) fn unpack(term: Packed, buf: &mut [u8; PACKED]) -> &str {
    *buf = term.to_le_bytes();
    let len = PACKED - (term.leading_zeros() / 8) as usize;
    // Packed terms are ASCII; an integer that is not one gives "".
    std::str::from_utf8(&buf[..len]).unwrap_or_default()
}

/// Multiply-xor hash of a packed term, good in its high bits.
#[inline]
pub(crate) fn hash_packed(term: Packed) -> u64 {
    let (low, high) = (term as u64, (term >> 64) as u64);
    (low ^ high.rotate_left(29) ^ (high >> 7)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Counts keyed by packed terms: open addressing, at most half full, the
/// keys also listed in order of first occurrence (what is cleared, and
/// iterated). Kept per thread and reused from body to body.
struct Table {
    keys: Vec<Packed>,
    counts: Vec<u32>,
    order: Vec<u32>,
    /// Places in use (a power of two, at most `keys.len()`).
    size: usize,
    /// 64 − log2 of `size`: a hash's top bits pick the place.
    shift: u32,
}

impl Table {
    fn new() -> Table {
        Table::with_size(1024)
    }

    fn with_size(size: usize) -> Table {
        Table {
            keys: vec![0; size],
            counts: vec![0; size],
            order: Vec::with_capacity(size / 2),
            size,
            shift: 64 - size.trailing_zeros(),
        }
    }

    /// Empties the table and sizes it for about `entries` keys (a table
    /// that fits in the cache is the fast one), keeping its allocation.
    fn clear(&mut self, entries: usize) {
        for &at in &self.order {
            self.keys[at as usize] = 0;
        }
        self.order.clear();
        let size = (entries * 4).next_power_of_two().max(256);
        if size > self.keys.len() {
            *self = Table::with_size(size);
        }
        self.size = size;
        self.shift = 64 - size.trailing_zeros();
    }

    #[inline(always)]
    fn add(&mut self, key: Packed, n: u32) {
        let mask = self.size - 1;
        let mut at = (hash_packed(key) >> self.shift) as usize;
        loop {
            let k = self.keys[at];
            if k == key {
                self.counts[at] = self.counts[at].saturating_add(n);
                return;
            }
            if k == 0 {
                self.keys[at] = key;
                self.counts[at] = n;
                self.order.push(at as u32);
                if self.order.len() * 2 > self.size {
                    self.grow();
                }
                return;
            }
            at = (at + 1) & mask;
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let entries: Vec<(Packed, u32)> = self.iter().collect();
        let size = self.size * 2;
        self.clear(size / 2);
        for (key, n) in entries {
            self.add(key, n);
        }
    }

    fn iter(&self) -> impl Iterator<Item = (Packed, u32)> + '_ {
        self.order
            .iter()
            .map(|&at| (self.keys[at as usize], self.counts[at as usize]))
    }
}

/// The stems of the words seen last, by their packed form: a cache, one
/// entry per place (a word that lands where another was replaces it).
/// Words repeat from body to body, and a cached one costs a comparison
/// instead of a stop-word check and the stemmer.
struct Stems {
    words: Vec<Packed>,
    /// The stem's length in bytes; 0 for a stop word.
    lens: Vec<u8>,
}

impl Stems {
    /// Places in the cache: 128 KiB of words.
    const SIZE: usize = 1 << 13;

    fn new() -> Stems {
        Stems {
            words: vec![0; Stems::SIZE],
            lens: vec![0; Stems::SIZE],
        }
    }

    /// The length of the stem of `word` (a packed word of 2 bytes or
    /// more); 0 for a stop word.
    #[inline]
    fn stem_len(&mut self, word: Packed) -> usize {
        let at = (hash_packed(word) >> (64 - Stems::SIZE.trailing_zeros())) as usize;
        if self.words[at] == word {
            return usize::from(self.lens[at]);
        }
        let mut buf = [0u8; PACKED];
        let text = unpack(word, &mut buf);
        let len = match is_stop_word(text) {
            true => 0,
            false => stem(text).len(),
        };
        self.words[at] = word;
        self.lens[at] = len as u8;
        len
    }
}

/// What counting needs, reused from text to text: the tables of words (as
/// written, lowercased) and of terms (stemmed), and the stem cache. Each
/// thread that counts holds one (the index its own, each thread of a build
/// one for the build), so nothing is shared and nothing outlives the work.
pub(crate) struct Counter {
    words: Table,
    terms: Table,
    stems: Stems,
}

impl Default for Counter {
    fn default() -> Counter {
        Counter {
            words: Table::new(),
            terms: Table::new(),
            stems: Stems::new(),
        }
    }
}

impl Counter {
    /// Tables grown past this many places (by a very long text) are given
    /// back after it.
    const KEEP: usize = 4096;

    /// Counts the terms of `text`.
    pub(crate) fn count(&mut self, text: &str) -> TermCounts {
        let counts = count(text, &mut self.words, &mut self.terms, &mut self.stems);
        for table in [&mut self.words, &mut self.terms] {
            if table.keys.len() > Counter::KEEP {
                *table = Table::new();
            }
        }
        counts
    }

    /// Bytes it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        let table =
            |t: &Table| t.keys.capacity() * 16 + t.counts.capacity() * 4 + t.order.capacity() * 4;
        table(&self.words) + table(&self.terms) + self.stems.words.capacity() * 17
    }
}

/// The distinct terms of a text with their counts (capped at 255).
pub(crate) struct TermCounts {
    /// Terms of at most 16 ASCII bytes, packed, and their counts.
    packed: Vec<Packed>,
    packed_counts: Vec<u8>,
    /// The other terms (longer, or with letters beyond ASCII).
    others: Vec<(Box<str>, u8)>,
    /// Terms counted (with repeats).
    pub(crate) total: u32,
}

impl TermCounts {
    /// Counts the terms of `text` (with a counter of its own).
    #[cfg(test)]
    pub(crate) fn of(text: &str) -> TermCounts {
        Counter::default().count(text)
    }

    /// The packed terms and their counts.
    pub(crate) fn packed(&self) -> impl Iterator<Item = (Packed, u8)> + '_ {
        self.packed
            .iter()
            .copied()
            .zip(self.packed_counts.iter().copied())
    }

    /// The terms that are not packed, and their counts.
    pub(crate) fn others(&self) -> impl Iterator<Item = (&str, u8)> {
        self.others.iter().map(|(t, n)| (&**t, *n))
    }

    /// Every term and its count, sorted by term.
    #[cfg(test)]
    pub(crate) fn sorted(&self) -> Vec<(String, u8)> {
        let mut buf = [0u8; PACKED];
        let mut all: Vec<(String, u8)> = self
            .packed()
            .map(|(t, n)| (unpack(t, &mut buf).to_owned(), n))
            .chain(self.others().map(|(t, n)| (t.to_owned(), n)))
            .collect();
        all.sort();
        all
    }
}

/// Every byte 0x80: a byte's top bit.
const HIGH_BITS: Packed = Packed::from_le_bytes([0x80; PACKED]);
/// Every byte 0x20: the bit that makes an ASCII letter lowercase.
const LOWERCASE: Packed = Packed::from_le_bytes([0x20; PACKED]);

/// One bit per byte of `block` (bit `i` for byte `i`): set for a byte of a
/// word, an ASCII letter or digit or any byte of a character beyond ASCII.
/// Eight bytes at a time, in an integer (SWAR).
#[inline(always)]
fn word_mask(block: &[u8; 64]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    // The top bit of each byte of `v` (each below 0x80): set when the byte
    // is within `lo..=hi`. No sum carries into the next byte.
    let within = |v: u64, lo: u8, hi: u8| {
        (v + ONES * u64::from(0x80 - lo)) & !(v + ONES * u64::from(0x7f - hi)) & HIGH
    };
    let mut mask = 0u64;
    for (i, eight) in block.as_chunks::<8>().0.iter().enumerate() {
        let x = u64::from_le_bytes(*eight);
        let low = x & !HIGH;
        let word = within(low, b'0', b'9') | within(low | (ONES * 0x20), b'a', b'z') | (x & HIGH);
        // The top bits gathered into the top byte, then shifted down.
        let bits = ((word >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
        mask |= bits << (8 * i);
    }
    mask
}

/// Calls `word` with the start and end of each run of set bits of `mask`
/// (the block at byte `base`) that ends in it; `open` is the start of a run
/// that goes on from the block before, and is left set when one goes on
/// into the next.
#[inline(always)]
fn runs(mask: u64, base: usize, open: &mut Option<usize>, word: &mut impl FnMut(usize, usize)) {
    let mut at = 0u32;
    while at < 64 {
        match *open {
            Some(start) => {
                let rest = !mask >> at;
                if rest == 0 {
                    return;
                }
                at += rest.trailing_zeros();
                word(start, base + at as usize);
                *open = None;
            }
            None => {
                let rest = mask >> at;
                if rest == 0 {
                    return;
                }
                at += rest.trailing_zeros();
                *open = Some(base + at as usize);
            }
        }
    }
}

fn count(text: &str, words: &mut Table, terms: &mut Table, stems: &mut Stems) -> TermCounts {
    // About one distinct word per 24 bytes of a skill's body.
    words.clear(text.len() / 24);
    terms.clear(text.len() / 24);
    let mut others: TermMap<u32> = TermMap::default();
    let mut total: u32 = 0;
    let mut word = String::new();
    let bytes = text.as_bytes();
    let mut word_at = |start: usize, end: usize| {
        let len = end - start;
        if len < 2 {
            // One ASCII letter or digit (any other character is 2 bytes
            // or more).
            return;
        }
        if len <= PACKED {
            let mut buf = [0u8; PACKED];
            let loaded = match bytes.get(start..start + PACKED) {
                Some(sixteen) => sixteen,
                None => {
                    buf[..len].copy_from_slice(&bytes[start..end]);
                    &buf
                }
            };
            let mut sixteen = [0u8; PACKED];
            sixteen.copy_from_slice(loaded);
            let keep = Packed::MAX >> (8 * (PACKED - len));
            let value = Packed::from_le_bytes(sixteen) & keep;
            if value & HIGH_BITS == 0 {
                // ASCII letters and digits: `| 0x20` lowercases the letters
                // and leaves the digits as they are.
                words.add(value | (LOWERCASE & keep), 1);
                return;
            }
        }
        // The general path: the run holds characters beyond ASCII (which
        // may split it in words, or not), or is long.
        let (run_end, mut at) = (end, start);
        while let Some((start, end, ascii)) = next_word(text, at).filter(|w| w.0 < run_end) {
            at = end;
            let Some(term) = term_of(&text[start..end], ascii, &mut word) else {
                continue;
            };
            total = total.saturating_add(1);
            match pack(term) {
                Some(key) => terms.add(key, 1),
                None => match others.get_mut(term) {
                    Some(n) => *n = n.saturating_add(1),
                    None => {
                        others.insert(term.into(), 1);
                    }
                },
            }
        }
    };
    // Runs of word bytes (ASCII letters and digits, and every byte of a
    // character beyond ASCII), found 64 bytes at a time.
    let (blocks, tail) = bytes.as_chunks::<64>();
    let mut open = None;
    for (at, block) in blocks.iter().enumerate() {
        runs(word_mask(block), at * 64, &mut open, &mut word_at);
    }
    let mut last = [0u8; 64];
    last[..tail.len()].copy_from_slice(tail);
    runs(word_mask(&last), blocks.len() * 64, &mut open, &mut word_at);
    if let Some(start) = open {
        word_at(start, bytes.len());
    }
    // Each distinct word once: stop words dropped, the rest stemmed (a stem
    // is a prefix of its word, so of its packed form).
    for (key, n) in words.iter() {
        let len = stems.stem_len(key);
        let term = match len {
            0 => continue,
            PACKED => key,
            _ => key & ((1 << (8 * len)) - 1),
        };
        total = total.saturating_add(n);
        terms.add(term, n);
    }
    let cap = |n: u32| n.min(255) as u8;
    let (packed, packed_counts) = terms.iter().map(|(t, n)| (t, cap(n))).unzip();
    TermCounts {
        packed,
        packed_counts,
        others: others.into_iter().map(|(t, n)| (t, cap(n))).collect(),
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_keeps_the_term() {
        let mut buf = [0u8; PACKED];
        for term in ["ab", "report", "sixteen-letters!", "0123456789abcdef"] {
            let packed = pack(term).unwrap();
            assert_eq!(unpack(packed, &mut buf), term);
        }
        assert_eq!(pack("seventeen letters"), None);
        assert_eq!(pack("café"), None);
        assert_eq!(pack(""), None);
    }

    /// Counts as `terms` gives them, sorted by term.
    fn reference(text: &str) -> Vec<(String, u8)> {
        super::super::tests::counted(&super::super::term_list(text))
    }

    #[test]
    fn words_across_blocks_of_64_bytes_are_counted_whole() {
        // Every offset of words, long words, characters beyond ASCII and
        // the text's end against the 64-byte blocks of the scan.
        let words = "Reports sixteenletters seventeenletters café naïve\u{2014}dash \u{212a}elvin x9 🚀rocket";
        for offset in 0..=80 {
            let text = format!("{}{words}", "-".repeat(offset));
            for cut in [0, 1, 7, 30] {
                let end = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth_back(cut)
                    .unwrap_or(0);
                let text = if cut == 0 { &text[..] } else { &text[..end] };
                assert_eq!(TermCounts::of(text).sorted(), reference(text), "{text:?}");
            }
        }
        let long = "word ".repeat(100) + &"é".repeat(40) + "end";
        assert_eq!(TermCounts::of(&long).sorted(), reference(&long));
    }

    #[test]
    fn tables_grow_and_clear() {
        let mut table = Table::with_size(4);
        for i in 1..=1000u128 {
            table.add(i, 1);
            table.add(i, 2);
        }
        assert_eq!(table.iter().count(), 1000);
        assert!(table.iter().all(|(_, n)| n == 3));
        table.clear(10);
        assert_eq!(table.iter().count(), 0);
        assert_eq!(table.size, 256);
        assert!(table.keys.iter().all(|&k| k == 0));
    }
}
