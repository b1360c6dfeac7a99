//! The Local provider: both layouts, naming, ordering, and an always-fresh
//! answer without re-parsing unchanged files.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use skillkit::{Catalog, KitProvider, Local};
use skillkit_tests::{skill_md, write};

fn age(path: &std::path::Path, by: Duration) {
    let file = std::fs::File::open(path).expect("open");
    file.set_modified(SystemTime::now() - by)
        .expect("set mtime");
}

#[tokio::test(flavor = "multi_thread")]
async fn kit_layout_with_agents() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("files");
    write(
        kit.join("AGENT.md"),
        "---\ndescription: Works with files.\nmodel: anthropic://claude-sonnet-4-5\n---\nYou handle files.\n",
    );
    write(
        kit.join("skills/write/SKILL.md"),
        skill_md("write", "Write a file.", "Write."),
    );
    write(
        kit.join("skills/read/SKILL.md"),
        skill_md("read", "Read a file.", "Read $ARGUMENTS."),
    );
    write(
        kit.join("agents/summarize.md"),
        "---\ndescription: Sums up.\n---\nSum up.\n",
    );
    let kits = Local::new(&kit).list_kits().await.unwrap();
    assert_eq!(kits.len(), 1);
    let kit = &kits[0];
    assert_eq!(kit.name, "files");
    let names: Vec<&str> = kit.skills.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["files:read", "files:write"]);
    let agent = kit.agent.as_ref().expect("root agent");
    assert_eq!(agent.name, "files");
    assert_eq!(
        agent.model.as_deref(),
        Some("anthropic://claude-sonnet-4-5")
    );
    assert_eq!(agent.system_prompt, "You handle files.\n");
    assert_eq!(kit.agents[0].name, "files:summarize");
}

#[tokio::test(flavor = "multi_thread")]
async fn flat_layout_named_kit_and_prefixed_names() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path().join("read/SKILL.md"),
        skill_md("files:read", "Read.", ""),
    );
    write(
        dir.path().join("fetch/SKILL.md"),
        skill_md("net:fetch", "Fetch.", ""),
    );
    let local = Local::new(dir.path()).named("files");
    let kit = local.list_kits().await.unwrap().remove(0);
    let names: Vec<&str> = kit.skills.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["files:read"]);
    let diagnostic = kit
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .expect("prefix error");
    assert!(diagnostic.message.contains("`net`"), "{diagnostic}");
    assert!(
        diagnostic
            .path
            .as_ref()
            .unwrap()
            .ends_with("fetch/SKILL.md")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn each_child_directory_is_a_kit_sorted_hidden_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path().join("zeta/skills/z/SKILL.md"),
        skill_md("z", "Z.", ""),
    );
    write(dir.path().join("alpha/a/SKILL.md"), skill_md("a", "A.", ""));
    write(dir.path().join(".git/x/SKILL.md"), skill_md("x", "X.", ""));
    write(dir.path().join("notes.txt"), "not a kit");
    let kits = Local::each(dir.path()).list_kits().await.unwrap();
    let names: Vec<&str> = kits.iter().map(|k| k.name.as_ref()).collect();
    assert_eq!(names, ["alpha", "zeta"]);
    assert_eq!(kits[1].skills[0].name, "zeta:z");
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_new_files_and_deletions_show_on_the_next_query() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    let read = kit.join("skills/read/SKILL.md");
    write(&read, skill_md("read", "Version one.", ""));
    let catalog = Catalog::builder().provider(Local::new(&kit)).build();
    assert_eq!(
        catalog.get_skill("k:read").await.unwrap().description,
        "Version one."
    );

    // Same size, written at once: the racy rule re-reads it.
    write(&read, skill_md("read", "Version two.", ""));
    assert_eq!(
        catalog.get_skill("k:read").await.unwrap().description,
        "Version two."
    );

    write(
        kit.join("skills/new/SKILL.md"),
        skill_md("new", "Brand new.", ""),
    );
    assert_eq!(
        catalog.get_skill("k:new").await.unwrap().description,
        "Brand new."
    );

    std::fs::remove_file(&read).unwrap();
    assert!(catalog.get_skill("k:read").await.is_none());
    assert_eq!(catalog.list_skills().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn unchanged_files_are_not_parsed_again() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    let a = kit.join("skills/a/SKILL.md");
    let b = kit.join("skills/b/SKILL.md");
    write(&a, skill_md("a", "A.", ""));
    write(&b, skill_md("b", "B.", ""));
    age(&a, Duration::from_secs(60));
    age(&b, Duration::from_secs(60));
    let local = Local::new(&kit);
    let first = local.list_kits().await.unwrap().remove(0);
    let second = local.list_kits().await.unwrap().remove(0);
    assert!(Arc::ptr_eq(&first.skills[0], &second.skills[0]));
    assert!(Arc::ptr_eq(&first.skills[1], &second.skills[1]));

    // Changing b re-parses b only.
    write(&b, skill_md("b", "B, changed.", ""));
    let third = local.list_kits().await.unwrap().remove(0);
    assert!(Arc::ptr_eq(&first.skills[0], &third.skills[0]));
    assert_eq!(third.skills[1].description, "B, changed.");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_keeps_size_and_mtime_is_still_seen() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    let a = kit.join("skills/a/SKILL.md");
    write(&a, skill_md("a", "Old.", ""));
    age(&a, Duration::from_secs(60));
    let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
    let local = Local::new(&kit);
    assert_eq!(
        local.list_kits().await.unwrap()[0].skills[0].description,
        "Old."
    );
    write(&a, skill_md("a", "New.", ""));
    std::fs::File::options()
        .write(true)
        .open(&a)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(
        local.list_kits().await.unwrap()[0].skills[0].description,
        "New."
    );
}

