//! `Local` learning of changes from the operating system: after a warm
//! query, every kind of change is seen by the very next query (no waiting for
//! events to arrive: the query reads the kernel's queue dry), an unchanged
//! folder's query checks no file, and a watcher that fails or loses events
//! falls back to checking every file, still exact, saying so once.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::time::Duration;

use skillkit::kit::Skills;
use skillkit::providers::WatchFault;
use skillkit::providers::WatchStatus;
use skillkit::{Kit, KitProvider, Local};
use skillkit_tests::{Logs, skill_md, write};

/// The kits of `local` now, asked as a catalog asks (`list_kits`: the kits
/// as they were when the watch vouches for every one, else a load).
fn load(local: &Local) -> Vec<Kit> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(local.list_kits()).expect("query")
}

/// The kits of `local` now, loaded on this thread (so what it logs reaches
/// this thread's subscriber).
fn load_here(local: &Local) -> Vec<Kit> {
    local.load().expect("query")
}

/// Full names and descriptions of every skill, in order.
fn skills(kits: &[Kit]) -> Vec<(String, String)> {
    kits.iter()
        .flat_map(|kit| kit.skills.iter())
        .map(|skill| (skill.name.to_string(), skill.description.to_string()))
        .collect()
}

fn names(kits: &[Kit]) -> Vec<String> {
    skills(kits).into_iter().map(|(name, _)| name).collect()
}

/// A folder of two kits, `a` and `b`, of two skills each.
fn catalog(root: &Path) {
    for kit in ["a", "b"] {
        for skill in ["one", "two"] {
            let text = skill_md(skill, &format!("{kit} {skill}."), "Body.");
            write(root.join(kit).join(skill).join("SKILL.md"), text);
        }
    }
}

/// `local` after two queries, its watch set up, and the query that
/// brings it in use: from here on, events are trusted.
fn watched(local: &Local) -> Vec<Kit> {
    load(local);
    load(local);
    let status = local.wait_for_watch(Duration::from_secs(60));
    assert!(
        !matches!(status, WatchStatus::Fallback(_)),
        "no watch: {status}"
    );
    let kits = load(local);
    assert_eq!(local.watch_status(), WatchStatus::Watching);
    kits
}

/// Captures what is logged on this thread while the guard lives.
fn logs() -> (Logs, tracing::subscriber::DefaultGuard) {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

#[test]
fn an_unchanged_folder_costs_no_file_check_and_keeps_its_kits() {
    let dir = tempfile::tempdir().unwrap();
    catalog(dir.path());
    let local = Local::each(dir.path());
    let before = watched(&local);
    let checked = local.files_checked();
    let after = load(&local);
    assert_eq!(local.files_checked(), checked, "no file checked");
    assert_eq!(names(&after), names(&before));
    for (a, b) in before.iter().zip(&after) {
        assert!(Skills::ptr_eq(&a.skills, &b.skills), "kit {} kept", a.name);
    }
    // A change in kit `b` checks kit `b` only (its two files), and kit `a`
    // is the same value as before.
    write(
        dir.path().join("b/one/SKILL.md"),
        skill_md("one", "B one, edited.", ""),
    );
    let edited = load(&local);
    assert_eq!(local.files_checked(), checked + 2);
    assert!(Skills::ptr_eq(&before[0].skills, &edited[0].skills));
    assert_eq!(edited[1].skills[0].description, "B one, edited.");
}

#[test]
fn without_watching_every_query_checks_every_file() {
    let dir = tempfile::tempdir().unwrap();
    catalog(dir.path());
    let local = Local::each(dir.path()).watch(false);
    load(&local);
    let checked = local.files_checked();
    load(&local);
    assert_eq!(local.files_checked(), checked + 4);
    assert_eq!(local.watch_status(), WatchStatus::Off);
}

#[test]
fn every_kind_of_change_is_seen_by_the_next_query() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    catalog(root);
    let local = Local::each(root);
    watched(&local);

    // Editing a SKILL.md (same length, at once: the stamp may not change).
    write(
        root.join("a/one/SKILL.md"),
        skill_md("one", "a ONE.", "Body."),
    );
    assert!(skills(&load(&local)).contains(&("a:one".into(), "a ONE.".into())));

    // Adding a skill folder, then editing its file.
    write(
        root.join("a/three/SKILL.md"),
        skill_md("three", "Three.", ""),
    );
    assert!(names(&load(&local)).contains(&"a:three".into()));
    write(
        root.join("a/three/SKILL.md"),
        skill_md("three", "Trois.", ""),
    );
    assert!(skills(&load(&local)).contains(&("a:three".into(), "Trois.".into())));

    // Deleting one.
    std::fs::remove_dir_all(root.join("a/two")).unwrap();
    assert!(!names(&load(&local)).contains(&"a:two".into()));

    // Renaming one, then editing it under its new name.
    std::fs::rename(root.join("b/two"), root.join("b/deux")).unwrap();
    write(root.join("b/deux/SKILL.md"), skill_md("deux", "Deux.", ""));
    let kits = load(&local);
    assert!(names(&kits).contains(&"b:deux".into()));
    assert!(!names(&kits).contains(&"b:two".into()));
    write(root.join("b/deux/SKILL.md"), skill_md("deux", "Two.", ""));
    assert!(skills(&load(&local)).contains(&("b:deux".into(), "Two.".into())));

    // Editing a file beside SKILL.md: its kit is checked, nothing changes.
    write(root.join("b/one/reference.md"), "Notes.");
    let before = load(&local);
    let checked = local.files_checked();
    write(root.join("b/one/reference.md"), "More notes.");
    let after = load(&local);
    assert_eq!(skills(&after), skills(&before));
    assert_eq!(local.files_checked(), checked + 2, "kit b checked");

    // Saving as editors do: a file beside SKILL.md renamed over it.
    write(
        root.join("b/one/.SKILL.md.swp"),
        skill_md("one", "Saved.", ""),
    );
    std::fs::rename(
        root.join("b/one/.SKILL.md.swp"),
        root.join("b/one/SKILL.md"),
    )
    .unwrap();
    assert!(skills(&load(&local)).contains(&("b:one".into(), "Saved.".into())));

    // Creating a new kit, then a skill deep in it (the depth limit, 8).
    write(root.join("c/x/SKILL.md"), skill_md("x", "X.", ""));
    assert!(names(&load(&local)).contains(&"c:x".into()));
    let deep = root.join("c/1/2/3/4/5/6/7/deep/SKILL.md");
    write(&deep, skill_md("deep", "Deep.", ""));
    assert!(names(&load(&local)).contains(&"c:deep".into()));
    write(&deep, skill_md("deep", "Deeper.", ""));
    assert!(skills(&load(&local)).contains(&("c:deep".into(), "Deeper.".into())));

    // A new sub-agent file.
    write(
        root.join("a/agents/helper.md"),
        "---\nname: helper\ndescription: Helps.\n---\nHelp.\n",
    );
    let kits = load(&local);
    assert_eq!(kits[0].agents.len(), 1);

    // Deleting a kit.
    std::fs::remove_dir_all(root.join("c")).unwrap();
    let kits = load(&local);
    assert_eq!(kits.len(), 2);
    assert_eq!(local.watch_status(), WatchStatus::Watching);
}

