//! What the SQL provider must do on every backend, written once and run on
//! SQLite (`sql.rs`) and on PostgreSQL (`sql_postgres.rs`): each function
//! takes the URL of an empty database.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use skillkit::{AgentDefinition, Catalog, Kit, KitProvider, Memory, Skill, Sql};

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

fn names(kit: &Kit) -> Vec<String> {
    kit.skills.iter().map(|s| s.name.to_string()).collect()
}

fn revision_of(kit: &Kit) -> i64 {
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

/// A name that breaks the naming rule is refused with the rule, and a
/// refused write writes nothing (not even the skills of the same kit that
/// were fine).
pub async fn bad_names_are_refused(url: &str) {
    let sql = Sql::open(url).unwrap();
    let before = sql.revision().await.unwrap();
    let other = sql
        .put_skill("files", &Skill::new("net:fetch", "Fetch."))
        .await
        .unwrap_err();
    assert!(other.to_string().contains("names kit `net`"), "{other}");
    let charset = sql
        .put_skill("files", &Skill::new("Read File", "Read."))
        .await
        .unwrap_err();
    assert!(
        charset.to_string().contains("must be lowercase"),
        "{charset}"
    );
    let kit = Kit::new("files")
        .with_skill(Skill::new("read", "Fine."))
        .with_skill(Skill::new("bad--name", "Not fine."));
    let whole = sql.put_kit(&kit).await.unwrap_err();
    assert!(whole.to_string().contains("consecutive hyphens"), "{whole}");
    let bad_kit = sql
        .put_skill("a:b", &Skill::new("x", "X."))
        .await
        .unwrap_err();
    assert!(bad_kit.to_string().contains("kit name"), "{bad_kit}");
    assert_eq!(sql.revision().await.unwrap(), before);
    assert!(sql.list_kits().await.unwrap().is_empty());
}

/// Rows written by hand that break the rules are skipped with a diagnostic
/// naming the row; the good rows of the same kit and the other providers
/// of the catalog are served. A `SKILL.md` pasted whole into `body` (with a
/// NULL description) is read by the parser.
pub async fn corrupt_rows_are_named(url: &str) {
    let sql = Sql::open(url).unwrap();
    sql.put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    insert_skill_row(
        url,
        "files",
        "pasted",
        &[(
            "body",
            "---\nname: pasted\ndescription: Pasted whole.\nlicense: MIT\n---\nBody.\n",
        )],
    )
    .await;
    insert_skill_row(
        url,
        "files",
        "broken",
        &[("body", "---\nname: [broken\ndescription: x\n---\nBody.\n")],
    )
    .await;
    insert_skill_row(
        url,
        "files",
        "net:fetch",
        &[("description", "Names another kit.")],
    )
    .await;
    insert_skill_row(
        url,
        "files",
        "json",
        &[("description", "Bad JSON."), ("metadata", "{\"a\": ")],
    )
    .await;
    insert_skill_row(url, "files", "Loud", &[("description", "Uppercase.")]).await;

    let memory = Memory::new();
    memory.put(Skill::new("mem:hello", "Hello."));
    let catalog = Catalog::builder()
        .provider(sql.clone())
        .provider(memory)
        .build();
    let snapshot = catalog.snapshot().await;
    let served: Vec<String> = snapshot.kits().iter().flat_map(names).collect();
    assert_eq!(
        served,
        ["files:Loud", "files:pasted", "files:read", "mem:hello"]
    );
    let pasted = catalog.get_skill("files:pasted").await.unwrap();
    assert_eq!(
        (pasted.description.as_ref(), pasted.license()),
        ("Pasted whole.", Some("MIT"))
    );
    let said: Vec<String> = catalog
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    let about = |row: &str| {
        said.iter()
            .find(|d| d.starts_with(&format!("skillkit_skills/files/{row}:")))
            .unwrap_or_else(|| panic!("no diagnostic names row {row}: {said:#?}"))
            .clone()
    };
    assert!(about("broken").contains("error"), "{said:#?}");
    assert!(about("net:fetch").contains("names kit `net`"), "{said:#?}");
    assert!(about("json").contains("`metadata` is not a JSON object"));
    assert!(about("Loud").contains("warning"), "{said:#?}");
    // Fixing the row by hand serves it on the next query.
    execute(
        url,
        "UPDATE skillkit_revision SET revision = revision + 1 WHERE id = 1;\
         UPDATE skillkit_skills SET metadata = '{}', \
         revision = (SELECT revision FROM skillkit_revision WHERE id = 1) WHERE name = 'json'",
    )
    .await;
    assert!(catalog.get_skill("files:json").await.is_some());
}

/// The load: `readers` catalogs, each on a pool of its own, query in a loop
/// while one writer puts and deletes 1,000 skills. No query fails, every
/// answer is exactly the state of the revision it says it is, and once the
/// writer stops every catalog sees exactly the final rows.
pub async fn load(url: &str, readers: usize) {
    const SKILLS: usize = 1000;
    const PAUSE: std::time::Duration = std::time::Duration::from_millis(20);
    let writer = Sql::open(url).unwrap();
    // A kit that never changes, so that every answer says its revision.
    let base = writer
        .put_skill("anchor", &Skill::new("anchor", "Always there."))
        .await
        .unwrap();
    // Op n (1-based): put skill n-1; after every third put, delete the skill
    // put two puts before. The state at revision base+k is ops[..k] replayed.
    let mut ops: Vec<(bool, usize)> = Vec::new();
    for i in 0..SKILLS {
        ops.push((true, i));
        if i % 3 == 2 {
            ops.push((false, i - 2));
        }
    }
    let state_at = |k: usize| -> BTreeSet<String> {
        let mut live = BTreeSet::new();
        for &(put, i) in &ops[..k] {
            let name = format!("load:s{i:04}");
            if put {
                live.insert(name);
            } else {
                live.remove(&name);
            }
        }
        live
    };
    let ops_len = ops.len();
    let states: Arc<Vec<BTreeSet<String>>> = Arc::new((0..=ops_len).map(state_at).collect());

    let done = Arc::new(AtomicBool::new(false));
    let queries = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..readers {
        // A generous limit: 50 pools starting at once queue on the schema
        // check (PostgreSQL's migration lock) on a loaded 2-core machine.
        let sql = Sql::builder(url)
            .max_connections(1)
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .unwrap();
        let catalog = Catalog::builder().provider(sql).build();
        let (done, queries, states) = (done.clone(), queries.clone(), states.clone());
        tasks.push(tokio::spawn(async move {
            let check = |snapshot: &skillkit::Snapshot| -> usize {
                assert!(
                    snapshot.diagnostics().is_empty(),
                    "a query failed: {:?}",
                    snapshot.diagnostics()
                );
                let kits = snapshot.kits();
                let anchor = kits.iter().find(|k| k.name == "anchor").expect("anchor");
                let revision = revision_of(anchor);
                let k = usize::try_from(revision - base).expect("a revision after the base");
                let load = kits.iter().find(|kit| kit.name == "load");
                let seen = load.map_or(&[][..], |kit| &kit.skills[..]);
                if let Some(kit) = load {
                    assert_eq!(revision_of(kit), revision);
                }
                let expected = &states[k];
                assert!(
                    seen.len() == expected.len()
                        && seen.iter().zip(expected).all(|(s, e)| s.name == e.as_str()),
                    "the answer at revision {revision} is not that revision's rows"
                );
                k
            };
            let mut last = 0;
            while !done.load(Ordering::Acquire) {
                let k = check(&catalog.snapshot().await);
                assert!(k >= last, "revision went back from {last} to {k}");
                last = k;
                queries.fetch_add(1, Ordering::Relaxed);
                // A pause, so that 50 readers leave the writer (and, on a
                // 2-core machine, the database server) some of the CPU.
                tokio::time::sleep(PAUSE).await;
            }
            let end = check(&catalog.snapshot().await);
            queries.fetch_add(1, Ordering::Relaxed);
            end
        }));
    }
    // The writer runs on a thread and runtime of its own, as another
    // process would: it does not queue behind the readers' tasks.
    let writer_url = url.to_owned();
    let writer = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let writer = Sql::open(&writer_url).unwrap();
            for (n, &(put, i)) in ops.iter().enumerate() {
                let name = format!("s{i:04}");
                let revision = match put {
                    true => writer
                        .put_skill("load", &Skill::new(name, "Under load."))
                        .await
                        .unwrap(),
                    false => {
                        assert!(writer.delete_skill("load", &name).await.unwrap());
                        writer.revision().await.unwrap()
                    }
                };
                assert_eq!(revision, base + n as i64 + 1, "writes are serialised");
            }
        })
    });
    tokio::task::spawn_blocking(move || writer.join())
        .await
        .unwrap()
        .expect("the writer");
    done.store(true, Ordering::Release);
    for task in tasks {
        assert_eq!(task.await.unwrap(), ops_len, "a catalog missed the end");
    }
    assert!(queries.load(Ordering::Relaxed) >= readers);
}