/// Ages every file and directory under `root` (so nothing is racy and only
/// stamps decide what is read again).
fn age_tree(root: &std::path::Path) {
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            age_tree(&path);
        }
        age(&path, Duration::from_secs(60));
    }
    age(root, Duration::from_secs(60));
}

#[tokio::test(flavor = "multi_thread")]
async fn changes_deep_in_old_directories_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(kit.join("skills/group/a/SKILL.md"), skill_md("a", "A.", ""));
    write(kit.join("skills/group/b/SKILL.md"), skill_md("b", "B.", ""));
    age_tree(&kit);
    let local = Local::new(&kit);
    let names = |kits: Vec<skillkit::Kit>| -> Vec<String> {
        kits[0].skills.iter().map(|s| s.name.to_string()).collect()
    };
    assert_eq!(names(local.list_kits().await.unwrap()), ["k:a", "k:b"]);
    assert_eq!(names(local.list_kits().await.unwrap()), ["k:a", "k:b"]);

    // A new skill folder two levels down, in directories listed long ago.
    write(
        kit.join("skills/group/c/deeper/SKILL.md"),
        skill_md("c", "C.", ""),
    );
    assert_eq!(
        names(local.list_kits().await.unwrap()),
        ["k:a", "k:b", "k:c"]
    );

    age_tree(&kit);
    local.list_kits().await.unwrap();
    std::fs::remove_dir_all(kit.join("skills/group/b")).unwrap();
    assert_eq!(names(local.list_kits().await.unwrap()), ["k:a", "k:c"]);

    // A whole directory renamed in.
    let outside = dir.path().join("elsewhere/d");
    write(outside.join("SKILL.md"), skill_md("d", "D.", ""));
    age_tree(&dir.path().join("elsewhere"));
    std::fs::rename(&outside, kit.join("skills/group/d")).unwrap();
    assert_eq!(
        names(local.list_kits().await.unwrap()),
        ["k:a", "k:c", "k:d"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_directory_is_an_error_that_names_it() {
    let err = Local::new("/no/such/kit").list_kits().await.unwrap_err();
    assert!(err.to_string().contains("/no/such/kit"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn skipped_files_are_logged_with_file_and_reason() {
    let buffer = skillkit_tests::Logs::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path().join("good/SKILL.md"),
        skill_md("good", "Good.", ""),
    );
    write(dir.path().join("bad/SKILL.md"), "---\nname: bad\n---\n");
    let local = Local::new(dir.path());
    let kits = {
        let _guard = tracing::subscriber::set_default(subscriber);
        local.load().unwrap()
    };
    assert_eq!(kits[0].skills.len(), 1);
    let log = buffer.text();
    assert!(log.contains("WARN"), "{log}");
    assert!(log.contains("bad/SKILL.md"), "{log}");
    assert!(
        log.contains("missing required field `description`"),
        "{log}"
    );
}

/// `Local::load` called from many rayon tasks at once, all on the same
/// provider (a program validating in parallel, say): every call answers, none
/// waits for itself. (A rayon worker waiting for a load runs other tasks of its
/// pool meanwhile; had the load been handed to a pool, that worker could start
/// a second load of the same provider inside the first and wait forever for
/// its own lock. Before the fix this hung about one run in six.)
#[test]
fn loads_from_rayon_tasks_never_wait_for_themselves() {
    use rayon::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    for kit in 0..12 {
        for i in 0..20 {
            write(
                dir.path().join(format!("k{kit}/skills/s{i}/SKILL.md")),
                skill_md(&format!("s{i}"), "A skill.", "Do it."),
            );
        }
    }
    let local = Local::each(dir.path());
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for _ in 0..3 {
            // Files this fresh are read again on every load (the racy rule),
            // so each load does its full work.
            let counts: Vec<usize> = pool.install(|| {
                (0..128)
                    .into_par_iter()
                    .map(|_| local.load().unwrap().iter().map(|k| k.skills.len()).sum())
                    .collect()
            });
            done.send(counts).unwrap();
        }
    });
    for _ in 0..3 {
        let counts = finished
            .recv_timeout(Duration::from_secs(120))
            .expect("a load from a rayon task never finished: it waited for itself");
        assert!(counts.iter().all(|&n| n == 240), "{counts:?}");
    }
}

/// `Local::load` called from many threads at once that are not rayon
/// workers (the blocking threads of `list_kits`, as an MCP server answering
/// concurrent requests has them): every call answers. (Each load is handed
/// to the pool; a worker waiting for the files of one load runs the next
/// load meanwhile, which locked the cache the first one held, on the same
/// thread: `skillkit serve` hung about one run in six under 400 concurrent
/// requests, until the cache was locked before entering the pool.)
#[test]
fn loads_from_many_threads_at_once_never_wait_for_themselves() {
    let dir = tempfile::tempdir().unwrap();
    for kit in 0..12 {
        for i in 0..20 {
            write(
                dir.path().join(format!("k{kit}/skills/s{i}/SKILL.md")),
                skill_md(&format!("s{i}"), "A skill.", "Do it."),
            );
        }
    }
    let local = Local::each(dir.path());
    let (done, finished) = std::sync::mpsc::channel();
    for _ in 0..32 {
        let (local, done) = (local.clone(), done.clone());
        std::thread::spawn(move || {
            for _ in 0..8 {
                let n: usize = local.load().unwrap().iter().map(|k| k.skills.len()).sum();
                done.send(n).unwrap();
            }
        });
    }
    for _ in 0..32 * 8 {
        let n = finished
            .recv_timeout(Duration::from_secs(120))
            .expect("a load never finished: it waited for itself");
        assert_eq!(n, 240);
    }
}

/// On a one-thread runtime (as `skillkit list` has) the first load runs on
/// `Local`'s own pool and wakes the waiting query when done: every skill,
/// the first time and the next.
#[tokio::test(flavor = "current_thread")]
async fn a_query_on_a_one_thread_runtime_loads_every_skill() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..50 {
        write(
            dir.path().join(format!("kit/skills/s{i}/SKILL.md")),
            skill_md(&format!("s{i}"), "A skill.", "Do it."),
        );
    }
    let catalog = Catalog::builder().provider(Local::each(dir.path())).build();
    for _ in 0..2 {
        let snapshot = catalog.snapshot().await;
        assert_eq!(snapshot.skills().count(), 50);
        assert!(snapshot.failures().is_empty(), "{:?}", snapshot.failures());
    }
}

/// Queries from many tasks at once (each load a task of `Local`'s own pool,
/// which never waits for the cache another load holds) mixed with blocking
/// `Local::load` calls from threads of their own: every one answers, with
/// every skill.
#[test]
fn concurrent_queries_and_blocking_loads_all_answer() {
    let dir = tempfile::tempdir().unwrap();
    for kit in 0..12 {
        for i in 0..20 {
            write(
                dir.path().join(format!("k{kit}/skills/s{i}/SKILL.md")),
                skill_md(&format!("s{i}"), "A skill.", "Do it."),
            );
        }
    }
    let local = Local::each(dir.path());
    let (done, finished) = std::sync::mpsc::channel();
    for _ in 0..4 {
        let (local, done) = (local.clone(), done.clone());
        std::thread::spawn(move || {
            for _ in 0..16 {
                let n: usize = local.load().unwrap().iter().map(|k| k.skills.len()).sum();
                done.send(n).unwrap();
            }
        });
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for _ in 0..64 {
        let (local, done) = (local.clone(), done.clone());
        runtime.spawn(async move {
            let kits = skillkit::KitProvider::list_kits(&local).await.unwrap();
            done.send(kits.iter().map(|k| k.skills.len()).sum())
                .unwrap();
        });
    }
    for _ in 0..4 * 16 + 64 {
        let n = finished
            .recv_timeout(Duration::from_secs(120))
            .expect("a query never answered: it waited for a load that waited for it");
        assert_eq!(n, 240);
    }
}

/// Skills in hidden folders load (`.claude/skills/`, `skills/.curated/`);
/// version control and build output do not (`.git/`, `node_modules/`).
#[tokio::test(flavor = "multi_thread")]
async fn hidden_folders_are_searched_vcs_folders_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    for (path, name) in [
        (".claude/skills/x/SKILL.md", "x"),
        ("skills/.curated/y/SKILL.md", "y"),
        (".git/z/SKILL.md", "z"),
        ("node_modules/pkg/w/SKILL.md", "w"),
    ] {
        write(project.join(path), skill_md(name, "A skill.", "Do it."));
    }
    let kits = Local::new(&project).list_kits().await.unwrap();
    let names: Vec<&str> = kits[0].skills.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["project:x", "project:y"]);
}

