//! A FIFO, a socket, a device or a directory named like a skill file: never
//! read, never a hang, always reported as what it is.
//!
//! Its own test binary, and every call under a failure guard: a read that
//! blocks takes a thread of `Local`'s pool with it, and would hang any other
//! test of the same process that loads a kit.
#![cfg(unix)]

use skillkit::Local;
use skillkit_tests::{skill_md, write};

/// Runs `f` on a thread of its own and gives its answer, or fails the test if
/// it has not answered after a minute: a read that blocks must fail this test,
/// not hang the suite.
fn within_a_minute<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{what} blocked: a skill file must never block a reader"))
}

/// Makes a FIFO (named pipe) at `path`.
fn mkfifo(path: &std::path::Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A FIFO, a socket, a device and a directory named `SKILL.md` (or
/// `AGENT.md`, or an `agents/*.md`) are each reported as what they are, never
/// opened for a read that would block; the rest of the kit loads.
#[test]
fn special_files_named_like_skill_files_are_reported_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(
        kit.join("skills/good/SKILL.md"),
        skill_md("good", "Good.", "Fine."),
    );
    mkfifo(&kit.join("skills/fifo/SKILL.md"));
    mkfifo(&kit.join("AGENT.md"));
    mkfifo(&kit.join("agents/piped.md"));
    std::fs::create_dir_all(kit.join("skills/socket")).unwrap();
    let _socket =
        std::os::unix::net::UnixListener::bind(kit.join("skills/socket/SKILL.md")).unwrap();
    std::fs::create_dir_all(kit.join("skills/device")).unwrap();
    std::os::unix::fs::symlink("/dev/null", kit.join("skills/device/SKILL.md")).unwrap();
    std::fs::create_dir_all(kit.join("skills/folder/SKILL.md")).unwrap();
    std::fs::create_dir_all(kit.join("skills/dangling")).unwrap();
    std::os::unix::fs::symlink("../gone.md", kit.join("skills/dangling/SKILL.md")).unwrap();

    let local = Local::new(&kit);
    let kits = within_a_minute("Local::load", move || local.load()).expect("the kit loads");
    let kit_found = &kits[0];
    let names: Vec<&str> = kit_found.skills.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["k:good"]);
    assert!(kit_found.agent.is_none() && kit_found.agents.is_empty());
    let said_here = |file: &str, what: &str| {
        let found = kit_found
            .diagnostics
            .iter()
            .find(|d| d.path.as_deref() == Some(kit.join(file).as_path()))
            .unwrap_or_else(|| panic!("no diagnostic for {file}: {:?}", kit_found.diagnostics));
        assert!(found.message.contains(what), "{found}");
    };
    said_here(
        "skills/dangling/SKILL.md",
        "is a link to a file that does not exist",
    );
    let said = |file: &str, what: &str| {
        let found = kit_found
            .diagnostics
            .iter()
            .find(|d| d.path.as_deref() == Some(kit.join(file).as_path()))
            .unwrap_or_else(|| panic!("no diagnostic for {file}: {:?}", kit_found.diagnostics));
        assert!(
            found.message.contains(what) && found.message.contains("not a file"),
            "{found}"
        );
    };
    said("skills/fifo/SKILL.md", "is a FIFO (named pipe)");
    said("AGENT.md", "is a FIFO (named pipe)");
    said("agents/piped.md", "is a FIFO (named pipe)");
    said("skills/socket/SKILL.md", "is a socket");
    said("skills/device/SKILL.md", "is a device");
    said("skills/folder/SKILL.md", "is a directory");
}

