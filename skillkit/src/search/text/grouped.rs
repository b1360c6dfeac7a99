//! The terms of many bodies at once, grouped by term: what a build's thread
//! counts outside the index's lock, so that under it each term is looked up
//! once for the whole group, and its postings are copied in one go (one
//! term, one posting list, one cache miss), not one posting at a time.

use super::counts::{Counter, Grouping, cap};
use super::packed::Packed;

/// Postings of several texts grouped by term: per term, a posting
/// (`slot << 8 | count`) for each text that has it, in the order the texts
/// were counted. Terms that do not pack are not here (see
/// [`Grouper::count`]).
#[derive(Default)]
pub(crate) struct Grouped {
    terms: Vec<Packed>,
    /// Per term, where its postings end.
    ends: Vec<u32>,
    postings: Vec<u32>,
}

impl Grouped {
    /// Each term and its postings.
    pub(crate) fn groups(&self) -> impl Iterator<Item = (Packed, &[u32])> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        let lists = starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.postings[start as usize..end as usize]);
        self.terms.iter().copied().zip(lists)
    }

    /// Postings held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.postings.len()
    }
}

/// Counts texts into one [`Grouped`]: made by [`Counter::group`].
pub(crate) struct Grouper<'c> {
    counter: &'c mut Counter,
    /// The counter's [`Grouping`], taken while the grouper counts.
    at: Grouping,
}

impl Grouper<'_> {
    /// Counts the terms of `text`, the body in `slot`: its packed terms go
    /// to the groups; returns how many terms it has (with repeats), and
    /// those that do not pack, with their counts.
    pub(crate) fn count(&mut self, slot: u32, text: &str) -> (u32, Vec<(Box<str>, u8)>) {
        let (others, mut total) = self.counter.scan(text);
        let at = &mut self.at;
        if at.marks.len() < self.counter.numbered() {
            at.marks.resize(self.counter.numbered(), 0);
        }
        for number in self.counter.numbers() {
            let (_, n) = self.counter.tally_of(number);
            total = total.saturating_add(n);
            let mark = &mut at.marks[number as usize];
            if *mark == 0 {
                at.numbers.push(number);
                at.sizes.push(0);
                *mark = at.numbers.len() as u32;
            }
            let group = *mark - 1;
            at.sizes[group as usize] += 1;
            at.pairs.push((group, slot << 8 | u32::from(cap(n))));
        }
        (total, others)
    }

    /// The postings counted, grouped; the scratch cleared and given back.
    fn finish(mut self) -> Grouped {
        let at = &mut self.at;
        let mut ends = Vec::with_capacity(at.sizes.len());
        // Per group, where its next posting goes (its start, at first).
        let mut end = 0u32;
        for size in &mut at.sizes {
            let start = end;
            end += *size;
            ends.push(end);
            *size = start;
        }
        let mut postings = vec![0; at.pairs.len()];
        for &(group, posting) in &at.pairs {
            let next = &mut at.sizes[group as usize];
            postings[*next as usize] = posting;
            *next += 1;
        }
        let terms = at
            .numbers
            .iter()
            .map(|&number| {
                at.marks[number as usize] = 0;
                self.counter.tally_of(number).0
            })
            .collect();
        at.numbers.clear();
        at.sizes.clear();
        at.pairs.clear();
        self.counter.grouping = std::mem::take(at);
        Grouped {
            terms,
            ends,
            postings,
        }
    }
}

impl Counter {
    /// Counts the texts `each` gives to the [`Grouper`], and gives back
    /// their postings grouped by term.
    pub(crate) fn group(&mut self, each: impl FnOnce(&mut Grouper<'_>)) -> Grouped {
        self.forget_when_full();
        let at = std::mem::take(&mut self.grouping);
        let mut grouper = Grouper { counter: self, at };
        each(&mut grouper);
        grouper.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{TermCounts, unpack};
    use super::*;

    #[test]
    fn grouped_postings_are_each_texts_counts_by_term() {
        let texts = [
            "Report reports REPORTING; pdf pdf and tables",
            "tables of pdf files",
            "",
            "naïve café words and reports",
        ];
        let mut counter = Counter::default();
        for round in 0..2 {
            // Twice: the second time with every word known, and the marks
            // of the first cleared.
            let mut totals = Vec::new();
            let grouped = counter.group(|grouper| {
                for (slot, text) in texts.iter().enumerate() {
                    totals.push(grouper.count(slot as u32 + 10, text));
                }
            });
            let mut buf = [0u8; 16];
            let mut from_groups: Vec<(u32, String, u8)> = Vec::new();
            for (term, postings) in grouped.groups() {
                assert!(postings.windows(2).all(|w| w[0] >> 8 < w[1] >> 8));
                for &p in postings {
                    let term = unpack(term, &mut buf).to_owned();
                    from_groups.push((p >> 8, term, p as u8));
                }
            }
            from_groups.sort();
            let mut expected = Vec::new();
            for (slot, text) in texts.iter().enumerate() {
                let counts = TermCounts::of(text);
                let (total, others) = &totals[slot];
                assert_eq!(*total, counts.total, "{round} {text}");
                let mut buf = [0u8; 16];
                for (term, n) in counts.packed() {
                    expected.push((slot as u32 + 10, unpack(term, &mut buf).to_owned(), n));
                }
                // In no particular order (a map's, whose hash is keyed).
                let mut others: Vec<(String, u8)> =
                    others.iter().map(|(t, n)| (t.to_string(), *n)).collect();
                let mut expected_others: Vec<(String, u8)> =
                    counts.others().map(|(t, n)| (t.to_owned(), n)).collect();
                others.sort();
                expected_others.sort();
                assert_eq!(others, expected_others);
            }
            expected.sort();
            assert_eq!(from_groups, expected, "round {round}");
            assert_eq!(grouped.len(), expected.len());
            assert!(counter.grouping.marks.iter().all(|&m| m == 0));
            assert!(counter.grouping.pairs.is_empty() && counter.grouping.pairs.capacity() > 0);
        }
    }
}