#[test]
fn one_kit_folder_is_watched_too_even_when_it_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("files");
    write(
        kit.join("skills/read/SKILL.md"),
        skill_md("read", "Read.", ""),
    );
    let local = Local::new(&kit);
    watched(&local);
    let checked = local.files_checked();
    load(&local);
    assert_eq!(local.files_checked(), checked);
    write(
        kit.join("skills/read/SKILL.md"),
        skill_md("read", "Read it.", ""),
    );
    assert_eq!(load(&local)[0].skills[0].description, "Read it.");
    // The folder itself replaced: seen, and watching starts over.
    std::fs::rename(&kit, dir.path().join("old")).unwrap();
    write(
        kit.join("skills/write/SKILL.md"),
        skill_md("write", "Write.", ""),
    );
    assert_eq!(names(&load(&local)), ["files:write"]);
    watched(&local);
    write(
        kit.join("skills/write/SKILL.md"),
        skill_md("write", "Write it.", ""),
    );
    assert_eq!(load(&local)[0].skills[0].description, "Write it.");
}

#[cfg(unix)]
#[test]
fn a_change_through_a_link_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kits");
    let elsewhere = dir.path().join("elsewhere");
    catalog(&root);
    write(
        elsewhere.join("linked/SKILL.md"),
        skill_md("linked", "Linked.", ""),
    );
    write(elsewhere.join("kit/s/SKILL.md"), skill_md("s", "S.", ""));
    std::os::unix::fs::symlink(elsewhere.join("linked"), root.join("a/linked")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("kit"), root.join("k")).unwrap();
    let local = Local::each(&root);
    watched(&local);
    // Edited through the targets' own paths, outside the watched folder.
    write(
        elsewhere.join("linked/SKILL.md"),
        skill_md("linked", "Relinked.", ""),
    );
    write(elsewhere.join("kit/s/SKILL.md"), skill_md("s", "Ess.", ""));
    let kits = load(&local);
    assert!(skills(&kits).contains(&("a:linked".into(), "Relinked.".into())));
    assert!(skills(&kits).contains(&("k:s".into(), "Ess.".into())));
    write(elsewhere.join("kit/t/SKILL.md"), skill_md("t", "T.", ""));
    assert!(names(&load(&local)).contains(&"k:t".into()));
}

