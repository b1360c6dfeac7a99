//! The GitHub provider against a hostile or failing server: every failure
//! gives a message to act on, writes nothing outside the cache, leaves no
//! cache entry, and never shadows a good import.

use skillkit_tests::github as support;

use std::path::Path;
use std::sync::Arc;

use skillkit::providers::github::{ApiToken, GitHubError, Limits};
use skillkit::{GitHub, KitProvider};
use support::{Endpoint, Fault, Server, Tarball, files_under, gzip_bomb, sha, skill, superpowers};
use tar::EntryType;
use tokio::sync::Notify;

fn provider(server: &Server, cache: &Path, limits: Limits) -> GitHub {
    GitHub::builder()
        .allow("*")
        .base_url(server.url())
        .cache_dir(cache)
        .limits(limits)
        .build()
        .unwrap()
}

/// Nothing was written outside `root/cache`, and the cache holds no import:
/// no source file, no tree, no staging leftover.
async fn assert_no_entry(github: &GitHub, root: &Path) {
    assert!(github.imported().await.unwrap().is_empty());
    let cache = root.join("cache");
    for sub in ["sources", "trees", "tmp"] {
        let left = files_under(&cache.join(sub));
        assert!(left.is_empty(), "{sub} holds {left:?}");
    }
    let outside: Vec<String> = files_under(root)
        .into_iter()
        .filter(|p| !p.starts_with("cache"))
        .collect();
    assert!(outside.is_empty(), "written outside the cache: {outside:?}");
    assert_eq!(github.list_kits().await.unwrap().len(), 1);
}

/// Imports `source` from a fresh cache and returns the error.
async fn failed_import(server: &Server, source: &str, limits: Limits) -> GitHubError {
    let root = tempfile::tempdir().unwrap();
    let github = provider(server, &root.path().join("cache"), limits);
    let err = github.import(source).await.unwrap_err();
    assert_no_entry(&github, root.path()).await;
    err
}

