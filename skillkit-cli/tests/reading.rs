//! Reading skills never blocks and never hides: the `skillkit` binary, run for
//! real on kits holding a FIFO named `SKILL.md`, skills deeper than the depth
//! limit, folders whose names are not UTF-8 and folders it cannot read.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

/// The binary with a failure guard: a command that blocks fails its test
/// after a minute instead of hanging the suite (not a timing assertion).
fn skillkit(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .timeout(Duration::from_secs(60))
        .env("HOME", dir.join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.join("cache"))
        .env_remove("RUST_LOG");
    command
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name}.\n")
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(command: &mut Command, what: &str) -> Run {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e} (a FIFO must never block a command)"));
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `mkdir -p k/skills/a && mkfifo k/skills/a/SKILL.md && skillkit list k`:
/// every verb answers, and says the file is a FIFO.
#[test]
fn a_fifo_named_skill_md_blocks_no_command() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(&kit.join("skills/good/SKILL.md"), &skill("good"));
    let fifo = kit.join("skills/a/SKILL.md");
    mkfifo(&fifo);
    let kit_arg = kit.to_str().unwrap();
    let unreadable = format!(
        "{}: cannot read it: is a FIFO (named pipe), not a file",
        fifo.display()
    );
    let said = format!(
        "{}: error: is a FIFO (named pipe), not a file",
        fifo.display()
    );

    let list = run(skillkit(dir.path()).args(["list", kit_arg]), "list");
    assert_eq!(list.code, Some(0), "{}", list.stderr);
    assert!(list.stdout.contains("skill k:good"), "{}", list.stdout);
    assert!(list.stdout.contains(&said), "{}", list.stdout);

    let prompt = run(
        skillkit(dir.path()).args(["to-prompt", kit_arg]),
        "to-prompt",
    );
    assert_eq!(prompt.code, Some(0), "{}", prompt.stderr);
    assert!(prompt.stdout.contains("k:good"), "{}", prompt.stdout);
    assert!(prompt.stderr.contains(&said), "{}", prompt.stderr);

    let show = run(
        skillkit(dir.path()).args(["show", "k:good", kit_arg]),
        "show",
    );
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    assert!(show.stdout.contains("Do good."), "{}", show.stdout);

    // `validate` on the kit, on the skill folder and on the file itself.
    for target in [kit.clone(), kit.join("skills/a"), fifo.clone()] {
        let validate = run(
            skillkit(dir.path()).args(["validate", target.to_str().unwrap()]),
            "validate",
        );
        // An unreadable SKILL.md is an I/O error (2), said on stderr.
        assert_eq!(validate.code, Some(2), "{target:?}: {}", validate.stderr);
        assert!(
            validate.stderr.contains(&unreadable),
            "{target:?}: {}",
            validate.stderr
        );
    }
}

/// A skill deeper than the depth limit and a folder whose name is not UTF-8
/// are named by a warning in `list` and in `validate`, which still exits by
/// its verdict (0: every skill it read is valid).
#[test]
fn list_and_validate_say_what_they_skipped() {
    use std::os::unix::ffi::OsStrExt;

    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(&kit.join("skills/good/SKILL.md"), &skill("good"));
    let mut deep = kit.join("skills");
    for i in 0..8 {
        deep.push(format!("d{i}"));
    }
    write(&deep.join("SKILL.md"), &skill("d7"));
    let odd = kit
        .join("skills")
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    write(&odd.join("SKILL.md"), &skill("cafe"));
    let deep_file = deep.join("SKILL.md");
    let deep_warning = format!(
        "{}: warning: skill not loaded: it is deeper than 8 folders below the kit",
        deep_file.display()
    );
    let odd_warning = format!(
        "{}: warning: skipped: its name is not UTF-8",
        odd.to_string_lossy()
    );
    let kit_arg = kit.to_str().unwrap();

    let list = run(skillkit(dir.path()).args(["list", kit_arg]), "list");
    assert_eq!(list.code, Some(0), "{}", list.stderr);
    assert!(list.stdout.contains(&deep_warning), "{}", list.stdout);
    assert!(list.stdout.contains(&odd_warning), "{}", list.stdout);

    let validate = run(skillkit(dir.path()).args(["validate", kit_arg]), "validate");
    assert_eq!(validate.code, Some(0), "{}", validate.stderr);
    assert!(
        validate.stderr.contains(&deep_warning),
        "{}",
        validate.stderr
    );
    assert!(
        validate.stderr.contains(&odd_warning),
        "{}",
        validate.stderr
    );
}

/// The `setpriv` command that runs the binary as user `nobody` (65534) with no
/// capabilities, when this test runs as root: root reads a folder of mode 000,
/// so only another user can show what an unreadable folder does.
fn unprivileged() -> Option<Vec<String>> {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0");
    if !root {
        return Some(Vec::new());
    }
    let found = std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    found.then(|| {
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
        ]
        .map(str::to_owned)
        .to_vec()
    })
}

