//! The MCP skills extension (`io.modelcontextprotocol/skills`) of
//! `McpServer`, through rmcp's client over an in-process pipe: skills read
//! from real files in a temp dir (`Local`) and skills without files
//! (`Memory`); the tools' annotations and `list_skills`' structured result.
#![cfg(feature = "mcp")]

mod mcp_support;

use std::path::Path;
use std::time::{Duration, SystemTime};

use mcp_support::*;
use rmcp::model::{
    ErrorCode, GetSkillRequestParams, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceRequestParams, ResourceContents, SKILLS_EXTENSION_ID, SkillResources,
    sha256_digest,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServiceError, ServiceExt};
use serde_json::json;
use skillkit::mcp::McpServer;
use skillkit::{Catalog, Local, Memory, Skill};

async fn connect(server: McpServer) -> RunningService<RoleClient, ()> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_end).await.unwrap()
}

/// Sets `path`'s mtime a minute back, so its stamp is not racy (a file
/// written within the filesystem's timestamp granularity is read again).
fn age(path: &Path) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
}

const SEARCH: &str = "---\nname: search\ndescription: Search the notes.\nlicense: MIT\n\
    argument-hint: \"[query]\"\nmetadata:\n  author: ana\n  tags: [a, b]\n---\nSearch $ARGUMENTS.\n";

/// Kit `notes`: `search` (with a script and a reference), `tidy`.
fn notes() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let search = root.path().join("notes/skills/search");
    std::fs::create_dir_all(search.join("scripts")).unwrap();
    std::fs::write(search.join("SKILL.md"), SEARCH).unwrap();
    std::fs::write(search.join("scripts/find.sh"), "grep -r \"$1\" .\n").unwrap();
    std::fs::write(search.join("REFERENCE.md"), "# Reference\n").unwrap();
    std::fs::write(search.join(".secret"), "hidden").unwrap();
    let tidy = root.path().join("notes/skills/tidy");
    std::fs::create_dir_all(&tidy).unwrap();
    std::fs::write(
        tidy.join("SKILL.md"),
        "---\nname: notes:tidy\ndescription: Tidy.\n---\nTidy.\n",
    )
    .unwrap();
    for file in [
        "search/SKILL.md",
        "search/scripts/find.sh",
        "search/REFERENCE.md",
        "tidy/SKILL.md",
    ] {
        age(&root.path().join("notes/skills").join(file));
    }
    root
}

fn code(result: Result<impl std::fmt::Debug, ServiceError>) -> (ErrorCode, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code, e.message.to_string()),
        other => panic!("not a protocol error: {other:?}"),
    }
}

