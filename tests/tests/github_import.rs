//! The GitHub provider against a GitHub look-alike on 127.0.0.1: imports,
//! the cache (zero requests, restarts, refresh, concurrency) and the built-in
//! `github` kit.

use skillkit_tests::github as support;

use std::sync::{Arc, Mutex};

use serde_json::json;
use skillkit::providers::github::{GitHubError, Progress};
use skillkit::{Catalog, GitHub, KitProvider, ToolExecution, ToolOutcome};
use support::{Server, Tarball, files_under, sha, skill, superpowers};

const SUPERPOWERS: [&str; 14] = [
    "brainstorming",
    "dispatching-parallel-agents",
    "executing-plans",
    "finishing-a-development-branch",
    "receiving-code-review",
    "requesting-code-review",
    "subagent-driven-development",
    "systematic-debugging",
    "test-driven-development",
    "using-git-worktrees",
    "using-superpowers",
    "verification-before-completion",
    "writing-plans",
    "writing-skills",
];

fn provider(server: &Server, cache: &std::path::Path) -> GitHub {
    GitHub::builder()
        .allow("obra/*")
        .allow("acme/tools")
        .base_url(server.url())
        .cache_dir(cache)
        .build()
        .unwrap()
}

#[tokio::test]
async fn superpowers_imports_fourteen_skills_and_is_then_served_offline() {
    let server = Server::start().await;
    server.publish("obra/superpowers", "HEAD", &sha(1), superpowers(&sha(1)));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let progress: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let seen = Arc::clone(&progress);
    let github = GitHub::builder()
        .allow("Obra/*")
        .base_url(server.url())
        .cache_dir(&cache)
        .on_progress(move |p| seen.lock().unwrap().push(p.clone()))
        .build()
        .unwrap();

    let done = github.import("obra/superpowers").await.unwrap();
    let expected: Vec<String> = SUPERPOWERS
        .iter()
        .map(|s| format!("obra/superpowers:{s}"))
        .collect();
    assert_eq!(done.kit, "obra/superpowers");
    assert_eq!(done.sha, sha(1));
    assert!(done.downloaded);
    assert_eq!(done.skills, expected);
    assert!(done.skipped.is_empty(), "{:?}", done.skipped);

    // The archive was fetched by SHA through the redirect, after resolving.
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/repos/obra/superpowers/commits/HEAD".to_owned(),
            format!("/repos/obra/superpowers/tarball/{}", sha(1)),
            format!("/codeload/obra/superpowers/legacy.tar.gz/{}", sha(1)),
        ]
    );

    // Progress went up to the whole archive, whose size the server announced.
    let progress = progress.lock().unwrap().clone();
    let size = superpowers(&sha(1)).len() as u64;
    let last = progress.last().unwrap();
    assert_eq!((last.received, last.total), (size, Some(size)));
    assert_eq!(last.source, "obra/superpowers");
    assert!(progress.windows(2).all(|w| w[0].received < w[1].received));

    // Served with the Local rules, with metadata naming the commit.
    let kits = github.list_kits().await.unwrap();
    let names: Vec<&str> = kits.iter().map(|k| k.name.as_ref()).collect();
    assert_eq!(names, ["github", "obra/superpowers"]);
    let kit = &kits[1];
    assert_eq!(kit.skills.len(), 14);
    assert_eq!(kit.metadata["sha"], sha(1));
    assert_eq!(kit.metadata["source"], "obra/superpowers");
    assert_eq!(kit.metadata["provider"], "github");
    assert_eq!(kit.origin, skillkit::Origin::GitHub);
    let brainstorming = kit.skill("obra/superpowers:brainstorming").unwrap();
    assert!(brainstorming.description.starts_with("You MUST use this"));
    assert!(brainstorming.location.as_ref().unwrap().starts_with(&cache));

    // Cached kits cost no request: listing, a catalog, importing again.
    let before = server.requests().len();
    let catalog = Catalog::builder().provider(github.clone()).build();
    assert!(
        catalog
            .get_skill("obra/superpowers:writing-plans")
            .await
            .is_some()
    );
    assert_eq!(github.list_kits().await.unwrap().len(), 2);
    let again = github.import("OBRA/SuperPowers").await.unwrap();
    assert!(!again.downloaded);
    assert_eq!(again.skills.len(), 14);
    assert_eq!(server.requests().len(), before);

    // The network goes down and the application restarts: still served.
    server.stop();
    let restarted = provider(&server, &cache);
    let kits = restarted.list_kits().await.unwrap();
    assert_eq!(kits[1].skills.len(), 14);
    let err = restarted.refresh("obra/superpowers").await.unwrap_err();
    assert!(matches!(err, GitHubError::Network { .. }), "{err:?}");
    assert!(
        err.to_string().contains("check the network connection"),
        "{err}"
    );
    assert_eq!(restarted.list_kits().await.unwrap()[1].skills.len(), 14);

    // Nothing outside the cache directory.
    assert_eq!(files_under(dir.path())[0], "cache");
    assert!(
        files_under(dir.path())
            .iter()
            .all(|p| p.starts_with("cache"))
    );
}

