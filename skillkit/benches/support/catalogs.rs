//! The generated catalogs the scale benches run on: `bench/gen-catalog.py`
//! (called here; nothing generated is committed) writes them into
//! `target/bench-catalogs/<n>`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The generated catalog of `n` skills (made now when missing).
pub fn catalog_dir(n: usize) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("python3")
        .arg(root.join("bench/gen-catalog.py"))
        .arg(n.to_string())
        .arg(root.join(format!("target/bench-catalogs/{n}")))
        .output()
        .expect("run bench/gen-catalog.py");
    assert!(out.status.success(), "gen-catalog.py failed");
    PathBuf::from(String::from_utf8(out.stdout).expect("path").trim())
}

/// The sizes to run: `SKILLKIT_BENCH_SIZES` (numbers, comma-separated), else
/// `default`.
pub fn sizes(default: &str) -> Vec<usize> {
    std::env::var("SKILLKIT_BENCH_SIZES")
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|n| n.trim().parse().expect("SKILLKIT_BENCH_SIZES: numbers"))
        .collect()
}
