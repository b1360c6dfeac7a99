//! `run_skill_script`'s runner: real scripts in real temp folders, run by
//! real interpreters, with the limits checked from outside (the processes
//! left, the bytes kept).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use skillkit::script::{Ending, Layer, Sandbox, ScriptOptions, run_script};

/// A skill folder holding `files` (path, contents), and a working folder.
struct Fixture {
    _root: tempfile::TempDir,
    skill: PathBuf,
    work: PathBuf,
    outside: PathBuf,
}

fn fixture(files: &[(&str, &str)]) -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let skill = root.path().join("kit/skills/tool");
    let work = root.path().join("work");
    let outside = root.path().join("outside");
    for dir in [&skill, &work, &outside] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: tool\ndescription: d\n---\n",
    )
    .unwrap();
    for (path, text) in files {
        let path = skill.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let work = std::fs::canonicalize(work).unwrap();
    Fixture {
        _root: root,
        skill,
        work,
        outside,
    }
}

async fn run(f: &Fixture, script: &str, options: &ScriptOptions) -> skillkit::script::ScriptOutput {
    run_script(&f.skill, script, &[], "", &f.work, options)
        .await
        .unwrap_or_else(|e| panic!("{script} did not start: {e}"))
}

#[tokio::test]
async fn a_python_script_reads_a_file_beside_it_and_prints_json() {
    let f = fixture(&[
        ("data/prices.txt", "apple 3\npear 5\n"),
        (
            "scripts/total.py",
            "import json, os, sys\n\
             here = os.path.dirname(os.path.abspath(__file__))\n\
             lines = open(os.path.join(here, '..', 'data', 'prices.txt')).read().split()\n\
             print(json.dumps({'total': int(lines[1]) + int(lines[3]), 'args': sys.argv[1:], \
             'stdin': sys.stdin.read(), 'cwd': os.getcwd(), 'skill_dir': os.environ['SKILL_DIR']}))\n",
        ),
    ]);
    let output = run_script(
        &f.skill,
        "scripts/total.py",
        &["--fast".to_owned()],
        "hello",
        &f.work,
        &ScriptOptions::new(),
    )
    .await
    .unwrap();
    assert!(output.success(), "{output}");
    let json: serde_json::Value = serde_json::from_str(output.stdout.text.trim()).unwrap();
    assert_eq!(json["total"], 8);
    assert_eq!(json["args"], serde_json::json!(["--fast"]));
    assert_eq!(json["stdin"], "hello");
    assert_eq!(json["cwd"], f.work.to_str().unwrap());
    assert_eq!(json["skill_dir"], f.skill.to_str().unwrap());
    let text = output.to_string();
    assert!(text.starts_with("exit code: 0\n"), "{text}");
    assert!(text.contains("--- stdout ---\n{"), "{text}");
}

#[tokio::test]
async fn the_environment_is_scrubbed() {
    // Cargo runs tests with its own variables set (no `set_var` here: other
    // tests start processes at the same time).
    let ours = std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo");
    let f = fixture(&[("env.sh", "env | sort\n")]);
    let output = run(&f, "env.sh", &ScriptOptions::new()).await;
    let names: Vec<&str> = output
        .stdout
        .text
        .lines()
        .filter_map(|l| l.split_once('=').map(|(n, _)| n))
        .collect();
    assert!(!output.stdout.text.contains("CARGO_"), "{output}");
    assert!(!output.stdout.text.contains(&ours), "{output}");
    let allowed = [
        "PATH",
        "HOME",
        "TMPDIR",
        "TERM",
        "LANG",
        "LC_ALL",
        "SKILL_DIR",
        "CLAUDE_SKILL_DIR",
        // set by `sh` itself
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
    ];
    for name in &names {
        assert!(
            allowed.contains(name),
            "`{name}` reached the script: {output}"
        );
    }
    assert!(
        output
            .stdout
            .text
            .contains(&format!("HOME={}\n", f.work.display()))
    );
    assert!(output.stdout.text.contains("TERM=dumb\n"));
}

#[tokio::test]
async fn paths_leading_outside_the_skill_are_refused() {
    let f = fixture(&[("scripts/ok.sh", "echo ok\n")]);
    std::fs::write(f.outside.join("evil.sh"), "echo pwned\n").unwrap();
    let err = run_script(
        &f.skill,
        "../../../outside/evil.sh",
        &[],
        "",
        &f.work,
        &ScriptOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("leads outside the skill's folder"),
        "{err}"
    );
    std::os::unix::fs::symlink(f.outside.join("evil.sh"), f.skill.join("scripts/link.sh")).unwrap();
    let err = run_script(
        &f.skill,
        "scripts/link.sh",
        &[],
        "",
        &f.work,
        &ScriptOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("leads outside the skill's folder"),
        "{err}"
    );
    let err = run_script(
        &f.skill,
        "SKILL.md",
        &[],
        "",
        &f.work,
        &ScriptOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("no #! line and no extension"),
        "{err}"
    );
}

#[tokio::test]
async fn an_endless_loop_is_killed_at_the_timeout() {
    let f = fixture(&[("spin.py", "while True:\n    pass\n")]);
    let options = ScriptOptions::new().timeout(Duration::from_millis(500));
    let output = run(&f, "spin.py", &options).await;
    assert_eq!(
        output.ending,
        Ending::TimedOut(Duration::from_millis(500)),
        "{output}"
    );
    assert!(output.to_string().contains("timed out"), "{output}");
}

/// The processes of this machine whose command line holds `marker` (a
/// script's processes run in a PID namespace of their own, so the pids they
/// see are not this machine's: they are found by what they run).
fn running(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat
                    .rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            });
            alive
                && std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// Waits (bounded) until no process runs `marker`; those still running.
