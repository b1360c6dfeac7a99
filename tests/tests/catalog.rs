//! The catalog: every provider asked on every query, each one isolated.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use skillkit::{
    AgentDefinition, Catalog, Kit, KitProvider, Local, Memory, ProviderError, Skill, Tool,
    ToolExecution, ToolOutcome,
};
use skillkit_tests::{skill_md, write};

struct Failing;
#[skillkit::async_trait]
impl KitProvider for Failing {
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        Err(ProviderError::other("database unreachable"))
    }
}

struct Panicking;
#[skillkit::async_trait]
impl KitProvider for Panicking {
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        panic!("provider bug")
    }
}

/// Panics once it is polled again, after waiting.
struct PanickingLater;
#[skillkit::async_trait]
impl KitProvider for PanickingLater {
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        tokio::time::sleep(Duration::from_millis(5)).await;
        panic!("late provider bug")
    }
}

struct Hanging;
#[skillkit::async_trait]
impl KitProvider for Hanging {
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        std::future::pending().await
    }
}

fn greeting() -> Memory {
    let memory = Memory::new();
    memory.put(Skill::new("greet:hello", "Say hello."));
    memory
}

#[tokio::test(flavor = "multi_thread")]
async fn failing_and_panicking_providers_are_skipped_for_the_query() {
    let catalog = Catalog::builder()
        .provider(Failing)
        .provider(Panicking)
        .provider(greeting())
        .provider(PanickingLater)
        .build();
    let skills = catalog.list_skills().await;
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].name, "greet:hello");
    let failures = catalog.failures();
    assert_eq!(failures.len(), 3, "{failures:?}");
    // A panic when first asked and one after waiting are both the
    // provider's failure.
    assert_eq!(failures[2].provider, "PanickingLater");
    assert!(
        matches!(&*failures[2].error, ProviderError::Panicked { message } if message == "late provider bug"),
        "{:?}",
        failures[2].error
    );
    assert_eq!(failures[0].provider, "Failing");
    assert!(
        matches!(&*failures[0].error, ProviderError::Other(e) if e.to_string() == "database unreachable"),
        "{:?}",
        failures[0].error
    );
    assert_eq!(
        failures[0].to_string(),
        "provider `Failing` was skipped for this query: database unreachable"
    );
    assert_eq!(failures[1].provider, "Panicking");
    assert!(
        matches!(&*failures[1].error, ProviderError::Panicked { message } if message == "provider bug"),
        "{:?}",
        failures[1].error
    );
    // A provider failure is not a diagnostic of a file.
    assert!(
        catalog.diagnostics().is_empty(),
        "{:?}",
        catalog.diagnostics()
    );
    // The catalog keeps serving.
    assert!(catalog.get_skill("greet:hello").await.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_provider_is_skipped_after_the_timeout() {
    let catalog = Catalog::builder()
        .provider(Hanging)
        .provider(greeting())
        .timeout(Duration::from_millis(200))
        .build();
    let snapshot = catalog.snapshot().await;
    assert_eq!(snapshot.skills().count(), 1);
    let failures = snapshot.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].provider, "Hanging");
    assert!(
        matches!(*failures[0].error, ProviderError::TimedOut { after } if after == Duration::from_millis(200)),
        "{:?}",
        failures[0].error
    );
    assert!(
        failures[0]
            .to_string()
            .contains("did not answer within 200ms"),
        "{}",
        failures[0]
    );
    assert!(snapshot.diagnostics().is_empty(), "{snapshot:?}");
    assert_eq!(catalog.failures().len(), 1);
}

/// A `Local` on a folder that does not exist: a typed I/O failure naming the
/// provider and the folder, not a diagnostic; the other kits load, and the
/// failure is gone from the query after the folder appears.
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_folder_is_a_provider_failure_not_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let catalog = Catalog::builder()
        .provider(Local::new(&missing))
        .provider(greeting())
        .build();
    let snapshot = catalog.snapshot().await;
    assert_eq!(snapshot.skills().count(), 1);
    assert!(
        snapshot.diagnostics().is_empty(),
        "{:?}",
        snapshot.diagnostics()
    );
    let failures = snapshot.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].provider, format!("local:{}", missing.display()));
    match &*failures[0].error {
        ProviderError::Io { path, source } => {
            assert_eq!(path, &missing);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("not an I/O failure: {other:?}"),
    }
    assert!(
        failures[0].to_string().contains("check that it exists"),
        "{}",
        failures[0]
    );

    write(
        missing.join("skills/read/SKILL.md"),
        skill_md("read", "Read.", ""),
    );
    let snapshot = catalog.snapshot().await;
    assert_eq!(snapshot.skills().count(), 2);
    assert!(snapshot.failures().is_empty(), "{:?}", snapshot.failures());
    assert!(catalog.failures().is_empty());
}