#[tokio::test]
async fn skills_list_and_get_give_verbatim_frontmatter_and_digested_files() {
    let dir = notes();
    let memory = Memory::new();
    memory.put(Skill::new("style:haiku", "Write a haiku.").with_body("A haiku."));
    let catalog = Catalog::builder()
        .provider(Local::new(dir.path().join("notes")))
        .provider(memory)
        .build();
    let client = connect(McpServer::new(catalog)).await;

    let capabilities = &client.peer_info().unwrap().capabilities;
    let extension = &capabilities.extensions.as_ref().unwrap()[SKILLS_EXTENSION_ID];
    assert_eq!(extension["directoryRead"], true, "{extension:?}");

    let skills = client.list_all_skills().await.unwrap();
    let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://notes/search/SKILL.md",
            "skill://notes/tidy/SKILL.md",
            "skill://style/haiku/SKILL.md"
        ]
    );
    // The frontmatter as written, every field.
    let search = &skills[0];
    assert_eq!(
        serde_json::to_value(&search.frontmatter).unwrap(),
        json!({
            "name": "search",
            "description": "Search the notes.",
            "license": "MIT",
            "argument-hint": "[query]",
            "metadata": {"author": "ana", "tags": ["a", "b"]}
        })
    );
    // Every file (hidden ones excepted), its digest the sha256 of its bytes.
    let SkillResources::Files(files) = &search.resources else {
        panic!("no manifest: {search:?}");
    };
    let listed: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
    assert_eq!(
        listed,
        [
            "skill://notes/search/SKILL.md",
            "skill://notes/search/REFERENCE.md",
            "skill://notes/search/scripts/find.sh"
        ]
    );
    let folder = dir.path().join("notes/skills/search");
    for (file, path) in files
        .iter()
        .zip(["SKILL.md", "REFERENCE.md", "scripts/find.sh"])
    {
        let bytes = std::fs::read(folder.join(path)).unwrap();
        assert_eq!(file.digest, sha256_digest(&bytes), "{path}");
        assert_eq!(file.size, bytes.len() as u64, "{path}");
        // What resources/read serves is what the manifest promises.
        let read = client
            .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("not text: {read:?}");
        };
        file.verify(text.as_bytes()).unwrap();
    }
    // A name written `kit:skill` is given as the URI's final segment.
    assert_eq!(skills[1].frontmatter.name, "tidy");
    // A skill without a file is dynamic; its frontmatter is its fields.
    assert_eq!(skills[2].resources, SkillResources::Dynamic);
    assert_eq!(skills[2].frontmatter.description, "Write a haiku.");

    let got = client
        .get_skill(GetSkillRequestParams::new("skill://notes/search/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(&got.skill, search);

    // Errors: -32602 for an unknown skill, a URI that is no SKILL.md, a
    // cursor this server did not give.
    for uri in [
        "skill://notes/nope/SKILL.md",
        "skill://notes/search/REFERENCE.md",
        "https://example.com/SKILL.md",
    ] {
        let (code, message) = code(client.get_skill(GetSkillRequestParams::new(uri)).await);
        assert_eq!(code, ErrorCode::INVALID_PARAMS, "{uri}: {message}");
    }
    let bogus = PaginatedRequestParams::default().with_cursor(Some("bogus".into()));
    let (code, message) = code(client.list_skills(Some(bogus)).await);
    assert_eq!(code, ErrorCode::INVALID_PARAMS, "{message}");
    assert!(message.contains("nextCursor"), "{message}");
}

#[tokio::test]
async fn skills_list_is_paginated_by_the_page_size() {
    let memory = Memory::new();
    for i in 0..5 {
        memory.put(Skill::new(format!("kit:s{i}"), "d"));
    }
    let server = McpServer::new(Catalog::builder().provider(memory).build()).page_size(2);
    let client = connect(server).await;
    let first = client.list_skills(None).await.unwrap();
    assert_eq!(first.skills.len(), 2);
    let second = client
        .list_skills(Some(
            PaginatedRequestParams::default().with_cursor(first.next_cursor.clone()),
        ))
        .await
        .unwrap();
    assert_eq!(second.skills[0].uri, "skill://kit/s2/SKILL.md");
    assert_eq!(client.list_all_skills().await.unwrap().len(), 5);
}

/// `skills/list` follows the catalog: a skill put, edited or removed between
/// two listings is there, changed or gone in the second (the URIs are sorted
/// once per change of the catalog, not once per page).
#[tokio::test]
async fn the_listing_follows_the_catalog() {
    let memory = Memory::new();
    memory.put(Skill::new("kit:alpha", "First."));
    let server = McpServer::new(Catalog::builder().provider(memory.clone()).build()).page_size(1);
    let client = connect(server).await;
    let listed = |skills: Vec<rmcp::model::Skill>| -> Vec<(String, String)> {
        skills
            .into_iter()
            .map(|s| (s.uri, s.frontmatter.description))
            .collect()
    };
    let uri = |name: &str| format!("skill://kit/{name}/SKILL.md");
    assert_eq!(
        listed(client.list_all_skills().await.unwrap()),
        [(uri("alpha"), "First.".to_owned())]
    );
    memory.put(Skill::new("kit:beta", "Second."));
    memory.put(Skill::new("kit:alpha", "First, edited."));
    assert_eq!(
        listed(client.list_all_skills().await.unwrap()),
        [
            (uri("alpha"), "First, edited.".to_owned()),
            (uri("beta"), "Second.".to_owned())
        ]
    );
    memory.delete("kit:alpha");
    assert_eq!(
        listed(client.list_all_skills().await.unwrap()),
        [(uri("beta"), "Second.".to_owned())]
    );
}

#[tokio::test]
async fn digests_are_computed_once_per_file_version() {
    let dir = notes();
    let server = McpServer::new(
        Catalog::builder()
            .provider(Local::new(dir.path().join("notes")))
            .build(),
    );
    let client = connect(server.clone()).await;
    client.list_all_skills().await.unwrap();
    // Four files: search's three and tidy's SKILL.md.
    assert_eq!(server.digests_computed(), 4);
    let before = client.list_all_skills().await.unwrap();
    client
        .get_skill(GetSkillRequestParams::new("skill://notes/search/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(server.digests_computed(), 4, "a second listing read files");

    // An edited file is read again, once, and its digest changes.
    let script = dir.path().join("notes/skills/search/scripts/find.sh");
    std::fs::write(&script, "rg \"$1\"\n").unwrap();
    age(&script);
    let after = client.list_all_skills().await.unwrap();
    assert_eq!(server.digests_computed(), 5);
    let digest = |skills: &[rmcp::model::Skill]| match &skills[0].resources {
        SkillResources::Files(files) => files[2].digest.clone(),
        SkillResources::Dynamic => unreachable!(),
        _ => unreachable!(),
    };
    assert_ne!(digest(&before), digest(&after));
    assert_eq!(digest(&after), sha256_digest(b"rg \"$1\"\n"));
}

#[tokio::test]
async fn a_skill_folder_is_read_as_a_directory() {
    let dir = notes();
    let memory = Memory::new();
    memory.put(Skill::new("style:haiku", "Write a haiku."));
    let client = connect(McpServer::new(
        Catalog::builder()
            .provider(Local::new(dir.path().join("notes")))
            .provider(memory)
            .build(),
    ))
    .await;
    let read = |uri: &str| {
        client.read_resource_directory(ReadResourceDirectoryRequestParams::new(uri.to_owned()))
    };
    let root = read("skill://notes/search").await.unwrap();
    let children: Vec<(&str, Option<&str>)> = root
        .resources
        .iter()
        .map(|r| (r.uri.as_str(), r.mime_type.as_deref()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://notes/search/REFERENCE.md", Some("text/markdown")),
            ("skill://notes/search/SKILL.md", Some("text/markdown")),
            ("skill://notes/search/scripts", Some("inode/directory")),
        ]
    );
    let scripts = read("skill://notes/search/scripts").await.unwrap();
    assert_eq!(
        scripts.resources[0].uri,
        "skill://notes/search/scripts/find.sh"
    );
    assert_eq!(scripts.resources[0].size, Some(15));
    let dynamic = read("skill://style/haiku/").await.unwrap();
    assert_eq!(dynamic.resources[0].uri, "skill://style/haiku/SKILL.md");
    for bad in [
        "skill://notes/search/SKILL.md",
        "skill://notes/search/../../secret",
        "skill://notes/nope",
        "skill://style/haiku/docs",
    ] {
        let (code, message) = code(read(bad).await);
        assert_eq!(code, ErrorCode::INVALID_PARAMS, "{bad}: {message}");
    }
}

#[tokio::test]
async fn read_only_tools_say_so_and_list_skills_returns_structured_content() {
    let memory = Memory::new();
    memory.put(Skill::new("style:haiku", "Write a haiku."));
    memory.put_tool(Skill::new("files:read", "Read a file."), Echo);
    let client = connect(McpServer::new(Catalog::builder().provider(memory).build())).await;
    let tools = client.list_all_tools().await.unwrap();
    for tool in &tools {
        let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
        match tool.name.as_ref() {
            "list_skills" | "activate_skill" | "read_skill_file" => {
                assert_eq!(read_only, Some(true), "{}", tool.name)
            }
            _ => assert_eq!(tool.annotations, None, "{}", tool.name),
        }
    }
    let list = tools.iter().find(|t| t.name == "list_skills").unwrap();
    let schema = list.output_schema.as_ref().expect("an outputSchema");
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["skills"]));

    let result = call(&client, "list_skills", json!({})).await;
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(
        structured,
        json!({"skills": [
            {"name": "files:read", "description": "Read a file.", "tool": "files_read"},
            {"name": "style:haiku", "description": "Write a haiku."}
        ]})
    );
    // The text is the same list, as models read it.
    let text: serde_json::Value = serde_json::from_str(text(&result)).unwrap();
    assert_eq!(text, structured["skills"]);
}