#[tokio::test]
async fn subpath_imports_keep_their_own_kit_across_restarts() {
    let server = Server::start().await;
    let tarball = Tarball::new("acme", "tools", &sha(2))
        .file("README.md", b"# tools")
        .file(
            "plugins/review/skills/lint/SKILL.md",
            &skill("lint", "Lint code."),
        )
        .file(
            "plugins/review/skills/style/SKILL.md",
            &skill("style", "Check style."),
        )
        .file("plugins/other/skills/x/SKILL.md", &skill("x", "Other."))
        .build();
    server.publish("acme/tools", "v1", &sha(2), tarball);
    let dir = tempfile::tempdir().unwrap();
    let github = provider(&server, dir.path());

    let done = github.import("acme/tools/plugins/review@v1").await.unwrap();
    assert_eq!(done.kit, "acme/tools/plugins/review@v1");
    assert_eq!(
        done.skills,
        [
            "acme/tools/plugins/review@v1:lint",
            "acme/tools/plugins/review@v1:style"
        ]
    );
    let whole = github.import("acme/tools@v1").await.unwrap();
    assert_eq!(whole.skills.len(), 3);
    // Each folder is unpacked from its own download.
    assert_eq!(server.tarball_requests(), 2);

    drop(github);
    let restarted = provider(&server, dir.path());
    let kits = restarted.list_kits().await.unwrap();
    let names: Vec<&str> = kits.iter().map(|k| k.name.as_ref()).collect();
    assert_eq!(
        names,
        ["github", "acme/tools/plugins/review@v1", "acme/tools@v1"]
    );
    assert_eq!(kits[1].metadata["path"], "plugins/review");
    assert_eq!(kits[1].metadata["ref"], "v1");
    let sources: Vec<String> = restarted
        .imported()
        .await
        .unwrap()
        .iter()
        .map(|s| s.reference.to_string())
        .collect();
    assert_eq!(sources, ["acme/tools/plugins/review@v1", "acme/tools@v1"]);

    // A folder that does not exist is named in the error.
    let err = restarted
        .import("acme/tools/plugins/nope@v1")
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("folder `plugins/nope` was not found"),
        "{err}"
    );
}