/// Every function that reads a skill or agent file by path refuses a FIFO at
/// once, saying what it is: the parser's readers (the derive and `validate`
/// use them) and a body read at activation from a file that became a FIFO
/// after the query.
#[test]
fn a_body_whose_file_became_a_fifo_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    let file = kit.join("skills/a/SKILL.md");
    write(&file, skill_md("a", "A.", "Body."));
    let local = Local::new(&kit);
    let kits = within_a_minute("Local::load", move || local.load()).unwrap();
    let skill = kits[0].skills[0].clone();
    std::fs::remove_file(&file).unwrap();
    mkfifo(&file);
    let error = within_a_minute("Body::read", move || {
        skill.body.read().map(|b| b.into_owned()).unwrap_err()
    });
    assert!(
        error.to_string().contains("is a FIFO (named pipe)"),
        "{error}"
    );

    let path = file.clone();
    let error = within_a_minute("read_file", move || {
        skillkit::parser::read_file(&path).unwrap_err()
    });
    assert!(error.message.contains("is a FIFO (named pipe)"), "{error}");
    let path = file.clone();
    let error = within_a_minute("SkillDocument::read", move || {
        skillkit::parser::SkillDocument::read(&path).unwrap_err()
    });
    assert!(error.message.contains("is a FIFO (named pipe)"), "{error}");
    let path = file.clone();
    let problems = within_a_minute("validate::skill_dir", move || {
        skillkit::parser::validate::skill_dir(path.parent().unwrap())
    });
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].message.contains("is a FIFO (named pipe)"),
        "{problems:?}"
    );
}

/// A cloned project's lockfile that is no file (a FIFO, a link to
/// `/dev/zero`, a folder) is refused at once, saying what it is: `verify`
/// and `install` neither hang nor read without end.
#[test]
fn a_lockfile_that_is_no_file_is_refused_not_read() {
    use skillkit::lockfile::{LOCKFILE_NAME, Lockfile, Project};
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join(LOCKFILE_NAME);
    let cases: [(&str, &dyn Fn()); 3] = [
        ("a FIFO", &|| mkfifo(&lock)),
        ("a device", &|| {
            std::os::unix::fs::symlink("/dev/zero", &lock).unwrap()
        }),
        ("a directory", &|| std::fs::create_dir(&lock).unwrap()),
    ];
    for (what, make) in cases {
        make();
        let path = lock.clone();
        let read = within_a_minute("Lockfile::read", move || {
            Lockfile::read(&path).map(|_| ()).map_err(|e| e.to_string())
        });
        let error = read.expect_err(what);
        assert!(error.contains(&format!("is {what}")), "{what}: {error}");
        let root = dir.path().to_path_buf();
        let opened = within_a_minute("Project::open", move || Project::open(&root).is_err());
        assert!(opened, "{what}");
        match std::fs::symlink_metadata(&lock).unwrap().is_dir() {
            true => std::fs::remove_dir(&lock).unwrap(),
            false => std::fs::remove_file(&lock).unwrap(),
        }
    }
}