/// An unreadable folder is named by a warning in `list` and in `validate`
/// (which still exits 0 for the valid skill it did read).
#[test]
fn an_unreadable_folder_is_said() {
    use std::os::unix::fs::PermissionsExt;

    let Some(prefix) = unprivileged() else {
        panic!(
            "running as root without `setpriv`, so no process can be denied a folder: \
             install util-linux (`apt-get install util-linux`)"
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(&kit.join("skills/good/SKILL.md"), &skill("good"));
    let closed = kit.join("skills/closed");
    write(&closed.join("SKILL.md"), &skill("closed"));
    for folder in [
        dir.path(),
        &kit,
        &kit.join("skills"),
        &kit.join("skills/good"),
    ] {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(
        kit.join("skills/good/SKILL.md"),
        PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
    let warning = format!(
        "{}: warning: folder skipped, it cannot be read",
        closed.display()
    );
    let command = |verb: &str| {
        let binary = PathBuf::from(env!("CARGO_BIN_EXE_skillkit"));
        let mut words: Vec<String> = prefix.clone();
        words.push(binary.display().to_string());
        let mut command = Command::new(&words[0]);
        command
            .args(&words[1..])
            .args([verb, kit.to_str().unwrap()])
            .timeout(Duration::from_secs(60))
            .env("HOME", dir.path().join("home"))
            .env("SKILLKIT_CACHE_DIR", dir.path().join("cache"));
        command
    };
    let list = run(&mut command("list"), "list");
    assert_eq!(list.code, Some(0), "{}", list.stderr);
    assert!(list.stdout.contains("skill k:good"), "{}", list.stdout);
    assert!(list.stdout.contains(&warning), "{}", list.stdout);
    let validate = run(&mut command("validate"), "validate");
    assert_eq!(validate.code, Some(0), "{}", validate.stderr);
    assert!(validate.stderr.contains(&warning), "{}", validate.stderr);
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A kit folder the command cannot read is a provider that failed, not a
/// file diagnostic: `list` and `to-prompt` say on stderr which provider was
/// skipped and why, `list --json` puts it in `failures` (not in
/// `diagnostics`), the other kit is still listed, and `list` exits 2.
#[test]
fn an_unreadable_kit_folder_is_a_skipped_provider() {
    use std::os::unix::fs::PermissionsExt;

    let Some(prefix) = unprivileged() else {
        panic!(
            "running as root without `setpriv`, so no process can be denied a folder: \
             install util-linux (`apt-get install util-linux`)"
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    write(&open.join("skills/good/SKILL.md"), &skill("good"));
    let closed = dir.path().join("closed");
    write(&closed.join("skills/hidden/SKILL.md"), &skill("hidden"));
    for folder in [
        dir.path(),
        &open,
        &open.join("skills"),
        &open.join("skills/good"),
    ] {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(
        open.join("skills/good/SKILL.md"),
        PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
    let command = |args: &[&str]| {
        let binary = PathBuf::from(env!("CARGO_BIN_EXE_skillkit"));
        let mut words: Vec<String> = prefix.clone();
        words.push(binary.display().to_string());
        let mut command = Command::new(&words[0]);
        command
            .args(&words[1..])
            .args(args)
            .args([open.to_str().unwrap(), closed.to_str().unwrap()])
            .timeout(Duration::from_secs(60))
            .env("HOME", dir.path().join("home"))
            .env("SKILLKIT_CACHE_DIR", dir.path().join("cache"))
            .env_remove("RUST_LOG");
        command
    };
    let warning = format!(
        "warning: provider `local:{}` was skipped for this query: cannot read kit directory `{}`",
        closed.display(),
        closed.display()
    );

    // Exit 2, as `list --help` says of a PATH that cannot be read; the
    // rest is listed all the same.
    let list = run(&mut command(&["list"]), "list");
    assert_eq!(list.code, Some(2), "{}", list.stderr);
    assert!(list.stdout.contains("skill open:good"), "{}", list.stdout);
    assert!(list.stderr.contains(&warning), "{}", list.stderr);
    assert!(
        list.stderr.contains("check that it exists and is readable"),
        "{}",
        list.stderr
    );
    assert!(!list.stdout.contains("was skipped"), "{}", list.stdout);

    let json = run(&mut command(&["list", "--json"]), "list --json");
    assert_eq!(json.code, Some(2), "{}", json.stderr);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(value["kits"][0]["name"], "open", "{value}");
    assert_eq!(value["diagnostics"], serde_json::json!([]), "{value}");
    let failures = value["failures"].as_array().expect("a `failures` array");
    assert_eq!(failures.len(), 1, "{value}");
    assert_eq!(
        failures[0]["provider"],
        format!("local:{}", closed.display())
    );
    assert!(
        failures[0]["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("cannot read kit directory")),
        "{value}"
    );

    let prompt = run(&mut command(&["to-prompt"]), "to-prompt");
    assert_eq!(prompt.code, Some(0), "{}", prompt.stderr);
    assert!(prompt.stdout.contains("open:good"), "{}", prompt.stdout);
    assert!(prompt.stderr.contains(&warning), "{}", prompt.stderr);

    let show = run(&mut command(&["show", "hidden"]), "show");
    assert_eq!(show.code, Some(1), "{}", show.stderr);
    assert!(show.stderr.contains(&warning), "{}", show.stderr);
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
}
