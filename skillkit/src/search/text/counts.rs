//! The distinct terms of a body and their counts, counted fast: the index
//! reads every body of a catalog once, so this is the hot loop of its first
//! build.
//!
//! Nearly every word of a skill is ASCII and at most 16 bytes long. Such a
//! word is lowercased and packed into one integer as it is scanned
//! ([`Packed`]), then looked up among the words the [`Counter`] has met
//! (texts share most of their words), which gives its term's number: only a
//! word met for the first time is checked against the stop words and
//! stemmed. Each term is tallied in an array by its number. Longer words
//! and words with other letters take the general path ([`term_of`]). The
//! terms and counts are exactly those of [`terms`](super::terms), one entry
//! per distinct term.

use super::packed::{PACKED, Packed, PackedMap, pack, unpack};
use super::{TermMap, is_stop_word, next_word, stem, term_of};

/// The number of a word that is no term (a stop word): a term of its own,
/// counted as the others are (no branch), and left out of what is counted.
const STOP: u32 = 0;

/// What counting needs, reused from text to text: the words met so far
/// (as written, lowercased) with the number of their term (stemmed), and
/// per term its tally in the text being counted. A word is looked up once
/// per occurrence, and stemmed and checked against the stop words only the
/// first time this counter meets it: texts share most of their words.
///
/// Each thread that counts holds one (the index its own, each thread of a
/// build one for the build), so nothing is shared and nothing outlives the
/// work. It forgets what it learnt once it knows [`Counter::MAX_WORDS`]
/// words (so a stream of texts of new words cannot grow it without bound).
pub(crate) struct Counter {
    /// Packed words to their term's number ([`STOP`] for a stop word).
    words: PackedMap,
    /// Packed terms to their number.
    terms: PackedMap,
    /// By term number: the term.
    term_keys: Vec<Packed>,
    /// By term number: the last text it was counted in ([`Counter::text`])
    /// and its count there.
    tally: Vec<(u32, u32)>,
    /// The numbers of the current text's terms, in order of first
    /// occurrence: the first `touched_len`, with room for every term and
    /// one more.
    touched: Vec<u32>,
    touched_len: usize,
    /// The current text's number (from 1; a tally of 0 is no text).
    text: u32,
    /// Scratch of [`Counter::group`], kept from batch to batch.
    pub(super) grouping: Grouping,
}

/// What [`Counter::group`] works in, kept with the counter so a batch does
/// not grow new vectors (each about as large as the last).
#[derive(Default)]
pub(super) struct Grouping {
    /// By term number: its group plus one (0: none yet).
    pub(super) marks: Vec<u32>,
    /// Per group: its term's number, and how many postings it has.
    pub(super) numbers: Vec<u32>,
    pub(super) sizes: Vec<u32>,
    /// Every posting with its group, in the order counted.
    pub(super) pairs: Vec<(u32, u32)>,
}

impl Default for Counter {
    fn default() -> Counter {
        Counter {
            words: PackedMap::with_places(1024),
            terms: PackedMap::with_places(1024),
            // The first term is [`STOP`].
            term_keys: vec![0],
            tally: vec![(0, 0)],
            // One place more than terms: a place is written for every
            // occurrence, kept for a new term only.
            touched: vec![0; 2],
            touched_len: 0,
            text: 0,
            grouping: Grouping::default(),
        }
    }
}

impl Counter {
    /// Words a counter learns before it forgets them all: its tables then
    /// hold at most about 8 MB (two maps of 131,072 places of 24 bytes, and
    /// per term its text and tally), given back with the counter.
    const MAX_WORDS: usize = 1 << 16;

    /// Counts the terms of `text`.
    pub(crate) fn count(&mut self, text: &str) -> TermCounts {
        self.forget_when_full();
        let (others, mut total) = self.scan(text);
        let (mut packed, mut packed_counts) = (
            Vec::with_capacity(self.touched_len),
            Vec::with_capacity(self.touched_len),
        );
        for (term, n) in self.tallies() {
            total = total.saturating_add(n);
            packed.push(term);
            packed_counts.push(cap(n));
        }
        TermCounts {
            packed,
            packed_counts,
            others,
            total,
        }
    }

