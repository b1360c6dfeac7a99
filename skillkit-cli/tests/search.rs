//! `skillkit search QUERY [PATH...]`: the skills that match, best first, as
//! lines (name, score, description, made inert) or as JSON hits with the
//! skill's folder; PATHs and discovery as `list`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: \"{description}\"\n---\nDo it.\n")
}

/// `skillkit ARGS` in `cwd`, with a home and cache of its own under `dir`.
fn skillkit(dir: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", dir.join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("run skillkit")
}

/// A kit `tools` of three skills under `dir`.
fn tools_kit(dir: &Path) -> std::path::PathBuf {
    let kit = dir.join("tools");
    write(
        &kit.join("skills/pdf-reader/SKILL.md"),
        &skill("pdf-reader", "Read PDF files and extract their text."),
    );
    write(
        &kit.join("skills/csv-summary/SKILL.md"),
        &skill("csv-summary", "Summarize a CSV file."),
    );
    write(
        &kit.join("skills/mail/SKILL.md"),
        &skill("mail", "Send mail \\u001b]0;PWNED\\u0007 now."),
    );
    kit
}

#[test]
fn search_json_prints_hits_best_first_with_their_folder() {
    let dir = tempfile::tempdir().unwrap();
    let kit = tools_kit(dir.path());
    let out = skillkit(
        dir.path(),
        dir.path(),
        &[
            "search",
            "tools:pdf-reader",
            kit.to_str().unwrap(),
            "--json",
            "--limit",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 2, "{hits:?}");
    assert_eq!(hits[0]["name"], "tools:pdf-reader");
    assert_eq!(
        hits[0]["description"],
        "Read PDF files and extract their text."
    );
    let folder = kit.join("skills/pdf-reader").canonicalize().unwrap();
    let path = Path::new(hits[0]["path"].as_str().unwrap())
        .canonicalize()
        .unwrap();
    assert_eq!(path, folder);
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(
        scores[0] > 0.0 && scores.windows(2).all(|w| w[0] >= w[1]),
        "{scores:?}"
    );
}

#[test]
fn search_prints_name_score_and_description_made_inert() {
    let dir = tempfile::tempdir().unwrap();
    let kit = tools_kit(dir.path());
    let out = skillkit(
        dir.path(),
        dir.path(),
        &["search", "mail", kit.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("tools:mail"), "{text}");
    assert!(
        first.contains(r"Send mail \u{1b}]0;PWNED\u{7} now."),
        "{text}"
    );
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    // The score is shown between the name and the description.
    let score: Vec<&str> = first.split_whitespace().collect();
    assert!(score[1].parse::<f64>().unwrap() > 0.0, "{first}");
}

#[test]
fn search_each_and_without_a_path_finds_what_list_finds() {
    let dir = tempfile::tempdir().unwrap();
    // --each: every child folder is a kit.
    let kits = dir.path().join("kits");
    tools_kit(&kits);
    write(
        &kits.join("notes/skills/todo/SKILL.md"),
        &skill("todo", "Keep a to-do list."),
    );
    let out = skillkit(
        dir.path(),
        dir.path(),
        &[
            "search",
            "notes:todo",
            kits.to_str().unwrap(),
            "--each",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["name"], "notes:todo", "{hits}");

    // No PATH: the standard locations, as `list` reads them.
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    write(
        &project.join(".claude/skills/deploy/SKILL.md"),
        &skill("deploy", "Deploy the service."),
    );
    let out = skillkit(dir.path(), &project, &["search", "deploy", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["name"], "skills:deploy", "{hits}");
}

#[test]
fn search_without_a_match_exits_1_and_an_empty_query_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let kit = tools_kit(dir.path());
    let out = skillkit(
        dir.path(),
        dir.path(),
        &["search", "zzqx", kit.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no skill matches `zzqx`"));
    let json = skillkit(
        dir.path(),
        dir.path(),
        &["search", "zzqx", kit.to_str().unwrap(), "--json"],
    );
    assert_eq!(json.status.code(), Some(1), "{json:?}");
    assert_eq!(String::from_utf8_lossy(&json.stdout).trim(), "[]");
    let empty = skillkit(
        dir.path(),
        dir.path(),
        &["search", " ", kit.to_str().unwrap()],
    );
    assert_eq!(empty.status.code(), Some(2), "{empty:?}");
    let missing = skillkit(dir.path(), dir.path(), &["search", "pdf", "/no/such/dir"]);
    assert_eq!(missing.status.code(), Some(2), "{missing:?}");
}

/// `--embed URL` (or `SKILLKIT_EMBED_URL`) ranks by meaning too, against a
/// stand-in embeddings endpoint on 127.0.0.1: a query no skill's words
/// match finds the skill it means; a second run reads the skills' vectors
/// from the cache and embeds only the query.
#[tokio::test(flavor = "multi_thread")]
async fn search_embed_finds_a_skill_by_meaning() {
    let endpoint = skillkit_tests::embeddings::Embeddings::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("art");
    write(
        &kit.join("skills/sketch/SKILL.md"),
        &skill("sketch", "Make a drawing."),
    );
    write(
        &kit.join("skills/billing/SKILL.md"),
        &skill("billing", "Send an invoice."),
    );
    let kit_arg = kit.to_str().unwrap().to_owned();
    let run = |args: Vec<String>, env: Option<String>| {
        let dir = dir.path().to_owned();
        tokio::task::spawn_blocking(move || {
            let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
            command
                .args(&args)
                .current_dir(&dir)
                .env("HOME", dir.join("home"))
                .env_remove("XDG_CACHE_HOME")
                .env("SKILLKIT_CACHE_DIR", dir.join("cache"));
            if let Some(url) = env {
                command.env("SKILLKIT_EMBED_URL", url);
            }
            command.output().expect("run skillkit")
        })
    };
    let words = run(
        vec![
            "search".into(),
            "photos of my cat".into(),
            kit_arg.clone(),
            "--json".into(),
        ],
        None,
    )
    .await
    .unwrap();
    assert_eq!(words.status.code(), Some(1), "no word matches");
    let args = vec![
        "search".into(),
        "photos of my cat".into(),
        kit_arg.clone(),
        "--json".into(),
        "--embed".into(),
        endpoint.url().to_owned(),
    ];
    let meaning = run(args, None).await.unwrap();
    assert!(
        meaning.status.success(),
        "{}",
        String::from_utf8_lossy(&meaning.stderr)
    );
    let hits: Value = serde_json::from_slice(&meaning.stdout).unwrap();
    assert_eq!(hits[0]["name"], "art:sketch");
    assert_eq!(endpoint.requests().len(), 2, "the skills, then the query");
    let again = run(
        vec![
            "search".into(),
            "a picture".into(),
            kit_arg,
            "--json".into(),
        ],
        Some(endpoint.url().to_owned()),
    )
    .await
    .unwrap();
    assert!(again.status.success());
    let requests = endpoint.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    assert_eq!(requests[2], ["a picture"]);
}
