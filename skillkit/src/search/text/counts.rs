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
//! and words with other letters take the general path
//! ([`term_of`](super::term_of)). How a text is cut into words is in
//! [`scan`]. The terms and counts are exactly those of
//! [`terms`](super::terms), one entry per distinct term.

use super::packed::{PACKED, Packed, PackedMap, unpack};
use super::{is_stop_word, stem};

mod scan;

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
        scan::scan(text, self)
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

/// A count capped at 255.
pub(super) fn cap(n: u32) -> u8 {
    n.min(255) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts as `terms` gives them, sorted by term.
    fn reference(text: &str) -> Vec<(String, u8)> {
        super::super::tests::counted(&super::super::term_list(text))
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