/// Progressive disclosure: a query reads only the frontmatter; the body is
/// read when asked for, fresh from the file (an edit of the body alone is
/// seen without a new query), and a file deleted after the query is a clear
/// error, not a panic.
#[tokio::test(flavor = "multi_thread")]
async fn bodies_are_read_when_asked_for_fresh_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes/summarize/SKILL.md");
    write(
        &path,
        skill_md("summarize", "Sum up.", "Sum up $ARGUMENTS."),
    );
    // Not UTF-8 after the frontmatter: the skill still lists, its body fails.
    let broken = dir.path().join("notes/broken/SKILL.md");
    let mut bytes = skill_md("broken", "Broken body.", "").into_bytes();
    bytes.extend_from_slice(b"\xff\xfe not text");
    write(&broken, bytes);

    let kit = Local::new(dir.path().join("notes"))
        .list_kits()
        .await
        .unwrap()
        .remove(0);
    let names: Vec<&str> = kit.skills.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["notes:broken", "notes:summarize"]);
    let skill = kit.skill("notes:summarize").unwrap();
    assert_eq!(skill.body.as_text(), None, "the query left the body unread");
    assert_eq!(skill.body.file(), Some(path.as_path()));
    assert_eq!(
        skill.render("the notes", None).unwrap(),
        "Sum up the notes."
    );

    write(
        &path,
        skill_md("summarize", "Sum up.", "Summarise $ARGUMENTS."),
    );
    assert_eq!(skill.body.read().unwrap(), "Summarise $ARGUMENTS.");

    let err = kit.skill("notes:broken").unwrap().body.read().unwrap_err();
    assert_eq!(err.path(), broken.as_path());
    assert!(err.to_string().contains("UTF-8"), "{err}");

    std::fs::remove_file(&path).unwrap();
    let err = skill.render("x", None).unwrap_err();
    assert_eq!(err.path(), path.as_path());
    assert!(err.to_string().contains("query the catalog again"), "{err}");
}

