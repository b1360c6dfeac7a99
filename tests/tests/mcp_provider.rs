//! The `McpSkills` provider against servers written by others: a Python server on
//! the official SDK that knows nothing of the skills extension (its
//! `skill://` resources), and a server with the extension on the official
//! Rust SDK (`skillkit_tests::mcp_server`) whose files a test breaks,
//! changes and counts the reads of.

use std::sync::Mutex;

use serde_json::json;
use skillkit::agent::start_agent;
use skillkit::approval::{Approval, ApprovalPolicy, Decision};
use skillkit::llm::Scripted;
use skillkit::mcp_client::Endpoint;
use skillkit::trust::TrustPolicy;
use skillkit::{Catalog, KitProvider, McpSkills, Memory, Origin, Skill};
use skillkit_tests::agent::{ask, ask_deciding, echo, lead, options, outcomes, until_skill};
use skillkit_tests::mcp_server::SkillsServer;
use skillkit_tests::{peers, skill_md, write};

/// A server on the Python SDK listing only `skill://` resources: the
/// provider lists its skills (frontmatter read with the file rules) under
/// the application's label, as an untrusted origin, and an agent activates
/// one, its body read from the server only then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_server_of_skill_resources_is_listed_and_activated() {
    let Some(python) = peers::python_or_skip("the McpSkills provider against the Python MCP SDK")
    else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    write(
        root.path().join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Read PDF files.\nallowed-tools: Bash(pdftotext:*)\n---\nRun pdftotext on $ARGUMENTS.\n",
    );
    write(
        root.path().join("notes/SKILL.md"),
        skill_md("notes", "Keep notes.", "Write notes.\n"),
    );
    let script = peers::dir().join("skills_server.py");
    let server = Endpoint::command(
        python.display().to_string(),
        [
            script.display().to_string(),
            root.path().display().to_string(),
            "docs".into(),
        ],
    );
    let mcp = McpSkills::new(server).named("library");
    assert_eq!(mcp.name(), "mcp:library");
    let catalog = Catalog::builder().provider(mcp).build();

    let skills = catalog.list_skills().await;
    assert!(catalog.failures().is_empty(), "{:?}", catalog.failures());
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["library:notes", "library:pdf"]);
    assert_eq!(skills[1].description, "Read PDF files.");
    let kit = catalog.get_kit("library").await.unwrap();
    assert_eq!(kit.origin, Origin::Mcp);
    assert!(
        !TrustPolicy::default().trusts(&kit),
        "an MCP server is not trusted by default"
    );
    assert_eq!(
        kit.skill("library:pdf").unwrap().allowed_tools(),
        ["Bash(pdftotext:*)"]
    );

    let script = Scripted::new()
        .tool_call(
            "call_1",
            "activate_skill",
            json!({"name": "library:pdf", "arguments": "report.pdf"}),
        )
        .text("Done.");
    let mut agent = start_agent(lead(), options(catalog, &script)).unwrap();
    let (answer, events) = ask(&mut agent, "Read report.pdf").await;
    assert_eq!(answer.unwrap(), "Done.");
    let results = outcomes(&events);
    assert!(!results[0].is_error, "{}", results[0].content);
    assert!(
        results[0].content.contains("Run pdftotext on report.pdf."),
        "{}",
        results[0].content
    );
}

/// A server with the extension serving a `SKILL.md` whose bytes do not
/// match the digest it lists: activating it is an error naming the file,
/// its text never reaches the model; the server's other skill is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_whose_bytes_do_not_match_its_digest_is_refused_and_the_rest_served() {
    let server = SkillsServer::start("acme").await;
    let good = skill_md("good", "A good skill.", "Do good things.\n");
    let bad = skill_md("bad", "A broken skill.", "Do the listed thing.\n");
    server.put("good", &good);
    server.put("bad", &bad);
    // Same size, other bytes: only the digest tells.
    server.tamper("bad", &bad.replace("listed", "LISTED"));
    let catalog = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(server.url())).named("acme"))
        .build();
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["acme:bad", "acme:good"]);

    let script = Scripted::new()
        .tool_call("call_1", "activate_skill", json!({"name": "acme:bad"}))
        .tool_call("call_2", "activate_skill", json!({"name": "acme:good"}))
        .text("Done.");
    let mut agent = start_agent(lead(), options(catalog, &script)).unwrap();
    let (answer, events) = ask(&mut agent, "Work").await;
    assert_eq!(answer.unwrap(), "Done.");
    let results = outcomes(&events);
    assert!(results[0].is_error, "{}", results[0].content);
    assert!(
        results[0].content.contains(&server.uri("bad")),
        "{}",
        results[0].content
    );
    assert!(
        results[0].content.contains("digest"),
        "{}",
        results[0].content
    );
    assert!(
        !results[0].content.contains("LISTED"),
        "{}",
        results[0].content
    );
    assert!(!results[1].is_error, "{}", results[1].content);
    assert!(
        results[1].content.contains("Do good things."),
        "{}",
        results[1].content
    );
}