/// A session folder is the store's own, but a FIFO, a link or a device can
/// still be put there: each is refused, saying what it is, never opened for
/// a read or a write that would wait for its other end, never followed.
#[test]
fn a_session_folder_with_special_files_never_hangs() {
    use skillkit::agent::session::{FileSessionStore, SessionMeta, SessionStore};
    use skillkit::llm::Message;
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&sessions).unwrap();
    let store = FileSessionStore::new(&sessions);
    let run = |what: &'static str,
               store: FileSessionStore,
               call: fn(FileSessionStore) -> Result<String, String>| {
        within_a_minute(what, move || call(store))
    };
    fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }
    // A session with a title, as a chat leaves it.
    block_on(async {
        store
            .append("chat", 0, &[Message::user("Hi")])
            .await
            .unwrap();
        let meta = SessionMeta::default().title("Greeting");
        store.describe("chat", &meta).await.unwrap();
    });

    // A FIFO where a session's lines would be: every call says so.
    mkfifo(&sessions.join("evil.jsonl"));
    // Listed with why, beside the others.
    let list = run("list", store.clone(), |s| {
        let list = block_on(s.list()).map_err(|e| e.to_string())?;
        Ok(list
            .iter()
            .map(|i| format!("{} {} {:?}", i.id, i.version, i.error))
            .collect::<Vec<_>>()
            .join("\n"))
    });
    let list = list.expect("the others listed");
    let (chat, evil) = list.split_once('\n').expect("two sessions");
    assert_eq!(chat, "chat 1 None");
    assert!(
        evil.starts_with("evil 0 Some(")
            && evil.contains("is a FIFO (named pipe), not a session file"),
        "{evil}"
    );
    for call in [
        (|s: FileSessionStore| {
            block_on(s.load("evil", None))
                .map(|l| format!("{:?}", l.items))
                .map_err(|e| e.to_string())
        }) as fn(_) -> _,
        |s| {
            block_on(s.append("evil", 0, &[Message::user("x")]))
                .map(|v| v.to_string())
                .map_err(|e| e.to_string())
        },
    ] {
        let error = run("load or append", store.clone(), call).expect_err("a FIFO session");
        assert!(
            error.contains("is a FIFO (named pipe), not a session file"),
            "{error}"
        );
    }
    std::fs::remove_file(sessions.join("evil.jsonl")).unwrap();

    // The title file as a FIFO, a device, a link or over its bound: the
    // session is listed, without a title (it is for people).
    let meta = sessions.join("chat.meta.json");
    let saved = std::fs::read(&meta).unwrap();
    let makers: [(&str, &dyn Fn()); 4] = [
        ("a FIFO", &|| mkfifo(&meta)),
        ("a device", &|| {
            std::os::unix::fs::symlink("/dev/zero", &meta).unwrap()
        }),
        ("a link", &|| {
            std::fs::write(&outside, &saved).unwrap();
            std::os::unix::fs::symlink(&outside, &meta).unwrap()
        }),
        ("too large", &|| {
            std::fs::write(&meta, vec![b' '; 2 << 20]).unwrap()
        }),
    ];
    for (what, make) in makers {
        std::fs::remove_file(&meta).unwrap();
        make();
        let listed = run("list", store.clone(), |s| {
            let list = block_on(s.list()).map_err(|e| e.to_string())?;
            Ok(format!(
                "{:?}",
                list.iter()
                    .map(|i| (&i.id, &i.meta.title))
                    .collect::<Vec<_>>()
            ))
        });
        assert_eq!(listed.as_deref(), Ok(r#"[("chat", None)]"#), "{what}");
    }
    std::fs::remove_file(&meta).unwrap();
    std::fs::write(&meta, &saved).unwrap();

    // The lock file as a FIFO, or a link to where nothing is yet: refused,
    // and nothing made at the link's target.
    let lock = sessions.join("chat.lock");
    let _ = std::fs::remove_file(&lock);
    mkfifo(&lock);
    let error = run("append", store.clone(), |s| {
        block_on(s.append("chat", 1, &[Message::user("again")]))
            .map(|v| v.to_string())
            .map_err(|e| e.to_string())
    })
    .expect_err("a FIFO lock");
    assert!(
        error.contains("is a FIFO (named pipe), not a lock file"),
        "{error}"
    );
    std::fs::remove_file(&lock).unwrap();
    let target = dir.path().join("made-elsewhere");
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    let error = run("append", store.clone(), |s| {
        block_on(s.append("chat", 1, &[Message::user("again")]))
            .map(|v| v.to_string())
            .map_err(|e| e.to_string())
    })
    .expect_err("a linked lock");
    assert!(
        error.contains("is a symbolic link, not a lock file"),
        "{error}"
    );
    assert!(!target.exists(), "the link's target was made");

    // Put right, the session goes on where it was.
    std::fs::remove_file(&lock).unwrap();
    let version = run("append", store.clone(), |s| {
        block_on(s.append("chat", 1, &[Message::user("again")]))
            .map(|v| v.to_string())
            .map_err(|e| e.to_string())
    });
    assert_eq!(version.as_deref(), Ok("2"));
}