#[tokio::test]
async fn refresh_downloads_only_when_the_commit_changed_and_swaps_atomically() {
    let server = Server::start().await;
    let v1 = Tarball::new("acme", "tools", &sha(3))
        .file("skills/a/SKILL.md", &skill("a", "First A."))
        .file("skills/b/SKILL.md", &skill("b", "B."))
        .build();
    server.publish("acme/tools", "main", &sha(3), v1);
    let dir = tempfile::tempdir().unwrap();
    let github = provider(&server, dir.path());
    github.import("acme/tools@main").await.unwrap();
    assert_eq!(server.tarball_requests(), 1);

    let same = github.refresh("acme/tools@main").await.unwrap();
    assert_eq!(same.previous_sha.as_deref(), Some(sha(3).as_str()));
    assert_eq!(same.sha, sha(3));
    assert!(!same.downloaded);
    assert_eq!(
        server.tarball_requests(),
        1,
        "unchanged SHA: no archive request"
    );
    assert_eq!(server.count("/repos/acme/tools/commits/main"), 2);

    let v2 = Tarball::new("acme", "tools", &sha(4))
        .file("skills/a/SKILL.md", &skill("a", "Second A."))
        .file("skills/c/SKILL.md", &skill("c", "C."))
        .build();
    server.publish("acme/tools", "main", &sha(4), v2);
    let changed = github.refresh("acme/tools@main").await.unwrap();
    assert!(changed.downloaded);
    assert_eq!(changed.previous_sha.as_deref(), Some(sha(3).as_str()));
    assert_eq!(changed.skills, ["acme/tools@main:a", "acme/tools@main:c"]);
    assert_eq!(server.tarball_requests(), 2);

    let kits = github.list_kits().await.unwrap();
    assert_eq!(kits.len(), 2);
    assert_eq!(kits[1].metadata["sha"], sha(4));
    assert_eq!(
        kits[1].skill("acme/tools@main:a").unwrap().description,
        "Second A."
    );
    assert!(kits[1].skill("acme/tools@main:b").is_none());
    let imported = github.imported().await.unwrap();
    assert_eq!(imported.len(), 1);
    assert_eq!(imported[0].sha, sha(4));

    github.remove("acme/tools@main").await.unwrap();
    assert_eq!(github.list_kits().await.unwrap().len(), 1);
    let err = github.remove("acme/tools@main").await.unwrap_err();
    assert!(err.to_string().contains("is not imported"), "{err}");
    let err = github.refresh("acme/tools@main").await.unwrap_err();
    assert!(matches!(err, GitHubError::NotImported { .. }), "{err:?}");
}

