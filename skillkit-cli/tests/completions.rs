//! `skillkit completions SHELL` prints a completion script for that shell.

use std::process::{Command, Output};

fn skillkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F _skillkit"),
        ("zsh", "#compdef skillkit"),
        ("fish", "complete -c skillkit"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = skillkit(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: {script}");
        // The verbs and their flags are in it.
        assert!(script.contains("validate"), "{shell}");
        assert!(script.contains("cache-dir"), "{shell}");
    }
    let out = skillkit(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