fn survivors(marker: &str) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let alive = running(marker);
        if alive.is_empty() || start.elapsed() > Duration::from_secs(10) {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn fifty_sleeping_children_are_all_killed_at_the_timeout() {
    let f = fixture(&[(
        "fan.sh",
        "for i in $(seq 50); do sleep 300.501 & echo $! >> \"$HOME/pids\"; done\nwait\n",
    )]);
    let options = ScriptOptions::new()
        .timeout(Duration::from_secs(2))
        .max_processes(100);
    let output = run(&f, "fan.sh", &options).await;
    assert!(matches!(output.ending, Ending::TimedOut(_)), "{output}");
    let pids = f.work.join("pids");
    assert_eq!(std::fs::read_to_string(&pids).unwrap().lines().count(), 50);
    assert_eq!(survivors("300.501"), Vec::<u32>::new());
}

#[tokio::test]
async fn background_children_do_not_outlive_a_script_that_exits() {
    let f = fixture(&[("bg.sh", "sleep 300.502 &\necho started\n")]);
    let output = run(&f, "bg.sh", &ScriptOptions::new()).await;
    assert!(output.success(), "{output}");
    assert_eq!(survivors("300.502"), Vec::<u32>::new());
}

#[tokio::test]
async fn a_group_past_the_process_cap_is_killed() {
    // 20 sleeping children against a cap of 5: bounded, never a real bomb.
    let f = fixture(&[(
        "many.sh",
        "for i in $(seq 20); do sleep 300.503 & done\nwait\n",
    )]);
    let options = ScriptOptions::new()
        .timeout(Duration::from_secs(60))
        .max_processes(5);
    let output = run(&f, "many.sh", &options).await;
    assert!(
        matches!(output.ending, Ending::TooManyProcesses(n) if n > 5),
        "{output}"
    );
    assert!(
        output.to_string().contains("more processes than allowed"),
        "{output}"
    );
    assert_eq!(survivors("300.503"), Vec::<u32>::new());
}

#[tokio::test]
async fn a_hundred_mib_of_output_is_capped() {
    let f = fixture(&[(
        "flood.py",
        "import sys\nblock = b'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.buffer.write(block)\n\
         sys.stderr.write('done')\n",
    )]);
    let output = run(&f, "flood.py", &ScriptOptions::new()).await;
    assert!(output.success(), "{output:?}");
    assert_eq!(output.stdout.total, 100 * 1024 * 1024);
    assert_eq!(output.stdout.text.len(), 64 * 1024);
    assert_eq!(output.stderr.text, "done");
    let text = output.to_string();
    assert!(
        text.contains("[stdout truncated: 104857600 bytes, first 65536 shown]"),
        "{}",
        &text[..200]
    );
    assert!(text.len() < 70 * 1024);
}

/// Landlock's verdict on this kernel; a test that needs it says when it
/// checks only that the result admits the sandbox is missing.
fn landlock(rule: &str) -> Option<Sandbox> {
    let sandbox = Sandbox::current();
    let enforced = match rule {
        "network" => sandbox.has(Layer::Seccomp),
        _ => sandbox.has(Layer::Landlock { abi: 1 }),
    };
    if !enforced {
        eprintln!(
            "this kernel cannot enforce the {rule} rule ({sandbox}); checking the result says so"
        );
        return None;
    }
    Some(sandbox)
}

#[tokio::test]
async fn a_write_outside_the_working_folder_is_refused() {
    let f = fixture(&[(
        "write.py",
        "import sys\nopen(sys.argv[1], 'w').write('x')\nprint('wrote', sys.argv[1])\n",
    )]);
    let inside = f.work.join("ok.txt");
    let output = run_script(
        &f.skill,
        "write.py",
        &[inside.display().to_string()],
        "",
        &f.work,
        &ScriptOptions::new(),
    )
    .await
    .unwrap();
    assert!(output.success(), "{output}");
    assert!(inside.exists());

    let escaped = f.outside.join("escaped.txt");
    let output = run_script(
        &f.skill,
        "write.py",
        &[escaped.display().to_string()],
        "",
        &f.work,
        &ScriptOptions::new(),
    )
    .await
    .unwrap();
    let text = output.to_string();
    match landlock("write") {
        Some(_) => {
            assert!(!output.success(), "{text}");
            // Landlock says EACCES; the read-only mount, when namespaces
            // are in force, says EROFS first.
            assert!(
                text.contains("PermissionError") || text.contains("Read-only file system"),
                "{text}"
            );
            assert!(text.contains("writes only in the working folder"), "{text}");
            assert!(!escaped.exists(), "the write outside went through");
        }
        None => assert!(text.contains("NOT"), "{text}"),
    }
}

#[tokio::test]
async fn a_connection_to_a_local_listener_is_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let f = fixture(&[(
        "connect.py",
        "import socket, sys\nsocket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)\n\
         print('connected')\n",
    )]);
    let output = run_script(
        &f.skill,
        "connect.py",
        &[port.to_string()],
        "",
        &f.work,
        &ScriptOptions::new(),
    )
    .await
    .unwrap();
    let text = output.to_string();
    listener.set_nonblocking(true).unwrap();
    let accepted = listener.accept();
    match landlock("network") {
        Some(_) => {
            assert!(!output.success(), "{text}");
            assert!(text.contains("PermissionError"), "{text}");
            assert!(text.contains("seccomp (no sockets"), "{text}");
            assert!(accepted.is_err(), "the script reached the listener");
        }
        None => assert!(text.contains("NOT"), "{text}"),
    }
}
