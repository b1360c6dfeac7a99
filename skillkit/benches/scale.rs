//! Catalog queries at scale, on catalogs of 100 / 1,000 / 10,000 / 100,000
//! skills generated from the corpus by `bench/gen-catalog.py` (called here;
//! nothing generated is committed), each beside its floor in one run:
//!
//! * `scale/<n>`: cold query (a new `Catalog` + `Local::each`, nothing cached
//!   in the process) vs. "walk + read every file"; warm query (nothing
//!   changed) vs. "walk + stat every file";
//! * `first_query/<n>`: a fresh process that makes one query on a
//!   one-thread runtime and exits (the case of `skillkit list`) vs. a fresh
//!   process that walks and reads every file;
//! * resident memory: printed before the benches, per skill, beside the mean
//!   frontmatter and file sizes (and written to `target/criterion/scale-rss.json`);
//! * the first query of a fresh process against its floor, paired: printed
//!   before the benches, from children started in turn (floor, query,
//!   floor, …), so a machine that speeds up or slows down while the bench
//!   runs moves both alike (criterion's `first_query` times them one after
//!   the other; written to `target/criterion/scale-first-query.json`).
//!
//! Run: `cargo bench -p skill-kit --bench scale`; `SKILLKIT_BENCH_SIZES=1000,10000`
//! picks the sizes.

#[path = "support/catalogs.rs"]
mod catalogs;
#[path = "support/floor.rs"]
mod floor;

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use catalogs::catalog_dir;
use criterion::{BenchmarkId, Criterion, criterion_group};
use skillkit::{Catalog, Local};

/// Set in a child process of this bench: what it does, then exits.
const CHILD: &str = "SKILLKIT_SCALE_CHILD";

fn sizes() -> Vec<usize> {
    catalogs::sizes("100,1000,10000,100000")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A catalog of the kits in `dir`, with a time limit that no load of the
/// biggest catalog reaches even on a busy machine (the default, 10 s, is
/// meant for providers that hang; a cut-off query would be timed as fast).
fn catalog(dir: &Path) -> Catalog {
    Catalog::builder()
        .provider(Local::each(dir))
        .timeout(Duration::from_secs(600))
        .build()
}

fn query(runtime: &tokio::runtime::Runtime, dir: &Path) -> usize {
    runtime.block_on(catalog(dir).snapshot()).skills().count()
}

/// Resident set size of this process, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// The runtime of a command that queries the catalog and exits: one thread,
/// as `skillkit list`, `show` and `search` have.
fn query_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// The child's work: `floor`, `query`, or `rss` (query and keep the
/// catalog, printing `skills rss_before rss_after`).
fn child(mode: &str, dir: &Path) {
    match mode {
        "floor" => println!("{}", floor::walk(dir, true)),
        "query" => println!("{}", query(&query_runtime(), dir)),
        "rss" => {
            let runtime = runtime();
            let before = rss();
            let catalog = catalog(dir);
            let snapshot = runtime.block_on(catalog.snapshot());
            let skills = snapshot.skills().count();
            println!("{skills} {before} {}", rss());
            drop((snapshot, catalog));
        }
        other => panic!("unknown {CHILD} mode {other}"),
    }
}

fn run_child(mode: &str, dir: &Path) -> String {
    let out = Command::new(std::env::current_exe().expect("bench binary"))
        .env(CHILD, mode)
        .env("SKILLKIT_SCALE_DIR", dir)
        .output()
        .expect("start the child");
    assert!(out.status.success(), "child {mode} failed");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Mean frontmatter and file sizes of the SKILL.md files under `dir`.
fn mean_sizes(dir: &Path) -> (u64, u64) {
    fn each(dir: &Path, f: &mut impl FnMut(&[u8])) {
        for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                each(&path, f);
            } else if path.file_name().is_some_and(|n| n == "SKILL.md") {
                f(&std::fs::read(&path).expect("read"));
            }
        }
    }
    let (mut head, mut file, mut count) = (0u64, 0u64, 0u64);
    each(dir, &mut |bytes| {
        let bounds = skillkit::parser::frontmatter::bounds(bytes).ok().flatten();
        head += bounds.map_or(bytes.len(), |b| b.body_start) as u64;
        file += bytes.len() as u64;
        count += 1;
    });
    (head / count.max(1), file / count.max(1))
}

