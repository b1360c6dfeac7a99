//! The GitHub API token never shows: not in logs (every level, every crate),
//! not in any error's Display or Debug, not in tool results, kit metadata,
//! the provider's Debug, or the cache's file names and files.
//!
//! One test in its own binary: it sets an environment variable and installs
//! the global tracing subscriber, so no other test runs beside it.

use skillkit_tests::github as support;

use serde_json::json;
use skillkit::providers::github::{ApiToken, Limits};
use skillkit::{Catalog, GitHub, KitProvider, ToolExecution, ToolOutcome};
use support::{Endpoint, Fault, Server, Tarball, files_under, gzip_bomb, sha, superpowers};

const TOKEN: &str = "ghp_SkillKitTestToken0123456789abcdefXYZ";
const TOKEN_VAR: &str = "SKILLKIT_GITHUB_SECRETS_TEST_TOKEN";

#[test]
fn the_token_never_appears_anywhere() {
    // SAFETY: this binary holds this one test, and no other thread runs yet.
    unsafe { std::env::set_var(TOKEN_VAR, TOKEN) };
    let captured = skillkit_tests::Logs::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut shown = runtime.block_on(exercise());

    let logs = captured.text();
    assert!(
        logs.contains("resolving commit"),
        "the capture saw no provider log"
    );
    assert!(
        logs.contains("archive entry skipped"),
        "the capture saw no warning"
    );
    shown.push(("logs".into(), logs));
    for (what, text) in &shown {
        assert!(!text.contains(TOKEN), "the token shows in {what}: {text}");
        assert!(
            !text.contains(&TOKEN[4..20]),
            "part of the token shows in {what}"
        );
    }
    assert!(shown.len() > 40, "only {} texts checked", shown.len());
}

