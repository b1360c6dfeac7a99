//! A text cut into words as the [`Counter`] counts them: word bytes found
//! 64 at a time ([`word_mask`]), each block's words paired from the starts
//! and ends of its runs ([`Runs`]), and a word of at most 16 ASCII letters
//! and digits packed as it is found and looked up with the words near it
//! ([`Pending`]); any other run takes the general path of the reference
//! tokenizer ([`Scan::general`]).

use super::super::packed::{PACKED, Packed, pack};
use super::super::{TermMap, next_word, term_of};
use super::{Counter, cap};

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
pub(super) fn scan(text: &str, counter: &mut Counter) -> (Vec<(Box<str>, u8)>, u32) {
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
    use super::super::TermCounts;

    /// Counts as `terms` gives them, sorted by term.
    fn reference(text: &str) -> Vec<(String, u8)> {
        crate::search::text::tests::counted(&crate::search::text::term_list(text))
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
}
