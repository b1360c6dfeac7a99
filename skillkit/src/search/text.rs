//! Text to index terms: words split on anything not a letter or digit,
//! lowercased, stop words dropped, plurals and common endings folded by a
//! light stemmer; and the bounded edit distance that makes search tolerant
//! of small typos.

mod counts;
mod grouped;
mod packed;
pub(crate) mod short;

pub(crate) use counts::Counter;
#[cfg(test)]
pub(crate) use counts::TermCounts;
pub(crate) use grouped::Grouped;
pub(crate) use packed::{HashKeys, Packed, pack, unpack};

/// Terms longer than this are not indexed (hashes, base64, minified code).
const MAX_TERM: usize = 32;

/// Words too common in English prose (and in skill bodies) to tell skills
/// apart; not indexed, ignored in queries.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "do", "does", "each", "for", "from", "get", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "more", "my", "need", "no", "not", "of", "on", "one", "or",
    "our", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "up", "us", "use", "used", "using", "want", "was",
    "we", "what", "when", "where", "which", "while", "who", "will", "with", "would", "you", "your",
];

/// Calls `each` with every index term of `text`, in order (a term once per
/// occurrence).
///
/// Words are runs of letters and digits. The scan is over bytes: an ASCII
/// word (nearly every word of a skill) is copied into one reused buffer and
/// lowercased in place, with no allocation; a word with other letters takes
/// the general path (Unicode lowercasing).
pub(crate) fn terms(text: &str, mut each: impl FnMut(&str)) {
    let mut word = String::with_capacity(MAX_TERM * 4);
    let mut at = 0;
    while let Some((start, end, ascii)) = next_word(text, at) {
        at = end;
        if let Some(term) = term_of(&text[start..end], ascii, &mut word) {
            each(term);
        }
    }
}

/// The next word of `text` at or after byte `at`: its start, its end, and
/// whether it is all ASCII; `None` when no word is left.
pub(super) fn next_word(text: &str, mut at: usize) -> Option<(usize, usize, bool)> {
    let bytes = text.as_bytes();
    loop {
        while at < bytes.len() && bytes[at].is_ascii() && !bytes[at].is_ascii_alphanumeric() {
            at += 1;
        }
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        let mut ascii = true;
        while at < bytes.len() {
            let b = bytes[at];
            if b.is_ascii() {
                if !b.is_ascii_alphanumeric() {
                    break;
                }
                at += 1;
            } else {
                // `at` is on a character boundary: only whole characters
                // are stepped over.
                let Some(c) = text[at..].chars().next() else {
                    break;
                };
                if !is_word_char(c) {
                    break;
                }
                ascii = false;
                at += c.len_utf8();
            }
        }
        if at > start {
            return Some((start, at, ascii));
        }
        // A character that is neither ASCII nor a letter or digit.
        at += text[at..].chars().next().map_or(1, char::len_utf8);
    }
}

/// Whether `c` (beyond ASCII) is part of a word: a letter or a digit
/// ([`char::is_alphanumeric`]). The symbols skills write most (dashes and
/// quotes, arrows, box drawing, check marks, emoji and their variation
/// selectors) sit in blocks without a letter or digit, answered without
/// looking through Unicode's tables (a test holds every character of those
/// blocks to the tables).
#[inline]
fn is_word_char(c: char) -> bool {
    !NO_WORD_CHARS.iter().any(|r| r.contains(&(c as u32))) && c.is_alphanumeric()
}

/// Blocks of characters none of which is a letter or a digit.
const NO_WORD_CHARS: [std::ops::RangeInclusive<u32>; 6] = [
    // General Punctuation: dashes, quotes, bullets, ellipsis.
    0x2000..=0x206F,
    // Arrows, Mathematical Operators, Miscellaneous Technical.
    0x2190..=0x23FF,
    // Box Drawing, Block Elements, Geometric Shapes, Miscellaneous
    // Symbols, the Dingbats before their circled digits.
    0x2500..=0x2775,
    // The Dingbats after them.
    0x2794..=0x27BF,
    // Variation Selectors.
    0xFE00..=0xFE0F,
    // Pictographs and emoji.
    0x1F300..=0x1FAFF,
];

/// The index term of one `piece` of text (a word of [`next_word`]):
/// lowercased into `word`, stemmed; `None` for a stop word, a word of one
/// character or one longer than [`MAX_TERM`].
pub(super) fn term_of<'w>(piece: &str, ascii: bool, word: &'w mut String) -> Option<&'w str> {
    if piece.len() < 2 || piece.len() > MAX_TERM * 4 {
        return None;
    }
    word.clear();
    if ascii {
        // Copied, not validated again: ASCII letters and digits.
        word.push_str(piece);
        word.make_ascii_lowercase();
    } else {
        word.extend(piece.chars().flat_map(char::to_lowercase));
        if word.chars().count() < 2 {
            return None;
        }
    }
    let term = word.as_str();
    if is_stop_word(term) {
        return None;
    }
    let stem = stem(term);
    (stem.len() <= MAX_TERM || stem.chars().count() <= MAX_TERM).then_some(stem)
}

