//! Semantic ranking: skills' embeddings computed outside the index's lock
//! and kept per skill version, the query's cosine similarity to each, and
//! the lexical and semantic rankings fused by reciprocal rank.

use std::sync::{Arc, PoisonError};

use super::index::Index;
use super::{Embedder, Search, SearchHit, boost_exact_names, hits};
use crate::kit::Kit;
use crate::skill::Skill;

/// The constant of reciprocal rank fusion: a skill ranked `r` (from 1) by
/// one ranking scores `1 / (RRF_K + r)` from it. 60 is the value of the
/// method's paper (Cormack et al., 2009), and flattens the difference
/// between the first ranks, so a skill high in both rankings beats one
/// first in only one.
const RRF_K: f32 = 60.0;

/// How many of each ranking take part in the fusion.
const FUSED: usize = 200;

/// The text of a skill that is embedded.
fn text(skill: &Skill) -> String {
    format!("{}: {}", skill.name, skill.description)
}

impl Search {
    /// [`Search::lexical`] fused with the ranking by meaning (see the
    /// module's docs); lexical alone when the embedder fails.
    pub(super) async fn semantic<'a>(
        &self,
        embedder: &Arc<dyn Embedder>,
        kits: impl IntoIterator<Item = (usize, &'a Kit)>,
        query: &str,
        limit: usize,
    ) -> Vec<SearchHit> {
        // Under the lock: the index brought up to date, every lexical
        // score, and the skills not embedded yet.
        let (lexical, missing) = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            self.update(&mut state, kits);
            let mut lexical = state.index.score(query);
            boost_exact_names(&state.index, &mut lexical, query);
            let missing: Vec<(u32, Arc<Skill>)> = state
                .index
                .slots
                .iter()
                .enumerate()
                .filter(|(_, slot)| slot.embedding.is_none())
                .filter_map(|(at, slot)| Some((at as u32, Arc::clone(slot.skill.as_ref()?))))
                .collect();
            (lexical, missing)
        };
        if limit == 0 {
            return Vec::new();
        }
        // Outside it: the model.
        let texts: Vec<String> = missing.iter().map(|(_, skill)| text(skill)).collect();
        let embedded = match texts.is_empty() {
            true => Ok(Vec::new()),
            false => embedder.embed(&texts).await,
        };
        let query_vector = embedder.embed(&[query.to_owned()]).await;
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let index = &mut state.index;
        let fused = match (embedded, query_vector) {
            (Ok(vectors), Ok(mut query_vector))
                if vectors.len() == texts.len() && query_vector.len() == 1 =>
            {
                for ((slot, skill), vector) in missing.iter().zip(vectors) {
                    if index.holds(*slot, skill) {
                        index.slots[*slot as usize].embedding = Some(normalised(vector));
                    }
                }
                let by_meaning = cosines(index, &normalised(query_vector.remove(0)));
                fuse(lexical, by_meaning)
            }
            (Err(error), _) | (_, Err(error)) => {
                tracing::warn!("search: the embedder failed ({error}); ranking lexically");
                lexical
            }
            (Ok(_), Ok(_)) => {
                tracing::warn!(
                    "search: the embedder returned another count of vectors than of texts; ranking lexically"
                );
                lexical
            }
        };
        hits(index, fused, limit)
    }
}

/// The live skills' cosine similarity to `query` (both of length 1), the
/// positive ones.
fn cosines(index: &Index, query: &[f32]) -> Vec<(u32, f32)> {
    index
        .slots
        .iter()
        .enumerate()
        .filter(|(_, slot)| slot.skill.is_some())
        .filter_map(|(at, slot)| {
            let vector = slot.embedding.as_ref()?;
            (vector.len() == query.len()).then(|| {
                let cosine: f32 = vector.iter().zip(query).map(|(a, b)| a * b).sum();
                (at as u32, cosine)
            })
        })
        .filter(|(_, cosine)| *cosine > 0.0)
        .collect()
}

/// Reciprocal rank fusion of two scorings: each ranked best first, its
/// first [`FUSED`] taking part; a skill scores the sum of `1 / (RRF_K +
/// rank)` over the rankings it is in.
fn fuse(lexical: Vec<(u32, f32)>, semantic: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
    let mut fused: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
    for mut ranking in [lexical, semantic] {
        ranking.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (rank, (slot, _)) in ranking.into_iter().take(FUSED).enumerate() {
            *fused.entry(slot).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
    }
    fused.into_iter().collect()
}

/// `vector` scaled to length 1 (a zero or non-finite vector is all zeros).
fn normalised(mut vector: Vec<f32>) -> Box<[f32]> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        vector.iter_mut().for_each(|x| *x /= norm);
    } else {
        vector.iter_mut().for_each(|x| *x = 0.0);
    }
    vector.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_high_in_both_rankings_beats_one_first_in_one() {
        let lexical = vec![(1, 9.0), (2, 5.0)];
        let semantic = vec![(2, 0.8), (3, 0.7)];
        let mut fused = fuse(lexical, semantic);
        fused.sort_by(|a, b| b.1.total_cmp(&a.1));
        assert_eq!(fused[0].0, 2);
        // Found by meaning alone, it still ranks.
        let fused = fuse(vec![], vec![(7, 0.3)]);
        assert_eq!(fused.len(), 1);
    }

    #[test]
    fn a_vector_is_normalised_and_a_bad_one_zeroed() {
        assert_eq!(&*normalised(vec![3.0, 4.0]), &[0.6, 0.8]);
        assert_eq!(&*normalised(vec![f32::NAN, 1.0]), &[0.0, 0.0]);
    }
}