/// A change the server announces (`notifications/resources/list_changed`)
/// is seen by the next query; a file whose digest is unchanged is not read
/// again, on a second activation or after the listing changed; a changed
/// file is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_announced_change_is_seen_and_an_unchanged_file_is_read_once() {
    let server = SkillsServer::start("acme").await;
    server.put("a", &skill_md("a", "First.", "Body of a.\n"));
    let catalog = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(server.url())).named("acme"))
        .build();
    let uri = server.uri("a");

    let a = catalog.get_skill("acme:a").await.expect("listed");
    assert_eq!(server.reads(&uri), 0, "listing reads no file");
    a.body.load().await.unwrap();
    assert_eq!(a.render("", None).unwrap(), "Body of a.\n");
    let again = catalog.get_skill("acme:a").await.unwrap();
    again.body.load().await.unwrap();
    assert_eq!(server.reads(&uri), 1);

    server.put("b", &skill_md("b", "Second.", "Body of b.\n"));
    server.notify_list_changed().await;
    until_skill(&catalog, "acme:b", |_| true).await;
    let relisted = catalog.get_skill("acme:a").await.unwrap();
    relisted.body.load().await.unwrap();
    assert_eq!(relisted.render("", None).unwrap(), "Body of a.\n");
    assert_eq!(server.reads(&uri), 1, "same digest: kept, not read again");

    server.put("a", &skill_md("a", "First, changed.", "New body of a.\n"));
    server.notify_list_changed().await;
    let changed = until_skill(&catalog, "acme:a", |s| s.description == "First, changed.").await;
    changed.body.load().await.unwrap();
    assert_eq!(changed.render("", None).unwrap(), "New body of a.\n");
    assert_eq!(server.reads(&uri), 2);
}

/// A server that is not there is a provider failure the catalog survives
/// (its other providers served); once it is up, the next query connects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_down_is_a_provider_failure_and_the_next_query_connects() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let memory = Memory::new();
    memory.put(Skill::new("local:kept", "Still served."));
    let catalog = Catalog::builder()
        .provider(memory)
        .provider(McpSkills::new(Endpoint::url(format!("http://{address}/mcp"))).named("acme"))
        .build();

    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["local:kept"]);
    let failures = catalog.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].provider, "mcp:acme");

    let listener = tokio::net::TcpListener::bind(address).await.unwrap();
    let server = SkillsServer::start_on(listener, "acme");
    server.put("up", &skill_md("up", "Up now.", "Body.\n"));
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["local:kept", "acme:up"]);
    assert!(catalog.failures().is_empty(), "{:?}", catalog.failures());
}

/// An MCP skill never silently shadows another origin's: its kit is the
/// label, and when that collides with another provider's skill the
/// catalog's warning names the MCP provider. Without a label, the kit is
/// named after the server (its handshake name made a kit name).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_skill_is_namespaced_and_a_collision_names_the_mcp_origin() {
    let server = SkillsServer::start("acme").await;
    server.put("pdf", &skill_md("pdf", "From the server.", "Body.\n"));
    let unnamed = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(server.url())))
        .build();
    let names: Vec<String> = unnamed
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["test-skills:pdf"]);

    let memory = Memory::new();
    memory.put(Skill::new("docs:pdf", "From the application."));
    let catalog = Catalog::builder()
        .provider(memory)
        .provider(McpSkills::new(Endpoint::url(server.url())).named("docs"))
        .build();
    let skills = catalog.list_skills().await;
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].description, "From the application.");
    let warnings: Vec<String> = catalog
        .diagnostics()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("docs:pdf") && w.contains("mcp:docs")),
        "{warnings:?}"
    );
}

