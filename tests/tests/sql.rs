//! The SQL provider on SQLite: real database files in temp dirs, each pool
//! its own connections, as separate processes would have. (The same checks
//! on PostgreSQL: `sql_postgres.rs`.)

use skillkit_tests::sql as support;

use std::time::Duration;

use skillkit::providers::sql::SqlError;
use skillkit::{Catalog, KitProvider, Local, Memory, Skill, Sql};
use skillkit_tests::{skill_md, write};

/// A fresh database file's URL, and the directory that keeps it.
fn database() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("skills.db").display());
    (dir, url)
}

#[tokio::test]
async fn every_field_round_trips_and_kits_group_rows() {
    let (_dir, url) = database();
    support::fields_round_trip(&url).await;
}

#[tokio::test]
async fn a_write_from_another_pool_is_seen_by_the_very_next_query() {
    let (_dir, url) = database();
    support::next_query_sees_another_pools_writes(&url).await;
}

#[tokio::test]
async fn only_changed_rows_are_read_again() {
    let (_dir, url) = database();
    support::only_changed_rows_are_read_again(&url).await;
}

#[tokio::test]
async fn bad_names_are_refused_with_the_rule() {
    let (_dir, url) = database();
    support::bad_names_are_refused(&url).await;
}

#[tokio::test]
async fn names_are_trimmed_as_files_trim_them() {
    let (_dir, url) = database();
    support::names_are_trimmed_as_files_trim_them(&url).await;
}

#[tokio::test]
async fn rows_with_empty_names_are_skipped() {
    let (_dir, url) = database();
    support::rows_with_empty_names_are_skipped(&url).await;
}

#[tokio::test]
async fn a_recreated_store_is_read_whole() {
    let (_dir, url) = database();
    support::a_recreated_store_is_read_whole(&url).await;
}

#[tokio::test]
async fn a_bulk_write_succeeds_with_the_defaults() {
    let (_dir, url) = database();
    support::a_bulk_write_succeeds_with_the_defaults(&url).await;
}

#[tokio::test]
async fn the_timeout_bounds_each_statement_not_the_write() {
    let (_dir, url) = database();
    // About 2 s in all on SQLite, four times the limit.
    support::the_timeout_bounds_each_statement_not_the_write(&url, 50_000).await;
}

#[tokio::test]
async fn corrupt_rows_are_diagnostics_naming_the_row() {
    let (_dir, url) = database();
    support::corrupt_rows_are_named(&url).await;
}

/// 50 catalogs on 50 pools query in a loop while a writer puts and deletes
/// 1,000 skills.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_catalogs_under_a_writer_see_consistent_revisions_and_the_final_rows() {
    let (_dir, url) = database();
    support::load(&url, 50).await;
}

/// An in-memory database is private to its handle and lives as long as it.
#[tokio::test]
async fn an_in_memory_database_keeps_its_rows() {
    let sql = Sql::open("sqlite::memory:").unwrap();
    sql.put_skill("k", &Skill::new("a", "A.")).await.unwrap();
    let other = Sql::open("sqlite::memory:").unwrap();
    assert!(other.list_kits().await.unwrap().is_empty());
    let kits = sql.list_kits().await.unwrap();
    assert_eq!(kits[0].skills.len(), 1);
    assert_eq!(kits[0].origin, skillkit::Origin::Database);
}