/// Sets the mtime of every folder under `dir` (and `dir`) an hour back, so a
/// scanner trusts their listings and does not read them again.
fn age_folders(dir: &std::path::Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            age_folders(&entry.path());
        }
    }
    age(dir, Duration::from_secs(3600));
}

/// What the walk leaves out is said, naming the path: a skill deeper than the
/// depth limit (found, reported, not loaded) and a folder whose name is not
/// UTF-8. Both stay said when the kit is built again from folders that are not
/// read again.
#[tokio::test(flavor = "multi_thread")]
async fn skipped_skills_and_folders_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(kit.join("skills/ok/SKILL.md"), skill_md("ok", "Ok.", ""));
    let limit = skillkit::parser::layout::MAX_DEPTH;
    // The deepest skill loaded, and one folder deeper than that.
    let mut deepest = kit.clone();
    for i in 0..limit {
        deepest.push(format!("d{i}"));
    }
    write(
        deepest.join("SKILL.md"),
        skill_md("deepest", "Deepest.", ""),
    );
    let too_deep = deepest.join("under");
    write(too_deep.join("SKILL.md"), skill_md("deep", "Deep.", ""));
    #[cfg(unix)]
    let odd = {
        use std::os::unix::ffi::OsStrExt;
        let odd = kit
            .join("skills")
            .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
        write(odd.join("SKILL.md"), skill_md("cafe", "Cafe.", ""));
        odd
    };
    age_folders(&kit);
    let local = Local::new(&kit);
    for query in 0..2 {
        if query == 1 {
            // Only a file changes: the kit is built again, its folders are not read again.
            write(
                kit.join("skills/ok/SKILL.md"),
                skill_md("ok", "Ok again.", ""),
            );
        }
        let kits = local.list_kits().await.unwrap();
        let names: Vec<&str> = kits[0].skills.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(names, ["k:deepest", "k:ok"], "query {query}");
        assert_eq!(kits[0].skills[1].description.len(), [3, 9][query]);
        let diagnostics = &kits[0].diagnostics;
        let deep = diagnostics
            .iter()
            .find(|d| d.path.as_deref() == Some(too_deep.join("SKILL.md").as_path()))
            .unwrap_or_else(|| panic!("query {query}: deep skill not reported: {diagnostics:?}"));
        assert!(!deep.is_error(), "a warning: {deep}");
        assert!(
            deep.message
                .contains(&format!("deeper than {limit} folders")),
            "{deep}"
        );
        #[cfg(unix)]
        {
            let odd_shown = std::path::PathBuf::from(odd.to_string_lossy().into_owned());
            let found = diagnostics
                .iter()
                .find(|d| d.path.as_deref() == Some(odd_shown.as_path()))
                .unwrap_or_else(|| {
                    panic!("query {query}: non-UTF-8 folder not reported: {diagnostics:?}")
                });
            assert!(found.message.contains("not UTF-8"), "{found}");
        }
    }
}

