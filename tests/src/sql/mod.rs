//! What the SQL provider must do on every backend, written once and run on
//! SQLite (`sql.rs`) and on PostgreSQL (`sql_postgres.rs`): each function
//! takes the URL of an empty database. Rows and names: `names.rs`; many
//! rows and many readers: `load.rs`.

mod load;
mod names;

use std::sync::Arc;

use skillkit::{AgentDefinition, Catalog, Kit, KitProvider, Skill, Sql};

pub use load::*;
pub use names::*;

/// A skill's body as text (the one place the tests read it).
pub fn body(skill: &Skill) -> String {
    skill.body.read().expect("body").into_owned()
}

/// Runs `statements` (`;`-separated) on the database at `url` through a
/// connection of its own, as another program would.
pub async fn execute(url: &str, statements: &str) {
    for statement in statements.split(';').filter(|s| !s.trim().is_empty()) {
        if url.starts_with("sqlite:") {
            let pool = sqlx::SqlitePool::connect(url).await.expect("open sqlite");
            sqlx::query(statement)
                .execute(&pool)
                .await
                .expect(statement);
            pool.close().await;
        } else {
            let pool = sqlx::PgPool::connect(url).await.expect("open postgres");
            sqlx::query(statement)
                .execute(&pool)
                .await
                .expect(statement);
            pool.close().await;
        }
    }
}

/// The number `query` counts, on the database at `url`, through a
/// connection of its own.
pub async fn query_count(url: &str, query: &str) -> i64 {
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.expect("open sqlite");
        let count = sqlx::query_scalar(query)
            .fetch_one(&pool)
            .await
            .expect(query);
        pool.close().await;
        count
    } else {
        let pool = sqlx::PgPool::connect(url).await.expect("open postgres");
        let count = sqlx::query_scalar(query)
            .fetch_one(&pool)
            .await
            .expect(query);
        pool.close().await;
        count
    }
}

/// Writes a row by hand, as raw SQL: bumps the revision and stamps the row
/// with it, as the schema asks of every writer.
pub async fn insert_skill_row(url: &str, kit: &str, name: &str, columns: &[(&str, &str)]) {
    let names: String = columns.iter().map(|(c, _)| format!(", {c}")).collect();
    let values: String = columns
        .iter()
        .map(|(_, v)| format!(", '{}'", v.replace('\'', "''")))
        .collect();
    execute(
        url,
        &format!(
            "UPDATE skillkit_revision SET revision = revision + 1 WHERE id = 1;\
             INSERT INTO skillkit_skills (kit, name{names}, revision) \
             VALUES ('{kit}', '{name}'{values}, (SELECT revision FROM skillkit_revision WHERE id = 1))"
        ),
    )
    .await;
}

pub(crate) fn names(kit: &Kit) -> Vec<String> {
    kit.skills.iter().map(|s| s.name.to_string()).collect()
}

pub(crate) fn revision_of(kit: &Kit) -> i64 {
    kit.metadata["revision"].as_i64().expect("a revision")
}

/// Every field of a skill and an agent survives the round trip through rows,
/// read by another pool; rows group into kits by their kit column.
pub async fn fields_round_trip(url: &str) {
    let writer = Sql::open(url).unwrap();
    let mut skill = Skill::new("read", "Read a file.")
        .with_body("Read $ARGUMENTS.\n")
        .with_license("MIT")
        .with_compatibility("Needs a disk.")
        .with_allowed_tools(["Read", "Grep"])
        .with_model("anthropic://claude-sonnet-4-6")
        .with_required_scope("files:read");
    skill.metadata_mut().insert("author".into(), "ada".into());
    let extra = skill.extra_mut();
    extra.insert("argument-hint".into(), "<path>".into());
    extra.insert("user-invocable".into(), serde_json::Value::Bool(true));
    writer.put_skill("files", &skill).await.unwrap();
    writer
        .put_skill("files", &Skill::new("files:list", "List files."))
        .await
        .unwrap();
    writer
        .put_skill("notes", &Skill::new("search", "Search notes."))
        .await
        .unwrap();
    let mut root = AgentDefinition::new("files", "Finds files.").with_system_prompt("You find.");
    root.max_turns = Some(7);
    root.model = Some("scripted://files".into());
    writer.put_root_agent("files", &root).await.unwrap();
    let mut sub = AgentDefinition::new("summarize", "Sums up.").with_system_prompt("Be brief.");
    sub.tools = vec!["files:read".into()];
    sub.max_agent_depth = Some(2);
    sub.metadata.insert("tier".into(), 1.into());
    writer.put_agent("files", &sub).await.unwrap();

    let reader = Sql::open(url).unwrap();
    let kits = reader.list_kits().await.unwrap();
    assert_eq!(
        kits.iter().map(|k| k.name.as_ref()).collect::<Vec<_>>(),
        ["files", "notes"]
    );
    assert_eq!(names(&kits[0]), ["files:list", "files:read"]);
    let read = &kits[0].skills[1];
    assert_eq!(read.description, "Read a file.");
    assert_eq!(body(read), "Read $ARGUMENTS.\n");
    assert_eq!(read.license(), Some("MIT"));
    assert_eq!(read.compatibility(), Some("Needs a disk."));
    assert_eq!(read.allowed_tools(), ["Read", "Grep"]);
    assert_eq!(read.metadata()["author"], "ada");
    assert_eq!(read.model(), Some("anthropic://claude-sonnet-4-6"));
    assert_eq!(read.required_scope(), Some("files:read"));
    assert_eq!(read.extra()["argument-hint"], "<path>");
    assert_eq!(read.extra()["user-invocable"], true);
    assert!(kits[0].diagnostics.is_empty(), "{:?}", kits[0].diagnostics);
    let agent = kits[0].agent.as_ref().unwrap();
    assert_eq!(
        (agent.name.as_ref(), agent.system_prompt.as_ref()),
        ("files", "You find.")
    );
    assert_eq!(
        (agent.max_turns, agent.model.as_deref()),
        (Some(7), Some("scripted://files"))
    );
    let sub = &kits[0].agents[0];
    assert_eq!(sub.name, "files:summarize");
    assert_eq!(sub.tools, ["files:read"]);
    assert_eq!(sub.max_agent_depth, Some(2));
    assert_eq!(sub.metadata["tier"], 1);
    let rendered = read.render("notes.txt", None).unwrap();
    assert_eq!(rendered, "Read notes.txt.\n");
}

