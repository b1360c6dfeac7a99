//! Catalog queries over the 431 real skills of the corpus, side by side with
//! the floors they are measured against:
//!
//! * cold query (a new `Local`, nothing cached) vs. "walk the tree + read every file";
//! * warm query (nothing changed) vs. "walk the tree + stat every file".
//!
//! Run: `cargo bench -p skill-kit --bench catalog`.

use std::hint::black_box;
use std::path::{Path, PathBuf};

#[path = "support/floor.rs"]
mod floor;

use criterion::{Criterion, criterion_group, criterion_main};
use skillkit::{Catalog, Local};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus")
}

fn bench(c: &mut Criterion) {
    let corpus = corpus();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let skills = runtime.block_on(async {
        let catalog = Catalog::builder().provider(Local::each(&corpus)).build();
        catalog.list_skills().await.len()
    });
    assert_eq!(skills, 431, "the corpus must load fully");

    let mut group = c.benchmark_group("corpus_431");
    group.bench_function("floor_walk_read_every_file", |b| {
        b.iter(|| black_box(floor::walk(&corpus, true)))
    });
    group.bench_function("cold_catalog_query", |b| {
        b.iter(|| {
            let catalog = Catalog::builder().provider(Local::each(&corpus)).build();
            black_box(runtime.block_on(catalog.snapshot()))
        })
    });
    group.bench_function("floor_walk_stat_every_file", |b| {
        b.iter(|| black_box(floor::walk(&corpus, false)))
    });
    let catalog = Catalog::builder().provider(Local::each(&corpus)).build();
    group.bench_function("warm_catalog_query", |b| {
        b.iter(|| black_box(runtime.block_on(catalog.snapshot())))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