/// `Local::discover` looks from the project folder up to the repository root
/// (the folder holding `.git`), nearest first, `.agents/skills` before
/// `.claude/skills` at each level; nothing above the root. Outside a
/// repository, only the folder itself.
#[tokio::test(flavor = "multi_thread")]
async fn discover_walks_up_to_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let repo = root.join("repo");
    let project = repo.join("a/b");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    for folder in [
        root.join(".agents/skills"),
        repo.join(".claude/skills"),
        repo.join(".agents/skills"),
        repo.join("a/.claude/skills"),
        project.join(".agents/skills"),
    ] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let found = |project: &std::path::Path| -> Vec<std::path::PathBuf> {
        Local::discover(project)
            .iter()
            .filter(|local| local.dir().starts_with(&root))
            .inspect(|local| {
                // A project's folders are not trusted until the application says so.
                assert_eq!(local.origin(), skillkit::Origin::Project, "{local:?}");
            })
            .map(|local| local.dir().to_path_buf())
            .collect()
    };
    assert_eq!(
        found(&project),
        [
            project.join(".agents/skills"),
            repo.join("a/.claude/skills"),
            repo.join(".agents/skills"),
            repo.join(".claude/skills"),
        ]
    );
    std::fs::remove_dir(repo.join(".git")).unwrap();
    assert_eq!(found(&project), [project.join(".agents/skills")]);
    let searched = Local::discovery_folders(&project);
    assert_eq!(
        searched[..2],
        [
            project.join(".agents/skills"),
            project.join(".claude/skills")
        ]
    );
}

/// A folder left out appearing while no skill file changed still shows on
/// the next query (the kit is not served from before), and is logged; a kit
/// folder of `Local::each` whose name is not UTF-8 is logged too.
#[cfg(unix)]
#[test]
fn what_is_skipped_shows_at_once_and_is_logged() {
    use std::os::unix::ffi::OsStrExt;
    let buffer = skillkit_tests::Logs::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(kit.join("skills/ok/SKILL.md"), skill_md("ok", "Ok.", ""));
    // Old enough to be trusted: the next query does not read it again.
    age(&kit.join("skills/ok/SKILL.md"), Duration::from_secs(3600));
    let local = Local::new(&kit);
    assert!(local.load().unwrap()[0].diagnostics.is_empty());
    let odd = kit
        .join("skills")
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    write(odd.join("SKILL.md"), skill_md("cafe", "Cafe.", ""));
    let kits = local.load().unwrap();
    let shown = odd.to_string_lossy().into_owned();
    assert!(
        kits[0]
            .diagnostics
            .iter()
            .any(|d| d.path.as_deref() == Some(std::path::Path::new(&shown))),
        "{:?}",
        kits[0].diagnostics
    );
    let log = buffer.text();
    assert!(log.contains("its name is not UTF-8"), "{log}");
    assert!(log.contains(&shown), "{log}");

    let each = dir.path().join("kits");
    write(each.join("fine/a/SKILL.md"), skill_md("a", "A.", ""));
    let odd_kit = each.join(std::ffi::OsStr::from_bytes(b"k\xff"));
    write(odd_kit.join("b/SKILL.md"), skill_md("b", "B.", ""));
    let kits = Local::each(&each).load().unwrap();
    assert_eq!(kits.len(), 1);
    let log = buffer.text();
    assert!(log.contains(&*odd_kit.to_string_lossy()), "{log}");
}
