//! Long work shows a spinner on stderr when it is a terminal (a real pty),
//! never on a pipe and never with `--json`. The spinner waits a second
//! before it appears; the tests set that wait to 0 through the hidden
//! `SKILLKIT_PROGRESS_AFTER_MS`, so no timing is involved.

use std::path::Path;
use std::process::Command;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A folder with a few valid skills.
fn kit() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..20 {
        write(
            &dir.path().join(format!("kit/skill-{n}/SKILL.md")),
            &format!("---\nname: skill-{n}\ndescription: Skill {n}.\n---\n"),
        );
    }
    dir
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir)
        .args(args)
        .env("HOME", dir.join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.join("cache"))
        .env("SKILLKIT_PROGRESS_AFTER_MS", "0")
        .env("TERM", "xterm");
    command
}

#[test]
fn no_spinner_on_a_pipe() {
    let dir = kit();
    for args in [
        &["validate", "kit"][..],
        &["validate", "--json", "kit"][..],
        &["list", "kit"][..],
        &["to-prompt", "kit"][..],
        &["show", "skill-1", "kit"][..],
    ] {
        let out = command(dir.path(), args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains('\r'), "{args:?}: {stderr:?}");
        assert!(!stderr.contains('\x1b'), "{args:?}: {stderr:?}");
        assert!(!stderr.contains("skills"), "{args:?}: {stderr:?}");
    }
}

#[cfg(unix)]
mod terminal {
    use rexpect::process::wait::WaitStatus;
    use rexpect::session::spawn_command;

    use super::{command, kit};

    /// Runs `args` in a pty; everything it wrote, and its exit code.
    fn in_a_terminal(dir: &std::path::Path, args: &[&str]) -> (String, i32) {
        let mut session = spawn_command(command(dir, args), Some(30_000)).unwrap();
        let screen = session.exp_eof().unwrap();
        match session.process.wait().unwrap() {
            WaitStatus::Exited(_, code) => (screen, code),
            other => panic!("{args:?} ended with {other:?}"),
        }
    }

    #[test]
    fn a_spinner_on_a_terminal() {
        let dir = kit();
        let (screen, code) = in_a_terminal(dir.path(), &["validate", "kit"]);
        assert_eq!(code, 0, "{screen}");
        assert!(screen.contains("validating kit"), "{screen:?}");
        assert!(
            screen.contains("20 skill(s) checked, 0 invalid"),
            "{screen:?}"
        );

        let (screen, code) = in_a_terminal(dir.path(), &["list", "kit"]);
        assert_eq!(code, 0, "{screen}");
        assert!(screen.contains("reading skills"), "{screen:?}");
        assert!(screen.contains("kit kit (20 skills"), "{screen:?}");
    }

    #[test]
    fn no_spinner_with_json_even_on_a_terminal() {
        let dir = kit();
        for args in [
            &["validate", "--json", "kit"][..],
            &["list", "--json", "kit"][..],
        ] {
            let (screen, code) = in_a_terminal(dir.path(), args);
            assert_eq!(code, 0, "{screen}");
            assert!(!screen.contains("validating"), "{args:?}: {screen:?}");
            assert!(!screen.contains("reading skills"), "{args:?}: {screen:?}");
            assert!(!screen.contains('\x1b'), "{args:?}: {screen:?}");
        }
    }
}