/// A skills folder that is itself a link (kept elsewhere, as dotfiles keep
/// `~/.claude/skills`) is watched through it: an unchanged query checks no
/// file, and a change is seen.
#[test]
fn a_folder_that_is_a_link_is_watched_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("dotfiles/skills");
    catalog(&kept);
    let link = dir.path().join("skills");
    std::os::unix::fs::symlink(&kept, &link).unwrap();
    let local = Local::each(&link);
    watched(&local);
    let checked = local.files_checked();
    load(&local);
    assert_eq!(local.files_checked(), checked, "no file checked");
    write(kept.join("a/one/SKILL.md"), skill_md("one", "Edited.", ""));
    assert!(skills(&load(&local)).contains(&("a:one".into(), "Edited.".into())));
}

#[test]
fn after_an_overflow_one_query_checks_everything_then_watching_resumes() {
    let (logs, _guard) = logs();
    let dir = tempfile::tempdir().unwrap();
    catalog(dir.path());
    let local = Local::each(dir.path());
    watched(&local);
    local.simulate_watch_fault(WatchFault::Overflow);
    write(
        dir.path().join("a/one/SKILL.md"),
        skill_md("one", "Lost?", ""),
    );
    let checked = local.files_checked();
    assert!(skills(&load_here(&local)).contains(&("a:one".into(), "Lost?".into())));
    assert_eq!(local.files_checked(), checked + 4, "every file checked");
    let checked = local.files_checked();
    load_here(&local);
    assert_eq!(local.files_checked(), checked, "watching resumed");
    assert_eq!(local.watch_status(), WatchStatus::Watching);
    assert_eq!(logs.text().matches("event queue overflowed").count(), 1);
}

#[test]
fn an_unavailable_watcher_falls_back_and_says_so_once() {
    let (logs, _guard) = logs();
    let dir = tempfile::tempdir().unwrap();
    catalog(dir.path());
    let local = Local::each(dir.path());
    local.simulate_watch_fault(WatchFault::Unavailable);
    for description in ["First.", "Second.", "Third."] {
        write(
            dir.path().join("b/two/SKILL.md"),
            skill_md("two", description, ""),
        );
        let checked = local.files_checked();
        let kits = load_here(&local);
        assert!(skills(&kits).contains(&("b:two".into(), description.into())));
        assert_eq!(local.files_checked(), checked + 4);
    }
    assert!(matches!(local.watch_status(), WatchStatus::Fallback(_)));
    assert_eq!(
        logs.text().matches("every query checks each file").count(),
        1
    );
}

#[test]
fn the_watch_limit_reached_falls_back_and_says_so_once() {
    let (logs, _guard) = logs();
    let dir = tempfile::tempdir().unwrap();
    catalog(dir.path());
    let local = Local::each(dir.path());
    watched(&local);
    local.simulate_watch_fault(WatchFault::Exhausted);
    for description in ["First.", "Second."] {
        write(
            dir.path().join("a/two/SKILL.md"),
            skill_md("two", description, ""),
        );
        let checked = local.files_checked();
        assert!(skills(&load_here(&local)).contains(&("a:two".into(), description.into())));
        assert_eq!(local.files_checked(), checked + 4);
    }
    let status = local.watch_status();
    assert!(
        matches!(&status, WatchStatus::Fallback(why) if why.contains("max_user_watches")),
        "{status:?}"
    );
    assert_eq!(
        logs.text().matches("every query checks each file").count(),
        1
    );
}

/// Every `Local` of a process shares one inotify instance: 200 providers
/// (past the system's default of 128 instances per user) are all watched,
/// each still sees its own changes at the next query, and two providers of
/// one folder both see a change in it.
#[test]
fn two_hundred_providers_are_all_watched_by_one_instance() {
    let dir = tempfile::tempdir().unwrap();
    let locals: Vec<Local> = (0..200)
        .map(|i| {
            let kit = dir.path().join(format!("kit{i:03}"));
            write(kit.join("s/SKILL.md"), skill_md("s", "First.", "Body."));
            Local::new(kit)
        })
        .collect();
    for local in &locals {
        watched(local);
        assert_eq!(local.watch_status(), WatchStatus::Watching);
    }
    let twin = Local::new(dir.path().join("kit007"));
    watched(&twin);
    for i in [0, 7, 150, 199] {
        let kit = dir.path().join(format!("kit{i:03}"));
        write(kit.join("s/SKILL.md"), skill_md("s", "Edited.", "Body."));
    }
    for (i, local) in locals.iter().enumerate() {
        let expected = match i {
            0 | 7 | 150 | 199 => "Edited.",
            _ => "First.",
        };
        assert_eq!(skills(&load(local))[0].1, expected, "kit{i:03}");
        assert_eq!(local.watch_status(), WatchStatus::Watching);
    }
    assert_eq!(skills(&load(&twin))[0].1, "Edited.");
}
