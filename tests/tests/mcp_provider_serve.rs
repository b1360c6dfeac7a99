//! The `McpSkills` provider against our own server (`skillkit serve`'s
//! `McpServer`, over Streamable HTTP on 127.0.0.1) through the MCP skills
//! extension: `skills/list` with digested manifests, the `SKILL.md` read
//! and checked on activation, and a change on disk seen through the
//! server's list-changed notification.
//! It fails on a server that only lists `skill://` resources (the
//! listing's `listing` metadata says which way it was read).

use std::time::Duration;

use skillkit::mcp::{HttpOptions, McpServer};
use skillkit::mcp_client::Endpoint;
use skillkit::{Catalog, Local, McpSkills};
use skillkit_tests::agent::until_skill;
use skillkit_tests::{skill_md, write};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_own_server_is_read_through_the_skills_extension() {
    let dir = tempfile::tempdir().unwrap();
    let url = upstream(dir.path()).await;
    let skill = dir.path().join("notes/skills/summarize/SKILL.md");

    let catalog = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(&url)).named("remote"))
        .build();
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(catalog.failures().is_empty(), "{:?}", catalog.failures());
    assert_eq!(names, ["remote:summarize"]);
    let listed = catalog.get_kit("remote").await.unwrap();
    assert_eq!(listed.metadata["listing"], "skills-extension");

    let summarize = catalog.get_skill("remote:summarize").await.unwrap();
    summarize.body.load().await.unwrap();
    assert_eq!(
        summarize.render("report.txt", None).unwrap(),
        "Summarize report.txt.\n"
    );

    write(
        &skill,
        skill_md(
            "summarize",
            "Summarize, edited.",
            "Summarize $ARGUMENTS briefly.\n",
        ),
    );
    let edited = until_skill(&catalog, "remote:summarize", |s| {
        s.description == "Summarize, edited."
    })
    .await;
    edited.body.load().await.unwrap();
    assert_eq!(
        edited.render("it", None).unwrap(),
        "Summarize it briefly.\n"
    );
}

/// A skill read from one server and served again by ours (`skillkit serve`
/// over an `McpSkills` provider) is listed by `skills/list` before anyone
/// activates it (its files are not fetched yet: its `SKILL.md` is given as
/// generated), and reading it fetches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_from_a_server_is_served_again_before_it_is_activated() {
    use rmcp::ServiceExt;
    use rmcp::model::{GetSkillRequestParams, ReadResourceRequestParams, ResourceContents};

    let dir = tempfile::tempdir().unwrap();
    let url = upstream(dir.path()).await;

    let catalog = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(&url)).named("remote"))
        .build();
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = McpServer::new(catalog).serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_end).await.unwrap();

    let listed = client.list_all_skills().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, ["skill://remote/summarize/SKILL.md"]);
    assert_eq!(listed[0].frontmatter.description, "Summarize a document.");

    let read = async |uri: &str| {
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap();
        match &read.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("{uri} is text: {other:?}"),
        }
    };
    let text = read("skill://remote/summarize/SKILL.md").await;
    assert!(text.contains("Summarize $ARGUMENTS."), "{text}");
    assert_eq!(
        read("skill://remote/summarize/template.md").await,
        "# Summary\n"
    );
    let got = client
        .get_skill(GetSkillRequestParams::new(
            "skill://remote/summarize/SKILL.md",
        ))
        .await
        .unwrap();
    assert_eq!(got.skill.uri, "skill://remote/summarize/SKILL.md");
    let _ = client.cancel().await;
}