/// A failure is logged when it is new, not again on every query while it
/// lasts, and again once it came back after a query without it.
#[tokio::test]
async fn a_failure_is_logged_once_while_it_lasts() {
    let logs = skillkit_tests::Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let catalog = Catalog::builder().provider(Local::new(&missing)).build();
    let said = || logs.text().matches("was skipped for this query").count();
    catalog.list_kits().await;
    catalog.list_kits().await;
    assert_eq!(said(), 1, "{}", logs.text());
    assert!(logs.text().contains("WARN"), "{}", logs.text());
    std::fs::create_dir_all(&missing).unwrap();
    catalog.list_kits().await;
    std::fs::remove_dir(&missing).unwrap();
    catalog.list_kits().await;
    assert_eq!(said(), 2, "{}", logs.text());
}

/// The legacy `load_kits` answers from `list_kits`, the one method a
/// provider implements (an empty `impl` does not compile:
/// `ui/fail/empty_provider.rs`).
#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)]
async fn the_legacy_load_kits_answers_from_list_kits() {
    let kits = greeting().load_kits().await.unwrap();
    assert_eq!(kits.len(), 1);
    assert_eq!(kits[0].name, "greet");
    assert_eq!(kits[0].skills[0].name, "greet:hello");
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_names_earlier_provider_wins_and_both_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("greet");
    write(
        kit.join("skills/hello/SKILL.md"),
        skill_md("hello", "From disk.", ""),
    );
    let catalog = Catalog::builder()
        .provider(Local::new(&kit))
        .provider(greeting())
        .build();
    let snapshot = catalog.snapshot().await;
    assert_eq!(
        snapshot.skill("greet:hello").unwrap().description,
        "From disk."
    );
    assert_eq!(snapshot.skills().count(), 1);
    let warning = &snapshot.diagnostics()[0];
    assert!(
        warning.message.contains("duplicate skill `greet:hello`"),
        "{warning}"
    );
    assert!(warning.message.contains("provider `memory`"), "{warning}");
    assert!(
        warning
            .message
            .contains(&format!("provider `local:{}`", kit.display())),
        "{warning}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn agents_root_agent_and_lookup() {
    let memory = Memory::new();
    memory.put_kit(
        Kit::new("files")
            .with_skill(Skill::new("read", "Read."))
            .with_agent(AgentDefinition::new("files", "Handles files."))
            .with_sub_agent(AgentDefinition::new("files:summarize", "Sums up.")),
    );
    let catalog = Catalog::builder().provider(memory).build();
    assert_eq!(catalog.root_agent().await.unwrap().name, "files");
    assert_eq!(catalog.list_agents().await.len(), 1);
    assert_eq!(
        catalog
            .get_agent("files:summarize")
            .await
            .unwrap()
            .description,
        "Sums up."
    );
    assert_eq!(
        catalog.get_agent("files").await.unwrap().description,
        "Handles files."
    );
    assert!(catalog.get_skill("files:read").await.is_some());
}

struct Upper;
#[skillkit::async_trait]
impl Tool for Upper {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(format!(
            "{}:{}",
            execution.skill.bare_name(),
            execution.arguments().to_uppercase()
        ))
    }
}

