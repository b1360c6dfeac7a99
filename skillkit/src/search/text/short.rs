//! Short forms: the acronyms a text defines (`Test-Driven Development
//! (TDD)`), the initials of a skill's name (`test-driven-development` is
//! `tdd`), and the numeronyms of common words (`k8s` is `kubernetes`).
//! Search matches a query's short form with the words it stands for.

use super::{stem, term_list};

/// Numeronyms in common use (a word's first letter, the count of the letters
/// between, its last letter), with the word.
const NUMERONYMS: &[(&str, &str)] = &[
    ("a11y", "accessibility"),
    ("i18n", "internationalization"),
    ("k8s", "kubernetes"),
    ("l10n", "localization"),
    ("o11y", "observability"),
];

/// The longest acronym read from a definition.
const MAX_ACRONYM: usize = 6;

/// The word `term` (lowercase) is a numeronym of, stemmed as indexed.
pub(crate) fn numeronym(term: &str) -> Option<&'static str> {
    NUMERONYMS
        .iter()
        .find(|(short, _)| *short == term)
        .map(|(_, word)| stem(word))
}

/// The initials of a name of two words or more (`test-driven-development`
/// is `tdd`), lowercase; `None` for one word or more than [`MAX_ACRONYM`].
pub(crate) fn initials(name: &str) -> Option<String> {
    let initials: String = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|word| word.chars().next())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    (2..=MAX_ACRONYM)
        .contains(&initials.len())
        .then_some(initials)
}

/// Calls `each` with every acronym `text` defines and the terms it stands
/// for: an upper-case word of 2 to 6 letters in parentheses, right after
/// words whose initials spell it (`Pull Request (PR)`, `Return on
/// Investment (ROI)`, `Test-Driven Development (TDD)`). Looks only where
/// a `(` is, so a text without one costs one scan.
pub(crate) fn defined(text: &str, mut each: impl FnMut(String, Vec<String>)) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(open) = memchr::memchr(b'(', &bytes[from..]) {
        let open = from + open;
        from = open + 1;
        let Some(len) = bytes[from..]
            .iter()
            .take(MAX_ACRONYM + 1)
            .position(|&b| b == b')')
        else {
            continue;
        };
        let short = &text[from..from + len];
        if len < 2 || !short.bytes().all(|b| b.is_ascii_uppercase()) {
            continue;
        }
        let acronym = short.to_ascii_lowercase();
        if let Some(words) = spelled_before(&text[..open], &acronym) {
            let terms = term_list(&words.join(" "));
            if !terms.is_empty() {
                each(acronym, terms);
            }
        }
    }
}

/// The words just before `end` of `text` whose initials spell `acronym`
/// (words split on anything not a letter or digit), in order.
fn spelled_before<'t>(text: &'t str, acronym: &str) -> Option<Vec<&'t str>> {
    // Enough words back for the acronym, and a few small ones skipped
    // (`Return on Investment`).
    let tail_start = text
        .char_indices()
        .rev()
        .nth(acronym.len() * 16)
        .map_or(0, |(at, _)| at);
    let words: Vec<&str> = text[tail_start..]
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let letters = acronym.as_bytes();
    // Match the acronym's letters from its last, each to the initial of a
    // word; a small word (of, on, and, …) that matches nothing is skipped.
    let mut need = letters.len();
    let mut at = words.len();
    while need > 0 {
        at = at.checked_sub(1)?;
        let word = words[at];
        let initial = word.as_bytes()[0].to_ascii_lowercase();
        if initial == letters[need - 1] {
            need -= 1;
        } else if word.len() > 3 || need == letters.len() {
            return None;
        }
    }
    Some(words[at..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definitions(text: &str) -> Vec<(String, Vec<String>)> {
        let mut found = Vec::new();
        defined(text, |short, terms| found.push((short, terms)));
        found
    }

    #[test]
    fn a_definition_in_parentheses_is_read() {
        assert_eq!(
            definitions("# Test-Driven Development (TDD)\n"),
            [(
                "tdd".to_owned(),
                vec!["test".into(), "driven".into(), "development".into()]
            )]
            .map(|(s, t): (String, Vec<String>)| (
                s,
                t.iter().map(|w| stem(w).to_owned()).collect()
            ))
        );
        let found = definitions("Open a Pull Request (PR) and measure Return on Investment (ROI).");
        let shorts: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(shorts, ["pr", "roi"]);
        assert_eq!(
            found[1].1,
            ["return", "investment"].map(|w| stem(w).to_owned())
        );
    }

    #[test]
    fn parentheses_that_define_nothing_are_left() {
        assert!(definitions("call it (see below) (OK) now (X)").is_empty());
        assert!(definitions("the build (CI) fails").is_empty());
        assert!(definitions("(TDD) at the start").is_empty());
        assert!(definitions("unclosed (TDD").is_empty());
    }

    #[test]
    fn names_have_initials_and_numeronyms_their_word() {
        assert_eq!(initials("test-driven-development").as_deref(), Some("tdd"));
        assert_eq!(initials("pdf"), None);
        assert_eq!(initials("a-b-c-d-e-f-g"), None);
        assert_eq!(numeronym("k8s"), Some(stem("kubernetes")));
        assert_eq!(numeronym("k9s"), None);
    }
}
