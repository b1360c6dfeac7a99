//! The best `limit` slots of a query without scoring every posting of its
//! words (term at a time, with a threshold).
//!
//! A query term can add at most its `idf` to a slot's score (BM25's
//! saturation `tf / (K1 + tf)` stays below 1). Terms are scored in
//! decreasing order of that bound; once the `limit`-th best partial score
//! is above what the terms left could add, no slot not yet seen can reach
//! the top, so the terms left (the most common words, with the longest
//! posting lists) are only looked up for the slots still in the running,
//! by binary search in their postings (sorted by slot), and a slot that
//! cannot catch up with the `limit`-th best is dropped. The slots left are
//! then scored again the way [`Index::score`] scores them (terms in query
//! order), so their scores, and so the ranking, are the same bit for bit.

use super::{Index, idf};

/// A search whose `limit` times this reaches the live slots scores every
/// posting ([`Index::score`]).
const WIDE: usize = 16;

/// Slack on the bounds, for float rounding (scores summed in another order
/// differ in their last bits): a slot is dropped only when it is short of
/// the threshold by more than this.
fn slack(bound: f32) -> f32 {
    bound * 1e-3 + 1e-5
}

impl Index {
    /// The slots among which the best `limit` of [`Index::score`] are, with
    /// the same scores; also every slot whose skill is named `name` (the
    /// whole query, when it is one word: it is boosted above the rest), so
    /// the caller ranks these as it ranks `score`'s.
    pub(crate) fn score_top(
        &mut self,
        query: &str,
        limit: usize,
        name: Option<&str>,
    ) -> Vec<(u32, f32)> {
        if limit.saturating_mul(WIDE) >= self.live {
            // A limit near the catalog's size: most slots are answers, and
            // looking each up costs more than scoring every posting.
            return self.score(query);
        }
        let query_terms = self.query_terms(query);
        if query_terms.is_empty() || self.live == 0 || limit == 0 {
            return Vec::new();
        }
        let n = self.live as f32;
        let norms = self.norms();
        // One unit per dictionary term a query term reaches, in query order.
        let units: Vec<(u32, f32)> = query_terms
            .iter()
            .flat_map(|q| q.ids.iter())
            .map(|&(id, weight)| (id, idf(n, &self.terms[id as usize], weight)))
            .collect();
        let mut order: Vec<usize> = (0..units.len()).collect();
        order.sort_by(|&a, &b| units[b].1.total_cmp(&units[a].1));
        // `rest[i]`: the most the units from `order[i]` on can add.
        let mut rest = vec![0.0f32; order.len() + 1];
        for i in (0..order.len()).rev() {
            rest[i] = rest[i + 1] + units[order[i]].1;
        }
        let Index {
            lens,
            terms,
            scratch,
            slots,
            ..
        } = self;
        scratch.tf.resize(lens.len(), 0.0);
        scratch.score.resize(lens.len(), 0.0);
        #[cfg(test)]
        {
            scratch.visited = 0;
        }
        // Whether the slots in the running are only `scratch.picked`.
        let mut closed = false;
        for (at, &unit) in order.iter().enumerate() {
            let (id, idf) = units[unit];
            let term = &terms[id as usize];
            let left = rest[at + 1];
            if idf <= 0.0 {
                // A word in (nearly) every skill adds nothing to any score;
                // skipped, so a slot's score is 0 only until it is touched.
                continue;
            }
            if !closed {
                norms.accumulate(term, idf, lens, scratch);
                #[cfg(test)]
                {
                    scratch.visited += term.head.len() + term.body.len();
                }
                if at + 1 == order.len() {
                    break;
                }
                let Some(threshold) = kth(
                    scratch.touched.iter().map(|&s| scratch.score[s as usize]),
                    limit,
                    &mut scratch.kth,
                ) else {
                    continue;
                };
                if threshold > left + slack(left) {
                    closed = true;
                    let score = &scratch.score;
                    scratch.picked.clear();
                    scratch.picked.extend(
                        scratch
                            .touched
                            .iter()
                            .filter(|&&s| score[s as usize] + left + slack(left) >= threshold),
                    );
                }
            } else {
                for &s in &scratch.picked {
                    if let Some(value) = norms.lookup(term, idf, lens, s) {
                        scratch.score[s as usize] += value;
                    }
                }
                #[cfg(test)]
                {
                    scratch.visited += scratch.picked.len();
                }
                if let Some(threshold) = kth(
                    scratch.picked.iter().map(|&s| scratch.score[s as usize]),
                    limit,
                    &mut scratch.kth,
                ) {
                    let score = &scratch.score;
                    scratch
                        .picked
                        .retain(|&s| score[s as usize] + left + slack(left) >= threshold);
                }
            }
        }
        if !closed {
            scratch.picked.clear();
            scratch.picked.extend_from_slice(&scratch.touched);
        }
        // Every score is now whole (summed in another order): keep the
        // slots within rounding of the `limit`-th best.
        if let Some(threshold) = kth(
            scratch.picked.iter().map(|&s| scratch.score[s as usize]),
            limit,
            &mut scratch.kth,
        ) {
            let score = &scratch.score;
            scratch
                .picked
                .retain(|&s| score[s as usize] + slack(threshold) >= threshold);
        }
        for &s in &scratch.touched {
            scratch.score[s as usize] = 0.0;
        }
        scratch.touched.clear();
        // The slots named as the query, wherever they rank.
        if let Some(name) = name
            && let Some(&(id, weight)) = query_terms[0].ids.first()
            && weight == 1.0
        {
            for &p in &terms[id as usize].head {
                let s = p >> 8;
                let named = slots[s as usize].skill.as_ref().is_some_and(|skill| {
                    skill.name.eq_ignore_ascii_case(name)
                        || skill.bare_name().eq_ignore_ascii_case(name)
                });
                if named {
                    scratch.picked.push(s);
                }
            }
        }
        scratch.picked.sort_unstable();
        scratch.picked.dedup();
        // Scored again as `score` scores: units in query order.
        let hits = scratch
            .picked
            .iter()
            .filter_map(|&s| {
                let mut score = 0.0f32;
                let mut found = false;
                for &(id, idf) in &units {
                    if let Some(value) = norms.lookup(&terms[id as usize], idf, lens, s) {
                        score += value;
                        found = true;
                    }
                }
                (found && score > 0.0).then_some((s, score))
            })
            .collect();
        scratch.picked.clear();
        hits
    }
}