/// A name is read as a file's `name:` line is: the whitespace around it (a
/// space, a newline, a tab) is not part of it. A skill put as ` padded ` is
/// `ws:padded`, the skill a `SKILL.md` saying `name: " padded "` is, and the
/// same skill as one put as `padded`, never a second one beside it; a row
/// written by hand with such a name is served under its trimmed name.
pub async fn names_are_trimmed_as_files_trim_them(url: &str) {
    let sql = Sql::open(url).unwrap();
    sql.put_skill("ws", &Skill::new("padded", "First."))
        .await
        .unwrap();
    for name in [" padded ", "trailing\n", "\ttabbed", " ws : spaced "] {
        sql.put_skill("ws", &Skill::new(name.to_owned(), "Second."))
            .await
            .unwrap_or_else(|e| panic!("{name:?}: {e}"));
    }
    let kit = sql.get_kit("ws").await.unwrap().unwrap();
    assert_eq!(
        names(&kit),
        ["ws:padded", "ws:spaced", "ws:tabbed", "ws:trailing"]
    );
    assert!(kit.skills.iter().all(|s| s.description == "Second."));

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ws/padded/SKILL.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "---\nname: \" padded \"\ndescription: From a file.\n---\n",
    )
    .unwrap();
    let local = skillkit::Local::new(dir.path().join("ws"));
    let from_file = &local.list_kits().await.unwrap()[0].skills[0];
    assert_eq!(from_file.name, "ws:padded");

    insert_skill_row(url, "hand", " spaced ", &[("description", "By hand.")]).await;
    let kit = sql.get_kit("hand").await.unwrap().unwrap();
    assert_eq!(names(&kit), ["hand:spaced"]);
    assert!(sql.delete_skill("ws", " padded\n").await.unwrap());
    let kit = sql.get_kit("ws").await.unwrap().unwrap();
    assert_eq!(names(&kit), ["ws:spaced", "ws:tabbed", "ws:trailing"]);
}

