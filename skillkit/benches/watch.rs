//! `Local` learning of changes from the operating system, on the catalogs of
//! 10,000 / 100,000 skills generated from the corpus (`bench/gen-catalog.py`,
//! kits of 1,000), each figure beside the same work without watching
//! (`Local::watch(false)`: a stat per file and folder), in one run:
//!
//! * `watch/query/<n>/{stat_walk,watched}`: a warm catalog query of the
//!   unchanged folder;
//! * `watch/load/<n>/{stat_walk,watched}`: the same query of the provider
//!   alone (`Local::load`), without the catalog's merge of its answer;
//! * `watch/agent_turn/<n>/{stat_walk,watched}`: a text-only turn of a
//!   long-lived agent over it, on a scripted model that answers at once
//!   (target: ≤ 5 ms at 100,000 watched);
//! * `watch/query_after_edit/<n>`: a query after one SKILL.md was edited
//!   (its kit of 1,000 skills is checked, the others are not).
//!
//! Run: `cargo bench -p skill-kit --bench watch -- --measurement-time 3
//! --warm-up-time 1`; `SKILLKIT_BENCH_SIZES=100000` picks the sizes.

#[path = "support/catalogs.rs"]
mod catalogs;

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skillkit::agent::{Agent, AgentOptions, start_agent};
use skillkit::llm::{Adapter, Event, EventStream, LlmError, Registry, Request, StopReason};
use skillkit::providers::WatchStatus;
use skillkit::{AgentDefinition, Catalog, Local};

fn sizes() -> Vec<usize> {
    catalogs::sizes("10000,100000")
}

/// A model that answers every request at once with one word.
struct Pong;

#[skillkit::async_trait]
impl Adapter for Pong {
    fn name(&self) -> &str {
        "pong"
    }

    fn default_model(&self) -> Option<&str> {
        Some("pong")
    }

    async fn stream(&self, _: Request) -> Result<EventStream, LlmError> {
        let events = vec![
            Event::delta("pong"),
            Event::Done {
                stop_reason: StopReason::EndTurn,
            },
        ];
        Ok(Box::pin(futures::stream::iter(events)))
    }
}

/// `Local::each(dir)`, watching or not, warmed: when watching, its watch is
/// set up and in use.
fn local(runtime: &tokio::runtime::Runtime, dir: &Path, watch: bool) -> (Local, Catalog) {
    let local = Local::each(dir).watch(watch);
    let catalog = Catalog::builder()
        .provider(local.clone())
        .timeout(Duration::from_secs(600))
        .build();
    runtime.block_on(catalog.snapshot());
    if watch {
        local.wait_for_watch(Duration::from_secs(600));
        runtime.block_on(catalog.snapshot());
        assert_eq!(local.watch_status(), WatchStatus::Watching);
    }
    (local, catalog)
}

fn agent(catalog: &Catalog) -> Agent {
    let options = AgentOptions::new(catalog.clone())
        .registry(Registry::empty().with("pong", Pong))
        .model("pong://bench");
    start_agent(
        AgentDefinition::new("bench", "Benchmarks.").with_system_prompt("You are fast."),
        options,
    )
    .expect("the model resolves")
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    for n in sizes() {
        let dir = catalogs::catalog_dir(n);
        let mut query = c.benchmark_group(format!("watch/query/{n}"));
        query.sample_size(10);
        let mut turn_catalogs = Vec::new();
        for (name, watch) in [("stat_walk", false), ("watched", true)] {
            let (local, catalog) = local(&runtime, &dir, watch);
            query.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.to_async(&runtime).iter(|| async {
                    assert_eq!(catalog.snapshot().await.skills().count(), n);
                })
            });
            turn_catalogs.push((name, local, catalog));
        }
        query.finish();

        // The provider alone (`Local::load`), without the catalog's merge of
        // its answer.
        let mut load = c.benchmark_group(format!("watch/load/{n}"));
        load.sample_size(10);
        for (name, local, _) in &turn_catalogs {
            load.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.iter(|| assert_eq!(local.load().expect("loaded").len(), n / 1000))
            });
        }
        load.finish();

        // An agent over a catalog past its listing budget searches it for
        // the skills relevant to the conversation: the first search starts
        // the index's background build (every body read once, measured by
        // the search bench). The turns measured here are the steady state,
        // after that build, which would otherwise share the 2 cores.
        for (_, _, catalog) in &turn_catalogs {
            runtime.block_on(async {
                agent(catalog)
                    .ask("warm up", |_| {})
                    .await
                    .expect("answered");
            });
            while catalog.search_stats().bodies_pending > 0 {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let mut turn = c.benchmark_group(format!("watch/agent_turn/{n}"));
        turn.sample_size(10);
        for (name, _, catalog) in &turn_catalogs {
            turn.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.to_async(&runtime).iter_custom(|iters| {
                    let catalog = catalog.clone();
                    async move {
                        // A new agent every 50 turns keeps the history
                        // short; its first turn is not timed.
                        let mut total = Duration::ZERO;
                        let mut current = None;
                        for i in 0..iters {
                            if i.is_multiple_of(50) {
                                let mut fresh = agent(&catalog);
                                fresh.ask("warm up", |_| {}).await.expect("answered");
                                current = Some(fresh);
                            }
                            let agent = current.as_mut().expect("started above");
                            let started = Instant::now();
                            agent.ask("go", |_| {}).await.expect("answered");
                            total += started.elapsed();
                        }
                        total
                    }
                })
            });
        }
        turn.finish();

        // One SKILL.md edited before each query: its kit is checked.
        let (_, _, catalog) = &turn_catalogs[1];
        let file = dir.join("kit-0000/skill-000000/SKILL.md");
        let text = std::fs::read_to_string(&file).expect("a generated skill");
        let mut after_edit = c.benchmark_group(format!("watch/query_after_edit/{n}"));
        after_edit.sample_size(10);
        after_edit.bench_function(BenchmarkId::from_parameter("watched"), |b| {
            b.to_async(&runtime).iter(|| async {
                std::fs::write(&file, &text).expect("rewrite the skill");
                assert_eq!(catalog.snapshot().await.skills().count(), n);
            })
        });
        after_edit.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
