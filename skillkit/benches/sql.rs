//! The SQL provider's queries at 1,000 and 10,000 skill rows, beside the floor
//! they are measured against, on SQLite (a file) and, when `DATABASE_URL`
//! names a PostgreSQL server (and the `postgres` feature is on), on it too:
//!
//! * `floor_select_revision`: a bare `SELECT revision` round trip on a pool
//!   of its own (the least any fresh query can cost);
//! * `floor_clone_kits`: cloning the answer (`Vec<Kit>`), which every
//!   `list_kits` hands out (a kit's skills are shared, so this is O(kits));
//! * `warm_query`: `list_kits` with nothing changed (target: ≤ 2× the floor);
//! * `cold_query`: the first `list_kits` of a new provider (every row read);
//! * `one_row_changed`: `list_kits` after another pool rewrote one row (the
//!   write itself is not timed).
//!
//! Run: `cargo bench -p skill-kit --features postgres --bench sql`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skillkit::{Kit, KitProvider, Skill, Sql};

const SIZES: [usize; 2] = [1_000, 10_000];

/// A kit of `n` skills, with bodies of a realistic size.
fn kit(n: usize) -> Kit {
    (0..n).fold(Kit::new("bench"), |kit, i| {
        kit.with_skill(
            Skill::new(
                format!("skill-{i:05}"),
                "Does one thing, and says when to use it.",
            )
            .with_body("Do the thing with $ARGUMENTS.\n".repeat(20)),
        )
    })
}

/// The floor: one `SELECT revision` on a pool of its own (one round trip:
/// no ping before each use).
async fn select_revision(url: &str) -> Box<dyn Fn() -> futures::future::BoxFuture<'static, i64>> {
    const REVISION: &str = "SELECT revision FROM skillkit_revision WHERE id = 1";
    if url.starts_with("sqlite:") {
        let pool = sqlx::pool::PoolOptions::<sqlx::Sqlite>::new()
            .test_before_acquire(false)
            .connect(url)
            .await
            .expect("sqlite");
        return Box::new(move || {
            let pool = pool.clone();
            Box::pin(async move { sqlx::query_scalar(REVISION).fetch_one(&pool).await.unwrap() })
        });
    }
    #[cfg(feature = "postgres")]
    {
        let pool = sqlx::pool::PoolOptions::<sqlx::Postgres>::new()
            .test_before_acquire(false)
            .connect(url)
            .await
            .expect("postgres");
        Box::new(move || {
            let pool = pool.clone();
            Box::pin(async move { sqlx::query_scalar(REVISION).fetch_one(&pool).await.unwrap() })
        })
    }
    #[cfg(not(feature = "postgres"))]
    unreachable!("PostgreSQL needs the `postgres` feature")
}

fn backend(c: &mut Criterion, runtime: &tokio::runtime::Runtime, label: &str, url: &str) {
    let mut group = c.benchmark_group(format!("sql_{label}"));
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(4));
    for n in SIZES {
        let writer = Sql::open(url).expect("url");
        runtime.block_on(async {
            writer.put_kit(&kit(n)).await.expect("fill");
        });
        let floor = runtime.block_on(select_revision(url));
        group.bench_function(BenchmarkId::new("floor_select_revision", n), |b| {
            b.to_async(runtime).iter(&floor)
        });

        let reader = Sql::open(url).expect("url");
        let kits = runtime.block_on(reader.list_kits()).expect("read");
        assert_eq!(kits[0].skills.len(), n);
        // What the warm query does besides the round trip: hand out an owned
        // copy of the kits, as any provider must (the skills are shared).
        group.bench_function(BenchmarkId::new("floor_clone_kits", n), |b| {
            b.iter(|| black_box(kits.clone()))
        });
        group.bench_function(BenchmarkId::new("warm_query", n), |b| {
            b.to_async(runtime)
                .iter(|| async { black_box(reader.list_kits().await.unwrap()) })
        });

        group.bench_function(BenchmarkId::new("cold_query", n), |b| {
            b.to_async(runtime).iter_custom(|iters| async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let fresh = Sql::open(url).expect("url");
                    fresh.revision().await.unwrap(); // connected, schema checked
                    let start = Instant::now();
                    black_box(fresh.list_kits().await.unwrap());
                    total += start.elapsed();
                }
                total
            })
        });

        group.bench_function(BenchmarkId::new("one_row_changed", n), |b| {
            b.to_async(runtime).iter_custom(|iters| {
                let (writer, reader) = (&writer, &reader);
                async move {
                    let mut total = Duration::ZERO;
                    for i in 0..iters {
                        let skill = Skill::new("skill-00000", format!("Changed {i}."));
                        writer.put_skill("bench", &skill).await.unwrap();
                        let start = Instant::now();
                        black_box(reader.list_kits().await.unwrap());
                        total += start.elapsed();
                    }
                    total
                }
            })
        });
        runtime.block_on(async {
            writer.delete_kit("bench").await.expect("empty");
        });
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = format!("sqlite://{}", dir.path().join("bench.db").display());
    backend(c, &runtime, "sqlite", &sqlite);
    match std::env::var("DATABASE_URL") {
        Ok(url) if cfg!(feature = "postgres") && url.starts_with("postgres") => {
            backend(c, &runtime, "postgres", &url)
        }
        _ => eprintln!(
            "PostgreSQL skipped: set DATABASE_URL=postgres://… and build with `--features postgres`"
        ),
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
