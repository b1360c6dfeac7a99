//! The SQL provider on PostgreSQL: a real server, `DATABASE_URL`'s when it
//! names one (`postgres://…`), else a throwaway server these tests start from
//! the installed PostgreSQL programs (`skillkit_tests::postgres`); each test
//! creates a database of its own. Without PostgreSQL the tests fail, saying
//! how to install it; `SKILLKIT_SKIP_POSTGRES=1` marks them ignored (never
//! passed). The password test always runs on the throwaway server (whose
//! role logs in with a password), the restart test on one of its own, which
//! it stops and starts.

use skillkit_tests::sql as support;

use skillkit_tests::postgres as postgres_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use postgres_server::Cluster;
use skillkit::providers::sql::SqlError;
use skillkit::{Catalog, KitProvider, Memory, Skill, Sql};

/// The server the tests run on: `DATABASE_URL`'s, else the shared
/// throwaway one.
fn server() -> String {
    match std::env::var("DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => url,
        _ => postgres_server::shared().url(),
    }
}

/// `url` with its database part replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (authority, query) = match rest.split_once('/') {
        Some((authority, path)) => (authority, path.split_once('?').map(|(_, q)| q)),
        None => (
            rest.split('?').next().unwrap_or(rest),
            rest.split_once('?').map(|(_, q)| q),
        ),
    };
    match query {
        Some(query) => format!("{scheme}://{authority}/{database}?{query}"),
        None => format!("{scheme}://{authority}/{database}"),
    }
}

/// A new, empty database on `server`, for one test, dropped with it (so
/// that none is left on `DATABASE_URL`'s server, whatever the outcome).
struct Database {
    server: String,
    name: String,
    url: String,
}

async fn fresh_database(server: &str) -> Database {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "skillkit_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let admin = sqlx::PgPool::connect(server).await.unwrap_or_else(|e| {
        panic!(
            "the PostgreSQL server of the tests is unreachable ({e}); start it, or unset \
             DATABASE_URL to let the tests start a throwaway server"
        )
    });
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&admin)
        .await
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
    admin.close().await;
    Database {
        url: with_database(server, &name),
        server: server.to_owned(),
        name,
    }
}

impl std::ops::Deref for Database {
    type Target = str;
    fn deref(&self) -> &str {
        &self.url
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let (server, name) = (self.server.clone(), self.name.clone());
        // A runtime of its own: the test's may be gone or be shutting down.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let admin = sqlx::PgPool::connect(&server).await?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&admin)
                    .await?;
                admin.close().await;
                Ok::<_, sqlx::Error>(())
            })?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        });
        if let Ok(Err(e)) = dropped.join() {
            eprintln!("DROP DATABASE {}: {e}", self.name);
        }
    }
}

macro_rules! on_postgres {
    ($test:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
        async fn $test() {
            support::$test(&fresh_database(&server()).await).await;
        }
    };
}

on_postgres!(fields_round_trip);
on_postgres!(next_query_sees_another_pools_writes);
on_postgres!(only_changed_rows_are_read_again);
on_postgres!(bad_names_are_refused);
on_postgres!(corrupt_rows_are_named);
on_postgres!(names_are_trimmed_as_files_trim_them);
on_postgres!(rows_with_empty_names_are_skipped);
on_postgres!(a_recreated_store_is_read_whole);
on_postgres!(a_bulk_write_succeeds_with_the_defaults);

/// A write of 10,000 skills (about 3 s in all on PostgreSQL, six times the
/// limit) succeeds with a 500 ms timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn the_timeout_bounds_each_statement_not_the_write() {
    let url = fresh_database(&server()).await;
    support::the_timeout_bounds_each_statement_not_the_write(&url, 10_000).await;
}

/// 50 catalogs on 50 pools query in a loop while a writer puts and deletes
/// 1,000 skills.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn fifty_catalogs_under_a_writer_see_consistent_revisions_and_the_final_rows() {
    support::load(&fresh_database(&server()).await, 50).await;
}

