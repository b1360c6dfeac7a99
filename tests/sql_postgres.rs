//! The SQL provider on PostgreSQL: a real server, found through
//! `DATABASE_URL` (`.ci/run` starts one on 127.0.0.1); each test creates a
//! database of its own. Without `DATABASE_URL` these tests say so and pass
//! without checking anything. The restart test runs a throwaway cluster of
//! its own (`initdb`, `pg_ctl`), which it stops and starts again mid-test.

#[path = "sql_support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use skillkit::{Catalog, KitProvider, Memory, Skill, Sql};

/// The server of `DATABASE_URL`, or `None` (with the reason printed).
fn server() -> Option<String> {
    match std::env::var("DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => Some(url),
        _ => {
            eprintln!(
                "skipped: DATABASE_URL names no PostgreSQL server (postgres://…); \
                 .ci/run starts one and sets it"
            );
            None
        }
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

/// A new, empty database on `server`, for one test.
async fn fresh_database(server: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "skillkit_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    support::execute(server, &format!("CREATE DATABASE {name}")).await;
    with_database(server, &name)
}

macro_rules! on_postgres {
    ($test:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            let Some(server) = server() else { return };
            support::$test(&fresh_database(&server).await).await;
        }
    };
}

on_postgres!(fields_round_trip);
on_postgres!(next_query_sees_another_pools_writes);
on_postgres!(only_changed_rows_are_read_again);
on_postgres!(bad_names_are_refused);
on_postgres!(corrupt_rows_are_named);

/// 50 catalogs on 50 pools query in a loop while a writer puts and deletes
/// 1,000 skills.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_catalogs_under_a_writer_see_consistent_revisions_and_the_final_rows() {
    let Some(server) = server() else { return };
    support::load(&fresh_database(&server).await, 50).await;
}

/// A statement blocked by another session's lock is cancelled at the
/// timeout: the query fails, the catalog serves the others, and the next
/// query after the lock is released succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_timing_out_fails_and_the_next_one_succeeds() {
    let Some(server) = server() else { return };
    let url = fresh_database(&server).await;
    let sql = Sql::builder(&url)
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
    assert!(catalog.diagnostics()[0].message.contains("was skipped"));
}

/// A PostgreSQL cluster of the test's own, in a temp dir, on 127.0.0.1.
struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl Cluster {
    /// Initialises and starts a cluster, or `None` (with the reason
    /// printed) when PostgreSQL's programs are not installed.
    fn start() -> Option<Cluster> {
        let Some(bin) = postgres_bin() else {
            eprintln!("skipped: no PostgreSQL programs (initdb, pg_ctl) in /usr/lib/postgresql");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Cluster { dir, bin, port };
        if is_root() {
            // PostgreSQL refuses to run as root: the cluster is postgres's.
            run(Command::new("chown")
                .arg("postgres")
                .arg(cluster.dir.path()));
        }
        let data = cluster.data();
        cluster.run_as(
            "initdb",
            &["-D", &data, "-U", "skillkit", "-A", "trust", "--no-sync"],
        );
        cluster.up();
        Some(cluster)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn url(&self) -> String {
        format!("postgres://skillkit@127.0.0.1:{}/postgres", self.port)
    }

    fn up(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        self.run_as(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
    }

    fn down(&self) {
        self.run_as("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
    }

    fn run_as(&self, program: &str, args: &[&str]) {
        run(self.command(program).args(args));
    }

    /// PostgreSQL's `program`, run as `postgres` when this process is root.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        match is_root() {
            true => {
                let mut command = Command::new("runuser");
                command.args(["-u", "postgres", "--"]).arg(&program);
                command
            }
            false => Command::new(&program),
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
    }
}

fn run(command: &mut Command) {
    let output = command.output().expect("run a PostgreSQL program");
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `pg_ctl`.
fn postgres_bin() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| Some(entry.ok()?.path().join("bin")))
        .filter(|bin| Path::new(bin).join("pg_ctl").exists())
        .collect();
    found.sort_by_key(|bin| {
        let version = bin
            .parent()
            .and_then(|v| v.file_name())
            .map(|v| v.to_string_lossy().into_owned());
        version.and_then(|v| v.parse::<u32>().ok()).unwrap_or(0)
    });
    found.pop()
}

/// The server stops mid-test and starts again: while it is down the query
/// fails and the catalog serves its other providers; once it is back, the
/// same provider serves the rows again and takes writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_recovers_when_the_server_comes_back() {
    if server().is_none() {
        return;
    }
    let Some(cluster) = Cluster::start() else {
        return;
    };
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

    cluster.down();
    assert!(sql.list_kits().await.is_err());
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["mem:hello"]);
    assert!(catalog.diagnostics()[0].message.contains("was skipped"));

    cluster.up();
    assert!(catalog.get_skill("files:read").await.is_some());
    sql.put_skill("files", &Skill::new("write", "Write a file."))
        .await
        .unwrap();
    assert!(catalog.get_skill("files:write").await.is_some());

    // A restart with no query while the server was down: the idle
    // connections, used a moment ago, all died with it. The very first write
    // and the very first query after it still succeed.
    for round in 0..3 {
        cluster.down();
        cluster.up();
        let name = format!("round-{round}");
        sql.put_skill("files", &Skill::new(name.clone(), "A round."))
            .await
            .unwrap_or_else(|e| panic!("the first write after restart {round}: {e}"));
        cluster.down();
        cluster.up();
        assert!(
            catalog.get_skill(&format!("files:{name}")).await.is_some(),
            "the first query after restart {round}: {:?}",
            catalog.diagnostics()
        );
    }
}