/// Runs imports that succeed and fail in every way; returns every text shown.
async fn exercise() -> Vec<(String, String)> {
    let mut shown: Vec<(String, String)> = Vec::new();
    let server = Server::start().await;
    server.publish("obra/superpowers", "HEAD", &sha(1), superpowers(&sha(1)));
    let cut = superpowers(&sha(2));
    server.publish(
        "obra/truncated",
        "HEAD",
        &sha(2),
        cut[..cut.len() / 2].to_vec(),
    );
    server.publish("obra/bomb", "HEAD", &sha(3), gzip_bomb(64));
    let hostile = Tarball::new("obra", "hostile", &sha(4))
        .file("skills/ok/SKILL.md", &support::skill("ok", "Fine."))
        .inner("skills/link", tar::EntryType::Symlink, b"")
        .build();
    server.publish("obra/hostile", "HEAD", &sha(4), hostile);
    let empty = Tarball::new("obra", "empty", &sha(5))
        .file("README.md", b"nothing")
        .build();
    server.publish("obra/empty", "HEAD", &sha(5), empty);

    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    let limits = Limits {
        max_total_bytes: 8 << 20,
        ..Limits::default()
    };
    let from_value = GitHub::builder()
        .allow("obra/*")
        .api_token(ApiToken::new(TOKEN))
        .base_url(server.url())
        .cache_dir(&cache)
        .limits(limits)
        .build()
        .unwrap();
    let builder = GitHub::builder().api_token(ApiToken::new(TOKEN));
    shown.push(("builder Debug".into(), format!("{builder:?}")));
    let from_env = GitHub::builder()
        .allow("obra/*")
        .api_token(ApiToken::from_env(TOKEN_VAR))
        .base_url(server.url())
        .cache_dir(&cache)
        .limits(limits)
        .build()
        .unwrap();
    shown.push((
        "ApiToken Debug".into(),
        format!("{:?}", ApiToken::new(TOKEN)),
    ));

    for github in [&from_value, &from_env] {
        shown.push(("provider Debug".into(), format!("{github:?}")));
        let mut errors = Vec::new();
        errors.push(github.import("evil/repo").await.unwrap_err());
        errors.push(github.import("obra/..").await.unwrap_err());
        errors.push(github.import("obra/nothing").await.unwrap_err());
        errors.push(github.import("obra/superpowers@nope").await.unwrap_err());
        errors.push(github.import("obra/truncated").await.unwrap_err());
        errors.push(github.import("obra/bomb").await.unwrap_err());
        errors.push(github.import("obra/empty").await.unwrap_err());
        errors.push(github.remove("obra/never").await.unwrap_err());
        for (endpoint, fault) in [
            (Endpoint::Commits, Fault::Unauthorized),
            (Endpoint::Commits, Fault::Forbidden),
            (Endpoint::Commits, Fault::RateLimited(4_000_000_000)),
            (Endpoint::Commits, Fault::ServerError),
            (Endpoint::Tarball, Fault::NotFound),
            (Endpoint::Tarball, Fault::DropMidBody),
        ] {
            server.fail(endpoint, fault);
            errors.push(github.import("obra/superpowers").await.unwrap_err());
        }
        server.heal();
        for error in errors {
            shown.push(("error Display".into(), error.to_string()));
            shown.push(("error Debug".into(), format!("{error:?}")));
        }
        let done = github.import("obra/hostile").await.unwrap();
        shown.push(("import result".into(), format!("{done:?}")));
    }

    // Every request carried the token: the test checks something real.
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {TOKEN}"))),
        "a request went without the token"
    );

    // The archive host of another origin never sees the token.
    let archives = Server::start().await;
    archives.publish("obra/elsewhere", "HEAD", &sha(6), superpowers(&sha(6)));
    archives.publish("obra/superpowers", "HEAD", &sha(1), superpowers(&sha(1)));
    server.publish("obra/elsewhere", "HEAD", &sha(6), Vec::new());
    server.redirect_archives_to(&archives);
    let done = from_value.import("obra/elsewhere").await.unwrap();
    assert_eq!(done.skills.len(), 14);
    assert_eq!(archives.requests().len(), 1);
    assert!(
        archives
            .requests()
            .iter()
            .all(|r| r.authorization.is_none())
    );

    // The built-in tools: results and errors.
    let catalog = Catalog::builder().provider(from_env.clone()).build();
    let snapshot = catalog.snapshot().await;
    for (tool, input) in [
        ("github:import", json!({"source": "obra/superpowers"})),
        ("github:import", json!({"source": "obra/nothing"})),
        ("github:list", json!({})),
        ("github:refresh", json!({"source": "obra/superpowers"})),
    ] {
        let skill = std::sync::Arc::clone(snapshot.skill(tool).unwrap());
        let executor = snapshot.tool(tool).unwrap();
        let outcome: ToolOutcome =
            skillkit::tool::call(&*executor, ToolExecution::new(skill, input)).await;
        shown.push((format!("{tool} outcome"), format!("{outcome:?}")));
    }

    assert!(
        archives
            .requests()
            .iter()
            .all(|r| r.authorization.is_none())
    );

    // Kit metadata, skills, and the cache on disk.
    for kit in from_env.list_kits().await.unwrap() {
        shown.push((
            "kit metadata".into(),
            serde_json::to_string(&kit.metadata).unwrap(),
        ));
        shown.push(("kit Debug".into(), format!("{kit:?}")));
    }
    server.stop();
    let offline = from_value.refresh("obra/superpowers").await.unwrap_err();
    shown.push(("network error".into(), format!("{offline} {offline:?}")));
    let names = files_under(&cache);
    assert!(names.iter().any(|n| n.starts_with("sources/")));
    for name in &names {
        shown.push(("cache file name".into(), name.clone()));
        let path = cache.join(name);
        if name.starts_with("sources/") && path.is_file() {
            shown.push(("cache file".into(), std::fs::read_to_string(path).unwrap()));
        }
    }
    shown
}
