//! A query's words to the index's terms: each word itself, else the
//! catalog's words within its typo budget; and the forms the catalog writes
//! it in: an acronym it defines (`tdd` for `test driven development`), a
//! numeronym (`k8s`), a compound written split or joined (`worktrees` and
//! `work trees`).

use std::collections::HashSet;

use super::{Index, QueryTerm};
use crate::search::MAX_QUERY_TERMS;
use crate::search::text::{self, short};

/// The weight of a term reached through another form of the word (an
/// acronym's words, a compound's parts or the words it joins): below the
/// word's own, above a typo's (chosen on the tuned part of the eval set).
const FORM_WEIGHT: f32 = 0.8;

/// The weight of the parts of a word the catalog also has whole: low, so
/// a skill that writes it split is found without outranking one that
/// writes it as asked (chosen on the tuned part of the eval set).
const KNOWN_SPLIT_WEIGHT: f32 = 0.1;

/// The shortest part of a compound split in two.
const MIN_PART: usize = 3;

impl Index {
    /// The terms `query` reaches: its first [`MAX_QUERY_TERMS`] distinct
    /// words, each with the index terms it matches.
    pub(super) fn query_terms(&mut self, query: &str) -> Vec<QueryTerm> {
        let mut words = text::term_list(query);
        let mut seen = HashSet::new();
        words.retain(|word| seen.len() < MAX_QUERY_TERMS && seen.insert(word.clone()));
        let mut out = Vec::new();
        for word in &words {
            let exact = self.live_id(word);
            if let Some(id) = exact {
                out.push(QueryTerm {
                    ids: vec![(id, 1.0)],
                });
            }
            let forms = self.short_forms(word);
            let found = exact.is_some() || !forms.is_empty();
            out.extend(forms);
            // `worktrees` finds `work trees`, whether or not the catalog
            // also writes it joined.
            if let Some(parts) = self.split(
                word,
                if found {
                    KNOWN_SPLIT_WEIGHT
                } else {
                    FORM_WEIGHT
                },
            ) {
                out.extend(parts);
                continue;
            }
            if found {
                continue;
            }
            if let Some(typos) = self.typos(word) {
                out.push(typos);
            }
        }
        // `work trees` finds `worktrees`.
        for pair in words.windows(2) {
            let joined = format!("{}{}", pair[0], pair[1]);
            let id = self
                .live_id(&joined)
                .or_else(|| self.live_id(text::stem(&joined)));
            if let Some(id) = id {
                out.push(QueryTerm {
                    ids: vec![(id, FORM_WEIGHT)],
                });
            }
        }
        out
    }

    /// The id of `term` when a live skill has it.
    fn live_id(&self, term: &str) -> Option<u32> {
        self.dictionary.get(term).filter(|&id| self.has_live(id))
    }

    /// The words `word` stands for, as an acronym a text of the catalog
    /// defines or a numeronym (each word its own query term).
    fn short_forms(&self, word: &str) -> Vec<QueryTerm> {
        let long: Vec<&str> = match (self.acronym(word), short::numeronym(word)) {
            (Some(terms), _) => terms.iter().map(|t| &**t).collect(),
            (None, Some(term)) => vec![term],
            (None, None) => return Vec::new(),
        };
        long.into_iter()
            .filter_map(|term| self.live_id(term))
            .map(|id| QueryTerm {
                ids: vec![(id, FORM_WEIGHT)],
            })
            .collect()
    }

    /// `word` as two words of the catalog, each its own query term with
    /// `weight`: `worktrees` finds `work trees`.
    fn split(&self, word: &str, weight: f32) -> Option<Vec<QueryTerm>> {
        if !word.is_ascii() || word.len() < 2 * MIN_PART {
            return None;
        }
        (MIN_PART..=word.len() - MIN_PART).find_map(|at| {
            let (left, right) = word.split_at(at);
            let left = self
                .live_id(left)
                .or_else(|| self.live_id(text::stem(left)))?;
            let right = self
                .live_id(right)
                .or_else(|| self.live_id(text::stem(right)))?;
            Some(
                [left, right]
                    .map(|id| QueryTerm {
                        ids: vec![(id, weight)],
                    })
                    .into(),
            )
        })
    }

    /// The catalog's terms within `word`'s typo budget, weighted by distance.
    fn typos(&mut self, word: &str) -> Option<QueryTerm> {
        let chars: Vec<char> = word.chars().collect();
        let max = text::typos_allowed(chars.len());
        if max == 0 {
            return None;
        }
        let mut ids = Vec::new();
        let low = chars.len().saturating_sub(max);
        let high = (chars.len() + max).min(self.dictionary.max_len());
        let mut buf = [0u8; 16];
        for len in low..=high {
            for &id in self.dictionary.of_len(len) {
                let term = self.dictionary.text(id, &mut buf);
                if let Some(d) = text::distance_within(&chars, term, max, &mut self.scratch.row)
                    && self.has_live(id)
                {
                    ids.push((id, if d == 1 { 0.7 } else { 0.45 }));
                }
            }
        }
        (!ids.is_empty()).then_some(QueryTerm { ids })
    }
}