/// A statement blocked by another session's lock is cancelled at the
/// timeout: the query fails, the catalog serves the others, and the next
/// query after the lock is released succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn a_query_timing_out_fails_and_the_next_one_succeeds() {
    let url = fresh_database(&server()).await;
    let sql = Sql::builder(&*url)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    sql.put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    let locker = sqlx::PgPool::connect(&url).await.unwrap();
    let mut lock = locker.begin().await.unwrap();
    sqlx::query("LOCK TABLE skillkit_revision IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *lock)
        .await
        .unwrap();

    let memory = Memory::new();
    memory.put(Skill::new("mem:hello", "Hello."));
    let catalog = Catalog::builder()
        .provider(sql.clone())
        .provider(memory)
        .build();
    let error = sql.list_kits().await.unwrap_err().to_string();
    assert!(
        error.contains("did not answer") || error.contains("statement timeout"),
        "{error}"
    );
    assert_eq!(catalog.list_skills().await.len(), 1);

    lock.commit().await.unwrap();
    assert!(catalog.get_skill("files:read").await.is_some());
}

/// No server where the URL points: a provider error, the others served.
/// (Needs no server, so it runs everywhere.)
#[tokio::test]
async fn an_unreachable_server_fails_the_query_and_the_catalog_serves_the_others() {
    let sql = Sql::builder("postgres://skillkit@127.0.0.1:1/skills")
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
    assert!(error.contains("postgres://127.0.0.1:1/skills"), "{error}");
    assert!(!error.contains("skillkit@"), "credentials in {error}");
    assert_eq!(catalog.list_skills().await.len(), 1);
    let failures = catalog.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].provider, sql.name());
    assert!(
        matches!(
            failures[0].error.downcast_ref::<SqlError>(),
            Some(SqlError::Unreachable { .. })
        ),
        "{:?}",
        failures[0].error
    );
    assert!(
        catalog.diagnostics().is_empty(),
        "{:?}",
        catalog.diagnostics()
    );
}

/// A wrong password is said to be one, naming the user, at once: one
/// failed login per call (not retried as a migration race) and never the
/// password in the message. (On the throwaway server, whose role logs in
/// with a password.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn a_wrong_password_is_reported_as_such_at_once() {
    let cluster = postgres_server::shared();
    let failed_logins = || {
        cluster
            .log()
            .matches("password authentication failed for user \"skillkit\"")
            .count()
    };
    let before = failed_logins();
    let sql = Sql::open(cluster.url_as("not-the-password", "postgres")).unwrap();
    let error = sql.revision().await.unwrap_err();
    assert!(
        matches!(error, SqlError::Authentication { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("authentication failed for user `skillkit`"),
        "{message}"
    );
    assert!(message.contains("password"), "{message}");
    assert!(!message.contains("not-the-password"), "{message}");
    assert!(!message.contains("creating SkillKit's tables"), "{message}");
    assert_eq!(failed_logins() - before, 1, "one login per call");
    let write = sql
        .put_skill("k", &Skill::new("a", "A."))
        .await
        .unwrap_err();
    assert!(
        matches!(write, SqlError::Authentication { .. }),
        "{write:?}"
    );
    assert_eq!(failed_logins() - before, 2, "one login per call");
}

/// A database the server does not have is said not to exist, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn a_missing_database_is_reported_as_such_at_once() {
    let url = with_database(&server(), "no_such_database");
    let error = Sql::open(&url).unwrap().revision().await.unwrap_err();
    assert!(matches!(error, SqlError::NoDatabase { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("/no_such_database` does not exist"),
        "{message}"
    );
    assert!(!message.contains("creating SkillKit's tables"), "{message}");
}

/// Nothing listening where the URL points: a refused connection, said so
/// at once with the address (not after the timeout of retries), and never
/// the password. (Needs no server, so it runs everywhere.)
#[tokio::test]
async fn a_refused_connection_is_reported_as_such_at_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://skillkit:secret-pw@127.0.0.1:{port}/skills");
    let sql = Sql::open(&url).unwrap();
    for error in [
        sql.revision().await.unwrap_err(),
        sql.put_skill("k", &Skill::new("a", "A."))
            .await
            .unwrap_err(),
    ] {
        assert!(matches!(error, SqlError::Unreachable { .. }), "{error:?}");
        let message = error.to_string().to_lowercase();
        assert!(
            message.contains(&format!("connecting to 127.0.0.1:{port} failed")),
            "{message}"
        );
        assert!(message.contains("connection refused"), "{message}");
        assert!(message.contains("check that the server is up"), "{message}");
        assert!(!message.contains("secret-pw"), "{message}");
    }
}

/// The server stops mid-test and starts again: while it is down the query
/// fails and the catalog serves its other providers; once it is back, the
/// same provider serves the rows again and takes writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn the_provider_recovers_when_the_server_comes_back() {
    let cluster = Cluster::start().unwrap_or_else(|why| panic!("{why}"));
    let sql = Sql::builder(cluster.url())
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let memory = Memory::new();
    memory.put(Skill::new("mem:hello", "Hello."));
    let catalog = Catalog::builder()
        .provider(sql.clone())
        .provider(memory)
        .build();
    sql.put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    assert_eq!(catalog.list_skills().await.len(), 2);

    cluster.down().unwrap();
    assert!(sql.list_kits().await.is_err());
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["mem:hello"]);
    let failures = catalog.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].error.downcast_ref::<SqlError>().is_some(),
        "{:?}",
        failures[0].error
    );
    assert!(
        catalog.diagnostics().is_empty(),
        "{:?}",
        catalog.diagnostics()
    );

    cluster.up().unwrap();
    assert!(catalog.get_skill("files:read").await.is_some());
    sql.put_skill("files", &Skill::new("write", "Write a file."))
        .await
        .unwrap();
    assert!(catalog.get_skill("files:write").await.is_some());

    // A restart with no query while the server was down: the idle
    // connections, used a moment ago, all died with it. The very first write
    // and the very first query after it still succeed.
    for round in 0..3 {
        cluster.down().unwrap();
        cluster.up().unwrap();
        let name = format!("round-{round}");
        sql.put_skill("files", &Skill::new(name.clone(), "A round."))
            .await
            .unwrap_or_else(|e| panic!("the first write after restart {round}: {e}"));
        cluster.down().unwrap();
        cluster.up().unwrap();
        assert!(
            catalog.get_skill(&format!("files:{name}")).await.is_some(),
            "the first query after restart {round}: {:?}",
            catalog.failures()
        );
    }
}