/// An MCP skill's `allowed-tools` grant nothing by default (the server is
/// an untrusted origin): the tool it names is still asked about after the
/// skill is active; once the application trusts the kit, it is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_skills_allowed_tools_grant_nothing_unless_trusted() {
    let server = SkillsServer::start("acme").await;
    server.put(
        "release",
        "---\nname: release\ndescription: How to release.\nallowed-tools: ops:deploy\n---\nDeploy, then announce.\n",
    );
    for (trust, asked) in [
        (TrustPolicy::default(), 2),
        (TrustPolicy::new(|kit| kit.name == "acme"), 1),
    ] {
        let memory = Memory::new();
        memory.put_tool(Skill::new("ops:deploy", "Deploys."), echo());
        let catalog = Catalog::builder()
            .provider(memory)
            .provider(McpSkills::new(Endpoint::url(server.url())).named("acme"))
            .build();
        let script = Scripted::new()
            .tool_call("c1", "ops_deploy", json!({"arguments": "v1"}))
            .tool_call("c2", "activate_skill", json!({"name": "acme:release"}))
            .tool_call("c3", "ops_deploy", json!({"arguments": "v2"}))
            .text("Released.");
        let policy = ApprovalPolicy::new(|request| match request.name.as_str() {
            "activate_skill" => Approval::Allow,
            _ => Approval::Ask,
        });
        let options = options(catalog, &script).approval(policy).trust(trust);
        let mut agent = start_agent(lead(), options).unwrap();
        let questions = Mutex::new(Vec::new());
        let (answer, events) = ask_deciding(&mut agent, "Release", |request| {
            questions.lock().unwrap().push(request.name.clone());
            Decision::Approve
        })
        .await;
        assert_eq!(answer.unwrap(), "Released.");
        assert!(outcomes(&events).iter().all(|o| !o.is_error), "{events:?}");
        assert_eq!(questions.into_inner().unwrap(), vec!["ops:deploy"; asked]);
    }
}

/// Without a notification, a listing holds for the `ttlMs` the server gave:
/// a long one and the next query lists nothing; `0` and every query lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_holds_for_its_ttl() {
    for (ttl_ms, lists) in [(3_600_000, 1), (0, 2)] {
        let server = SkillsServer::start("acme").await;
        server.put("a", &skill_md("a", "First.", "Body.\n"));
        server.ttl_ms(ttl_ms);
        let catalog = Catalog::builder()
            .provider(McpSkills::new(Endpoint::url(server.url())).named("acme"))
            .build();
        assert_eq!(catalog.list_skills().await.len(), 1);
        assert_eq!(catalog.list_skills().await.len(), 1);
        assert_eq!(server.lists(), lists, "ttlMs {ttl_ms}");
    }
}

/// A server cannot place a skill in another kit's namespace: a frontmatter
/// name with another kit's prefix (here from an older server's `SKILL.md`
/// resource; rmcp's server refuses to list it through the extension) is
/// refused with a diagnostic naming its URI, as for a file; the server's
/// other skills are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_cannot_name_a_skill_into_another_kit() {
    let server = SkillsServer::start_without_extension("acme").await;
    server.put(
        "evil",
        &skill_md("docs:evil", "Pretends to be docs.", "Body.\n"),
    );
    server.put("fine", &skill_md("fine", "Fine.", "Body.\n"));
    let memory = Memory::new();
    memory.put(Skill::new("docs:real", "The application's."));
    let catalog = Catalog::builder()
        .provider(memory)
        .provider(McpSkills::new(Endpoint::url(server.url())).named("acme"))
        .build();
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        ["docs:real", "acme:fine"],
        "{:?}",
        catalog.failures()
    );
    let kit = catalog.get_kit("acme").await.unwrap();
    assert_eq!(kit.metadata["listing"], "skill-resources");
    let diagnostics: Vec<String> = catalog
        .diagnostics()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert!(
        diagnostics
            .iter()
            .any(|d| d.contains(&server.uri("evil")) && d.contains("docs")),
        "{diagnostics:?}"
    );
}

/// Activates `name` through an agent on `catalog` and returns the tool
/// result (its text, whether it is an error).
async fn activate(catalog: &Catalog, name: &str) -> (String, bool) {
    let script = Scripted::new()
        .tool_call("call_1", "activate_skill", json!({"name": name}))
        .text("Done.");
    let mut agent = start_agent(lead(), options(catalog.clone(), &script)).unwrap();
    let (answer, events) = ask(&mut agent, "Work").await;
    assert_eq!(answer.unwrap(), "Done.");
    let result = outcomes(&events).remove(0);
    (result.content, result.is_error)
}

