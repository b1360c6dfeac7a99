//! Without a PATH, the commands look for `.agents/skills` and `.claude/skills`
//! from the working directory up to the repository root (the folder holding
//! `.git`), nearest first, then in the user's home; `list` says where it
//! looked.

use std::path::Path;
use std::process::{Command, Output};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nDo it.\n")
}

fn list(dir: &Path, cwd: &Path, json: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command.arg("list");
    if json {
        command.arg("--json");
    }
    command
        .current_dir(cwd)
        .env("HOME", dir.join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("run skillkit")
}

/// A repository with skills at its root, in a sub-folder and in the
/// sub-folder the command runs in; skills above the repository and the
/// user's: every level up to the root is searched, the nearest skill of a name
/// wins, nothing above the root is read, and `list` names the folders searched.
#[test]
fn list_walks_up_to_the_repository_root_nearest_first() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    let repo = outside.join("repo");
    let cwd = repo.join("packages/app");
    let home = dir.path().join("home");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(
        &repo.join(".claude/skills/pdf/SKILL.md"),
        &skill("pdf", "Root PDF."),
    );
    write(
        &repo.join(".agents/skills/notes/SKILL.md"),
        &skill("notes", "Root notes."),
    );
    write(
        &repo.join("packages/.agents/skills/pdf/SKILL.md"),
        &skill("pdf", "Packages PDF."),
    );
    write(
        &cwd.join(".claude/skills/lint/SKILL.md"),
        &skill("lint", "App lint."),
    );
    write(
        &outside.join(".claude/skills/secret/SKILL.md"),
        &skill("secret", "Above the repository."),
    );
    write(
        &home.join(".agents/skills/mail/SKILL.md"),
        &skill("mail", "User mail."),
    );
    write(
        &home.join(".agents/skills/notes/SKILL.md"),
        &skill("notes", "User notes."),
    );

    let out = list(dir.path(), &cwd, false);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let skills: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("skill skills:"))
        .map(str::trim)
        .collect();
    let mut sorted = skills.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "skill skills:lint: App lint.",
            "skill skills:mail: User mail.",
            "skill skills:notes: Root notes.",
            "skill skills:pdf: Packages PDF.",
        ],
        "{text}"
    );
    // Nearer folders first, then the repository root, then the user's.
    let stderr = String::from_utf8(out.stderr).unwrap();
    let searched: Vec<String> = [
        cwd.join(".agents/skills"),
        cwd.join(".claude/skills"),
        repo.join("packages/.agents/skills"),
        repo.join("packages/.claude/skills"),
        repo.join(".agents/skills"),
        repo.join(".claude/skills"),
        home.join(".agents/skills"),
        home.join(".claude/skills"),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect();
    let shown: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .map(|l| l.split("  (").next().unwrap_or(l))
        .collect();
    assert_eq!(shown, searched, "{stderr}");
    assert!(
        stderr.contains("searched for skills, nearest first"),
        "{stderr}"
    );

    let out = list(dir.path(), &cwd, true);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let in_json: Vec<&str> = json["searched"]
        .as_array()
        .unwrap_or_else(|| panic!("no `searched` field: {json}"))
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(in_json, searched);
}

/// Outside any repository, only the working directory's folders (then the
/// user's) are searched: nothing above it is read.
#[test]
fn outside_a_repository_only_the_working_directory_is_searched() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("parent");
    let cwd = parent.join("here");
    write(
        &parent.join(".claude/skills/above/SKILL.md"),
        &skill("above", "Above."),
    );
    write(
        &cwd.join(".agents/skills/here/SKILL.md"),
        &skill("here", "Here."),
    );
    let out = list(dir.path(), &cwd, false);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("skill skills:here: Here."), "{text}");
    assert!(!text.contains("Above."), "{text}");
}