/// The SQL provider is a session store on PostgreSQL too: the conformance
/// suite of every store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn the_sql_store_on_postgres_passes_the_session_conformance_suite() {
    let database = fresh_database(&server()).await;
    let sql = skillkit::Sql::open(&*database).unwrap();
    skillkit_tests::sessions::conformance(&sql).await;
}

/// Two handles (two pools: as two processes) appending to one session at
/// once: each append is one compare-and-set of the session's version, so
/// every item is kept, numbered without a gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn two_pools_appending_to_one_postgres_session_keep_every_item() {
    use skillkit::agent::session::{SessionError, SessionStore};
    let database = fresh_database(&server()).await;
    let writers: Vec<_> = ["one", "two"]
        .into_iter()
        .map(|name| {
            let sql = skillkit::Sql::open(&*database).unwrap();
            tokio::spawn(async move {
                for i in 0..30 {
                    loop {
                        let version = sql.load("shared", Some(0)).await.unwrap().version;
                        let message = skillkit::llm::Message::user(format!("{name} {i}"));
                        match sql.append("shared", version, &[message]).await {
                            Ok(_) => break,
                            Err(SessionError::Stale { .. }) => continue,
                            Err(other) => panic!("{other}"),
                        }
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let sql = skillkit::Sql::open(&*database).unwrap();
    let loaded = sql.load("shared", None).await.unwrap();
    assert_eq!(loaded.version, 60);
    let seqs: Vec<u64> = loaded.items.iter().map(|i| i.seq).collect();
    assert_eq!(seqs, (1..=60).collect::<Vec<_>>());
}

/// The child's work in the two-process test (a no-op unless run as one).
#[tokio::test(flavor = "multi_thread")]
async fn child_appends() {
    skillkit_tests::sessions::child_appends().await;
}

/// Two processes appending to one PostgreSQL session keep every item.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_postgres, ignore = "SKILLKIT_SKIP_POSTGRES=1")]
async fn two_processes_appending_to_one_postgres_session_keep_every_item() {
    let database = fresh_database(&server()).await;
    let url = database.url.clone();
    tokio::task::spawn_blocking(move || {
        skillkit_tests::sessions::two_processes_keep_every_item(&url)
    })
    .await
    .unwrap();
}
