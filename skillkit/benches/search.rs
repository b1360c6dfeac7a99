//! The search index (`Catalog::search`) at 1,000 / 10,000 / 100,000 skills
//! generated from the corpus by `bench/gen-catalog.py` (called here; nothing
//! generated is committed):
//!
//! * printed before the benches, per size: the cold catalog query (a new
//!   `Catalog` + `Local::each`, the median of five), the first search (names and descriptions
//!   indexed, bodies handed to the background), the full first build (until
//!   every body is indexed; the median of three new catalogs, one above
//!   10,000 skills), and the resident index memory per skill, counted
//!   by this bench's global allocator, beside the mean SKILL.md and
//!   frontmatter sizes;
//! * `search/warm/<n>`: a query over an unchanged catalog (the snapshot
//!   taken; the index checked fresh and asked);
//! * `search/query_1mb/<n>`: a query of 1 MB of misspelt words over the
//!   same catalog (only its first `MAX_QUERY_BYTES`, and of those its first
//!   `MAX_QUERY_TERMS` distinct words, are matched);
//! * `search/incremental/<n>`: bringing the index up to date after one
//!   skill changed (over `Memory`, in kits of 1,000 as generated: that kit
//!   compared skill by skill, that skill re-indexed with its body), without
//!   the query (`limit` 0).
//!
//! Run: `cargo bench -p skill-kit --bench search -- --measurement-time 3
//! --warm-up-time 1`; `SKILLKIT_BENCH_SIZES=1000,10000` picks the sizes.

#[path = "support/catalogs.rs"]
mod catalogs;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group};
use skillkit::{Catalog, Kit, Local, Memory, Skill};

/// Counts the bytes live on the heap.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const QUERY: &str = "review pull request comments";

