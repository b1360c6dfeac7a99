//! Skill search (stand-in): a naive ranking by the count of query words found
//! in a skill's name or description. The index branch replaces this module.

use std::sync::Arc;

use crate::catalog::{Catalog, Snapshot};
use crate::skill::Skill;

/// One skill a search found, with its score (higher is better).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let memory = skillkit::Memory::new();
/// memory.put(skillkit::Skill::new("pdf:reader", "Read PDF files."));
/// let catalog = skillkit::Catalog::builder().provider(memory).build();
/// let hits = catalog.search("pdf", 5).await;
/// assert_eq!(hits[0].skill.name, "pdf:reader");
/// # });
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SearchHit {
    /// The skill found.
    pub skill: Arc<Skill>,
    /// How well it matches (higher is better).
    pub score: f32,
}

/// Hits are equal when they name the same skill value with the same score.
impl PartialEq for SearchHit {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.skill, &other.skill) && self.score == other.score
    }
}

/// Turns texts into vectors for semantic ranking, with the application's own
/// model (none is bundled). The stand-in stores it and does not use it.
///
/// ```
/// struct Zero;
/// impl skillkit::Embedder for Zero {
///     fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>> {
///         Ok(texts.iter().map(|_| vec![0.0; 4]).collect())
///     }
/// }
/// let catalog = skillkit::Catalog::builder().embedder(Zero).build();
/// # let _ = catalog;
/// ```
pub trait Embedder: Send + Sync {
    /// One vector per text, in order.
    fn embed(
        &self,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>>;
}

impl Catalog {
    /// The skills best matching `query`, best first, at most `limit`.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let catalog = skillkit::Catalog::builder().build();
    /// assert!(catalog.search("pdf", 5).await.is_empty());
    /// # });
    /// ```
    pub async fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let snapshot = self.snapshot().await;
        self.search_snapshot(&snapshot, query, limit)
    }

    /// The skills of `snapshot` best matching `query`, best first, at most
    /// `limit`.
    ///
    /// ```
    /// let catalog = skillkit::Catalog::builder().build();
    /// assert!(catalog.search_snapshot(&skillkit::Snapshot::default(), "pdf", 5).is_empty());
    /// ```
    pub fn search_snapshot(
        &self,
        snapshot: &Snapshot,
        query: &str,
        limit: usize,
    ) -> Vec<SearchHit> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut hits: Vec<SearchHit> = snapshot
            .skills()
            .filter_map(|skill| {
                let text = format!("{} {}", skill.name, skill.description).to_lowercase();
                let found = words.iter().filter(|w| text.contains(w.as_str())).count();
                (found > 0).then(|| SearchHit {
                    skill: Arc::clone(skill),
                    score: found as f32,
                })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(limit);
        hits
    }
}
