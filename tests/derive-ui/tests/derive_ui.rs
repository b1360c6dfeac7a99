//! `#[derive(Kit)]` compile tests: kits that build, and every compile error with
//! its exact message (`ui/fail/*.stderr`).
//!
//! trybuild builds the cases in its own crate under the target directory, whose
//! `CARGO_MANIFEST_DIR` is that crate's folder; the kits the cases name
//! (`fixtures/kits/…`, the integration tests' own, and `ui/kits/…`) are copied
//! there first, so `path = "…"` resolves in that folder and error messages show
//! these same relative paths.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Puts `from` (relative to this package) at `to` in trybuild's crate.
fn stage(project: &Path, from: &str, to: &str) {
    let target = project.join(to);
    if target.exists() {
        fs::remove_dir_all(&target).unwrap();
    }
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(from), &target);
}

/// The target directory, found as trybuild finds it (`cargo metadata`).
fn target_dir() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version=1"])
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo metadata failed");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    PathBuf::from(metadata["target_directory"].as_str().unwrap())
}

#[test]
fn ui() {
    // trybuild's crate lives in `<target dir>/tests/trybuild/<package name>`.
    let project = target_dir()
        .join("tests/trybuild")
        .join(env!("CARGO_PKG_NAME"));
    stage(&project, "../fixtures/kits", "fixtures/kits");
    stage(&project, "ui/kits", "ui/kits");

    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
    cases.compile_fail("ui/fail/*.rs");
}
