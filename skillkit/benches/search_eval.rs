//! Search relevance on the corpus: recall@1, recall@5 and MRR@10 of
//! `Catalog::search` beside plain BM25 (over name + description + whole
//! body, and over name + description), on the two parts of
//! `bench/search-eval.json`: the requests weights and sizes were tuned on,
//! and the held-out requests, only ever scored. Prints a markdown table.
//!
//! Run: `cargo bench -p skill-kit --features embed --bench search_eval`
//! (`SKILLKIT_EVAL_VERBOSE=1` prints each request's top three).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use skillkit::search::Embedder;
use skillkit::{Catalog, Local, Skill};

struct Request {
    query: String,
    relevant: Vec<String>,
}

/// The eval set's two parts: `requests` (tuned on) and `held_out`
/// (only scored).
fn requests(root: &Path) -> [Vec<Request>; 2] {
    let text = std::fs::read_to_string(root.join("bench/search-eval.json")).expect("eval set");
    let json: serde_json::Value = serde_json::from_str(&text).expect("eval set: JSON");
    let part = |key: &str| -> Vec<Request> {
        json[key]
            .as_array()
            .unwrap_or_else(|| panic!("eval set: `{key}`"))
            .iter()
            .map(|r| Request {
                query: r["query"].as_str().expect("query").to_owned(),
                relevant: r["relevant"]
                    .as_array()
                    .expect("relevant")
                    .iter()
                    .map(|n| n.as_str().expect("name").to_owned())
                    .collect(),
            })
            .collect()
    };
    [part("requests"), part("held_out")]
}

/// A skill's corpus names: its frontmatter name and its folder's.
fn corpus_names(skill: &Skill) -> [String; 2] {
    let folder = skill
        .dir()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    [
        skill.bare_name().trim_matches(['\'', '"']).to_owned(),
        folder,
    ]
}

/// The plain baselines: BM25 (k1 1.2, b 0.75) over one field (name +
/// description, or name + description + the whole body), words lowercased
/// and split on anything not alphanumeric; no stemming, no stop words, no
/// typo tolerance.
struct Baseline {
    docs: Vec<(Arc<Skill>, HashMap<String, f32>, f32)>,
    df: HashMap<String, f32>,
    avg: f32,
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Baseline {
    fn new(skills: &[Arc<Skill>], whole_body: bool) -> Baseline {
        let mut df: HashMap<String, f32> = HashMap::new();
        let mut docs = Vec::new();
        let mut total = 0.0;
        for skill in skills {
            let body = if whole_body {
                body(skill)
            } else {
                String::new()
            };
            let terms = words(&format!("{} {} {body}", skill.name, skill.description));
            let mut tf: HashMap<String, f32> = HashMap::new();
            for t in &terms {
                *tf.entry(t.clone()).or_default() += 1.0;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1.0;
            }
            total += terms.len() as f32;
            docs.push((Arc::clone(skill), tf, terms.len() as f32));
        }
        let avg = total / docs.len().max(1) as f32;
        Baseline { docs, df, avg }
    }

    fn search(&self, query: &str) -> Vec<Arc<Skill>> {
        let n = self.docs.len() as f32;
        let query = words(query);
        let mut scored: Vec<(f32, &Arc<Skill>)> = self
            .docs
            .iter()
            .map(|(skill, tf, len)| {
                let score = query
                    .iter()
                    .map(|t| {
                        let f = tf.get(t).copied().unwrap_or(0.0);
                        let df = self.df.get(t).copied().unwrap_or(0.0);
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len / self.avg))
                    })
                    .sum();
                (score, skill)
            })
            .filter(|(s, _)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        scored.into_iter().map(|(_, s)| Arc::clone(s)).collect()
    }
}

