//! Many rows and many readers: 50 catalogs under a writer, and bulk writes
//! of 10,000 skills.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use skillkit::{Catalog, Kit, KitProvider, Skill, Sql};

use super::revision_of;

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
                    snapshot.failures().is_empty() && snapshot.diagnostics().is_empty(),
                    "a query failed: {:?} {:?}",
                    snapshot.failures(),
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

/// A kit of `count` skills, for bulk writes (the list made whole, sorted:
/// `Kit::with_skill` looks each name up, a scan per skill).
fn many_skills(count: usize) -> Kit {
    let mut kit = Kit::new("bulk");
    kit.skills = (0..count)
        .map(|i| {
            let skill = Skill::new(format!("s{i:05}"), format!("Skill {i} of a bulk write."));
            std::sync::Arc::new(skill)
        })
        .collect::<Vec<_>>()
        .into();
    kit
}

/// Writes a kit of `count` skills (one transaction, as an import of a kit
/// directory of as many skills is) through `sql`.
async fn write_many(sql: &Sql, count: usize) {
    let kit = many_skills(count);
    let started = std::time::Instant::now();
    if let Err(e) = sql.put_kit(&kit).await {
        panic!(
            "a bulk write of {count} skills failed after {:?}: {e}",
            started.elapsed()
        );
    }
}

/// A bulk write succeeds with [`Sql::open`]'s defaults: 10,000 skills in
/// one transaction, then served whole by another pool.
pub async fn a_bulk_write_succeeds_with_the_defaults(url: &str) {
    const COUNT: usize = 10_000;
    write_many(&Sql::open(url).unwrap(), COUNT).await;
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

/// The timeout bounds how long the database takes to answer one statement,
/// not how much a write holds: a write of `count` skills (chosen per
/// backend to take several times the limit in all) succeeds with a 500 ms
/// limit, every row written.
pub async fn the_timeout_bounds_each_statement_not_the_write(url: &str, count: usize) {
    Sql::open(url).unwrap().revision().await.unwrap(); // the tables, made
    let sql = Sql::builder(url)
        .timeout(std::time::Duration::from_millis(500))
        .build()
        .unwrap();
    write_many(&sql, count).await;
    let written = super::query_count(
        url,
        "SELECT COUNT(*) FROM skillkit_skills WHERE kit = 'bulk' AND NOT deleted",
    )
    .await;
    assert_eq!(written, count as i64);
}