/// Whether `word` (lowercase) is one of [`STOP_WORDS`]: a word of at most
/// 6 bytes is packed into an integer and looked up among the packed stop
/// words (no hashing, no string comparison).
fn is_stop_word(word: &str) -> bool {
    let bytes = word.as_bytes();
    // Most words are told apart by their length and first letter alone.
    bytes.len() <= 6
        && STOP_FIRST[bytes.len()] & (1u32 << (bytes[0] & 31)) != 0
        && STOP_PACKED.binary_search(&pack_word(bytes)).is_ok()
}

/// Per length, the first letters of the stop words of that length (bit
/// `letter & 31`).
const STOP_FIRST: [u32; 7] = {
    let mut first = [0u32; 7];
    let mut i = 0;
    while i < STOP_WORDS.len() {
        let word = STOP_WORDS[i].as_bytes();
        first[word.len()] |= 1 << (word[0] & 31);
        i += 1;
    }
    first
};

/// `word` (at most 8 bytes) as a big-endian integer padded with zeros: the
/// order of packed words is the order of the words.
const fn pack_word(word: &[u8]) -> u64 {
    let mut packed = 0u64;
    let mut i = 0;
    while i < 8 {
        packed <<= 8;
        if i < word.len() {
            packed |= word[i] as u64;
        }
        i += 1;
    }
    packed
}

/// [`STOP_WORDS`] packed ([`pack_word`]), in the same (sorted) order.
const STOP_PACKED: [u64; STOP_WORDS.len()] = {
    let mut packed = [0u64; STOP_WORDS.len()];
    let mut i = 0;
    while i < STOP_WORDS.len() {
        packed[i] = pack_word(STOP_WORDS[i].as_bytes());
        i += 1;
    }
    packed
};

/// A fast hasher for short terms (FxHash's multiply-rotate) from a random
/// start ([`TermState`]): the index hashes every word it reads, and the
/// words come from skills, so their collisions must not be known ahead
/// (see [`HashKeys`]).
#[derive(Clone, Copy)]
pub(crate) struct TermHasher(pub(crate) u64);

impl std::hash::Hasher for TermHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            self.0 = (self.0 ^ u64::from_le_bytes(b))
                .wrapping_mul(K)
                .rotate_left(26);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(K).rotate_left(26);
        }
    }

    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b))
            .wrapping_mul(0xf135_7aea_2e62_a9c5)
            .rotate_left(26);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Makes [`TermHasher`]s that start from a random state of its own.
#[derive(Clone, Copy)]
pub(crate) struct TermState(u64);

impl Default for TermState {
    fn default() -> TermState {
        TermState(HashKeys::default().seed())
    }
}

impl std::hash::BuildHasher for TermState {
    type Hasher = TermHasher;

    fn build_hasher(&self) -> TermHasher {
        TermHasher(self.0)
    }
}

/// A `HashMap` keyed by terms, with [`TermHasher`].
pub(crate) type TermMap<V> = std::collections::HashMap<Box<str>, V, TermState>;

/// The terms of `text`, collected.
pub(crate) fn term_list(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    terms(text, |t| out.push(t.to_owned()));
    out
}

/// A light English stemmer: plurals (`reports`, `libraries`, `boxes`),
/// `-ing`, `-ed`, `-ly`, and a final `e`, so `convert`, `converting` and
/// `converted` meet, as do `image` and `images`. It only strips; a word it
/// does not know is left as is.
pub(crate) fn stem(word: &str) -> &str {
    if !word.is_ascii() || word.len() <= 3 || word.bytes().any(|b| b.is_ascii_digit()) {
        return word;
    }
    let mut w = word;
    if let Some(s) = w.strip_suffix("ies")
        && s.len() >= 2
    {
        // `libraries` -> `librar`, `library` -> `librar` below.
        w = s;
    } else if let Some(s) = w.strip_suffix("sses") {
        w = &word[..s.len() + 2];
    } else if w.ends_with("es")
        && ["xes", "ches", "shes", "zes", "sses"]
            .iter()
            .any(|e| w.ends_with(e))
    {
        w = &w[..w.len() - 2];
    } else if w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
        && w.len() > 3
    {
        w = &w[..w.len() - 1];
    }
    for (suffix, min) in [("ing", 4), ("ed", 4), ("ly", 4)] {
        if let Some(s) = w.strip_suffix(suffix)
            && s.len() >= min
        {
            w = s;
            // `running` -> `run`, `mapped` -> `map`.
            let b = w.as_bytes();
            let n = b.len();
            if n >= 2 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z') {
                w = &w[..n - 1];
            }
            break;
        }
    }
    if let Some(s) = w.strip_suffix('y')
        && s.len() >= 3
    {
        w = s;
    }
    if let Some(s) = w.strip_suffix('e')
        && s.len() >= 3
    {
        w = s;
    }
    w
}

