//! Skill search: one incremental index over a [`Catalog`](crate::Catalog), shared by its
//! clones, serving the agent's `search_skills`, `skillkit search` and the MCP
//! `list_skills {query}`.
//!
//! # Ranking
//!
//! Lexical, BM25F-style: a query's terms are matched in a skill's bare name
//! (weighted most), its kit's name, its description, and its body (weighted
//! least; the whole body, up to [`BODY_BYTES`] unless
//! [`CatalogBuilder::search_body_bytes`](crate::catalog::CatalogBuilder::search_body_bytes)
//! says otherwise), each field normalised by its own length. Words are
//! lowercased, common English words dropped, and plurals and endings folded
//! by a light stemmer (`reports` finds `report`, `converting` finds
//! `convert`). A query word absent from the catalog matches the catalog's
//! words within one typo (words of 4 to 7 letters) or two (8 letters and
//! more), at a lower weight. Short forms match what they stand for: the
//! initials of a skill's name (`tdd` finds `test-driven-development`), an
//! acronym a skill's text defines (`Pull Request (PR)`: `pr` finds `pull
//! request`), common numeronyms (`k8s`), and compounds written joined or
//! split (`worktrees` and `work trees`). A query that is a skill's full
//! name (`pdf:reader`) or bare name (`reader`) ranks that skill first. Only
//! a query's first [`MAX_QUERY_TERMS`] distinct words count.
//!
//! Without an embedder, a search does only the work its best `limit` need:
//! once the words left to score (the most common ones) could not lift a
//! skill not yet seen into the top, they are only looked up for the skills
//! still in the running; the answer is the one scoring every skill gives.
//!
//! With an [`Embedder`] ([`CatalogBuilder::embedder`](crate::catalog::CatalogBuilder::embedder);
//! [`HttpEmbedder`] for any OpenAI-compatible `/v1/embeddings` endpoint), each
//! skill's `name: description` is embedded once per skill version (outside
//! the index's lock: other searches go on meanwhile); the query is embedded
//! on every search. The lexical ranking and the ranking by cosine similarity
//! are fused by reciprocal rank: a skill's score is the sum,
//! over the two rankings, of `1 / (60 + rank)`, so a skill no query word
//! matches can still be found by meaning, and neither score's scale decides.
//! When the embedder fails, the search is lexical and a warning is logged.
//!
//! # Freshness
//!
//! Every search asks the catalog (or takes the caller's [`Snapshot`](crate::Snapshot)) and
//! brings the index to it first, at the cost of what changed: a kit whose
//! skill list is the one indexed ([`Skills::ptr_eq`](crate::kit::Skills::ptr_eq))
//! costs nothing per skill, a changed kit compares its skills by identity,
//! and only a new or changed skill is indexed; removed skills leave the
//! index. [`Catalog::search_stats`](crate::Catalog::search_stats) counts the skills indexed.
//!
//! Bodies are read once per skill version (a body left in its file is read
//! then, up to its lead, and not kept): their terms are counted and only the
//! postings stay. A
//! search that finds a few skills new (at most 64: an edit, some puts) reads
//! their bodies before answering. More than that (the first search over a
//! catalog) are read on a background thread, and until it is done search
//! answers from names and descriptions ([`SearchStats::bodies_pending`]).

mod fresh;
#[cfg(feature = "embed")]
mod http;
mod index;
mod semantic;
mod text;

#[cfg(feature = "embed")]
#[cfg_attr(docsrs, doc(cfg(feature = "embed")))]
pub use http::HttpEmbedder;

use std::sync::{Arc, Mutex, PoisonError};

use crate::kit::Kit;
use crate::skill::Skill;

use fresh::State;

/// A skill found by [`Catalog::search`](crate::Catalog::search), with its score (higher is better;
/// comparable within one search only).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let memory = skillkit::Memory::new();
/// memory.put(skillkit::Skill::new("pdf:extract-tables", "Pull tables out of PDF files."));
/// let catalog = skillkit::Catalog::builder().provider(memory).build();
/// let hits = catalog.search("pdf tables", 5).await;
/// assert_eq!(hits[0].skill.name, "pdf:extract-tables");
/// assert!(hits[0].score > 0.0);
/// # });
/// ```
///
/// Two hits are equal when they hold the same skill value (the same
/// [`Arc`]) with the same score.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SearchHit {
    /// The skill (its name, description and folder).
    pub skill: Arc<Skill>,
    /// How well it matches.
    pub score: f32,
}

impl PartialEq for SearchHit {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.skill, &other.skill) && self.score == other.score
    }
}

/// Error an [`Embedder`] returns.
pub type EmbedError = Box<dyn std::error::Error + Send + Sync>;