/// The body of a skill's `SKILL.md` (after the frontmatter), read whole.
fn body(skill: &Skill) -> String {
    let Some(path) = skill.location.as_deref() else {
        return String::new();
    };
    let bytes = std::fs::read(path).expect("read SKILL.md");
    let start = skillkit::parser::frontmatter::bounds(&bytes)
        .ok()
        .flatten()
        .map_or(0, |b| b.body_start);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

#[derive(Default)]
struct Scores {
    at1: f32,
    at5: f32,
    mrr: f32,
}

impl Scores {
    fn add(&mut self, ranked: &[Arc<Skill>], relevant: &[String]) {
        let rank = ranked
            .iter()
            .take(10)
            .position(|s| corpus_names(s).iter().any(|n| relevant.contains(n)));
        if let Some(rank) = rank {
            self.at1 += f32::from(rank == 0);
            self.at5 += f32::from(rank < 5);
            self.mrr += 1.0 / (rank + 1) as f32;
        }
    }

    /// `recall@1 | recall@5 | MRR@10` over `n` requests.
    fn cells(&self, n: usize) -> String {
        let n = n as f32;
        format!(
            "{:.3} | {:.3} | {:.3}",
            self.at1 / n,
            self.at5 / n,
            self.mrr / n
        )
    }
}

/// A stand-in for an embedding model when no endpoint is set: each word's
/// character trigrams hashed into 512 dimensions. Not a language model: it
/// knows spellings, not meanings; it exercises the fusion, and its row says
/// which it was.
struct Trigrams;

#[skillkit::async_trait]
impl Embedder for Trigrams {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, skillkit::search::EmbedError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut vector = vec![0.0f32; 512];
                for word in words(text) {
                    let padded: Vec<char> = format!(" {word} ").chars().collect();
                    for gram in padded.windows(3) {
                        let mut hash = 0xcbf2_9ce4_8422_2325u64;
                        for c in gram {
                            hash = (hash ^ u64::from(*c)).wrapping_mul(0x0100_0000_01b3);
                        }
                        vector[(hash % 512) as usize] += 1.0;
                    }
                }
                vector
            })
            .collect())
    }
}

/// The embedder of the eval's semantic row: the endpoint of
/// `SKILLKIT_EMBED_URL` (model `SKILLKIT_EMBED_MODEL`) when set, else
/// [`Trigrams`]; and the row's name.
fn embedder() -> (Arc<dyn Embedder>, String) {
    match std::env::var("SKILLKIT_EMBED_URL") {
        Ok(url) => {
            let mut http = skillkit::search::HttpEmbedder::new(url);
            if let Ok(model) = std::env::var("SKILLKIT_EMBED_MODEL") {
                http = http.model(model);
            }
            let name = format!("embedder `{}` at {}", http.model_name(), http.url());
            (Arc::new(http), name)
        }
        Err(_) => (
            Arc::new(Trigrams),
            "a stand-in embedder (hashed character trigrams, not a language model; set SKILLKIT_EMBED_URL for a real one)".to_owned(),
        ),
    }
}

/// A catalog of the corpus indexing `body_bytes` of each body, its first
/// build done.
fn indexed(runtime: &tokio::runtime::Runtime, corpus: &Path, body_bytes: usize) -> Catalog {
    indexed_with(runtime, corpus, body_bytes, None)
}

fn indexed_with(
    runtime: &tokio::runtime::Runtime,
    corpus: &Path,
    body_bytes: usize,
    embedder: Option<Arc<dyn Embedder>>,
) -> Catalog {
    let mut builder = Catalog::builder()
        .provider(Local::each(corpus))
        .search_body_bytes(body_bytes);
    if let Some(embedder) = embedder {
        builder = builder.embedder(embedder);
    }
    let catalog = builder.build();
    runtime.block_on(async {
        catalog.search("warm up", 1).await;
        while catalog.search_stats().bodies_pending > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    });
    catalog
}