/// A provider whose own tool executes its skills.
struct SelfExecuting;
#[skillkit::async_trait]
impl KitProvider for SelfExecuting {
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        Ok(vec![
            Kit::new("own")
                .with_skill(Skill::new("own:shout", "Shout."))
                .with_skill(Skill::new("own:know", "Knowledge.")),
        ])
    }
    fn tool(self: Arc<Self>, skill: &Skill) -> Option<Arc<dyn Tool>> {
        (skill.bare_name() == "shout").then(|| Arc::new(Upper) as Arc<dyn Tool>)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn providers_bind_tools_to_their_skills() {
    let memory = Memory::new();
    memory.put_tool(Skill::new("util:upper", "Upper-case."), Upper);
    memory.put(Skill::new("util:guide", "Knowledge."));
    let catalog = Catalog::builder()
        .provider(memory.clone())
        .provider(SelfExecuting)
        .build();
    let snapshot = catalog.snapshot().await;
    let tools: Vec<_> = snapshot
        .entries()
        .filter_map(|e| Some((Arc::clone(e.skill), e.tool?)))
        .collect();
    let names: Vec<&str> = tools.iter().map(|(s, _)| s.name.as_ref()).collect();
    assert_eq!(names, ["util:upper", "own:shout"]);
    for (skill, tool) in tools {
        let outcome =
            skillkit::tool::call(&*tool, ToolExecution::new(skill.clone(), "hi".into())).await;
        let expected = format!("{}:HI", skill.bare_name());
        assert_eq!(outcome, ToolOutcome::ok(expected));
    }
    // A knowledge skill put over an executable one takes its tool away.
    memory.put(Skill::new("util:upper", "Now knowledge."));
    assert!(catalog.snapshot().await.tool("util:upper").is_none());
}

/// A provider that fetches one kit more cheaply than all: `list_kits` is
/// empty, `get_kit` answers.
struct OneByOne;
#[skillkit::async_trait]
impl KitProvider for OneByOne {
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        Ok(Vec::new())
    }
    async fn get_kit(&self, name: &str) -> Result<Option<Kit>, ProviderError> {
        Ok((name == "lazy").then(|| Kit::new("lazy").with_skill(Skill::new("lazy:x", "X."))))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn get_kit_goes_through_each_providers_get_kit() {
    let catalog = Catalog::builder().provider(OneByOne).build();
    assert!(catalog.list_kits().await.is_empty());
    let kit = catalog.get_kit("lazy").await.unwrap();
    assert_eq!(kit.skills[0].name, "lazy:x");
    assert!(catalog.get_kit("other").await.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn every_query_asks_every_provider() {
    struct Counting(AtomicUsize);
    #[skillkit::async_trait]
    impl KitProvider for Counting {
        async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(Vec::new())
        }
    }
    let counting = Arc::new(Counting(AtomicUsize::new(0)));
    let catalog = Catalog::builder().shared(counting.clone()).build();
    catalog.list_kits().await;
    catalog.get_skill("x:y").await;
    catalog.snapshot().await;
    assert_eq!(counting.0.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_queries_while_memory_changes() {
    let memory = Memory::new();
    let catalog = Catalog::builder().provider(memory.clone()).build();
    let writer = {
        let memory = memory.clone();
        tokio::spawn(async move {
            for version in 0..2000u32 {
                // A kit's two skills always carry the same version.
                let text = format!("v{version}");
                memory.put_kit(
                    Kit::new("pair")
                        .with_skill(Skill::new("pair:a", text.clone()))
                        .with_skill(Skill::new("pair:b", text)),
                );
                memory.put(Skill::new(format!("churn:s{}", version % 7), "Churn."));
                memory.delete(&format!("churn:s{}", (version + 3) % 7));
                tokio::task::yield_now().await;
            }
        })
    };
    let queries = (0..1000).map(|_| {
        let catalog = catalog.clone();
        tokio::spawn(async move {
            let snapshot = catalog.snapshot().await;
            if let Some(kit) = snapshot.kit("pair") {
                assert_eq!(kit.skills.len(), 2);
                assert_eq!(
                    kit.skills[0].description, kit.skills[1].description,
                    "torn kit"
                );
            }
            for skill in snapshot.skills() {
                let found = snapshot.skill(&skill.name).expect("index agrees with kits");
                assert!(Arc::ptr_eq(found, skill));
            }
            let names: Vec<&str> = snapshot.skills().map(|s| s.name.as_ref()).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(names.len(), sorted.len(), "duplicate names in one answer");
        })
    });
    let results = tokio::time::timeout(Duration::from_secs(60), futures::future::join_all(queries))
        .await
        .expect("no deadlock");
    for result in results {
        result.expect("query task");
    }
    writer.await.expect("writer");
    assert_eq!(
        catalog.get_kit("pair").await.unwrap().skills[0].description,
        "v1999"
    );
}