/// A write through one pool is seen by the very next query of another (as
/// another process's would be): puts, replacements, deletes, a new root
/// agent; and a query with nothing changed serves the same values.
pub async fn next_query_sees_another_pools_writes(url: &str) {
    let writer = Sql::open(url).unwrap();
    let reader = Sql::open(url).unwrap();
    let catalog = Catalog::builder().provider(reader.clone()).build();
    assert!(catalog.list_kits().await.is_empty());

    let r1 = writer
        .put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    let kits = reader.list_kits().await.unwrap();
    assert_eq!(names(&kits[0]), ["files:read"]);
    assert_eq!(revision_of(&kits[0]), r1);

    writer
        .put_skill("files", &Skill::new("read", "Read a file, fast."))
        .await
        .unwrap();
    let skill = catalog.get_skill("files:read").await.unwrap();
    assert_eq!(skill.description, "Read a file, fast.");

    writer
        .put_skill("files", &Skill::new("write", "Write a file."))
        .await
        .unwrap();
    assert!(writer.delete_skill("files", "read").await.unwrap());
    let kit = reader.get_kit("files").await.unwrap().unwrap();
    assert_eq!(names(&kit), ["files:write"]);

    writer
        .put_root_agent("files", &AgentDefinition::new("files", "First."))
        .await
        .unwrap();
    writer
        .put_root_agent("files", &AgentDefinition::new("keeper", "Second."))
        .await
        .unwrap();
    let root = catalog.root_agent().await.unwrap();
    assert_eq!(root.name, "keeper");

    assert!(writer.delete_kit("files").await.unwrap());
    assert!(reader.list_kits().await.unwrap().is_empty());
    assert!(!writer.delete_kit("files").await.unwrap());
}

/// Only the rows written since the last query are read again: the skills
/// of rows that did not change are the very same values, and with nothing
/// changed at all the whole answer is.
pub async fn only_changed_rows_are_read_again(url: &str) {
    let writer = Sql::open(url).unwrap();
    let reader = Sql::open(url).unwrap();
    for name in ["a", "b", "c"] {
        writer
            .put_skill("k", &Skill::new(name, "A skill."))
            .await
            .unwrap();
    }
    let first = reader.list_kits().await.unwrap();
    let again = reader.list_kits().await.unwrap();
    for (x, y) in first[0].skills.iter().zip(&again[0].skills) {
        assert!(
            Arc::ptr_eq(x, y),
            "nothing changed, yet {} was rebuilt",
            x.name
        );
    }
    writer
        .put_skill("k", &Skill::new("b", "Changed."))
        .await
        .unwrap();
    let after = reader.list_kits().await.unwrap();
    assert!(Arc::ptr_eq(&first[0].skills[0], &after[0].skills[0]));
    assert!(!Arc::ptr_eq(&first[0].skills[1], &after[0].skills[1]));
    assert_eq!(after[0].skills[1].description, "Changed.");
    assert!(Arc::ptr_eq(&first[0].skills[2], &after[0].skills[2]));
}

/// A store dropped and created again by another program, then written past
/// the revision a reader holds, is a new store: the reader reads it whole
/// (the dropped rows gone, every new row there) and its answer says the new
/// store's revision.
pub async fn a_recreated_store_is_read_whole(url: &str) {
    let reader = Sql::open(url).unwrap();
    let writer = Sql::open(url).unwrap();
    for name in ["a", "b", "c"] {
        writer
            .put_skill("old", &Skill::new(name, "Before the drop."))
            .await
            .unwrap();
    }
    let kits = reader.list_kits().await.unwrap();
    assert_eq!(names(&kits[0]), ["old:a", "old:b", "old:c"]);

    execute(
        url,
        "DROP TABLE skillkit_skills; DROP TABLE skillkit_agents; \
         DROP TABLE skillkit_revision; DROP TABLE _sqlx_migrations",
    )
    .await;
    let again = Sql::open(url).unwrap();
    let mut last = 0;
    for i in 0..5 {
        last = again
            .put_skill("new", &Skill::new(format!("s{i}"), "After."))
            .await
            .unwrap();
    }
    assert!(last > revision_of(&kits[0]), "written past the reader");

    let kits = reader.list_kits().await.unwrap();
    let served: Vec<String> = kits.iter().flat_map(names).collect();
    assert_eq!(served, ["new:s0", "new:s1", "new:s2", "new:s3", "new:s4"]);
    assert_eq!(revision_of(&kits[0]), last);
}