/// Our server over Streamable HTTP on 127.0.0.1 (its URL), serving the kit
/// `notes` in `dir`: the skill `summarize` and a `template.md` beside it.
async fn upstream(dir: &std::path::Path) -> String {
    let kit = dir.join("notes");
    write(
        kit.join("skills/summarize/SKILL.md"),
        skill_md(
            "summarize",
            "Summarize a document.",
            "Summarize $ARGUMENTS.\n",
        ),
    );
    write(kit.join("skills/summarize/template.md"), "# Summary\n");
    let served = Catalog::builder().provider(Local::new(&kit)).build();
    let server = McpServer::new(served).watch(Some(Duration::from_millis(50)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = server.router(HttpOptions::new());
    tokio::spawn(async move { axum_serve(listener, app).await });
    url
}

async fn axum_serve(listener: tokio::net::TcpListener, app: skillkit::mcp::axum::Router) {
    let _ = skillkit::mcp::axum::serve(listener, app).await;
}

/// A manifest is the whole skill or none: a skill with more files than are
/// read beside a skill (1,000), or with a file larger than `resources/read`
/// sends (8 MiB), is listed as `"dynamic"`, and another SkillKit activates
/// it (it was refused as "changed after the catalog listed it"); the large
/// file, asked for, is refused saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_too_big_for_a_manifest_is_dynamic_and_still_activates() {
    use rmcp::ServiceExt;
    use rmcp::model::{ReadResourceRequestParams, SkillResources};

    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("big");
    write(
        kit.join("skills/many/SKILL.md"),
        skill_md("many", "Many files.", "Many for $ARGUMENTS.\n"),
    );
    for i in 0..1001 {
        write(kit.join(format!("skills/many/data/{i:04}.txt")), "x");
    }
    write(
        kit.join("skills/large/SKILL.md"),
        skill_md("large", "A large file.", "Large for $ARGUMENTS.\n"),
    );
    write(
        kit.join("skills/large/blob.bin"),
        vec![0u8; 8 * 1024 * 1024 + 1],
    );
    write(
        kit.join("skills/small/SKILL.md"),
        skill_md("small", "Small.", "Small.\n"),
    );
    write(kit.join("skills/small/notes.md"), "n");
    let served = Catalog::builder().provider(Local::new(&kit)).build();
    let server = McpServer::new(served);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = server.router(HttpOptions::new());
    tokio::spawn(async move { axum_serve(listener, app).await });

    let client = ()
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            url.as_str(),
        ))
        .await
        .unwrap();
    let listed = client.list_all_skills().await.unwrap();
    let resources = |name: &str| {
        listed
            .iter()
            .find(|s| s.uri.contains(&format!("/{name}/")))
            .map(|s| s.resources.clone())
            .unwrap()
    };
    assert!(matches!(resources("many"), SkillResources::Dynamic));
    assert!(matches!(resources("large"), SkillResources::Dynamic));
    assert!(matches!(resources("small"), SkillResources::Files(f) if f.len() == 2));
    let refused = client
        .read_resource(ReadResourceRequestParams::new("skill://big/large/blob.bin"))
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("larger than 8 MiB"), "{refused}");
    client.cancel().await.unwrap();

    let catalog = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(&url)).named("remote"))
        .build();
    for (name, expected) in [
        ("remote:many", "Many for it.\n"),
        ("remote:large", "Large for it.\n"),
    ] {
        let skill = catalog.get_skill(name).await.unwrap();
        skill.body.load().await.unwrap();
        assert_eq!(skill.render("it", None).unwrap(), expected);
    }
}

/// Our server speaks revision 2026-07-28 (`server/discover`), and so does
/// the provider: it listens on a `subscriptions/listen` stream, so its
/// listing holds across queries although every result says `ttlMs: 0` (it
/// listed again on every query), and a change on disk still reaches it
/// through the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newest_revision_is_spoken_and_a_listing_holds_until_the_stream_tells_of_a_change() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("notes");
    write(
        kit.join("skills/summarize/SKILL.md"),
        skill_md("summarize", "Summarize a document.", "Summarize.\n"),
    );
    let served = Catalog::builder().provider(Local::new(&kit)).build();
    let server = McpServer::new(served).watch(Some(Duration::from_millis(50)));
    let lists = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&lists);
    // Counts the `skills/list` requests the server receives.
    let app = server
        .router(HttpOptions::new())
        .layer(skillkit::mcp::axum::middleware::from_fn(
            move |request: skillkit::mcp::axum::extract::Request,
                  next: skillkit::mcp::axum::middleware::Next| {
                let counted = Arc::clone(&counted);
                async move {
                    let (parts, body) = request.into_parts();
                    let bytes = skillkit::mcp::axum::body::to_bytes(body, 1 << 20)
                        .await
                        .unwrap();
                    if bytes.windows(13).any(|w| w == b"\"skills/list\"") {
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                    let request = skillkit::mcp::axum::extract::Request::from_parts(
                        parts,
                        skillkit::mcp::axum::body::Body::from(bytes),
                    );
                    next.run(request).await
                }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum_serve(listener, app).await });

    let catalog = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(&url)).named("remote"))
        .build();
    assert_eq!(catalog.list_skills().await.len(), 1);
    assert!(catalog.failures().is_empty(), "{:?}", catalog.failures());
    let listed = catalog.get_kit("remote").await.unwrap();
    assert_eq!(listed.metadata["revision"], "2026-07-28");
    let first = lists.load(Ordering::SeqCst);
    assert!(first >= 1, "the first query lists");
    for _ in 0..5 {
        assert_eq!(catalog.list_skills().await.len(), 1);
    }
    assert_eq!(
        lists.load(Ordering::SeqCst),
        first,
        "no change was told: the listing holds"
    );

    write(
        kit.join("skills/summarize/SKILL.md"),
        skill_md("summarize", "Summarize, edited.", "Summarize.\n"),
    );
    until_skill(&catalog, "remote:summarize", |s| {
        s.description == "Summarize, edited."
    })
    .await;
    assert!(lists.load(Ordering::SeqCst) > first);
}
