//! `#[derive(Kit)]` compile tests: kits that build, and every compile error with
//! its exact message (`tests/ui/fail/*.stderr`).
//!
//! trybuild builds the cases in its own crate under the target directory, whose
//! `CARGO_MANIFEST_DIR` is that crate's folder; the kits the cases name
//! (`fixtures/…`, `ui/kits/…`) are copied there first, so `path = "…"` resolves
//! as it does in this package and error messages show these same relative paths.

use std::fs;
use std::path::Path;

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

/// Puts `dir` (relative to this package) at the same place in trybuild's crate.
fn stage(project: &Path, dir: &str) {
    let target = project.join(dir);
    if target.exists() {
        fs::remove_dir_all(&target).unwrap();
    }
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), &target);
}

#[test]
fn ui() {
    // trybuild's crate lives in `<target dir>/tests/trybuild/<package name>`.
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let project = target_dir
        .join("tests/trybuild")
        .join(env!("CARGO_PKG_NAME"));
    stage(&project, "fixtures/kits");
    stage(&project, "ui/kits");

    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
    cases.compile_fail("ui/fail/*.rs");
}