#[tokio::test]
async fn http_failures_name_the_cause_and_leave_no_entry() {
    let server = Server::start().await;
    server.publish("obra/superpowers", "HEAD", &sha(1), superpowers(&sha(1)));
    let limits = Limits::default();

    let err = failed_import(&server, "obra/nothing", limits).await;
    assert!(
        err.to_string()
            .starts_with("repository `obra/nothing` was not found on GitHub"),
        "{err}"
    );
    let err = failed_import(&server, "obra/superpowers@nope", limits).await;
    assert!(
        err.to_string()
            .starts_with("ref `nope` of `obra/superpowers` was not found"),
        "{err}"
    );

    server.fail(Endpoint::Commits, Fault::RateLimited(4_000_000_000));
    let err = failed_import(&server, "obra/superpowers", limits).await;
    let text = err.to_string();
    assert!(
        matches!(
            err,
            GitHubError::RateLimited {
                has_token: false,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        text.contains("until Tue, 02 Oct 2096 07:06:40 GMT"),
        "{text}"
    );
    assert!(text.contains("configure a GitHub API token"), "{text}");

    server.fail(Endpoint::Commits, Fault::Unauthorized);
    let err = failed_import(&server, "obra/superpowers", limits).await;
    assert!(
        err.to_string()
            .contains("requires authentication (HTTP 401)"),
        "{err}"
    );
    let root = tempfile::tempdir().unwrap();
    let with_token = GitHub::builder()
        .allow("*")
        .api_token(ApiToken::new("not-a-valid-token"))
        .base_url(server.url())
        .cache_dir(root.path().join("cache"))
        .build()
        .unwrap();
    let err = with_token.import("obra/superpowers").await.unwrap_err();
    assert!(err.to_string().contains("rejected the API token"), "{err}");
    assert_no_entry(&with_token, root.path()).await;

    server.fail(Endpoint::Commits, Fault::Forbidden);
    let err = failed_import(&server, "obra/superpowers", limits).await;
    assert!(
        err.to_string()
            .contains("refused access to `obra/superpowers` (HTTP 403)"),
        "{err}"
    );

    server.fail(Endpoint::Commits, Fault::ServerError);
    let err = failed_import(&server, "obra/superpowers", limits).await;
    assert!(
        err.to_string().contains("HTTP 500 (a server error)"),
        "{err}"
    );
    assert!(err.to_string().contains("try again"), "{err}");

    server.fail(Endpoint::Tarball, Fault::ServerError);
    let err = failed_import(&server, "obra/superpowers", limits).await;
    assert!(
        err.to_string()
            .contains("HTTP 500 (a server error) while downloading"),
        "{err}"
    );

    server.fail(Endpoint::Tarball, Fault::DropMidBody);
    let err = failed_import(&server, "obra/superpowers", limits).await;
    assert!(matches!(err, GitHubError::Interrupted { .. }), "{err:?}");
    assert!(err.to_string().contains("was interrupted"), "{err}");

    server.heal();
    server.stop();
    let err = failed_import(&server, "obra/superpowers", limits).await;
    assert!(matches!(err, GitHubError::Network { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("cannot reach 127.0.0.1:"),
        "{err}"
    );
}

#[tokio::test]
async fn broken_and_oversized_archives_abort_cleanly() {
    let server = Server::start().await;
    let good = superpowers(&sha(2));
    server.publish(
        "obra/truncated",
        "HEAD",
        &sha(3),
        good[..good.len() * 3 / 5].to_vec(),
    );
    server.publish(
        "obra/garbage",
        "HEAD",
        &sha(4),
        b"this is not gzip".to_vec(),
    );
    let bomb = gzip_bomb(1024);
    assert!(bomb.len() < 2 << 20, "the bomb is {} bytes", bomb.len());
    server.publish("obra/bomb", "HEAD", &sha(5), bomb);
    server.publish("obra/superpowers", "HEAD", &sha(2), good);
    let readme_only = Tarball::new("obra", "empty", &sha(6))
        .file("README.md", b"# nothing here")
        .file("docs/SKILL.txt", b"not a skill")
        .build();
    server.publish("obra/empty", "HEAD", &sha(6), readme_only);
    let unparsable = Tarball::new("obra", "broken", &sha(7))
        .file("skills/a/SKILL.md", b"---\nname: [unclosed\n---\n")
        .build();
    server.publish("obra/broken", "HEAD", &sha(7), unparsable);
    let defaults = Limits::default();

    let err = failed_import(&server, "obra/truncated", defaults).await;
    assert!(matches!(err, GitHubError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("is damaged"), "{err}");
    let err = failed_import(&server, "obra/garbage", defaults).await;
    assert!(matches!(err, GitHubError::Corrupt { .. }), "{err:?}");

    // About 1 GiB once unpacked, 1 MiB on the wire.
    let bomb_limits = Limits {
        max_total_bytes: 16 << 20,
        ..Limits::default()
    };
    let err = failed_import(&server, "obra/bomb", bomb_limits).await;
    assert!(
        err.to_string()
            .contains("its size (downloaded or unpacked) exceeds the limit of 16 MiB"),
        "{err}"
    );

    let few_files = Limits {
        max_files: 10,
        ..Limits::default()
    };
    let err = failed_import(&server, "obra/superpowers", few_files).await;
    assert!(
        err.to_string()
            .contains("number of files and folders exceeds the limit of 10 entries"),
        "{err}"
    );

    let small_files = Limits {
        max_file_bytes: 4096,
        ..Limits::default()
    };
    let err = failed_import(&server, "obra/superpowers", small_files).await;
    assert!(
        err.to_string().contains("the size of file `skills/"),
        "{err}"
    );
    assert!(err.to_string().contains("limit of 4096 bytes"), "{err}");

    let err = failed_import(&server, "obra/empty", defaults).await;
    assert!(
        err.to_string().contains(
            "no skills found in `obra/empty`; nothing was imported. Expected `skills/<name>/SKILL.md`"
        ),
        "{err}"
    );
    let err = failed_import(&server, "obra/broken", defaults).await;
    assert!(err.to_string().contains("(1 file failed to parse"), "{err}");
}

#[tokio::test]
async fn unsafe_entries_are_skipped_and_nothing_lands_outside_the_cache() {
    let server = Server::start().await;
    let root = tempfile::tempdir().unwrap();
    let escaped = root.path().join("escaped-abs.md");
    let tarball = Tarball::new("acme", "evil", &sha(8))
        .file("skills/ok/SKILL.md", &skill("ok", "Fine."))
        .entry(escaped.to_str().unwrap(), EntryType::Regular, b"absolute")
        .inner("../../escaped-up.md", EntryType::Regular, b"up")
        .inner("../../../escaped-up.md", EntryType::Regular, b"up")
        .inner(
            "skills/../../../../escaped-up.md",
            EntryType::Regular,
            b"up",
        )
        .inner("skills/link", EntryType::Symlink, b"")
        .inner("skills/hard", EntryType::Link, b"")
        .inner("skills/tty", EntryType::Char, b"")
        .inner("skills/disk", EntryType::Block, b"")
        .inner("skills/pipe", EntryType::Fifo, b"")
        .entry(
            "other-top/skills/x/SKILL.md",
            EntryType::Regular,
            &skill("x", "Elsewhere."),
        )
        .build();
    server.publish("acme/evil", "HEAD", &sha(8), tarball);
    let github = provider(&server, &root.path().join("cache"), Limits::default());

    let done = github.import("acme/evil").await.unwrap();
    assert_eq!(done.skills, ["acme/evil:ok"]);
    let reasons = [
        "an absolute path",
        "its path contains `..`",
        "its path contains `..`",
        "its path contains `..`",
        "a symbolic link",
        "a hard link",
        "a device",
        "a device",
        "a FIFO",
        "outside the archive's top folder",
    ];
    assert_eq!(done.skipped.len(), reasons.len(), "{:?}", done.skipped);
    for (skipped, reason) in done.skipped.iter().zip(reasons) {
        assert!(skipped.contains(reason), "{skipped} should say {reason}");
    }

    assert!(!escaped.exists());
    let outside: Vec<String> = files_under(root.path())
        .into_iter()
        .filter(|p| !p.starts_with("cache"))
        .collect();
    assert!(outside.is_empty(), "{outside:?}");
    let cache_top: Vec<String> = files_under(&root.path().join("cache"))
        .into_iter()
        .filter(|p| !p.contains('/'))
        .collect();
    assert_eq!(cache_top, ["lock", "sources", "tmp", "trees"]);
    assert!(files_under(&root.path().join("cache/tmp")).is_empty());
    let tree = &github.imported().await.unwrap()[0].dir;
    let mut kinds = Vec::new();
    for path in files_under(tree) {
        let meta = std::fs::symlink_metadata(tree.join(&path)).unwrap();
        kinds.push((path, meta.is_file() || meta.is_dir()));
    }
    assert_eq!(
        kinds,
        [
            ("skills".to_owned(), true),
            ("skills/ok".to_owned(), true),
            ("skills/ok/SKILL.md".to_owned(), true)
        ]
    );
}

#[tokio::test]
async fn a_failed_refresh_never_shadows_the_good_import() {
    let server = Server::start().await;
    server.publish("obra/superpowers", "main", &sha(9), superpowers(&sha(9)));
    let root = tempfile::tempdir().unwrap();
    let github = provider(
        &server,
        &root.path().join("cache"),
        Limits {
            max_total_bytes: 16 << 20,
            ..Limits::default()
        },
    );
    github.import("obra/superpowers@main").await.unwrap();

    let fresh = superpowers(&sha(10));
    let failures = [
        (sha(10), fresh[..fresh.len() / 2].to_vec(), "is damaged"),
        (sha(11), gzip_bomb(64), "exceeds the limit"),
        (
            sha(12),
            Tarball::new("obra", "superpowers", &sha(12))
                .file("README.md", b"moved")
                .build(),
            "no skills found",
        ),
    ];
    for (commit, tarball, expected) in failures {
        server.publish("obra/superpowers", "main", &commit, tarball);
        let err = github.refresh("obra/superpowers@main").await.unwrap_err();
        assert!(err.to_string().contains(expected), "{err}");
        let imported = github.imported().await.unwrap();
        assert_eq!(imported.len(), 1);
        assert_eq!(imported[0].sha, sha(9));
        let kits = github.list_kits().await.unwrap();
        assert_eq!(kits[1].skills.len(), 14);
        assert_eq!(kits[1].metadata["sha"], sha(9));
        assert!(files_under(&root.path().join("cache/tmp")).is_empty());
        let trees: Vec<String> = files_under(&root.path().join("cache/trees"))
            .into_iter()
            .filter(|p| !p.contains('/'))
            .collect();
        assert_eq!(trees.len(), 1, "{trees:?}");
    }

    server.fail(Endpoint::Tarball, Fault::DropMidBody);
    server.publish("obra/superpowers", "main", &sha(13), superpowers(&sha(13)));
    let err = github.refresh("obra/superpowers@main").await.unwrap_err();
    assert!(err.to_string().contains("was interrupted"), "{err}");
    assert_eq!(github.imported().await.unwrap()[0].sha, sha(9));
}

#[tokio::test]
async fn a_cancelled_import_stops_the_download_and_leaves_no_entry() {
    let server = Server::start().await;
    server.publish("obra/superpowers", "HEAD", &sha(14), superpowers(&sha(14)));
    server.fail(Endpoint::Tarball, Fault::StallMidBody);
    let root = tempfile::tempdir().unwrap();
    let arrived = Arc::new(Notify::new());
    let signal = Arc::clone(&arrived);
    let github = GitHub::builder()
        .allow("obra/*")
        .base_url(server.url())
        .cache_dir(root.path().join("cache"))
        .on_progress(move |_| signal.notify_one())
        .build()
        .unwrap();

    tokio::select! {
        result = github.import("obra/superpowers") => panic!("the import ended: {result:?}"),
        () = arrived.notified() => {}
    }
    // The import was dropped mid-body: the download stops.
    server.stalled_download_closed().await;
    assert!(github.imported().await.unwrap().is_empty());
    assert_eq!(github.list_kits().await.unwrap().len(), 1);
    // The unpacker sees the end of the body and deletes its staging directory.
    let tmp = root.path().join("cache/tmp");
    for _ in 0..500 {
        if files_under(&tmp).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_no_entry(&github, root.path()).await;

    server.heal();
    let done = github.import("obra/superpowers").await.unwrap();
    assert_eq!(done.skills.len(), 14);
}

/// A server answering 500 fails the refresh (a `GitHubError` for its
/// caller) and never a catalog query: the catalog reads the cache only, so
/// the built-in kit and the earlier import are served with no
/// `ProviderFailure` and no diagnostic.
#[tokio::test]
async fn a_failing_server_fails_the_refresh_not_the_catalog() {
    let server = Server::start().await;
    server.publish("obra/superpowers", "HEAD", &sha(1), superpowers(&sha(1)));
    let root = tempfile::tempdir().unwrap();
    let github = provider(&server, &root.path().join("cache"), Limits::default());
    github.import("obra/superpowers").await.unwrap();
    let catalog = skillkit::Catalog::builder()
        .provider(github.clone())
        .build();

    server.fail(Endpoint::Commits, Fault::ServerError);
    let err = github.refresh("obra/superpowers").await.unwrap_err();
    assert!(
        matches!(err, GitHubError::Server { status: 500, .. }),
        "{err:?}"
    );
    let snapshot = catalog.snapshot().await;
    assert!(snapshot.failures().is_empty(), "{:?}", snapshot.failures());
    assert!(
        snapshot.diagnostics().is_empty(),
        "{:?}",
        snapshot.diagnostics()
    );
    let kits: Vec<&str> = snapshot.kits().iter().map(|k| k.name.as_ref()).collect();
    assert_eq!(kits, ["github", "obra/superpowers"]);
}
