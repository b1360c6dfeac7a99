//! The exit codes `--help` promises (0 ok, 1 the work failed, 2 a usage or
//! I/O error), for every kind of verb, through the real binary: the verdict
//! survives a closed pipe, an invalid source is a usage error, an unusable
//! cache and an unreadable `SKILL.md` are I/O errors, each said in one line.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn skillkit(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().unwrap()
}

/// The binary, with a cache and a home of its own, and a GitHub API that
/// refuses connections (nothing here may reach the network).
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir)
        .args(args)
        .env("HOME", dir.join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.join("cache"))
        .env("GITHUB_API_URL", "http://127.0.0.1:1")
        .env_remove("GITHUB_TOKEN");
    command
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// One line on stderr, `error: …`, holding `words`.
fn assert_one_error(out: &Output, words: &str) {
    let text = stderr(out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("error: "), "{text}");
    assert!(text.contains(words), "{text}");
}

/// `skillkit validate --json BAD | head -1`: the reader leaves after the
/// first line, and the exit code is still 1 (invalid), as without a pipe.
#[test]
fn the_verdict_survives_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("kit");
    // Output well over a pipe's buffer, so writing it must meet the close.
    for n in 0..1000 {
        write(
            &kit.join(format!("skill-{n}/SKILL.md")),
            &format!("---\nname: skill-{n}\ndescription: d\nauthor: someone\n---\n"),
        );
    }
    for args in [&["validate", "--json", "kit"][..], &["validate", "kit"][..]] {
        let mut child = command(dir.path(), args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 16];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        // The read end is closed here, with most of the output unread.
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
}

#[test]
fn an_invalid_source_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    for verb in ["import", "forget", "refresh"] {
        let out = skillkit(dir.path(), &[verb, "../etc"]);
        assert_eq!(out.status.code(), Some(2), "{verb}: {out:?}");
        assert_one_error(&out, "invalid source `../etc`");
    }
}

/// `--cache-dir` under a regular file cannot be created: exit 2, and the
/// message names the command's own knobs.
#[test]
fn an_unusable_cache_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("file"), "not a folder");
    let cache = dir.path().join("file/cache");
    let cache = cache.to_str().unwrap();
    for args in [
        &["import", "obra/superpowers", "--cache-dir", cache][..],
        &["refresh", "obra/superpowers", "--cache-dir", cache][..],
        &["refresh", "--cache-dir", cache][..],
        &["forget", "obra/superpowers", "--cache-dir", cache][..],
        &["list", "--github", "--cache-dir", cache][..],
    ] {
        let out = skillkit(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert_one_error(&out, "cannot use the cache at");
        let text = stderr(&out);
        assert!(
            text.contains("--cache-dir") && text.contains("SKILLKIT_CACHE_DIR"),
            "{text}"
        );
        assert!(!text.contains("`cache_dir`"), "{text}");
    }
}

/// A `SKILL.md` that cannot be read as a file. The tests run as root, for
/// whom permissions do not stop a read, so "unreadable" is what stops one
/// for anyone: a `SKILL.md` that is a folder, or a link to nothing. It is an
/// I/O error (2), not an invalid skill (1) nor a missing one.
#[test]
fn an_unreadable_skill_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("folder/a/SKILL.md")).unwrap();
    std::fs::create_dir_all(dir.path().join("dangling/b")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        dir.path().join("nowhere"),
        dir.path().join("dangling/b/SKILL.md"),
    )
    .unwrap();
    let mut cases = vec!["folder/a", "folder/a/SKILL.md"];
    if cfg!(unix) {
        cases.extend(["dangling/b", "dangling/b/SKILL.md"]);
    }
    for path in cases {
        let out = skillkit(dir.path(), &["validate", path]);
        assert_eq!(out.status.code(), Some(2), "{path}: {out:?}");
        let text = stderr(&out);
        assert!(text.contains("cannot read"), "{path}: {text}");
        assert!(text.contains("SKILL.md"), "{path}: {text}");
    }
}

/// `refresh X` of a source never imported: one error line, as the README
/// promises, not the error and then a count of failures.
#[test]
fn refresh_of_one_source_says_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = skillkit(dir.path(), &["refresh", "obra/superpowers"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_one_error(&out, "`obra/superpowers` is not imported");
}

/// `serve --watch-interval` with a number that is no wait (negative, not a
/// number, infinite, or more seconds than a duration holds): exit 2, said in
/// one line, before anything is served.
#[test]
fn a_watch_interval_that_is_no_wait_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("kit/a/SKILL.md"),
        "---\nname: a\ndescription: Does a.\n---\nBody.\n",
    );
    for value in ["-1", "nan", "inf", "1e300"] {
        let flag = format!("--watch-interval={value}");
        let out = command(dir.path(), &["serve", &flag, "kit"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}: {out:?}");
        assert_one_error(&out, "--watch-interval");
    }
}

/// A count that must be 1 or more (`search --limit`, `eval --runs`,
/// `eval --jobs`) given as 0 or less: exit 2, said in one line naming the
/// flag, rather than quietly taken as 1.
#[test]
fn a_count_of_zero_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("kit/a/SKILL.md"),
        "---\nname: a\ndescription: Bakes bread.\n---\nBody.\n",
    );
    let cases: [&[&str]; 5] = [
        &["search", "--limit=0", "a", "kit"],
        &["search", "--limit=-1", "a", "kit"],
        &["eval", "--runs=0", "kit"],
        &["eval", "--jobs=0", "kit"],
        &["eval", "--runs=-3", "kit"],
    ];
    for args in cases {
        let out = command(dir.path(), args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        // clap's usage error: the first line says it all, then where to
        // read more.
        let text = stderr(&out);
        let first = text.lines().next().unwrap_or_default();
        let flag = args[1].split('=').next().unwrap();
        assert!(first.starts_with("error: "), "{text}");
        assert!(first.contains(flag), "{text}");
        assert!(first.contains("give a whole number, 1 or more"), "{text}");
    }
    // 1 is a count: the search runs and finds the skill.
    let out = command(dir.path(), &["search", "--limit=1", "bread", "kit"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("kit:a"),
        "{out:?}"
    );
}
