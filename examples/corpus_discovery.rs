//! Discovers every skill under a directory of kits, cold (a fresh provider each
//! time, nothing cached), and prints how many were found and how long one
//! discovery took (median of N, measured in-process). `bench/peers/discovery.py`
//! runs it beside the Python peers.
//!
//! ```text
//! cargo run --release -p skillkit-examples --example corpus_discovery -- tests/fixtures/corpus 50
//! ```

use std::time::{Duration, Instant};

use skillkit::{Catalog, Local};

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .unwrap_or_else(|| "tests/fixtures/corpus".to_owned());
    let runs: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(50);
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let mut found = 0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let catalog = Catalog::builder().provider(Local::each(&dir)).build();
        found = catalog.snapshot().await.skills().count();
        times.push(start.elapsed());
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "{{\"skills\": {found}, \"median_ms\": {:.3}, \"runs\": {}}}",
        median.as_secs_f64() * 1e3,
        times.len()
    );
}