/// Measures and prints the resident size per skill for each size ≥ 10,000.
fn report_rss(sizes: &[usize]) {
    let mut rows = Vec::new();
    for &n in sizes.iter().filter(|&&n| n >= 10_000) {
        let dir = catalog_dir(n);
        let line = run_child("rss", &dir);
        let fields: Vec<u64> = line
            .split_whitespace()
            .map(|v| v.parse().expect("number"))
            .collect();
        let [skills, before, after] = fields[..] else {
            panic!("rss child printed {line}")
        };
        assert_eq!(
            skills, n as u64,
            "the rss child loads every generated skill"
        );
        let per_skill = after.saturating_sub(before) / skills;
        let (head, file) = mean_sizes(&dir);
        println!(
            "rss/{n}: {skills} skills, +{} MiB resident, {per_skill} B per skill \
             (mean frontmatter {head} B, mean file {file} B)",
            (after - before) >> 20
        );
        rows.push(format!(
            "{{\"skills\":{skills},\"rss_bytes\":{},\"per_skill\":{per_skill},\"frontmatter\":{head},\"file\":{file}}}",
            after - before
        ));
    }
    write_rows("scale-rss.json", &rows);
}

/// Writes `rows` (JSON objects) as one array to `target/criterion/{file}`,
/// beside criterion's own results; a failure only loses the file.
fn write_rows(file: &str, rows: &[String]) {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    if std::fs::create_dir_all(&target).is_ok() {
        let _ = std::fs::write(target.join(file), format!("[{}]\n", rows.join(",")));
    }
}

/// The middle value of `values` (sorted here).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Measures and prints the first query of a fresh process against its
/// floor, the two started in turn, for each size up to 10,000: the median
/// of each, their ratio, and the median of the ratios of each pair.
fn report_first_query(sizes: &[usize]) {
    let mut rows = Vec::new();
    for &n in sizes.iter().filter(|&&n| n <= 10_000) {
        let dir = catalog_dir(n);
        let pairs = if n >= 10_000 { 21 } else { 201 };
        let timed = |mode| {
            let started = Instant::now();
            run_child(mode, &dir);
            started.elapsed().as_secs_f64()
        };
        let (mut floors, mut queries, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..pairs {
            let (floor, query) = (timed("floor"), timed("query"));
            floors.push(floor);
            queries.push(query);
            ratios.push(query / floor);
        }
        let (floor, query, paired) = (
            median(&mut floors),
            median(&mut queries),
            median(&mut ratios),
        );
        println!(
            "first_query_paired/{n}: {pairs} pairs, floor {:.3} ms, query {:.3} ms: {:.3} of the floor \
             (median of the pairs' ratios {paired:.3})",
            floor * 1e3,
            query * 1e3,
            query / floor,
        );
        rows.push(format!(
            "{{\"skills\":{n},\"pairs\":{pairs},\"floor_ms\":{:.4},\"query_ms\":{:.4},\"ratio\":{:.4},\"paired_ratio\":{paired:.4}}}",
            floor * 1e3,
            query * 1e3,
            query / floor
        ));
    }
    write_rows("scale-first-query.json", &rows);
}

fn bench(c: &mut Criterion) {
    let sizes = sizes();
    report_rss(&sizes);
    report_first_query(&sizes);
    let runtime = runtime();
    for &n in &sizes {
        let dir = catalog_dir(n);
        assert_eq!(query(&runtime, &dir), n, "every generated skill loads");
        let mut group = c.benchmark_group(format!("scale/{n}"));
        if n >= 10_000 {
            group.sample_size(10);
            group.measurement_time(Duration::from_secs(if n >= 100_000 { 30 } else { 8 }));
        }
        group.bench_function("floor_walk_read_every_file", |b| {
            b.iter(|| black_box(floor::walk(&dir, true)))
        });
        group.bench_function("cold_query", |b| b.iter(|| query(&runtime, &dir)));
        group.bench_function("floor_walk_stat_every_file", |b| {
            b.iter(|| black_box(floor::walk(&dir, false)))
        });
        let catalog = catalog(&dir);
        runtime.block_on(catalog.snapshot());
        group.bench_function("warm_query", |b| {
            b.iter(|| black_box(runtime.block_on(catalog.snapshot())))
        });
        group.finish();

        let mut group = c.benchmark_group(format!("first_query/{n}"));
        group.sample_size(10);
        if n >= 100_000 {
            group.measurement_time(Duration::from_secs(30));
        }
        for mode in ["floor", "query"] {
            group.bench_with_input(BenchmarkId::new("fresh_process", mode), mode, |b, mode| {
                b.iter(|| run_child(mode, &dir))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(mode) = std::env::var(CHILD) {
        let dir = std::env::var_os("SKILLKIT_SCALE_DIR").expect("SKILLKIT_SCALE_DIR");
        child(&mode, Path::new(&dir));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
