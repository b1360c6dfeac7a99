//! The workspace as crates.io and cargo see it (`cargo metadata`, `cargo
//! package --list`, offline): the published crates carry what crates.io shows
//! and nothing of the tests' or benches' data; every crate takes the
//! workspace's lints; cargo finds every integration test by itself, and no
//! test file compiles another file in by `#[path]`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The workspace root: this crate's parent folder.
fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("cargo prints UTF-8")
}

/// The workspace's own packages.
fn packages() -> Vec<Value> {
    let metadata: Value = serde_json::from_str(&cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]))
    .expect("cargo metadata prints JSON");
    metadata["packages"]
        .as_array()
        .expect("a package list")
        .clone()
}

fn dir(package: &Value) -> PathBuf {
    Path::new(package["manifest_path"].as_str().expect("a manifest path"))
        .parent()
        .expect("a manifest has a folder")
        .to_path_buf()
}

fn name(package: &Value) -> &str {
    package["name"].as_str().expect("a package name")
}

/// `publish = false` reads as an empty registry list.
fn published(package: &Value) -> bool {
    package["publish"] != serde_json::json!([])
}

fn manifest(package: &Value) -> String {
    std::fs::read_to_string(dir(package).join("Cargo.toml")).expect("read Cargo.toml")
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_facade_is_published_under_a_free_name_and_keeps_the_library_name_skillkit() {
    let packages = packages();
    let facade = packages
        .iter()
        .find(|package| dir(package) == workspace().join("skillkit"))
        .expect("the facade crate");
    // `skillkit` on crates.io is an unrelated crate (0.1.5, a SKILL.md linter).
    assert_ne!(name(facade), "skillkit", "the name is taken on crates.io");
    assert!(published(facade));
    let lib = facade["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .find(|target| target["kind"] == serde_json::json!(["lib"]))
        .expect("the facade has a library");
    assert_eq!(lib["name"], "skillkit", "`use skillkit::…` keeps working");
}

#[test]
fn every_published_crate_carries_what_crates_io_shows() {
    let packages = packages();
    let published: Vec<_> = packages.iter().filter(|p| published(p)).collect();
    let mut names: Vec<_> = published.iter().map(|p| name(p)).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "skill-kit",
            "skillkit-cli",
            "skillkit-macros",
            "skillkit-parser"
        ]
    );
    for package in published {
        let name = name(package);
        for field in [
            "description",
            "license",
            "repository",
            "readme",
            "rust_version",
        ] {
            assert!(
                package[field].as_str().is_some_and(|v| !v.is_empty()),
                "{name} has no {field}"
            );
        }
        let readme = dir(package).join(package["readme"].as_str().unwrap_or_default());
        assert!(readme.is_file(), "{name}'s readme {readme:?} is missing");
        for list in ["keywords", "categories"] {
            let count = package[list].as_array().map_or(0, Vec::len);
            assert!(
                (1..=5).contains(&count),
                "{name} has {count} {list}; crates.io takes 1 to 5"
            );
        }
    }
}

#[test]
fn packages_hold_no_tests_fixtures_or_bench_data() {
    for package in packages().iter().filter(|p| published(p)) {
        let name = name(package);
        let files = cargo(&[
            "package",
            "--list",
            "--offline",
            "--allow-dirty",
            "-p",
            name,
        ]);
        for file in files.lines() {
            assert!(
                !["tests/", "benches/", "fuzz/", "fixtures/"]
                    .iter()
                    .any(|dir| file.starts_with(dir)),
                "the {name} package holds {file}"
            );
        }
        assert!(
            files.lines().any(|file| file == "README.md"),
            "the {name} package has no README.md"
        );
    }
}

#[test]
fn every_crate_takes_the_workspace_lints() {
    let root = std::fs::read_to_string(workspace().join("Cargo.toml")).expect("root manifest");
    assert!(
        root.contains("[workspace.lints.rust]"),
        "no workspace lints"
    );
    for package in packages() {
        let manifest = manifest(&package);
        assert!(
            manifest.contains("[lints]\nworkspace = true"),
            "{} does not take the workspace lints",
            name(&package)
        );
        assert!(
            !manifest.contains("[lints.rust]") && !manifest.contains("[lints.clippy]"),
            "{} lists lints of its own",
            name(&package)
        );
    }
}
/// A `[[test]]` list is a file cargo would have found anyway, or one it
/// silently never runs when the entry is forgotten: only a target that needs
/// `required-features` is listed.
#[test]
fn cargo_finds_every_integration_test() {
    for package in packages() {
        let name = name(&package);
        let manifest = manifest(&package);
        for entry in manifest.split("[[test]]").skip(1) {
            let entry = entry.split("\n[").next().unwrap_or_default();
            assert!(
                entry.contains("required-features"),
                "{name} lists a test target cargo finds by itself:{entry}"
            );
        }
        let targets: Vec<PathBuf> = package["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .filter(|target| target["kind"] == serde_json::json!(["test"]))
            .map(|target| PathBuf::from(target["src_path"].as_str().expect("a source path")))
            .collect();
        let tests = dir(&package).join("tests");
        let Ok(entries) = std::fs::read_dir(&tests) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let file = if path.is_dir() {
                path.join("main.rs")
            } else {
                path.clone()
            };
            if file.extension().is_some_and(|e| e == "rs") && file.is_file() {
                assert!(
                    targets.contains(&file),
                    "{name}: {path:?} is no test target"
                );
            }
        }
    }
}

/// Helpers live in one module per test crate (or in `skillkit-tests`'s
/// library), compiled once, not into every test binary through `#[path]`.
#[test]
fn no_test_file_compiles_another_file_in_by_path() {
    for package in packages() {
        for file in rust_files(&dir(&package).join("tests")) {
            let text = std::fs::read_to_string(&file).expect("read a test file");
            assert!(
                !text
                    .lines()
                    .any(|line| line.trim_start().starts_with("#[path")),
                "{file:?} uses #[path]"
            );
        }
    }
}
