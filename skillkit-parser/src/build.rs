//! A one-line `build.rs` helper so Cargo rebuilds when a kit directory changes,
//! including when a NEW skill file appears.
//!
//! `#[derive(Kit)]` emits one `include_bytes!` per embedded file, so editing an
//! existing SKILL.md already rebuilds. Stable Rust cannot make a macro depend on
//! a directory, so a new skill folder is only seen if the build script asks Cargo
//! to watch the folder. Add this crate as a build-dependency (it is small: the
//! parser, without the runtime of `skillkit`):
//!
//! ```toml
//! [build-dependencies]
//! skillkit-parser = "0.1"
//! ```
//!
//! and a build script naming each embedded kit directory, as written in
//! `#[kit(path = "…")]`:
//!
//! ```text
//! // build.rs
//! fn main() {
//!     skillkit_parser::build::track("kits/files");
//! }
//! ```
//!
//! `bench/rebuild-test.sh` checks the whole chain on a real crate: an edited
//! SKILL.md, a new skill folder (also one moved in with old timestamps) and a
//! removed one all show in the next `cargo build`.
// The examples are build scripts, whose `fn main` is the point.
#![allow(clippy::needless_doctest_main)]

use std::path::Path;

/// Tells Cargo to rerun the build script, and so rebuild the crate, whenever
/// anything under `dir` (relative to the package root) changes: a file edited,
/// added or removed at any depth.
///
/// Call it from `build.rs` once per kit directory. Note that once a build script
/// prints any `rerun-if-changed` line, Cargo reruns it only for those paths.
///
/// ```no_run
/// skillkit_parser::build::track("kits/files");
/// ```
pub fn track(dir: impl AsRef<Path>) {
    let dir = dir.as_ref();
    println!("cargo::rerun-if-changed={}", dir.display());
    // Cargo scans a watched directory recursively for the newest mtime; listing
    // each sub-directory too makes a removal anywhere in the tree count as well.
    if let Ok(layout) = crate::KitLayout::scan(dir) {
        for file in layout.files() {
            if let Some(parent) = file.parent() {
                println!("cargo::rerun-if-changed={}", parent.display());
            }
        }
    }
}
