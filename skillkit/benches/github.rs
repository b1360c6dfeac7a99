//! The GitHub provider against a GitHub look-alike on 127.0.0.1: a whole
//! import (resolve, download, unpack, load) and serving a cached kit, which
//! every catalog query does.
//!
//! Run: `cargo bench -p skill-kit --bench github`

// `skill-kit` cannot take `skillkit-tests` as a dev-dependency (it depends on
// `skill-kit` with more features, which would unify into every test build of
// the library), so the bench compiles the one file in.
#[path = "../../tests/src/github.rs"]
#[allow(dead_code)] // the bench uses part of it
mod support;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use skillkit::{GitHub, KitProvider};
use support::{Server, Tarball, sha, skill};

/// 50 skills, each with a 16 KiB reference file: about 850 KiB unpacked.
fn repository() -> Vec<u8> {
    let reference = vec![b'x'; 16 * 1024];
    let mut tarball = Tarball::new("bench", "skills", &sha(1));
    for i in 0..50 {
        let name = format!("skill-{i}");
        tarball = tarball
            .file(
                &format!("skills/{name}/SKILL.md"),
                &skill(&name, "A benchmark skill."),
            )
            .file(&format!("skills/{name}/reference.md"), &reference);
    }
    tarball.build()
}

fn provider(server: &Server, dir: &std::path::Path) -> GitHub {
    GitHub::builder()
        .allow("bench/*")
        .base_url(server.url())
        .cache_dir(dir)
        .build()
        .unwrap()
}

fn github(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Server::start());
    server.publish("bench/skills", "HEAD", &sha(1), repository());

    c.bench_function(
        "github import 50 skills (resolve, download, unpack, load)",
        |b| {
            b.to_async(&runtime).iter_batched(
                || {
                    let dir = tempfile::tempdir().unwrap();
                    (provider(&server, dir.path()), dir)
                },
                |(github, dir)| async move {
                    let done = github.import("bench/skills").await.unwrap();
                    assert_eq!(done.skills.len(), 50);
                    // Dropped (the cache deleted) outside the measurement.
                    (github, dir)
                },
                BatchSize::PerIteration,
            )
        },
    );

    let dir = tempfile::tempdir().unwrap();
    let github = provider(&server, dir.path());
    runtime.block_on(github.import("bench/skills")).unwrap();
    c.bench_function("github list_kits, 50 cached skills (no network)", |b| {
        b.to_async(&runtime).iter(|| async {
            let kits = github.list_kits().await.unwrap();
            assert_eq!(kits[1].skills.len(), 50);
        })
    });
}

criterion_group!(benches, github);
criterion_main!(benches);