/// The index with each body's lead of the default size, then of these
/// sizes (the default's left out), then whole bodies and none.
fn leads() -> Vec<usize> {
    let default = skillkit::search::BODY_BYTES;
    let others = [1024, 4096, usize::MAX, 0];
    std::iter::once(default)
        .chain(others.into_iter().filter(|&n| n != default))
        .collect()
}

/// Scores `search` on every request of `part`.
fn score(part: &[Request], mut search: impl FnMut(&str) -> Vec<Arc<Skill>>) -> Scores {
    let mut scores = Scores::default();
    for request in part {
        scores.add(&search(&request.query), &request.relevant);
    }
    scores
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = root.join("tests/fixtures/corpus");
    let [tuned, held_out] = requests(&root);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let leads = leads();
    let catalog = indexed(&runtime, &corpus, leads[0]);
    let skills: Vec<Arc<Skill>> =
        runtime.block_on(async { catalog.snapshot().await.skills().cloned().collect() });
    for request in tuned.iter().chain(&held_out) {
        for name in &request.relevant {
            assert!(
                skills.iter().any(|s| corpus_names(s).contains(name)),
                "bench/search-eval.json: no corpus skill `{name}`"
            );
        }
    }
    let verbose = std::env::var_os("SKILLKIT_EVAL_VERBOSE").is_some();
    let mut rows = Vec::new();
    for (i, lead) in leads.into_iter().enumerate() {
        let catalog = match i {
            0 => catalog.clone(),
            _ => indexed(&runtime, &corpus, lead),
        };
        let search = |query: &str| -> Vec<Arc<Skill>> {
            let hits = runtime.block_on(catalog.search(query, 10));
            hits.into_iter().map(|h| h.skill).collect()
        };
        if verbose && i == 0 {
            for request in tuned.iter().chain(&held_out) {
                let top: Vec<String> = search(&request.query)
                    .iter()
                    .take(3)
                    .map(|s| corpus_names(s)[1].clone())
                    .collect();
                println!("{:70} {:?} want {:?}", request.query, top, request.relevant);
            }
        }
        let body = match lead {
            usize::MAX => "whole bodies, no cut".to_owned(),
            skillkit::search::BODY_BYTES => "whole bodies (to 1 MiB)".to_owned(),
            0 => "no body".to_owned(),
            n => format!("bodies' first {n} bytes"),
        };
        let default = if i == 0 { " (the default)" } else { "" };
        rows.push((
            format!("SkillKit index (`Catalog::search`), {body}{default}"),
            score(&tuned, search),
            score(&held_out, search),
        ));
    }
    let (embedder, embedder_name) = embedder();
    let semantic = indexed_with(
        &runtime,
        &corpus,
        skillkit::search::BODY_BYTES,
        Some(embedder),
    );
    let search = |query: &str| -> Vec<Arc<Skill>> {
        let hits = runtime.block_on(semantic.search(query, 10));
        hits.into_iter().map(|h| h.skill).collect()
    };
    rows.push((
        format!("SkillKit index with {embedder_name}, fused by reciprocal rank"),
        score(&tuned, search),
        score(&held_out, search),
    ));
    for (name, whole) in [
        ("plain BM25, name + description + whole body", true),
        ("plain BM25, name + description", false),
    ] {
        let baseline = Baseline::new(&skills, whole);
        let search = |query: &str| baseline.search(query);
        rows.push((
            name.to_owned(),
            score(&tuned, search),
            score(&held_out, search),
        ));
    }
    println!(
        "{} tuned and {} held-out requests over {} corpus skills (bench/search-eval.json)\n",
        tuned.len(),
        held_out.len(),
        skills.len()
    );
    println!(
        "| ranking | tuned recall@1 | tuned recall@5 | tuned MRR@10 | held-out recall@1 | held-out recall@5 | held-out MRR@10 |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, tuned_scores, held_scores) in rows {
        println!(
            "| {name} | {} | {} |",
            tuned_scores.cells(tuned.len()),
            held_scores.cells(held_out.len())
        );
    }
}