/// A Local kit directory imported whole (root agent, sub-agent, skills),
/// and imported again after a file went: the skill goes too. A name that
/// breaks the rule refuses the import, and nothing of it is written.
#[tokio::test]
async fn a_local_kit_directory_is_imported_in_one_transaction() {
    let (dir, url) = database();
    let kit = dir.path().join("files");
    write(
        kit.join("AGENT.md"),
        "---\nname: files\ndescription: Finds files.\n---\nYou find files.\n",
    );
    write(
        kit.join("agents/summarize.md"),
        "---\nname: summarize\ndescription: Sums up.\n---\nBe brief.\n",
    );
    write(
        kit.join("skills/read/SKILL.md"),
        skill_md("read", "Read a file.", "Read $ARGUMENTS."),
    );
    write(
        kit.join("skills/list/SKILL.md"),
        skill_md("list", "List files.", "List $ARGUMENTS."),
    );
    let sql = Sql::open(&url).unwrap();
    let imported = sql.import(&Local::new(&kit)).await.unwrap();
    assert_eq!(imported.len(), 1);

    let reader = Sql::open(&url).unwrap();
    let catalog = Catalog::builder().provider(reader).build();
    let kit_now = catalog.get_kit("files").await.unwrap();
    let names: Vec<&str> = kit_now.skills.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["files:list", "files:read"]);
    assert_eq!(
        kit_now.agent.as_ref().unwrap().system_prompt,
        "You find files.\n"
    );
    assert_eq!(kit_now.agents[0].name, "files:summarize");
    let read = catalog.get_skill("files:read").await.unwrap();
    assert_eq!(support::body(&read), "Read $ARGUMENTS.");
    assert_eq!(read.location, None);

    std::fs::remove_dir_all(kit.join("skills/list")).unwrap();
    sql.import(&Local::new(&kit)).await.unwrap();
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["files:read"]);

    let before = sql.revision().await.unwrap();
    write(
        kit.join("skills/Shout/SKILL.md"),
        skill_md("Shout", "Uppercase name.", "LOUD."),
    );
    write(
        kit.join("skills/write/SKILL.md"),
        skill_md("write", "Write a file.", "Write."),
    );
    let refused = sql.import(&Local::new(&kit)).await.unwrap_err();
    assert!(
        refused.to_string().contains("must be lowercase"),
        "{refused}"
    );
    assert_eq!(sql.revision().await.unwrap(), before);
    assert!(catalog.get_skill("files:write").await.is_none());
}

/// A database that cannot be opened is a provider error; the catalog serves
/// the other providers, and the provider recovers once the database can be
/// opened.
#[tokio::test]
async fn a_database_that_cannot_be_opened_fails_the_query_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("not-yet");
    let url = format!("sqlite://{}", missing.join("skills.db").display());
    let sql = Sql::builder(&url)
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let memory = Memory::new();
    memory.put(Skill::new("mem:hello", "Hello."));
    let catalog = Catalog::builder()
        .provider(sql.clone())
        .provider(memory)
        .build();

    let error = sql.list_kits().await.unwrap_err().to_string();
    assert!(error.contains("skills.db"), "{error}");
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["mem:hello"]);
    // A provider failure, typed, naming the provider: not a file diagnostic.
    let failures = catalog.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].provider, sql.name());
    assert!(
        failures[0].error.downcast_ref::<SqlError>().is_some(),
        "{:?}",
        failures[0].error
    );
    assert!(
        failures[0].to_string().contains("skills.db"),
        "{}",
        failures[0]
    );
    assert!(
        catalog.diagnostics().is_empty(),
        "{:?}",
        catalog.diagnostics()
    );

    std::fs::create_dir_all(&missing).unwrap();
    Sql::open(&url)
        .unwrap()
        .put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    assert!(catalog.get_skill("files:read").await.is_some());
    assert!(catalog.failures().is_empty(), "{:?}", catalog.failures());
}

/// A write that cannot finish in time (another program holds the write
/// lock) fails with the timeout, and nothing of it is written; reads go on
/// meanwhile (readers never wait for a writer on SQLite, the database is in
/// WAL mode), and once the lock is released the write goes through. (A
/// query blocked on PostgreSQL: `sql_postgres.rs`.)
#[tokio::test]
async fn a_write_timing_out_fails_and_the_next_one_succeeds() {
    let (_dir, url) = database();
    let sql = Sql::builder(&url)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    sql.put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    let mut locker = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut locker)
        .await
        .unwrap();

    let write = Skill::new("write", "Write a file.");
    let error = sql
        .put_skill("files", &write)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("did not answer") || error.contains("locked"),
        "{error}"
    );
    let reader = Sql::open(&url).unwrap();
    let catalog = Catalog::builder().provider(reader).build();
    assert_eq!(catalog.list_skills().await.len(), 1);

    sqlx::query("ROLLBACK").execute(&mut locker).await.unwrap();
    sqlx::Connection::close(locker).await.unwrap();
    sql.put_skill("files", &write).await.unwrap();
    assert_eq!(catalog.list_skills().await.len(), 2);
}

/// Several handles, each with its own connections (as separate processes
/// have), open one new database at the same moment: every one of them
/// creates or finds the schema, however their migrations interleave.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn handles_creating_one_schema_at_the_same_moment_all_succeed() {
    for _ in 0..30 {
        let (_dir, url) = database();
        let handles: Vec<Sql> = (0..4).map(|_| Sql::open(&url).unwrap()).collect();
        let queries = handles
            .iter()
            .map(|sql| async move { sql.list_kits().await });
        for kits in futures::future::join_all(queries).await {
            assert!(kits.unwrap().is_empty());
        }
    }
}
