//! `skillkit import`, `remove`, `refresh` and `list --github` through the
//! real binary, against a GitHub look-alike on 127.0.0.1: the resolved
//! commit shown, `GITHUB_TOKEN` and `GITHUB_API_URL` used, imported kits
//! served offline, 5xx retried and 4xx not, and two processes importing the
//! same source at once ending with one complete entry.

use skillkit_tests::github as github_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use github_support::{CORPUS, Endpoint, Fault, Server, files_under, sha, superpowers};

/// A runtime serving the fake GitHub while the binary runs, and a cache.
struct Fixture {
    server: Server,
    cache: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

impl Fixture {
    fn new() -> Fixture {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let server = runtime.block_on(Server::start());
        server.publish("obra/superpowers", "HEAD", &sha(1), superpowers(&sha(1)));
        Fixture {
            server,
            cache: tempfile::tempdir().unwrap(),
            _runtime: runtime,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
        command
            .args(args)
            .arg("--cache-dir")
            .arg(self.cache.path())
            .env("GITHUB_API_URL", self.server.url())
            .env("HOME", self.cache.path().join("home"))
            .env_remove("GITHUB_TOKEN")
            .env_remove("SKILLKIT_CACHE_DIR");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn cache(&self, folder: &str) -> PathBuf {
        self.cache.path().join(folder)
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn import_list_show_refresh_remove() {
    let fixture = Fixture::new();
    let out = fixture.run(&["import", "obra/superpowers"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!("imported obra/superpowers at commit {}", sha(1))),
        "{text}"
    );
    assert!(
        text.contains("  skill obra/superpowers:brainstorming"),
        "{text}"
    );

    // Served from the cache, with the network gone.
    fixture.server.stop();
    let out = fixture.run(&["list", "--github"]);
    assert_eq!(
        stdout(&out),
        format!("obra/superpowers at commit {}\n", sha(1))
    );
    let out = fixture.run(&["show", "obra/superpowers:brainstorming"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let body = std::fs::read_to_string(format!("{CORPUS}/skills/brainstorming/SKILL.md")).unwrap();
    let body = body.splitn(3, "---\n").nth(2).unwrap().trim_end();
    assert!(stdout(&out).ends_with(&format!("{body}\n")), "{out:?}");
    let out = fixture.run(&["list"]);
    assert!(
        stdout(&out).contains("kit obra/superpowers ("),
        "{}",
        stdout(&out)
    );
    // Importing again needs no request either.
    let out = fixture.run(&["import", "obra/superpowers"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).contains("was already imported at commit"));
}

#[test]
fn refresh_updates_to_the_new_commit_and_remove_forgets() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.run(&["import", "obra/superpowers"]).status.code(),
        Some(0)
    );
    let out = fixture.run(&["refresh"]);
    assert_eq!(
        stdout(&out),
        format!("obra/superpowers is up to date at commit {}\n", sha(1))
    );
    fixture
        .server
        .publish("obra/superpowers", "HEAD", &sha(2), superpowers(&sha(2)));
    let out = fixture.run(&["refresh", "obra/superpowers"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout(&out).starts_with(&format!(
            "obra/superpowers updated from commit {} to {}",
            sha(1),
            sha(2)
        )),
        "{out:?}"
    );
    // The tree of the commit left is deleted.
    assert_eq!(
        entries(&fixture.cache("trees")),
        [format!("obra--superpowers--{}", sha(2))]
    );
    let out = fixture.run(&["forget", "obra/superpowers"]);
    assert_eq!(stdout(&out), "forgot obra/superpowers\n");
    // And `remove` frees the space.
    assert_eq!(entries(&fixture.cache("trees")), Vec::<String>::new());
    assert_eq!(entries(&fixture.cache("tmp")), Vec::<String>::new());
    let out = fixture.run(&["forget", "obra/superpowers"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(stderr(&out).lines().count(), 1, "{out:?}");
    assert_eq!(
        stderr(&out),
        "error: `obra/superpowers` is not imported; `skillkit list --github` shows what is\n"
    );
    assert!(stdout(&fixture.run(&["list", "--github"])).starts_with("nothing imported"));
}

#[test]
fn the_token_and_the_api_url_come_from_the_environment() {
    let fixture = Fixture::new();
    let out = fixture
        .command(&["import", "obra/superpowers"])
        .env("GITHUB_TOKEN", "ghp_test_token")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let requests = fixture.server.requests();
    assert!(!requests.is_empty());
    assert_eq!(
        requests[0].authorization.as_deref(),
        Some("Bearer ghp_test_token")
    );
    // --github-url wins over the variable.
    let url = format!("--github-url={}", fixture.server.url());
    let out = fixture
        .command(&["import", "obra/superpowers@v2", &url])
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert!(stderr(&out).contains("v2"), "{out:?}");
    assert_eq!(
        fixture.server.count("/repos/obra/superpowers/commits/v2"),
        1
    );
}

#[test]
fn a_server_error_is_retried_and_a_refusal_is_not() {
    let fixture = Fixture::new();
    fixture
        .server
        .fail_times(Endpoint::Commits, Fault::ServerError, 1);
    let out = fixture.run(&["import", "obra/superpowers"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(fixture.server.count("/repos/obra/superpowers/commits/"), 2);

    fixture.server.fail(Endpoint::Commits, Fault::NotFound);
    let out = fixture.run(&["import", "obra/missing"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let message = stderr(&out);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("obra/missing"), "{message}");
    assert_eq!(fixture.server.count("/repos/obra/missing/"), 1);
}

/// Two processes import the same source at the same moment (the server
/// holds both downloads until both asked): one complete entry results, no
/// staging is left behind, and the tree is the whole repository.
#[test]
fn two_processes_importing_at_once_share_one_entry() {
    let fixture = Fixture::new();
    fixture.server.gate_archives(2);
    let children: Vec<_> = (0..2)
        .map(|_| {
            fixture
                .command(&["import", "obra/superpowers"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(stdout(&out).contains(&sha(1)), "{out:?}");
    }
    assert_eq!(fixture.server.count("/codeload/"), 2, "both downloaded");
    assert_eq!(entries(&fixture.cache("sources")).len(), 1);
    let trees = entries(&fixture.cache("trees"));
    assert_eq!(trees.len(), 1, "{trees:?}");
    assert!(entries(&fixture.cache("tmp")).is_empty());
    assert_eq!(
        files_under(&fixture.cache("trees").join(&trees[0])),
        files_under(Path::new(CORPUS))
    );
    let out = fixture.run(&["list", "--github"]);
    assert_eq!(stdout(&out).lines().count(), 1, "{out:?}");
}

/// While an import is stuck halfway through its download (half the archive
/// unpacked in the cache's staging folder), other processes see nothing of
/// it: no source, no kit, no skill, and their cleanup leaves it alone. The
/// importer then dies (SIGKILL, as in a crash): the next process deletes its
/// staging folder, and the next import completes normally.
#[test]
fn a_reader_never_sees_a_half_written_tree() {
    let fixture = Fixture::new();
    fixture.server.fail(Endpoint::Tarball, Fault::StallMidBody);
    let mut importer = fixture
        .command(&["import", "obra/superpowers"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (bounded) until the importer has written into its staging folder.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let staged = || {
        entries(&fixture.cache("tmp"))
            .iter()
            .any(|e| e.starts_with("import-") && !entries(&fixture.cache("tmp").join(e)).is_empty())
    };
    while !staged() {
        assert!(
            std::time::Instant::now() < deadline,
            "the import never started unpacking"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = fixture.run(&["list", "--github"]);
    assert!(stdout(&out).starts_with("nothing imported"), "{out:?}");
    let out = fixture.run(&["show", "brainstorming"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let out = fixture.run(&["list"]);
    assert!(!stdout(&out).contains("obra/superpowers"), "{out:?}");
    // Those processes cleaned the cache, but left the live import's staging
    // folder alone.
    assert!(staged());

    importer.kill().unwrap();
    importer.wait().unwrap();
    assert!(staged(), "a killed import leaves its staging folder");
    // The next process deletes it, a mere listing too.
    let out = fixture.run(&["list", "--github"]);
    assert!(stdout(&out).starts_with("nothing imported"), "{out:?}");
    assert_eq!(entries(&fixture.cache("tmp")), Vec::<String>::new());
    fixture.server.heal();
    let out = fixture.run(&["import", "obra/superpowers"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = fixture.run(&["show", "brainstorming"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