/// The edit distance between `a` and `b` (on characters; an insertion,
/// deletion, substitution or swap of two neighbours counts one: optimal
/// string alignment) when it is at most `max`; `None` beyond. `rows` is
/// scratch space.
pub(crate) fn distance_within(
    a: &[char],
    b: &str,
    max: usize,
    rows: &mut Vec<usize>,
) -> Option<usize> {
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let width = a.len() + 1;
    rows.clear();
    rows.resize(width * 3, 0);
    let (mut before, mut previous, mut current) = (0, width, 2 * width);
    for (i, cell) in rows[previous..previous + width].iter_mut().enumerate() {
        *cell = i;
    }
    for j in 1..=b.len() {
        rows[current] = j;
        let mut best = j;
        for i in 1..width {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[previous + i - 1] + cost)
                .min(rows[previous + i] + 1)
                .min(rows[current + i - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[before + i - 2] + 1);
            }
            rows[current + i] = d;
            best = best.min(d);
        }
        if best > max {
            return None;
        }
        (before, previous, current) = (previous, current, before);
    }
    let d = rows[previous + a.len()];
    (d <= max).then_some(d)
}

/// How many typos a query term of `len` characters may carry: none under
/// 4 characters, one up to 7, two from 8 (as typo-tolerant search engines
/// usually allow).
pub(crate) fn typos_allowed(len: usize) -> usize {
    match len {
        0..4 => 0,
        4..8 => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_without_words_hold_no_letter_or_digit() {
        for block in &NO_WORD_CHARS {
            for c in block.clone().filter_map(char::from_u32) {
                assert!(!c.is_alphanumeric(), "{c:?} ({:X})", c as u32);
            }
        }
        // Beside them, letters and digits are words.
        for c in [
            '\u{2070}', '\u{2071}', '\u{2776}', '\u{2793}', 'é', 'ж', '日',
        ] {
            assert_eq!(is_word_char(c), c.is_alphanumeric(), "{c:?}");
        }
        assert!(is_word_char('\u{2776}') && !is_word_char('\u{2014}'));
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(
            STOP_WORDS
                .iter()
                .all(|w| w.len() <= 6 && w.as_bytes()[0].is_ascii_lowercase())
        );
        assert!(STOP_PACKED.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
        for word in [
            "ab", "abo", "abouts", "wha", "whatever", "zz", "yo", "yours",
        ] {
            assert!(!is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn plurals_and_endings_meet_their_stem() {
        for (a, b) in [
            ("reports", "report"),
            ("libraries", "library"),
            ("boxes", "box"),
            ("converting", "convert"),
            ("converted", "convert"),
            ("images", "image"),
            ("running", "run"),
            ("classes", "class"),
            ("tests", "testing"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_eq!(stem("pdf"), "pdf");
        assert_eq!(stem("status"), stem("status"));
    }

    #[test]
    fn terms_split_lowercase_and_drop_stop_words() {
        assert_eq!(
            term_list("Read the PDF-files of pdf:reader"),
            ["read", "pdf", "fil", "pdf", "reader"]
        );
    }

    /// The tokenizer as first written (split on `char`s, lowercase every
    /// word into a `String`): the fast path must give the same terms.
    fn reference(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for piece in text.split(|c: char| !c.is_alphanumeric()) {
            if piece.len() < 2 || piece.len() > MAX_TERM * 4 {
                continue;
            }
            let word: String = piece.chars().flat_map(char::to_lowercase).collect();
            if word.chars().count() < 2 || STOP_WORDS.contains(&word.as_str()) {
                continue;
            }
            let stem = stem(&word);
            if stem.len() <= MAX_TERM || stem.chars().count() <= MAX_TERM {
                out.push(stem.to_owned());
            }
        }
        out
    }

    /// Each distinct term of `terms` with its count (capped at 255), sorted
    /// by term.
    pub(super) fn counted(terms: &[String]) -> Vec<(String, u8)> {
        let mut out: Vec<(String, u8)> = Vec::new();
        for t in terms {
            match out.iter_mut().find(|e| &e.0 == t) {
                Some(e) => e.1 = e.1.saturating_add(1),
                None => out.push((t.clone(), 1)),
            }
        }
        out.sort();
        out
    }

    #[test]
    fn fast_path_gives_the_terms_of_the_reference() {
        let long = "x".repeat(MAX_TERM * 4 + 1);
        let texts = [
            "Read the PDF-files of pdf:reader",
            "Ünïcödé Wörds, ÉCOLE and İstanbul — ΣΊΣΥΦΟΣ's straße",
            "mixed café2go x9 a1 README.md `cargo test --workspace` 3.14",
            "日本語のテキスト and 中文 words",
            "trailing é",
            "é",
            "\u{200b}zero\u{200b}width and emoji 🚀rocket🚀 ok",
            long.as_str(),
            "The THE tHe ABOUT abouts Whatever",
            // A word whose lowercase is ASCII (the Kelvin sign), words of
            // 16 and 17 bytes, one that stems to 16, and endings around them.
            "\u{212a}elvin kelvin KELVIN sixteenletterss seventeenletterss \
             internationalizing internationalized 0123456789abcdefing",
            "",
        ];
        for text in texts {
            assert_eq!(term_list(text), reference(text), "{text:?}");
            assert_eq!(
                TermCounts::of(text).sorted(),
                counted(&reference(text)),
                "{text:?}"
            );
        }
        let corpus =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus");
        let mut files = 0;
        // One counter for every file too, as a build's thread counts: what
        // it learnt from the files before changes nothing.
        let mut shared = Counter::default();
        let mut stack = vec![corpus];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    files += 1;
                    let expected = reference(&text);
                    assert_eq!(term_list(&text), expected, "{}", path.display());
                    assert_eq!(
                        TermCounts::of(&text).sorted(),
                        counted(&expected),
                        "{}",
                        path.display()
                    );
                    assert_eq!(
                        shared.count(&text).sorted(),
                        counted(&expected),
                        "{}",
                        path.display()
                    );
                }
            }
        }
        assert!(
            files > 100,
            "the corpus is at tests/fixtures/corpus ({files} files)"
        );
    }

    #[test]
    fn random_texts_count_as_the_reference_through_one_counter() {
        // Pieces that meet at random offsets of the scan's 64-byte blocks:
        // words of every length around 16 bytes, cases, digits, stop
        // words, characters beyond ASCII (some whose lowercase is ASCII,
        // or longer), joiners and separators.
        let pieces: Vec<&str> =
            " | | |\n|-|_|.|'|`|(|)|/|\u{200b}|a|Ab|the|THE|About|x9|42|pdf|PDFs|\
             reports|Reporting|tables|sixteenletterss|sixteenletterssx|seventeenletterss|\
             internationalizing|0123456789abcdefing|é|Ünï|café|straße|\u{212a}elvin|İstanbul|\
             ΣΊΣΥΦΟΣ|日本語|🚀|naïve\u{2014}dash"
                .split('|')
                .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            // xorshift64*: the same texts on every run.
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        };
        let mut shared = Counter::default();
        for round in 0..3000 {
            let len = next(160);
            let text: String = (0..len).map(|_| pieces[next(pieces.len())]).collect();
            let expected = counted(&reference(&text));
            assert_eq!(shared.count(&text).sorted(), expected, "{text:?}");
            if round % 500 == 0 {
                assert_eq!(TermCounts::of(&text).sorted(), expected, "{text:?}");
            }
        }
    }

    #[test]
    fn term_counts_count_each_distinct_term() {
        let text = "Report reports REPORTING; pdf pdf pdf and tables ".repeat(100);
        let counts = TermCounts::of(&text);
        assert_eq!(counts.sorted(), counted(&term_list(&text)));
        assert_eq!(counts.total as usize, term_list(&text).len());
        // Many distinct terms: the table grows and keeps every one.
        let many: String = (0..5000).map(|i| format!("w{i} w{i} ")).collect();
        let counts = TermCounts::of(&many);
        assert_eq!(counts.sorted().len(), 5000);
        assert!(counts.sorted().iter().all(|(_, c)| *c == 2));
    }

    #[test]
    fn distance_is_bounded() {
        let mut row = Vec::new();
        let a: Vec<char> = "kubernetes".chars().collect();
        assert_eq!(distance_within(&a, "kubernetse", 2, &mut row), Some(1));
        assert_eq!(distance_within(&a, "kuebrnetse", 2, &mut row), Some(2));
        assert_eq!(distance_within(&a, "kubernete", 2, &mut row), Some(1));
        assert_eq!(distance_within(&a, "docker", 2, &mut row), None);
    }
}
