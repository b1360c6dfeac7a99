//! The floors the catalog benches are measured against: a plain walk of the
//! tree that reads (or only stats) every file, on one thread.

use std::path::Path;

/// Walks `dir`, reading every file (`read`) or stat-ing it; returns the bytes
/// seen, so the work cannot be optimised away.
pub fn walk(dir: &Path, read: bool) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let entry = entry.expect("entry");
        let path = entry.path();
        if entry.file_type().expect("file type").is_dir() {
            total += walk(&path, read);
        } else if read {
            total += std::fs::read(&path).expect("read").len() as u64;
        } else {
            total += std::fs::metadata(&path).expect("stat").len();
        }
    }
    total
}