/// The `k`-th largest of `scores` (`None` when there are fewer); `buf` is
/// scratch space.
fn kth(scores: impl Iterator<Item = f32>, k: usize, buf: &mut Vec<f32>) -> Option<f32> {
    buf.clear();
    buf.extend(scores);
    if buf.len() < k {
        return None;
    }
    let (_, kth, _) = buf.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    Some(*kth)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use super::super::Index;
    use crate::skill::Skill;

    /// The corpus's SKILL.md files: folder name, description line, text.
    fn corpus() -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut stack =
            vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            entries.sort();
            for path in entries {
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().is_some_and(|n| n == "SKILL.md")
                    && let Ok(text) = std::fs::read_to_string(&path)
                {
                    let name = path.parent().and_then(|p| p.file_name());
                    let name = name.map(|n| n.to_string_lossy().to_lowercase());
                    let description = text
                        .lines()
                        .find_map(|l| l.strip_prefix("description:"))
                        .unwrap_or("")
                        .to_owned();
                    out.push((name.unwrap_or_default(), description, text));
                }
            }
        }
        assert!(out.len() > 400, "the corpus: {} files", out.len());
        out
    }

    /// The corpus three times over (kits `k0`..`k2`), a tenth of it removed,
    /// bodies indexed last to first (so postings are inserted in place).
    fn index() -> Index {
        let corpus = corpus();
        let mut index = Index::default();
        let mut slots = Vec::new();
        for copy in 0..3 {
            for (name, description, text) in &corpus {
                let skill = Skill::new(format!("k{copy}:{name}"), description.clone());
                let slot = index.add(Arc::new(skill)).expect("room");
                slots.push((slot, text));
            }
        }
        for &(slot, text) in slots.iter().rev() {
            if slot % 10 == 3 {
                index.remove(slot);
            } else {
                index.add_body(slot, text);
            }
        }
        index
    }

    /// The best `limit`, ordered as search orders them.
    fn best(index: &Index, mut hits: Vec<(u32, f32)>, limit: usize) -> Vec<(u32, u32)> {
        let name = |s: u32| {
            index.slots[s as usize]
                .skill
                .as_ref()
                .map(|s| s.name.clone())
        };
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| name(a.0).cmp(&name(b.0))));
        hits.truncate(limit);
        hits.into_iter().map(|(s, v)| (s, v.to_bits())).collect()
    }

    const QUERIES: &[&str] = &[
        "review pull request comments",
        "pdf",
        "extract tables from pdf files",
        "kubernetes deployment yaml",
        "kuberntes deploymnet",
        "write tests",
        "git commit message",
        "convert images",
        "frontend design react components accessibility",
        "the",
        "security audit of dependencies and secrets in code",
        "brainstorming",
        "documnets spreadsheets",
    ];

    #[test]
    fn bounded_search_finds_the_exhaustive_best_with_the_same_scores() {
        let mut index = index();
        for query in QUERIES {
            let all = index.score(query);
            for limit in [1, 3, 5, 10, 40, 10_000] {
                let top = index.score_top(query, limit, None);
                assert_eq!(
                    best(&index, top, limit),
                    best(&index, all.clone(), limit),
                    "{query:?}, limit {limit}"
                );
            }
        }
    }

    #[test]
    fn bounded_search_agrees_when_a_word_is_in_every_skill() {
        // `deploy` in the name and the body of every skill: its idf is 0.
        let mut index = Index::default();
        let mut skills: Vec<(String, String)> = [
            ("a:deploy-web", "deploy the web app to staging"),
            ("a:deploy-db", "deploy database migrations to staging"),
            ("a:deploy-docs", "deploy documentation"),
        ]
        .iter()
        .map(|(n, b)| (n.to_string(), b.to_string()))
        .collect();
        skills
            .extend((0..60).map(|i| (format!("b:deploy-n{i}"), format!("deploy n{i} somewhere"))));
        for (name, body) in skills {
            let slot = index
                .add(Arc::new(Skill::new(name, "Deploy things.")))
                .expect("room");
            index.add_body(slot, &body);
        }
        assert!(
            super::WIDE * 3 < index.live(),
            "the bounded search is what runs"
        );
        for query in ["deploy staging", "deploy", "deploy web docs"] {
            let all = index.score(query);
            for limit in [1, 2, 3] {
                let top = index.score_top(query, limit, None);
                assert_eq!(
                    best(&index, top, limit),
                    best(&index, all.clone(), limit),
                    "{query:?}, limit {limit}"
                );
            }
        }
    }

    #[test]
    fn bounded_search_keeps_a_skill_named_as_the_query_wherever_it_ranks() {
        let mut index = index();
        let named = index
            .add(Arc::new(Skill::new("k9:review", "Nothing more.")))
            .expect("room");
        let all = index.score("review");
        let score = |hits: &[(u32, f32)]| hits.iter().find(|h| h.0 == named).map(|h| h.1);
        let first = best(&index, all.clone(), 1);
        assert_ne!(
            first[0].0, named,
            "ranked first anyway: the test shows nothing"
        );
        for name in ["review", "k9:review", "K9:Review"] {
            let all = index.score(name);
            let top = index.score_top(name, 1, Some(name));
            assert!(score(&all).is_some());
            assert_eq!(score(&top), score(&all), "{name}");
            assert_eq!(best(&index, top, 1), best(&index, all, 1), "{name}");
        }
    }

    #[test]
    fn bounded_search_reads_fewer_postings_than_the_query_words_hold() {
        let mut index = index();
        let query = "review pull request comments";
        let total: usize = index
            .query_terms(query)
            .iter()
            .flat_map(|q| q.ids.iter())
            .map(|&(id, _)| {
                let term = &index.terms[id as usize];
                term.head.len() + term.body.len()
            })
            .sum();
        index.score_top(query, 10, None);
        assert!(
            index.scratch.visited * 2 < total,
            "read {} of {total} postings",
            index.scratch.visited
        );
    }
}