/// A row whose name is empty (or only whitespace) is what a `SKILL.md` with
/// `name: ""` is: an error, so the row is skipped with a diagnostic naming
/// it, and the kit's other rows are served. Never a skill named `kit:`.
pub async fn rows_with_empty_names_are_skipped(url: &str) {
    let sql = Sql::open(url).unwrap();
    sql.put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    insert_skill_row(url, "files", "", &[("description", "No name.")]).await;
    insert_skill_row(url, "files", " \t", &[("description", "Blank name.")]).await;
    let catalog = Catalog::builder().provider(sql.clone()).build();
    let served: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(served, ["files:read"]);
    let kit = sql.get_kit("files").await.unwrap().unwrap();
    let errors: Vec<String> = kit
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("skillkit_skills/files/")
                && e.contains("the skill name is empty")),
        "{errors:#?}"
    );
    let refused = sql
        .put_skill("files", &Skill::new(" ", "Blank."))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("the skill name is empty"),
        "{refused}"
    );
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

/// A kit of `count` skills, for bulk writes.
fn many_skills(count: usize) -> Kit {
    (0..count).fold(Kit::new("bulk"), |kit, i| {
        kit.with_skill(Skill::new(
            format!("s{i:05}"),
            format!("Skill {i} of a bulk write."),
        ))
    })
}

/// Writes a kit of 10,000 skills (one transaction, as an import of a kit
/// directory of 10,000 skills is) through `sql`, and checks that another
/// pool serves it whole.
async fn write_many(url: &str, sql: &Sql) {
    const COUNT: usize = 10_000;
    let kit = many_skills(COUNT);
    if let Err(e) = sql.put_kit(&kit).await {
        panic!("a bulk write of {COUNT} skills failed: {e}");
    }
    let kit = Sql::open(url)
        .unwrap()
        .get_kit("bulk")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kit.skills.len(), COUNT);
    assert_eq!(
        kit.skills[COUNT - 1].name,
        format!("bulk:s{:05}", COUNT - 1)
    );
}

/// A bulk write succeeds with [`Sql::open`]'s defaults: 10,000 skills in
/// one transaction.
pub async fn a_bulk_write_succeeds_with_the_defaults(url: &str) {
    write_many(url, &Sql::open(url).unwrap()).await;
}

/// The timeout bounds how long the database takes to answer one statement,
/// not how much a write holds: a write of 10,000 skills, many times longer
/// than a 250 ms timeout in all, succeeds with it.
pub async fn the_timeout_bounds_each_statement_not_the_write(url: &str) {
    Sql::open(url).unwrap().revision().await.unwrap(); // the tables, made
    let sql = Sql::builder(url)
        .timeout(std::time::Duration::from_millis(250))
        .build()
        .unwrap();
    write_many(url, &sql).await;
}
