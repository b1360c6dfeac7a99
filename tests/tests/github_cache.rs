//! The GitHub cache keeps only what a source uses: `remove` deletes the tree
//! no other source shares, `refresh` the tree of the commit it left, and the
//! next run deletes what an interrupted import left in `tmp/`, but never the
//! staging folder of an import still running in another process.

use skillkit_tests::github as support;

use std::path::Path;
use std::sync::Arc;

use skillkit::{GitHub, KitProvider};
use support::{Endpoint, Fault, Server, Tarball, files_under, sha, skill};
use tokio::sync::Notify;

fn provider(server: &Server, cache: &Path) -> GitHub {
    GitHub::builder()
        .allow("acme/*")
        .base_url(server.url())
        .cache_dir(cache)
        .build()
        .unwrap()
}

fn tools(sha: &str, description: &str) -> Vec<u8> {
    Tarball::new("acme", "tools", sha)
        .file("skills/a/SKILL.md", &skill("a", description))
        .build()
}

/// The names in folder `dir` (none when it does not exist), sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn remove_deletes_the_tree_once_no_source_uses_it() {
    let server = Server::start().await;
    // Two refs at one commit: their sources share one tree.
    server.publish("acme/tools", "main", &sha(1), tools(&sha(1), "A."));
    server.publish("acme/tools", "v1", &sha(1), tools(&sha(1), "A."));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let github = provider(&server, &cache);
    github.import("acme/tools@main").await.unwrap();
    let shared = github.import("acme/tools@v1").await.unwrap();
    assert!(!shared.downloaded);
    assert_eq!(names(&cache.join("trees")).len(), 1);

    github.remove("acme/tools@main").await.unwrap();
    assert_eq!(names(&cache.join("trees")).len(), 1, "@v1 still uses it");
    let kits = github.list_kits().await.unwrap();
    assert!(kits[1].skill("acme/tools@v1:a").is_some());

    github.remove("acme/tools@v1").await.unwrap();
    assert_eq!(names(&cache.join("trees")), Vec::<String>::new());
    assert_eq!(files_under(&cache.join("tmp")), Vec::<String>::new());
}

#[tokio::test]
async fn refresh_deletes_the_tree_of_the_commit_it_left() {
    let server = Server::start().await;
    server.publish("acme/tools", "main", &sha(1), tools(&sha(1), "First."));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let github = provider(&server, &cache);
    github.import("acme/tools@main").await.unwrap();
    server.publish("acme/tools", "main", &sha(2), tools(&sha(2), "Second."));
    let done = github.refresh("acme/tools@main").await.unwrap();
    assert!(done.downloaded);

    let trees = names(&cache.join("trees"));
    assert_eq!(trees, [format!("acme--tools--{}", sha(2))]);
    assert_eq!(files_under(&cache.join("tmp")), Vec::<String>::new());
    let kits = github.list_kits().await.unwrap();
    assert_eq!(
        kits[1].skill("acme/tools@main:a").unwrap().description,
        "Second."
    );
}

/// What a killed import, refresh or cleanup leaves: a half-unpacked staging
/// folder, a half-written source file, a tree half deleted.
fn leave_leftovers(cache: &Path) {
    let tmp = cache.join("tmp");
    std::fs::create_dir_all(tmp.join("import-Xq3kd/skills/a")).unwrap();
    std::fs::write(tmp.join("import-Xq3kd/skills/a/SKILL.md"), "---\nna").unwrap();
    std::fs::write(tmp.join("source-4fGh2"), "{\"source\": \"acme/to").unwrap();
    std::fs::create_dir_all(tmp.join("old-Pz81q/tree/skills")).unwrap();
}

#[tokio::test]
async fn the_next_run_deletes_what_an_interrupted_import_left() {
    let server = Server::start().await;
    server.publish("acme/tools", "main", &sha(1), tools(&sha(1), "A."));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    provider(&server, &cache)
        .import("acme/tools@main")
        .await
        .unwrap();

    // The next process that lists the kits cleans up.
    leave_leftovers(&cache);
    let next = provider(&server, &cache);
    assert_eq!(next.list_kits().await.unwrap().len(), 2);
    assert_eq!(files_under(&cache.join("tmp")), Vec::<String>::new());

    // So does one that lists the imported sources.
    leave_leftovers(&cache);
    let next = provider(&server, &cache);
    assert_eq!(next.imported().await.unwrap().len(), 1);
    assert_eq!(files_under(&cache.join("tmp")), Vec::<String>::new());

    // And a process that has been running for a while, at its next import.
    leave_leftovers(&cache);
    server.publish("acme/other", "HEAD", &sha(3), tools(&sha(3), "O."));
    next.import("acme/other").await.unwrap();
    assert_eq!(files_under(&cache.join("tmp")), Vec::<String>::new());
}

#[tokio::test]
async fn the_staging_folder_of_a_running_import_is_kept() {
    let server = Server::start().await;
    server.publish("acme/slow", "HEAD", &sha(4), tools(&sha(4), "S."));
    server.publish("acme/tools", "HEAD", &sha(5), tools(&sha(5), "T."));
    server.fail(Endpoint::Tarball, Fault::StallMidBody);
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let arrived = Arc::new(Notify::new());
    let signal = Arc::clone(&arrived);
    let slow = GitHub::builder()
        .allow("acme/*")
        .base_url(server.url())
        .cache_dir(&cache)
        .on_progress(move |_| signal.notify_one())
        .build()
        .unwrap();
    let running = tokio::spawn(async move { slow.import("acme/slow").await });
    arrived.notified().await;
    let staging = names(&cache.join("tmp"));
    assert_eq!(staging.len(), 1, "{staging:?}");
    assert!(staging[0].starts_with("import-"), "{staging:?}");

    // Another process lists, imports (staging and collecting) and removes
    // while the first one is still downloading.
    server.heal();
    let other = provider(&server, &cache);
    other.list_kits().await.unwrap();
    other.imported().await.unwrap();
    other.import("acme/tools").await.unwrap();
    other.remove("acme/tools").await.unwrap();
    assert_eq!(names(&cache.join("tmp")), staging);

    running.abort();
    server.stalled_download_closed().await;
}