fn sizes() -> Vec<usize> {
    catalogs::sizes("1000,10000,100000")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn local(dir: &Path) -> Catalog {
    catalog_of(Local::each(dir))
}

fn catalog_of(local: Local) -> Catalog {
    Catalog::builder()
        .provider(local)
        .timeout(Duration::from_secs(600))
        .build()
}

/// Waits for the background build, looking every 0.2 ms (a coarser look
/// would add up to its period to a build of a few milliseconds).
fn wait_for_bodies(catalog: &Catalog) {
    while catalog.search_stats().bodies_pending > 0 {
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Mean size of the SKILL.md files, and of their frontmatter.
fn file_sizes(catalog_dir: &Path) -> (f64, f64) {
    let (mut files, mut total, mut front) = (0usize, 0usize, 0usize);
    for kit in std::fs::read_dir(catalog_dir).expect("read_dir").flatten() {
        let Ok(skills) = std::fs::read_dir(kit.path()) else {
            continue;
        };
        for skill in skills.flatten() {
            let Ok(text) = std::fs::read_to_string(skill.path().join("SKILL.md")) else {
                continue;
            };
            files += 1;
            total += text.len();
            front += text[3..].find("\n---").map_or(text.len(), |end| end + 7);
        }
    }
    (
        total as f64 / files.max(1) as f64,
        front as f64 / files.max(1) as f64,
    )
}

/// The one-shot figures: cold query, first search, full build, memory.
fn report(rt: &tokio::runtime::Runtime, n: usize, dir: &Path) {
    // The median of five (one is noisy). Not watched: the query is the
    // same (a watch is set up after a first query), and no watch of it is
    // taken down while the build runs.
    let mut colds: Vec<Duration> = (0..5)
        .map(|_| {
            let started = Instant::now();
            let cold = catalog_of(Local::each(dir).watch(false));
            black_box(rt.block_on(cold.snapshot()));
            started.elapsed()
        })
        .collect();
    colds.sort();
    let cold_query = colds[colds.len() / 2];

    // Watched, as an agent's catalog is, the watch set up before the build
    // starts (setting it up walks the folder once, on a thread of its own:
    // its cost is the watch's, not the index's); its events for the bodies
    // the build opens are counted in the build.
    // The median of three builds (one above 10,000 skills), each of a new
    // catalog; the memory of the last.
    let mut builds = Vec::new();
    let (mut first_search, mut index, mut stats) = (Duration::ZERO, 0, Default::default());
    for _ in 0..if n > 10_000 { 1 } else { 3 } {
        let provider = Local::each(dir);
        let catalog = catalog_of(provider.clone());
        let snapshot = rt.block_on(catalog.snapshot());
        provider.wait_for_watch(Duration::from_secs(600));
        let before = LIVE.load(Ordering::Relaxed);
        let started = Instant::now();
        black_box(rt.block_on(catalog.search_snapshot(&snapshot, QUERY, 10)));
        first_search = started.elapsed();
        let start_build = Instant::now();
        wait_for_bodies(&catalog);
        builds.push(first_search + start_build.elapsed());
        index = LIVE.load(Ordering::Relaxed).saturating_sub(before);
        stats = catalog.search_stats();
    }
    builds.sort();
    let build = builds[builds.len() / 2];
    let (file, frontmatter) = file_sizes(dir);
    let per_skill = index as f64 / n as f64;
    println!(
        "search/{n}: cold catalog query {:.1} ms; first search {:.1} ms; full build (bodies read) {:.1} ms ({:.2}x the cold query); \
         index {:.0} B/skill ({:.2}x the mean SKILL.md of {:.0} B; frontmatter {:.0} B); stats: {:?}",
        cold_query.as_secs_f64() * 1e3,
        first_search.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e3,
        build.as_secs_f64() / cold_query.as_secs_f64(),
        per_skill,
        per_skill / file,
        file,
        frontmatter,
        stats,
    );
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("search");
    group.sample_size(20);
    for n in sizes() {
        let dir = catalogs::catalog_dir(n);
        report(&rt, n, &dir);

        let catalog = local(&dir);
        let snapshot = rt.block_on(catalog.snapshot());
        rt.block_on(catalog.search_snapshot(&snapshot, QUERY, 10));
        wait_for_bodies(&catalog);
        group.bench_with_input(BenchmarkId::new("warm", n), &n, |b, _| {
            b.iter(|| black_box(rt.block_on(catalog.search_snapshot(&snapshot, QUERY, 10))))
        });
        // A query of 1 MB (words that miss by a typo or two, each a scan
        // of the dictionary): cut to its first words, it costs what they do.
        let huge = "revieww pul requst commnets ".repeat(40_000);
        group.bench_with_input(BenchmarkId::new("query_1mb", n), &n, |b, _| {
            b.iter(|| black_box(rt.block_on(catalog.search_snapshot(&snapshot, &huge, 10))))
        });

        let mut version = 0u64;
        // Made on first use: criterion calls the closure only when the
        // filter selects this bench (copying 100,000 skills takes minutes).
        let mut memory_catalog = None;
        group.bench_with_input(BenchmarkId::new("incremental", n), &n, |b, _| {
            let (memory, catalog, changed) =
                memory_catalog.get_or_insert_with(|| memory_copy(&rt, &snapshot, n));
            b.iter_custom(|iterations| {
                let mut spent = Duration::ZERO;
                for _ in 0..iterations {
                    version += 1;
                    let skill = Skill::new(
                        changed.name.clone(),
                        format!("{} (version {version})", changed.description),
                    )
                    .with_body("Review the pull request comments one by one.");
                    memory.put(skill);
                    let snapshot = rt.block_on(catalog.snapshot());
                    // `limit` 0: the update alone (the query is `warm`).
                    let started = Instant::now();
                    black_box(rt.block_on(catalog.search_snapshot(&snapshot, QUERY, 0)));
                    spent += started.elapsed();
                }
                spent
            })
        });
    }
    group.finish();
}

/// The skills of `snapshot` in Memory (kits of 1,000 as generated), the
/// catalog over it (indexed), and the skill the bench changes.
fn memory_copy(
    rt: &tokio::runtime::Runtime,
    snapshot: &skillkit::Snapshot,
    n: usize,
) -> (Memory, Catalog, Arc<Skill>) {
    let memory = Memory::new();
    for kit in snapshot.kits() {
        let mut copy = Kit::new(kit.name.clone());
        for skill in &kit.skills {
            let body = skill
                .body
                .read()
                .map(|b| b.into_owned())
                .unwrap_or_default();
            copy.insert_skill(Skill::clone(skill).with_body(body));
        }
        memory.put_kit(copy);
    }
    let catalog = Catalog::builder().provider(memory.clone()).build();
    let changed: Arc<Skill> = snapshot.skills().nth(n / 2).cloned().expect("a skill");
    rt.block_on(catalog.search_snapshot(&rt.block_on(catalog.snapshot()), QUERY, 10));
    wait_for_bodies(&catalog);
    (memory, catalog, changed)
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
