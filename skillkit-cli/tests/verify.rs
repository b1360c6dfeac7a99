//! `skillkit verify` through the real binary: every skill ok (exit 0); an
//! edited, an added and a removed file, a missing skill and an unlocked one
//! named (exit 1), also as JSON; an unreadable lock (exit 2); a lock path
//! that a symbolic link leads out of the project (`outside`, exit 1), and
//! `remove` through it deleting nothing.

use std::path::Path;
use std::process::Command;

use skillkit::lockfile::Lockfile;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn verify(project: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .current_dir(project)
        .arg("verify")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn verify_says_what_changed_and_exits_accordingly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in ["greet", "plan"] {
        write(
            &root.join(format!(".agents/skills/{name}/SKILL.md")),
            &format!("---\nname: {name}\ndescription: Does {name}.\n---\nDo it.\n"),
        );
    }
    write(
        &root.join(".agents/skills/greet/scripts/hello.sh"),
        "echo hi\n",
    );
    let mut lock = Lockfile::new();
    for name in ["greet", "plan"] {
        lock.pin(
            name,
            &format!("acme/skills/{name}"),
            Some("v1"),
            None,
            root,
            &format!(".agents/skills/{name}"),
        )
        .unwrap();
    }
    lock.write(&root.join("skillkit.lock.json")).unwrap();

    let (code, stdout, _) = verify(root, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(stdout, "ok greet\nok plan\n");

    write(&root.join(".agents/skills/greet/SKILL.md"), "edited");
    write(
        &root.join(".agents/skills/greet/scripts/more.sh"),
        "curl x\n",
    );
    std::fs::remove_file(root.join(".agents/skills/greet/scripts/hello.sh")).unwrap();
    std::fs::remove_dir_all(root.join(".agents/skills/plan")).unwrap();
    write(
        &root.join(".claude/skills/stray/SKILL.md"),
        "---\nname: stray\ndescription: Stray.\n---\n",
    );
    let (code, stdout, _) = verify(root, &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(
        stdout,
        "modified greet; changed: SKILL.md; added: scripts/more.sh; removed: scripts/hello.sh\n\
         missing plan\n\
         unlocked .claude/skills/stray\n"
    );

    let (code, stdout, _) = verify(root, &["--json"]);
    assert_eq!(code, Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(json["skills"][0]["name"], "greet");
    assert_eq!(json["skills"][0]["status"], "modified");
    assert_eq!(json["skills"][0]["changed"][0], "SKILL.md");
    assert_eq!(json["skills"][1]["status"], "missing");
    assert_eq!(json["skills"][2]["status"], "unlocked");

    std::fs::write(root.join("skillkit.lock.json"), "not json").unwrap();
    let (code, _, stderr) = verify(root, &[]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("not a SkillKit lockfile"), "{stderr}");
}

/// A hostile project, through the binary (as the user running it; root
/// here): a lock naming folders outside the project (`..`, an absolute
/// path) reads nothing there and says `outside`; a FIFO put in a pinned
/// file's place does not hang `verify`; a link to a secret put in a pinned
/// file's place is a change, and the secret is not printed.
#[test]
fn a_hostile_lock_or_folder_reads_nothing_outside_and_never_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    write(
        &root.join(".agents/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greet.\n---\nHi.\n",
    );
    write(&root.join(".agents/skills/greet/notes.md"), "notes\n");
    write(&dir.path().join("outside/SKILL.md"), "outside\n");
    let mut lock = Lockfile::new();
    lock.pin(
        "greet",
        "acme/skills/greet",
        None,
        None,
        &root,
        ".agents/skills/greet",
    )
    .unwrap();
    let mut text = lock.to_text();
    // Entries a hostile lock could hold, written by hand.
    let entry = |path: &str| {
        format!(
            r#""{path}": {{"source": "x", "path": "{path}", "files": {{"SKILL.md": {{"digest": "sha256:00", "size": 8}}}}, "digest": "sha256:00"}},"#
        )
    };
    text = text.replacen(
        "\"skills\": {",
        &format!("\"skills\": {{{}{}", entry("../outside"), entry("/etc")),
        1,
    );
    std::fs::write(root.join("skillkit.lock.json"), text).unwrap();
    #[cfg(unix)]
    {
        let notes = root.join(".agents/skills/greet/notes.md");
        std::fs::remove_file(&notes).unwrap();
        let status = Command::new("mkfifo").arg(&notes).status().unwrap();
        assert!(status.success());
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "TOP-SECRET\n").unwrap();
        let skill_md = root.join(".agents/skills/greet/SKILL.md");
        std::fs::remove_file(&skill_md).unwrap();
        std::os::unix::fs::symlink(&secret, &skill_md).unwrap();
    }
    let (code, stdout, stderr) = verify(&root, &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("outside ../outside; "), "{stdout}");
    assert!(stdout.contains("outside /etc; "), "{stdout}");
    #[cfg(unix)]
    assert!(
        stdout.contains("modified greet; changed: SKILL.md, notes.md"),
        "{stdout}"
    );
    assert!(!stdout.contains("TOP-SECRET") && !stderr.contains("TOP-SECRET"));
}

/// A cloned project ships `.agents -> ../outside` and a lock pinning
/// `.agents/victim`: `verify` says `outside` (and why) rather than reading
/// or hashing what lies beyond, and `remove` refuses rather than delete it.
#[cfg(unix)]
#[test]
fn a_lock_path_led_out_by_a_link_is_outside_and_not_removed() {
    let top = tempfile::tempdir().unwrap();
    let (root, outside) = (top.path().join("project"), top.path().join("outside"));
    write(&outside.join("victim/data.txt"), "precious\n");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink("../outside", root.join(".agents")).unwrap();
    write(
        &root.join("skillkit.lock.json"),
        r#"{"version": 1, "skills": {"greet": {"source": "acme/skills", "ref": "v1", "folder": "skills/greet", "path": ".agents/victim"}}}"#,
    );
    let (code, stdout, _) = verify(&root, &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.starts_with("outside greet; "), "{stdout}");
    assert!(stdout.contains("symbolic link"), "{stdout}");
    let (_, json, _) = verify(&root, &["--json"]);
    assert!(json.contains(r#""status":"outside""#), "{json}");
    assert!(
        json.contains(r#""reason":"`.agents/victim` leads out of the project through the symbolic link `.agents`"#),
        "{json}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .current_dir(&root)
        .args(["remove", "greet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("leads out of the project"), "{stderr}");
    assert!(
        outside.join("victim/data.txt").is_file(),
        "deleted through the link"
    );
}
