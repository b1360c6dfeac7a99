//! A throwaway PostgreSQL server for the tests, started from the installed
//! PostgreSQL programs (`initdb`, `pg_ctl`): a cluster in a temp dir, on a
//! free port of 127.0.0.1 (its unix socket in the temp dir), with password
//! authentication for its one role. A watchdog process stops the server and
//! removes the directory once the cluster is dropped or the test process
//! ends, however it ends (a failed test, Ctrl-C, a kill).
//!
//! No PostgreSQL programs: the tests that need them fail, saying how to
//! install them; `SKILLKIT_SKIP_POSTGRES=1` marks them ignored instead
//! (see `build.rs`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;

/// What to do when there is no PostgreSQL to test against.
pub const INSTALL: &str = "PostgreSQL's programs (initdb, pg_ctl) are not installed, and the \
     SQL provider's PostgreSQL tests start a throwaway server with them. Install them with \
     `bench/setup-postgres.sh` (as root on Debian or Ubuntu it runs `apt-get install \
     postgresql`; elsewhere install your system's PostgreSQL server package), or point \
     DATABASE_URL at a server of yours (postgres://user:password@host/database), or set \
     SKILLKIT_SKIP_POSTGRES=1 to mark these tests ignored";

/// A running cluster of the test process's own.
pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    password: String,
    /// The watchdog and the pipe it waits on: closing the pipe (dropping
    /// the cluster, or the process ending) stops the server.
    watchdog: Option<(Child, ChildStdin)>,
}

/// The server the tests share, started at first use and stopped when the
/// test process ends; the reason it could not start, with what to do.
pub fn shared() -> &'static Cluster {
    static SHARED: OnceLock<Result<Cluster, String>> = OnceLock::new();
    match SHARED.get_or_init(Cluster::start) {
        Ok(cluster) => cluster,
        Err(why) => panic!("{why}"),
    }
}

impl Cluster {
    /// Initialises and starts a cluster, or says why it cannot (with what
    /// to do).
    pub fn start() -> Result<Cluster, String> {
        let bin = postgres_bin().ok_or_else(|| INSTALL.to_owned())?;
        let dir = tempfile::Builder::new()
            .prefix("skillkit-postgres-")
            .tempdir()
            .map_err(|e| format!("a temp dir for PostgreSQL: {e}"))?
            .keep();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("a free port on 127.0.0.1: {e}"))?
            .port();
        let password = format!("pw-{}-{}", std::process::id(), nanos());
        let mut cluster = Cluster {
            dir,
            bin,
            port,
            password,
            watchdog: None,
        };
        cluster.watch()?;
        let pwfile = cluster.dir.join("pwfile");
        std::fs::write(&pwfile, &cluster.password).map_err(|e| e.to_string())?;
        if is_root() {
            // PostgreSQL refuses to run as root: the cluster is postgres's.
            run(Command::new("chown")
                .args(["-R", "postgres"])
                .arg(&cluster.dir))?;
        }
        let (data, pwfile) = (cluster.data(), pwfile.display().to_string());
        cluster.run_as(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "skillkit",
                "-A",
                "scram-sha-256",
                "--pwfile",
                &pwfile,
                "-E",
                "UTF8",
                "--locale",
                "C",
                "--no-sync",
            ],
        )?;
        cluster.up()?;
        let version = Command::new(cluster.bin.join("postgres"))
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        eprintln!(
            "PostgreSQL: a throwaway server ({version}) on 127.0.0.1:{}",
            cluster.port
        );
        Ok(cluster)
    }

    /// The URL of database `database`, as the cluster's role.
    pub fn url_of(&self, database: &str) -> String {
        self.url_as(&self.password, database)
    }

    /// The URL of database `database`, as the cluster's role with password
    /// `password` (the right one or not).
    pub fn url_as(&self, password: &str, database: &str) -> String {
        format!(
            "postgres://skillkit:{password}@127.0.0.1:{}/{database}",
            self.port
        )
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    /// The URL of the `postgres` database, as the cluster's role.
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// Starts the server (again).
    pub fn up(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("log").display().to_string();
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
        )
    }

    /// Stops the server (a fast shutdown: clients are disconnected).
    pub fn down(&self) -> Result<(), String> {
        self.run_as("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"])
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    /// Starts the watchdog: a shell waiting for its stdin to close, then
    /// stopping the server and removing the directory. In a process group
    /// of its own, so that Ctrl-C on the tests does not reach it.
    fn watch(&mut self) -> Result<(), String> {
        use std::os::unix::process::CommandExt;
        let stop = self.command("pg_ctl");
        let mut words: Vec<String> = vec![stop.get_program().to_string_lossy().into_owned()];
        words.extend(stop.get_args().map(|a| a.to_string_lossy().into_owned()));
        let script = "trap '' INT HUP TERM; read -r _; \"$@\" -D \"$DIR/data\" -m immediate -w stop; \
                      rm -rf \"$DIR\"";
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("watchdog")
            .args(&words)
            .env("DIR", &self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("start the watchdog (sh): {e}"))?;
        let stdin = child.stdin.take().ok_or("the watchdog's stdin")?;
        self.watchdog = Some((child, stdin));
        Ok(())
    }

    fn run_as(&self, program: &str, args: &[&str]) -> Result<(), String> {
        run(self.command(program).args(args))
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
        if let Some((mut child, mut stdin)) = self.watchdog.take() {
            let _ = stdin.write_all(b"\n");
            drop(stdin);
            let _ = child.wait();
        }
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    match output.status.success() {
        true => Ok(()),
        false => Err(format!(
            "{command:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// The directory of PostgreSQL's programs: the newest
/// `/usr/lib/postgresql/<version>/bin` (Debian, Ubuntu), else the one on
/// `PATH` that holds both `initdb` and `pg_ctl`.
fn postgres_bin() -> Option<PathBuf> {
    let has_programs = |bin: &Path| bin.join("pg_ctl").exists() && bin.join("initdb").exists();
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, bin)| has_programs(bin))
        .collect();
    debian.sort();
    if let Some((_, bin)) = debian.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|bin| has_programs(bin))
}
