//! Text to index terms: words split on anything not a letter or digit,
//! lowercased, stop words dropped, plurals and common endings folded by a
//! light stemmer; and the bounded edit distance that makes search tolerant
//! of small typos.

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
pub(crate) fn terms(text: &str, mut each: impl FnMut(&str)) {
    let mut word = String::new();
    for piece in text.split(|c: char| !c.is_alphanumeric()) {
        if piece.len() < 2 || piece.len() > MAX_TERM * 4 {
            continue;
        }
        word.clear();
        if piece.is_ascii() {
            word.push_str(piece);
            word.make_ascii_lowercase();
        } else {
            word.extend(piece.chars().flat_map(char::to_lowercase));
            if word.chars().count() < 2 {
                continue;
            }
        }
        if is_stop_word(&word) {
            continue;
        }
        let stem = stem(&word);
        if stem.len() <= MAX_TERM || stem.chars().count() <= MAX_TERM {
            each(stem);
        }
    }
}

/// Whether `word` (lowercase) is one of [`STOP_WORDS`]: most words are
/// told apart by their length and first letter, without a comparison.
fn is_stop_word(word: &str) -> bool {
    let bytes = word.as_bytes();
    if bytes.len() > 6 || !STOP_FIRST.contains(&bytes[0]) {
        return false;
    }
    STOP_WORDS.binary_search(&word).is_ok()
}

/// The first letters of the stop words.
const STOP_FIRST: &[u8] = b"abcdefghimnorstuwy";

/// A fast hasher for short terms (FxHash's multiply-rotate): the index hashes
/// every word it reads, and its keys are not chosen by an attacker who
/// gains anything from collisions beyond a slower index.
#[derive(Default, Clone, Copy)]
pub(crate) struct TermHasher(u64);

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

/// A `HashMap` keyed by terms, with [`TermHasher`].
pub(crate) type TermMap<V> =
    std::collections::HashMap<Box<str>, V, std::hash::BuildHasherDefault<TermHasher>>;

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
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(
            STOP_WORDS
                .iter()
                .all(|w| w.len() <= 6 && STOP_FIRST.contains(&w.as_bytes()[0]))
        );
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
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
