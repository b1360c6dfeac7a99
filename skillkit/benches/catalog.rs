//! Catalog queries over the 431 real skills of the corpus, side by side with
//! the floors they are measured against:
//!
//! * cold query (a new `Local`, nothing cached) vs. "walk the tree + read every file";
//! * warm query (nothing changed) vs. "walk the tree + stat every file".
//!
//! Run: `cargo bench -p skillkit --bench catalog`.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use skillkit::{Catalog, Local};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus")
}

/// The floor: every file of the tree, read (or only stat-ed).
fn walk(dir: &Path, read: bool, total: &mut u64) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let entry = entry.expect("entry");
        let path = entry.path();
        if entry.file_type().expect("file type").is_dir() {
            walk(&path, read, total);
        } else if read {
            *total += std::fs::read(&path).expect("read").len() as u64;
        } else {
            *total += std::fs::metadata(&path).expect("stat").len();
        }
    }
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
        b.iter(|| {
            let mut total = 0;
            walk(&corpus, true, &mut total);
            black_box(total)
        })
    });
    group.bench_function("cold_catalog_query", |b| {
        b.iter(|| {
            let catalog = Catalog::builder().provider(Local::each(&corpus)).build();
            black_box(runtime.block_on(catalog.snapshot()))
        })
    });
    group.bench_function("floor_walk_stat_every_file", |b| {
        b.iter(|| {
            let mut total = 0;
            walk(&corpus, false, &mut total);
            black_box(total)
        })
    });
    let catalog = Catalog::builder().provider(Local::each(&corpus)).build();
    group.bench_function("warm_catalog_query", |b| {
        b.iter(|| black_box(runtime.block_on(catalog.snapshot())))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