    /// Forgets every word learnt once there are [`Counter::MAX_WORDS`].
    pub(super) fn forget_when_full(&mut self) {
        if self.words.len >= Counter::MAX_WORDS {
            *self = Counter::default();
        }
    }

    /// Tallies the terms of `text` (read back with
    /// [`tallies`](Self::tallies)); returns the terms that are not packed,
    /// with their counts, and how many occurrences they have.
    pub(super) fn scan(&mut self, text: &str) -> (Vec<(Box<str>, u8)>, u32) {
        if self.text == u32::MAX {
            self.tally.iter_mut().for_each(|t| t.0 = 0);
            self.text = 0;
        }
        self.text += 1;
        self.touched_len = 0;
        scan(text, self)
    }

    /// The terms of the text [`scan`](Self::scan)ned last, in order of
    /// first occurrence, each with its count.
    pub(super) fn tallies(&self) -> impl Iterator<Item = (Packed, u32)> + '_ {
        self.numbers().map(|number| self.tally_of(number))
    }

    /// The numbers of the terms of the text scanned last, in order of first
    /// occurrence.
    pub(super) fn numbers(&self) -> impl Iterator<Item = u32> + '_ {
        let touched = &self.touched[..self.touched_len];
        touched.iter().copied().filter(|&number| number != STOP)
    }

    /// The term numbered `number`, and its count in the text scanned last.
    #[inline]
    pub(super) fn tally_of(&self, number: u32) -> (Packed, u32) {
        (
            self.term_keys[number as usize],
            self.tally[number as usize].1,
        )
    }

    /// How many terms have a number (numbers are below it).
    pub(super) fn numbered(&self) -> usize {
        self.term_keys.len()
    }

    /// Bytes it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.words.heap_bytes()
            + self.terms.heap_bytes()
            + self.term_keys.capacity() * std::mem::size_of::<Packed>()
            + self.tally.capacity() * 8
            + self.touched.capacity() * 4
            + self.grouping.marks.capacity() * 4
            + self.grouping.numbers.capacity() * 4
            + self.grouping.sizes.capacity() * 4
            + self.grouping.pairs.capacity() * 8
    }

    /// The number of the term of `word` (packed, lowercased, 2 bytes or
    /// more): [`STOP`] for a stop word.
    #[inline(always)]
    fn word(&mut self, word: Packed) -> u32 {
        match self.words.find(word) {
            (at, true) => self.words.value(at),
            (at, false) => self.learn(at, word),
        }
    }

    /// Learns `word`, new, to go at `at` in the words; past
    /// [`Counter::MAX_WORDS`] (a text of that many new words: it is
    /// forgotten after the text) it is not kept, only looked up.
    #[inline(never)]
    fn learn(&mut self, at: usize, word: Packed) -> u32 {
        let mut buf = [0u8; PACKED];
        let text = unpack(word, &mut buf);
        let number = match is_stop_word(text) {
            true => STOP,
            // A stem is a prefix of its word, so of its packed form.
            false => match stem(text).len() {
                PACKED => self.term(word),
                len => self.term(word & ((1 << (8 * len)) - 1)),
            },
        };
        if self.words.len < Counter::MAX_WORDS {
            self.words.put(at, word, number);
        }
        number
    }

    /// The number of `term` (packed), given one if it is new.
    #[inline]
    fn term(&mut self, term: Packed) -> u32 {
        match self.terms.find(term) {
            (at, true) => self.terms.value(at),
            (at, false) => {
                let number = self.term_keys.len() as u32;
                self.term_keys.push(term);
                self.tally.push((0, 0));
                self.touched.push(0);
                self.terms.put(at, term, number);
                number
            }
        }
    }

    /// Counts one occurrence of the term `number` in the current text.
    #[inline(always)]
    fn tally(&mut self, number: u32) {
        // Without a branch: whether a term is new to the text is as hard to
        // predict as a coin.
        let (text, tally) = (self.text, &mut self.tally[number as usize]);
        let new = tally.0 != text;
        // A term is kept once a text, so there is room.
        self.touched[self.touched_len] = number;
        self.touched_len += usize::from(new);
        *tally = (text, if new { 1 } else { tally.1.saturating_add(1) });
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

/// The runs of set bits of word masks ([`word_mask`]), block after block:
/// each run's start and end (past its last byte) handed to a closure once
/// it ends. A run's start is a set bit after a clear one, its end a clear
/// bit after a set one, both found for a whole block with shifts; they
/// alternate, so they pair in order, a word per turn of one loop.
#[derive(Default)]
struct Runs {
    /// Whether the last byte of the block before is in a run.
    carry: u64,
    /// The start of the run that goes on from the block before.
    open: usize,
}

impl Runs {
    /// Takes the mask of the block at byte `base`.
    #[inline(always)]
    fn block(&mut self, mask: u64, base: usize, word: &mut impl FnMut(usize, usize)) {
        let before = mask << 1 | self.carry;
        let mut starts = mask & !before;
        let mut ends = !mask & before;
        if self.carry != 0 && ends != 0 {
            word(self.open, base + ends.trailing_zeros() as usize);
            ends &= ends - 1;
        }
        while starts != 0 {
            let start = base + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            if ends == 0 {
                self.open = start;
                break;
            }
            word(start, base + ends.trailing_zeros() as usize);
            ends &= ends - 1;
        }
        self.carry = mask >> 63;
    }
}

/// A count capped at 255.
pub(super) fn cap(n: u32) -> u8 {
    n.min(255) as u8
}

/// Words of a text waiting to be looked up, packed and lowercased: looked
/// up [`Pending::MAX`] at a time, the first place of each read before any is
/// resolved, so the reads wait for memory together, not one after the other.
struct Pending {
    words: [Packed; Pending::MAX],
    len: usize,
}

impl Pending {
    const MAX: usize = 32;

    /// Adds `word`; looks the words up when there are [`Pending::MAX`].
    #[inline(always)]
    fn push(&mut self, word: Packed, counter: &mut Counter) {
        self.words[self.len] = word;
        self.len += 1;
        if self.len == Pending::MAX {
            self.flush(counter);
        }
    }

    /// Looks up and tallies the words waiting, in order.
    #[inline(always)]
    fn flush(&mut self, counter: &mut Counter) {
        let words = &self.words[..self.len];
        let mut homes = [(0, 0); Pending::MAX];
        for (home, &word) in homes.iter_mut().zip(words) {
            *home = counter.words.home(word);
        }
        for (&(key, value), &word) in homes.iter().zip(words) {
            // A word learnt meanwhile (or after a collision) takes the
            // whole lookup; a copy that holds its word stays right, since a
            // word's number never changes within a text.
            let number = if key == word {
                value
            } else {
                counter.word(word)
            };
            counter.tally(number);
        }
        self.len = 0;
    }
}

/// Tallies the terms of `text` in `counter` (see [`Counter::scan`]).
fn scan(text: &str, counter: &mut Counter) -> (Vec<(Box<str>, u8)>, u32) {
    let mut scan = Scan {
        text,
        counter,
        pending: Pending {
            words: [0; Pending::MAX],
            len: 0,
        },
        others: Others::default(),
    };
    // Runs of word bytes (ASCII letters and digits, and every byte of a
    // character beyond ASCII), found 64 bytes at a time.
    let bytes = text.as_bytes();
    let (blocks, tail) = bytes.as_chunks::<64>();
    let mut runs = Runs::default();
    let mut word = |start, end| scan.word(start, end);
    for (at, block) in blocks.iter().enumerate() {
        runs.block(word_mask(block), at * 64, &mut word);
    }
    // The last block padded with bytes of no word, so a run that reaches
    // the text's end ends there.
    let mut last = [0u8; 64];
    last[..tail.len()].copy_from_slice(tail);
    runs.block(word_mask(&last), blocks.len() * 64, &mut word);
    scan.pending.flush(scan.counter);
    let Others { terms, total, .. } = scan.others;
    (terms.into_iter().map(|(t, n)| (t, cap(n))).collect(), total)
}

/// One text being scanned: its words looked up as they are found.
struct Scan<'t, 'c> {
    text: &'t str,
    counter: &'c mut Counter,
    pending: Pending,
    others: Others,
}

/// The terms of a text that do not pack, with their counts.
#[derive(Default)]
struct Others {
    terms: TermMap<u32>,
    /// Their occurrences.
    total: u32,
    /// Scratch for a word lowercased.
    word: String,
}

impl Scan<'_, '_> {
    /// Takes the run of word bytes `start..end`: a word of at most 16 ASCII
    /// letters and digits waits to be looked up; any other run takes
    /// [`Scan::general`].
    #[inline(always)]
    fn word(&mut self, start: usize, end: usize) {
        let len = end - start;
        if len < 2 {
            // One ASCII letter or digit (any other character is 2 bytes
            // or more).
            return;
        }
        if len <= PACKED {
            let bytes = self.text.as_bytes();
            let mut sixteen = [0u8; PACKED];
            match bytes.get(start..start + PACKED) {
                Some(loaded) => sixteen.copy_from_slice(loaded),
                None => sixteen[..len].copy_from_slice(&bytes[start..end]),
            }
            let keep = Packed::MAX >> (8 * (PACKED - len));
            let value = Packed::from_le_bytes(sixteen) & keep;
            if value & HIGH_BITS == 0 {
                // ASCII letters and digits: `| 0x20` lowercases the letters
                // and leaves the digits as they are.
                self.pending.push(value | (LOWERCASE & keep), self.counter);
                return;
            }
        }
        self.general(start, end);
    }

    /// The general path: a run that holds characters beyond ASCII (which
    /// may split it in words, or not), or is long. The words before it are
    /// tallied first, so terms stay in order of first occurrence.
    #[inline(never)]
    fn general(&mut self, start: usize, end: usize) {
        self.pending.flush(self.counter);
        let (text, others) = (self.text, &mut self.others);
        let mut at = start;
        while let Some((start, end, ascii)) = next_word(text, at).filter(|w| w.0 < end) {
            at = end;
            let Some(term) = term_of(&text[start..end], ascii, &mut others.word) else {
                continue;
            };
            match pack(term) {
                Some(key) => {
                    let number = self.counter.term(key);
                    self.counter.tally(number);
                }
                None => {
                    others.total = others.total.saturating_add(1);
                    match others.terms.get_mut(term) {
                        Some(n) => *n = n.saturating_add(1),
                        None => {
                            others.terms.insert(term.into(), 1);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_counter_that_learnt_many_words_forgets_them_and_counts_on() {
        let mut counter = Counter::default();
        let text = "Report reports REPORTING; pdf pdf the tables";
        let expected = reference(text);
        for chunk in 0..(Counter::MAX_WORDS / 4000 + 2) {
            // Texts of new words, between which the same text counts the same.
            let many: String = (0..4000).map(|i| format!("w{chunk}x{i} ")).collect();
            assert_eq!(counter.count(&many).sorted().len(), 4000);
            assert_eq!(counter.count(text).sorted(), expected);
            assert!(counter.heap_bytes() < 8 << 20, "{}", counter.heap_bytes());
        }
        assert!(counter.words.len <= Counter::MAX_WORDS);
        // One text of more new words than that: all counted, and the words
        // past the bound not kept.
        let many: String = (0..Counter::MAX_WORDS + 5000)
            .map(|i| format!("v{i} "))
            .collect();
        let counts = counter.count(&many);
        assert_eq!(counts.sorted().len(), Counter::MAX_WORDS + 5000);
        assert_eq!(counter.words.len, Counter::MAX_WORDS);
    }
}