/// An embedding model, for semantic ranking
/// ([`CatalogBuilder::embedder`](crate::catalog::CatalogBuilder::embedder)): [`HttpEmbedder`]
/// (any OpenAI-compatible `/v1/embeddings` endpoint: OpenAI, Ollama, vLLM,
/// llama.cpp's server), or an application's own. SkillKit downloads and
/// bundles no model.
///
/// `embed` returns one vector per text, in order, all of one dimension.
/// Skills' texts are embedded once per skill version (kept in the index);
/// the query on every search. It is awaited outside the index's lock.
///
/// ```
/// /// Counts of a few words: a toy, deterministic model.
/// struct Words;
///
/// #[skillkit::async_trait]
/// impl skillkit::search::Embedder for Words {
///     async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, skillkit::search::EmbedError> {
///         Ok(texts.iter().map(|t| {
///             let t = t.to_lowercase();
///             ["money", "invoice", "picture"].iter().map(|w| t.matches(w).count() as f32).collect()
///         }).collect())
///     }
/// }
/// let catalog = skillkit::Catalog::builder().embedder(Words).build();
/// ```
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// One vector per text, in order.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::search::{EmbedError, Embedder};
    /// // Counts two words: a vector of two dimensions per text.
    /// struct Counts;
    /// #[skillkit::async_trait]
    /// impl Embedder for Counts {
    ///     async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
    ///         Ok(texts.iter().map(|t| vec![t.matches("pdf").count() as f32, t.matches("csv").count() as f32]).collect())
    ///     }
    /// }
    /// let vectors = Counts.embed(&["pdf to csv".into(), "pdf".into()]).await.unwrap();
    /// assert_eq!(vectors, [vec![1.0, 1.0], vec![1.0, 0.0]]);
    /// # });
    /// ```
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// A shared embedder (`Arc<dyn Embedder>` too) is one.
///
/// ```
/// use std::sync::Arc;
/// struct Zero;
/// #[skillkit::async_trait]
/// impl skillkit::search::Embedder for Zero {
///     async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, skillkit::search::EmbedError> {
///         Ok(vec![vec![0.0]; texts.len()])
///     }
/// }
/// let shared: Arc<dyn skillkit::search::Embedder> = Arc::new(Zero);
/// let catalog = skillkit::Catalog::builder().embedder(shared).build();
/// ```
#[async_trait::async_trait]
impl<E: Embedder + ?Sized> Embedder for Arc<E> {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts).await
    }
}

/// The index's counters ([`Catalog::search_stats`](crate::Catalog::search_stats)).
///
/// ```
/// let stats = skillkit::Catalog::builder().build().search_stats();
/// assert_eq!((stats.skills, stats.reindexed), (0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchStats {
    /// Skills in the index now.
    pub skills: usize,
    /// Skill versions indexed since the catalog was built (an unchanged
    /// skill is never indexed twice).
    pub reindexed: u64,
    /// Bodies the background build has still to read (0 once done).
    pub bodies_pending: usize,
    /// Bytes the index holds (postings, term dictionary, per-skill slots),
    /// estimated from its allocations; the skills are the catalog's.
    pub index_bytes: usize,
}

/// How much of each skill's body the search index reads unless
/// [`CatalogBuilder::search_body_bytes`](crate::catalog::CatalogBuilder::search_body_bytes)
/// says otherwise: the whole body, up to its first MiB (whole words only; a
/// body is untrusted text, and no skill's runs that long). The word a
/// request turns on is often further down than the overview (a tool's
/// name in the usage section, a file format in the examples): the body is
/// a field of its own, weighted least and normalised by its own length, so
/// a long body does not drown a precise description.
///
/// ```
/// assert_eq!(skillkit::search::BODY_BYTES, 1 << 20);
/// ```
pub const BODY_BYTES: usize = 1 << 20;

/// The most bytes of a query read: the rest is left out (cut at a
/// character boundary) before the query is split into words.
///
/// ```
/// assert_eq!(skillkit::search::MAX_QUERY_BYTES, 4096);
/// ```
pub const MAX_QUERY_BYTES: usize = 4096;

/// The most distinct words of a query matched (the first ones; repeated
/// words count once). Every search costs at most this many words' lookups,
/// so no query holds up another: a query of 1 MB costs what its first words
/// cost.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let memory = skillkit::Memory::new();
/// memory.put(skillkit::Skill::new("notes:pdf", "Read PDF files."));
/// let catalog = skillkit::Catalog::builder().provider(memory).build();
/// let long = format!("pdf {}", "filler ".repeat(100_000));
/// assert_eq!(catalog.search(&long, 5).await[0].skill.name, "notes:pdf");
/// assert_eq!(skillkit::search::MAX_QUERY_TERMS, 32);
/// # });
/// ```
pub const MAX_QUERY_TERMS: usize = 32;

/// `query` cut to [`MAX_QUERY_BYTES`].
fn bounded(query: &str) -> &str {
    if query.len() <= MAX_QUERY_BYTES {
        return query;
    }
    let mut end = MAX_QUERY_BYTES;
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    &query[..end]
}

