//! `#[derive(Kit)]`: what is embedded, and the kit as a provider and a tool.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use skillkit::{
    AgentDefinition, Catalog, EmbeddedKit, Kit, KitProvider, Local, Skill, ToolExecution,
    ToolOutcome,
};

/// The nested layout: `AGENT.md`, `skills/*/SKILL.md`, `agents/*.md`.
#[derive(Kit)]
#[kit(path = "fixtures/kits/files", name = "files")]
struct FilesKit;

impl EmbeddedKit for FilesKit {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(json!({"skill": execution.skill.name, "input": execution.input}))
    }
}

/// A folder of skill folders; the name defaults to `text_tools`.
#[derive(Kit)]
#[kit(path = "fixtures/kits/flat")]
struct TextTools;

impl EmbeddedKit for TextTools {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        let text = execution.arguments();
        match execution.skill.bare_name() {
            "upper" => ToolOutcome::ok(text.to_uppercase()),
            "reverse" => ToolOutcome::ok(text.chars().rev().collect::<String>()),
            "count" => ToolOutcome::ok(text.split_whitespace().count()),
            other => ToolOutcome::error(format!("no skill `{other}`")),
        }
    }
}

fn fixture(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// What `Local` loads from the same directory, with the same parser.
fn loaded_at_run_time(path: &str, name: &str) -> Kit {
    Local::new(fixture(path))
        .named(name)
        .load()
        .unwrap()
        .remove(0)
}

fn same_skill(embedded: &Skill, local: &Skill) {
    assert_eq!(embedded.name, local.name);
    assert_eq!(embedded.description, local.description);
    // The embedded body is compiled in; Local leaves it in the file until read.
    assert!(embedded.body.as_text().is_some() && local.body.as_text().is_none());
    assert_eq!(embedded.body.read().unwrap(), local.body.read().unwrap());
    assert_eq!(embedded.license(), local.license());
    assert_eq!(embedded.compatibility(), local.compatibility());
    assert_eq!(embedded.allowed_tools(), local.allowed_tools());
    assert_eq!(embedded.metadata(), local.metadata());
    assert_eq!(embedded.model(), local.model());
    assert_eq!(embedded.required_scope(), local.required_scope());
    assert_eq!(embedded.extra(), local.extra());
}

fn same_agent(embedded: &AgentDefinition, local: &AgentDefinition) {
    let without_location = |a: &AgentDefinition| AgentDefinition {
        location: None,
        ..a.clone()
    };
    assert_eq!(without_location(embedded), without_location(local));
}

#[test]
fn embedded_skills_equal_what_local_loads() {
    let embedded = FilesKit::embedded_kit();
    let local = loaded_at_run_time("fixtures/kits/files", "files");
    assert_eq!(embedded.name, "files");
    assert_eq!(embedded.skills.len(), 2);
    assert_eq!(embedded.skills.len(), local.skills.len());
    for (embedded, local) in embedded.skills.iter().zip(&local.skills) {
        same_skill(embedded, local);
    }
    same_agent(
        embedded.agent.as_deref().unwrap(),
        local.agent.as_deref().unwrap(),
    );
    assert_eq!(embedded.agents.len(), 1);
    same_agent(&embedded.agents[0], &local.agents[0]);
}

#[test]
fn every_frontmatter_value_is_kept() {
    let read = FilesKit::embedded_kit().skill("files:read").unwrap();
    assert_eq!(read.description, "Read a text file and return its content.");
    assert_eq!(read.license(), Some("MIT"));
    assert_eq!(read.allowed_tools(), ["Read", "Grep"]);
    assert_eq!(read.model(), Some("anthropic://claude-haiku-4-5"));
    assert_eq!(read.required_scope(), Some("files.read"));
    assert_eq!(
        serde_json::Value::Object(read.metadata().clone()),
        json!({
            "author": "docs-team", "version": 3, "ratio": 0.5, "stable": true,
            "nothing": null, "offset": -7, "tags": ["io", "text"], "nested": {"depth": 2}
        })
    );
    assert_eq!(
        serde_json::Value::Object(read.extra().clone()),
        json!({"argument-hint": "<path>", "user-invocable": false})
    );
    assert_eq!(
        read.body.as_text().unwrap(),
        "Read the file at $ARGUMENTS and return its content.\n"
    );
    assert!(
        Arc::new(FilesKit).tool(read).is_some(),
        "its kit executes it"
    );
    assert!(read.location.is_none(), "no file is read at run time");
    // A name that already carries the kit's own prefix is kept as is.
    assert!(FilesKit::embedded_kit().skill("files:write").is_some());
}

#[test]
fn root_agent_and_sub_agents_come_from_their_files() {
    let root = FilesKit.agent_definition().unwrap();
    assert_eq!(root.name, "files");
    assert_eq!(root.description, "Reads and writes files for the user.");
    assert_eq!(
        root.model.as_deref(),
        Some("anthropic://claude-sonnet-4-5?max_tokens=4096")
    );
    assert_eq!(root.tools, ["files:read", "files:write"]);
    assert_eq!((root.max_turns, root.max_agent_depth), (Some(12), Some(2)));
    assert_eq!(
        root.system_prompt,
        "You manage files. Read before you write.\n"
    );
    let sub = &FilesKit::embedded_kit().agents[0];
    assert_eq!(sub.name, "files:summarize");
    assert_eq!(sub.max_turns, Some(3));
    assert!(TextTools.agent_definition().is_none());
}

#[test]
fn folder_of_skill_folders_with_the_default_name() {
    let kit = TextTools::embedded_kit();
    assert_eq!(kit.name, "text_tools");
    let names: Vec<&str> = kit.skills.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(
        names,
        ["text_tools:count", "text_tools:reverse", "text_tools:upper"]
    );
    // CRLF in the file, LF in the body.
    assert_eq!(
        kit.skill("text_tools:upper")
            .unwrap()
            .body
            .as_text()
            .unwrap(),
        "Shout $ARGUMENTS.\n"
    );
    assert_eq!(kit.metadata["provider"], "embedded");
    assert_eq!(kit.metadata["path"], "fixtures/kits/flat");
    assert_eq!(kit.origin, skillkit::Origin::Embedded);
}

#[test]
fn loading_warnings_are_kept_in_the_kit() {
    let warnings = &TextTools::embedded_kit().diagnostics;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(!warnings[0].is_error());
    assert_eq!(
        warnings[0].path.as_deref(),
        Some(Path::new("fixtures/kits/flat/count-words/SKILL.md"))
    );
    assert_eq!(warnings[0].line, 2);
    assert!(warnings[0].message.contains("must match"));
}

#[tokio::test]
async fn list_kits_shares_the_static_skills() {
    let first = TextTools.list_kits().await.unwrap();
    let second = TextTools.list_kits().await.unwrap();
    assert_eq!(first.len(), 1);
    for (a, b) in first[0].skills.iter().zip(&second[0].skills) {
        assert!(Arc::ptr_eq(a, b), "skills are shared, not rebuilt");
        let text = |s: &Skill| s.body.as_text().expect("body is in memory").as_ptr();
        assert!(matches!(a.name, Cow::Borrowed(_)));
        assert_eq!(text(a), text(b));
    }
    let embedded = &TextTools::embedded_kit().skills[0];
    assert_eq!(
        first[0].skills[0].body.as_text().unwrap().as_ptr(),
        embedded.body.as_text().unwrap().as_ptr()
    );
}

#[tokio::test]
async fn provider_methods_have_the_generated_behaviour() {
    assert_eq!(FilesKit.name(), "embedded:files");
    assert_eq!(
        FilesKit
            .get_kit("files")
            .await
            .unwrap()
            .unwrap()
            .skills
            .len(),
        2
    );
    assert!(FilesKit.get_kit("text_tools").await.unwrap().is_none());
    #[allow(deprecated)]
    let legacy = FilesKit.load_kits().await.unwrap();
    assert_eq!(legacy[0].name, "files");
    let read = Arc::clone(FilesKit::embedded_kit().skill("files:read").unwrap());
    let tool = Arc::new(FilesKit)
        .tool(&read)
        .expect("the kit executes its skills");
    assert_eq!(
        tool.definition(&read),
        skillkit::tool::skill_definition(&read)
    );
    let outcome = tool
        .resume(ToolExecution::new(read, json!({})), json!(1), json!("yes"))
        .await;
    assert!(matches!(outcome, ToolOutcome::Error(m) if m.contains("cannot resume")));
}

#[tokio::test]
async fn a_catalog_executes_each_skill_with_its_own_behaviour() {
    let catalog = Catalog::builder()
        .provider(TextTools)
        .provider(Local::new(fixture("fixtures/kits/files")))
        .build();
    let snapshot = catalog.snapshot().await;
    let run = |name: &str, arguments: &str| {
        let skill = Arc::clone(snapshot.skill(name).unwrap());
        let tool = snapshot.tool(name).unwrap();
        let execution = ToolExecution::new(skill, json!({ "arguments": arguments }));
        async move { tool.execute(execution).await }
    };
    assert_eq!(
        run("text_tools:upper", "hello").await,
        ToolOutcome::ok("HELLO")
    );
    assert_eq!(
        run("text_tools:reverse", "hello").await,
        ToolOutcome::ok("olleh")
    );
    assert_eq!(
        run("text_tools:count", "one two three").await,
        ToolOutcome::ok(3)
    );
    // The Local kit beside it serves knowledge skills: nothing to execute.
    assert!(snapshot.skill("files:read").is_some());
    assert!(snapshot.tool("files:read").is_none());
    let tools: Vec<String> = snapshot
        .entries()
        .filter(|e| e.tool.is_some())
        .map(|e| e.skill.name.to_string())
        .collect();
    assert_eq!(
        tools,
        ["text_tools:count", "text_tools:reverse", "text_tools:upper"]
    );
}

#[tokio::test]
async fn execute_receives_the_full_skill() {
    let catalog = Catalog::builder().provider(FilesKit).build();
    let snapshot = catalog.snapshot().await;
    let skill = Arc::clone(snapshot.skill("files:read").unwrap());
    let tool = snapshot.tool("files:read").unwrap();
    let outcome = tool
        .execute(ToolExecution::new(skill, json!({"arguments": "a.txt"})))
        .await;
    assert_eq!(
        outcome,
        ToolOutcome::ok(json!({"skill": "files:read", "input": {"arguments": "a.txt"}}))
    );
}

/// Each embedded skill's digest, computed when the binary was built, is
/// the one a project's lockfile pins for the same folder: a binary's
/// embedded skills can be checked against a lock.
#[test]
fn embedded_skills_carry_the_digest_a_lock_pins() {
    let kit = <FilesKit as skillkit::embed::KitData>::embedded_kit();
    let digests = kit.metadata["digests"].as_object().unwrap();
    assert_eq!(digests.len(), kit.skills.len());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for skill in kit.skills.iter() {
        let folder = format!("fixtures/kits/files/skills/{}", skill.bare_name());
        let mut lock = skillkit::lockfile::Lockfile::new();
        let pinned = lock
            .pin(skill.bare_name(), "here", None, None, root, &folder)
            .unwrap();
        assert_eq!(
            digests[skill.name.as_ref()],
            pinned.digest,
            "{}",
            skill.name
        );
    }
}
