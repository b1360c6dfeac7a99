//! `list_kits` on a kit compiled in with `#[derive(Kit)]`: 100 skills, no text
//! copied (target: at most 2 µs per call).
//!
//! Run with `cargo bench -p skill-kit --bench embedded`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::executor::block_on;
use skillkit::{Kit, KitProvider, ToolExecution, ToolOutcome};

#[derive(Kit)]
#[kit(path = "benches/kits/hundred", name = "hundred")]
struct Hundred;

impl skillkit::EmbeddedKit for Hundred {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(execution.arguments())
    }
}

fn embedded(c: &mut Criterion) {
    assert_eq!(Hundred::embedded_kit().skills.len(), 100);
    // The call alone: the answer is dropped outside the measured time.
    c.bench_function("embedded/list_kits/100_skills", |b| {
        b.iter_with_large_drop(|| block_on(black_box(&Hundred).list_kits()))
    });
    // The call and dropping its answer.
    c.bench_function("embedded/list_kits_and_drop/100_skills", |b| {
        b.iter(|| block_on(black_box(&Hundred).list_kits()))
    });
    c.bench_function("embedded/get_kit/100_skills", |b| {
        b.iter(|| block_on(black_box(&Hundred).get_kit(black_box("hundred"))))
    });
}

criterion_group!(benches, embedded);
criterion_main!(benches);
