//! Search relevance on the corpus: recall@1, recall@5 and MRR of
//! `Catalog::search` against a plain BM25 over name + description, on the
//! requests of `bench/search-eval.json` (people's phrasing, each naming the
//! skills that serve it). Prints a markdown table.
//!
//! Run: `cargo bench -p skill-kit --bench search_eval`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use skillkit::{Catalog, Local, Skill};

struct Request {
    query: String,
    relevant: Vec<String>,
}

fn requests(root: &Path) -> Vec<Request> {
    let text = std::fs::read_to_string(root.join("bench/search-eval.json")).expect("eval set");
    let json: serde_json::Value = serde_json::from_str(&text).expect("eval set: JSON");
    json["requests"]
        .as_array()
        .expect("requests")
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

/// The plain baseline: BM25 (k1 1.2, b 0.75) over name + description as
/// one field, words lowercased and split on anything not alphanumeric; no
/// stemming, no stop words, no typo tolerance.
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
    fn new(skills: &[Arc<Skill>]) -> Baseline {
        let mut df: HashMap<String, f32> = HashMap::new();
        let mut docs = Vec::new();
        let mut total = 0.0;
        for skill in skills {
            let terms = words(&format!("{} {}", skill.name, skill.description));
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

    fn row(&self, name: &str, n: usize) -> String {
        let n = n as f32;
        format!(
            "| {name} | {:.2} | {:.2} | {:.3} |",
            self.at1 / n,
            self.at5 / n,
            self.mrr / n
        )
    }
}

/// A catalog of the corpus indexing `body_bytes` of each body, its first
/// build done.
fn indexed(runtime: &tokio::runtime::Runtime, corpus: &Path, body_bytes: usize) -> Catalog {
    let catalog = Catalog::builder()
        .provider(Local::each(corpus))
        .search_body_bytes(body_bytes)
        .build();
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
    let others = [512, 1024, 2048, 4096, 8192, usize::MAX, 0];
    std::iter::once(default)
        .chain(others.into_iter().filter(|&n| n != default))
        .collect()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = root.join("tests/fixtures/corpus");
    let requests = requests(&root);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let leads = leads();
    let catalog = indexed(&runtime, &corpus, leads[0]);
    let skills: Vec<Arc<Skill>> =
        runtime.block_on(async { catalog.snapshot().await.skills().cloned().collect() });
    for request in &requests {
        for name in &request.relevant {
            assert!(
                skills.iter().any(|s| corpus_names(s).contains(name)),
                "bench/search-eval.json: no corpus skill `{name}`"
            );
        }
    }
    let baseline = Baseline::new(&skills);
    let mut plain = Scores::default();
    let verbose = std::env::var_os("SKILLKIT_EVAL_VERBOSE").is_some();
    let mut rows = Vec::new();
    for (i, lead) in leads.into_iter().enumerate() {
        let catalog = match i {
            0 => catalog.clone(),
            _ => indexed(&runtime, &corpus, lead),
        };
        let mut ours = Scores::default();
        for request in &requests {
            let hits: Vec<Arc<Skill>> = runtime
                .block_on(catalog.search(&request.query, 10))
                .into_iter()
                .map(|h| h.skill)
                .collect();
            ours.add(&hits, &request.relevant);
            if i > 0 {
                continue;
            }
            let base = baseline.search(&request.query);
            plain.add(&base, &request.relevant);
            if verbose {
                let top = |r: &[Arc<Skill>]| {
                    r.first()
                        .map(|s| corpus_names(s)[0].clone())
                        .unwrap_or_default()
                };
                println!(
                    "{:60} ours={:40} base={:40} want={:?}",
                    request.query,
                    top(&hits),
                    top(&base),
                    request.relevant
                );
            }
        }
        let body = match lead {
            usize::MAX => "whole bodies".to_owned(),
            0 => "no body".to_owned(),
            n => format!("bodies' first {n} bytes"),
        };
        let default = if i == 0 { " (the default)" } else { "" };
        rows.push(ours.row(
            &format!("SkillKit index (`Catalog::search`), {body}{default}"),
            requests.len(),
        ));
    }
    println!(
        "{} requests over {} corpus skills (bench/search-eval.json)\n",
        requests.len(),
        skills.len()
    );
    println!("| ranking | recall@1 | recall@5 | MRR |\n|---|---|---|---|");
    for row in rows {
        println!("{row}");
    }
    println!(
        "{}",
        plain.row("plain BM25, name + description", requests.len())
    );
}