#[tokio::test]
async fn concurrent_imports_of_one_repo_end_with_one_consistent_entry() {
    let server = Server::start().await;
    server.publish("obra/superpowers", "HEAD", &sha(5), superpowers(&sha(5)));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");

    // One provider: the second import waits for the first and reuses it.
    let github = provider(&server, &cache);
    let (a, b) = tokio::join!(
        github.import("obra/superpowers"),
        github.import("obra/superpowers")
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.skills, b.skills);
    assert_eq!(server.tarball_requests(), 1);
    github.remove("obra/superpowers").await.unwrap();

    // Two providers on one cache (two processes) and a new commit: both
    // download at once (the server holds each archive until both asked), both
    // try to rename their tree into place.
    server.publish("obra/superpowers", "HEAD", &sha(7), superpowers(&sha(7)));
    server.gate_archives(2);
    let first = provider(&server, &cache);
    let second = provider(&server, &cache);
    let (a, b) = tokio::join!(
        first.import("obra/superpowers"),
        second.import("obra/superpowers")
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(a.downloaded && b.downloaded);
    assert_eq!(
        (a.sha.as_str(), b.sha.as_str()),
        (sha(7).as_str(), sha(7).as_str())
    );
    assert_eq!(server.tarball_requests(), 3);

    let imported = first.imported().await.unwrap();
    assert_eq!(imported.len(), 1);
    assert_eq!(imported[0].sha, sha(7));
    let trees: Vec<String> = files_under(&cache.join("trees"))
        .into_iter()
        .filter(|p| !p.contains('/') && p.contains(&sha(7)))
        .collect();
    assert_eq!(trees.len(), 1, "{trees:?}");
    assert!(files_under(&cache.join("tmp")).is_empty());
    for github in [first, second] {
        let kits = github.list_kits().await.unwrap();
        assert_eq!(kits[1].skills.len(), 14);
    }
}

#[tokio::test]
async fn builtin_skills_run_as_tools_through_a_catalog() {
    let server = Server::start().await;
    server.publish("obra/superpowers", "HEAD", &sha(6), superpowers(&sha(6)));
    let dir = tempfile::tempdir().unwrap();
    let github = provider(&server, dir.path());
    let catalog = Catalog::builder().provider(github.clone()).build();

    let snapshot = catalog.snapshot().await;
    let tools: Vec<String> = snapshot
        .entries()
        .filter(|e| e.tool.is_some())
        .map(|e| e.skill.name.to_string())
        .collect();
    assert_eq!(
        tools,
        [
            "github:import",
            "github:list",
            "github:refresh",
            "github:remove"
        ]
    );
    let import = snapshot.tool("github:import").unwrap();
    let import_skill = snapshot.skill("github:import").unwrap();
    assert_eq!(
        import.definition(import_skill).input_schema["required"],
        json!(["source"])
    );
    let run = |name: &str, input: serde_json::Value| {
        let skill = std::sync::Arc::clone(snapshot.skill(name).unwrap());
        let tool = snapshot.tool(name).unwrap();
        async move { skillkit::tool::call(&*tool, ToolExecution::new(skill, input)).await }
    };

    let ToolOutcome::Ok(output) = run("github:import", json!({"source": "obra/superpowers"})).await
    else {
        panic!("import failed");
    };
    assert_eq!(output["skills"].as_array().unwrap().len(), 14);
    assert!(
        output["message"]
            .as_str()
            .unwrap()
            .contains("from the next turn")
    );
    // The next query serves the imported skills.
    assert!(
        catalog
            .get_skill("obra/superpowers:systematic-debugging")
            .await
            .is_some()
    );

    let ToolOutcome::Ok(listed) = run("github:list", json!({})).await else {
        panic!("list failed");
    };
    assert_eq!(listed["sources"][0]["source"], "obra/superpowers");
    assert_eq!(listed["allowed_sources"], json!(["obra/*", "acme/tools"]));

    let ToolOutcome::Ok(refreshed) = run("github:refresh", json!("obra/superpowers")).await else {
        panic!("refresh failed");
    };
    assert!(
        refreshed["message"]
            .as_str()
            .unwrap()
            .contains("up to date")
    );

    let ToolOutcome::Error(refused) = run("github:import", json!({"source": "evil/repo"})).await
    else {
        panic!("a source outside allowed_sources was imported");
    };
    assert!(
        refused.contains("`evil/repo` is not an allowed source")
            && refused.contains("`obra/*`, `acme/tools`"),
        "{refused}"
    );
    let ToolOutcome::Error(missing) = run("github:import", json!({})).await else {
        panic!("an import without source ran");
    };
    assert!(missing.contains("needs a `source`"), "{missing}");

    let ToolOutcome::Ok(_) = run("github:remove", json!({"source": "obra/superpowers"})).await
    else {
        panic!("remove failed");
    };
    assert!(
        catalog
            .get_skill("obra/superpowers:systematic-debugging")
            .await
            .is_none()
    );
}

#[tokio::test]
async fn sources_outside_the_allowed_patterns_make_no_request() {
    let server = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let github = provider(&server, dir.path());
    for source in ["evil/repo", "acme/other", "obraa/superpowers"] {
        let err = github.import(source).await.unwrap_err();
        assert!(matches!(err, GitHubError::NotAllowed { .. }), "{err:?}");
    }
    let nothing_allowed = GitHub::builder()
        .base_url(server.url())
        .cache_dir(dir.path())
        .build()
        .unwrap();
    let err = nothing_allowed
        .import("obra/superpowers")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("`allowed_sources` is empty"),
        "{err}"
    );
    for bad in [
        "obra/..",
        "../obra",
        "obra",
        "obra/x/../../y",
        "obra/x@a..b",
    ] {
        let err = github.import(bad).await.unwrap_err();
        assert!(
            matches!(err, GitHubError::InvalidSource { .. }),
            "{bad}: {err:?}"
        );
    }
    assert!(server.requests().is_empty());
    assert!(files_under(dir.path()).is_empty());
}