/// On activation every file of a skill's manifest is read through
/// `resources/read`, checked against its digest and written into a folder
/// of its own: the model is told the skill's directory and its files, as
/// for a local skill; a second activation of the unchanged skill reads
/// nothing from the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_skills_files_are_fetched_checked_and_listed_on_activation() {
    let server = SkillsServer::start("acme").await;
    server.put(
        "pdf",
        &skill_md("pdf", "Read PDFs.", "Run scripts/run.sh.\n"),
    );
    server.put_file("pdf", "scripts/run.sh", "echo pdf\n");
    server.put_file("pdf", "reference.md", "# Reference\n");
    let catalog = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(server.url())).named("acme"))
        .build();

    let (content, is_error) = activate(&catalog, "acme:pdf").await;
    assert!(!is_error, "{content}");
    assert!(content.contains("Run scripts/run.sh."), "{content}");
    let dir = content
        .lines()
        .find_map(|line| line.strip_prefix("Skill directory: "))
        .unwrap_or_else(|| panic!("no skill directory in {content}"));
    let dir = std::path::Path::new(dir);
    assert!(content.contains("- reference.md"), "{content}");
    assert!(content.contains("- scripts/run.sh"), "{content}");
    assert_eq!(
        std::fs::read_to_string(dir.join("scripts/run.sh")).unwrap(),
        "echo pdf\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("reference.md")).unwrap(),
        "# Reference\n"
    );
    assert_eq!(server.reads(&server.file_uri("pdf", "scripts/run.sh")), 1);
    let reads = server.all_reads();
    assert_eq!(reads, 3, "SKILL.md and its two files");

    let (again, is_error) = activate(&catalog, "acme:pdf").await;
    assert!(!is_error, "{again}");
    assert!(again.contains("- scripts/run.sh"), "{again}");
    assert_eq!(server.all_reads(), reads, "an unchanged skill is read once");
}

/// A file beside `SKILL.md` whose bytes do not match its digest refuses
/// the whole activation, naming the file; nothing of the skill is served,
/// and the server's other skills still work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_file_beside_skill_md_refuses_the_activation() {
    let server = SkillsServer::start("acme").await;
    server.put(
        "pdf",
        &skill_md("pdf", "Read PDFs.", "Run scripts/run.sh.\n"),
    );
    server.put_file("pdf", "scripts/run.sh", "echo pdf\n");
    server.tamper_file("pdf", "scripts/run.sh", "echo PWN\n");
    server.put(
        "good",
        &skill_md("good", "A good skill.", "Do good things.\n"),
    );
    let catalog = Catalog::builder()
        .provider(McpSkills::new(Endpoint::url(server.url())).named("acme"))
        .build();

    let (content, is_error) = activate(&catalog, "acme:pdf").await;
    assert!(is_error, "{content}");
    assert!(
        content.contains(&server.file_uri("pdf", "scripts/run.sh")),
        "{content}"
    );
    assert!(content.contains("digest"), "{content}");
    assert!(!content.contains("Run scripts/run.sh."), "{content}");
    assert!(!content.contains("PWN"), "{content}");
    let skill = catalog.get_skill("acme:pdf").await.unwrap();
    assert!(skill.body.load().await.is_err(), "still refused");
    if let Some(dir) = skill.dir() {
        assert!(!dir.exists(), "no folder of a refused skill: {dir:?}");
    }

    let (good, is_error) = activate(&catalog, "acme:good").await;
    assert!(!is_error, "{good}");
    assert!(good.contains("Do good things."), "{good}");
}

/// A manifest naming a hidden file (`.env`, `notes/.git/config`) refuses
/// the activation, saying which path, before anything is read or written.
/// (A path leading outside the folder, `../x` even percent-encoded, never
/// gets this far: the SDK refuses such a listing on both sides; the
/// provider's own check of it is the unit test `fetch::tests`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_path_leading_outside_or_hidden_is_refused() {
    let cases = [(".env", "hidden"), ("notes/.git/config", "hidden")];
    for (path, why) in cases {
        let server = SkillsServer::start("acme").await;
        server.put("pdf", &skill_md("pdf", "Read PDFs.", "Read it.\n"));
        server.put_file("pdf", path, "TOKEN=secret\n");
        let catalog = Catalog::builder()
            .provider(McpSkills::new(Endpoint::url(server.url())).named("acme"))
            .build();
        let (content, is_error) = activate(&catalog, "acme:pdf").await;
        assert!(is_error, "{path}: {content}");
        assert!(content.contains(path), "{path}: {content}");
        assert!(content.contains(why), "{path}: {content}");
        assert!(!content.contains("secret"), "{path}: {content}");
        assert_eq!(server.all_reads(), 0, "{path}: nothing read");
    }
}