/// The index a catalog and its clones share.
pub(crate) struct Search {
    state: Arc<Mutex<State>>,
    embedder: Option<Arc<dyn Embedder>>,
    /// How much of a body is indexed.
    body_bytes: usize,
}

impl Search {
    pub(crate) fn new(embedder: Option<Arc<dyn Embedder>>, body_bytes: usize) -> Search {
        Search {
            state: Arc::default(),
            embedder,
            body_bytes,
        }
    }
}

impl Search {
    /// The skills of a snapshot's `kits` (each with the index of its
    /// provider) best matching `query`, best first, at most `limit`, the
    /// index brought up to date first (see
    /// [`Catalog::search`](crate::Catalog::search)): by meaning too when an
    /// embedder is set.
    pub(crate) async fn search<'a>(
        &self,
        kits: impl IntoIterator<Item = (usize, &'a Kit)>,
        query: &str,
        limit: usize,
    ) -> Vec<SearchHit> {
        match &self.embedder {
            Some(embedder) => self.semantic(embedder, kits, bounded(query), limit).await,
            None => self.lexical(kits, query, limit),
        }
    }

    /// [`search`](Search::search) by the words alone.
    pub(crate) fn lexical<'a>(
        &self,
        kits: impl IntoIterator<Item = (usize, &'a Kit)>,
        query: &str,
        limit: usize,
    ) -> Vec<SearchHit> {
        let query = bounded(query);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.update(&mut state, kits);
        if limit == 0 {
            return Vec::new();
        }
        // The best `limit` (and the skills named as the query), scored
        // without reading every posting of the query's words.
        let mut scored = state.index.score_top(query, limit, one_word(query));
        boost_exact_names(&state.index, &mut scored, query);
        hits(&state.index, scored, limit)
    }

    /// Brings the locked `state` up to date with `kits`: names and
    /// descriptions now, bodies now for a few, in the background for many.
    fn update<'a>(&self, state: &mut State, kits: impl IntoIterator<Item = (usize, &'a Kit)>) {
        let bodies = state.update(kits);
        if bodies.len() <= fresh::INLINE_BODIES {
            fresh::add_heads(&mut state.index, bodies.iter().map(|(slot, _)| *slot));
            fresh::index_bodies(&mut state.index, &bodies, self.body_bytes);
        } else {
            // The bodies are read from now on, beside the heads.
            let heads: Vec<u32> = bodies.iter().map(|(slot, _)| *slot).collect();
            fresh::build_in_background(&self.state, state, bodies, self.body_bytes);
            fresh::add_heads(&mut state.index, heads);
        }
        state.index.release();
    }

    /// The index's counters (see [`Catalog::search_stats`](crate::Catalog::search_stats)).
    pub(crate) fn stats(&self) -> SearchStats {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        SearchStats {
            skills: state.index.live(),
            reindexed: state.reindexed,
            bodies_pending: state.pending,
            index_bytes: state.index.heap_bytes(),
        }
    }
}

/// A query that is a skill's full name (`pdf:reader`) or bare name
/// (`reader`) puts that skill above every other.
fn boost_exact_names(index: &index::Index, scored: &mut [(u32, f32)], query: &str) {
    let Some(query) = one_word(query) else {
        return;
    };
    let top = scored.iter().map(|s| s.1).fold(0.0, f32::max);
    for (slot, score) in scored.iter_mut() {
        let Some(skill) = index.slots[*slot as usize].skill.as_ref() else {
            continue;
        };
        if skill.name.eq_ignore_ascii_case(query) || skill.bare_name().eq_ignore_ascii_case(query) {
            *score += top;
        }
    }
}

/// The best `limit` of `scored`, best first (ties by name), as hits.
fn hits(index: &index::Index, mut scored: Vec<(u32, f32)>, limit: usize) -> Vec<SearchHit> {
    if limit == 0 {
        return Vec::new();
    }
    let skill = |slot: u32| index.slots[slot as usize].skill.as_ref();
    let order = |a: &(u32, f32), b: &(u32, f32)| {
        b.1.total_cmp(&a.1).then_with(|| {
            let name = |s| skill(s).map(|s: &Arc<Skill>| s.name.as_ref());
            name(a.0).cmp(&name(b.0))
        })
    };
    // The best `limit` first, then only those sorted.
    if scored.len() > limit {
        scored.select_nth_unstable_by(limit - 1, order);
        scored.truncate(limit);
    }
    scored.sort_unstable_by(order);
    scored
        .into_iter()
        .filter_map(|(slot, score)| {
            Some(SearchHit {
                skill: Arc::clone(skill(slot)?),
                score,
            })
        })
        .collect()
}

/// The query trimmed, when it is one word (it may then be a skill's name).
fn one_word(query: &str) -> Option<&str> {
    let query = query.trim();
    (!query.is_empty() && !query.contains(char::is_whitespace)).then_some(query)
}
