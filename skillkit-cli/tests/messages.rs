//! Errors name the command's own knobs (`GITHUB_TOKEN`, `GITHUB_API_URL`,
//! `--model`, `ANTHROPIC_BASE_URL`), never the library's settings
//! (`api_token`, `base_url`, registering an adapter), and a URL's password
//! is never repeated, in an error or a log line. Through the real binary,
//! against servers on 127.0.0.1.

use skillkit_tests::github as github_support;
use skillkit_tests::llm as llm_support;

use std::path::Path;
use std::process::{Command, Output};

use github_support::{Endpoint, Fault, Server, Tarball, sha, superpowers};

/// What the library calls its settings; no CLI error may say them.
const LIBRARY_WORDS: [&str; 5] = [
    "`api_token`",
    "`base_url`",
    "`cache_dir`",
    "register an adapter",
    "the provider's",
];

fn skillkit(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir)
        .args(args)
        .env("HOME", dir.join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.join("cache"))
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_API_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("SKILLKIT_MODEL")
        .env_remove("RUST_LOG");
    command
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The last line of stderr (logs come before it) is the error, naming
/// `knob` and none of the library's words.
fn assert_names(out: &Output, knob: &str) {
    let text = stderr(out);
    let error = text.lines().last().unwrap_or_default();
    assert!(error.starts_with("error: "), "{text}");
    assert!(error.contains(knob), "{knob}: {text}");
    for word in LIBRARY_WORDS {
        assert!(!error.contains(word), "{word}: {text}");
    }
}

#[test]
fn a_github_url_with_credentials_is_refused_without_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let url = "http://user:secret@127.0.0.1:1/";
    for (args, variable) in [
        (vec!["import", "obra/superpowers"], true),
        (vec!["list", "--github"], true),
        (
            vec!["import", "obra/superpowers", "--github-url", url],
            false,
        ),
    ] {
        let mut command = skillkit(dir.path(), &args);
        if variable {
            command.env("GITHUB_API_URL", url);
        }
        let out = command.env("RUST_LOG", "trace").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let text = stderr(&out);
        assert!(!text.contains("secret"), "{args:?}: {text}");
        assert!(text.contains("user:***@127.0.0.1"), "{args:?}: {text}");
        assert_names(&out, "GITHUB_API_URL");
        assert_names(&out, "GITHUB_TOKEN");
    }
}

#[test]
fn github_refusals_name_github_token() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Server::start());
    server.publish("obra/superpowers", "HEAD", &sha(1), superpowers(&sha(1)));
    let dir = tempfile::tempdir().unwrap();
    for fault in [
        Fault::Unauthorized,
        Fault::Forbidden,
        Fault::RateLimited(4_000_000_000),
    ] {
        server.fail(Endpoint::Commits, fault);
        let out = skillkit(dir.path(), &["import", "obra/superpowers"])
            .env("GITHUB_API_URL", server.url())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(stderr(&out).lines().count(), 1, "{out:?}");
        assert_names(&out, "set GITHUB_TOKEN");
    }
}

/// An import whose only skill fails to parse says how to see which file.
#[test]
fn a_repository_of_broken_skills_says_how_to_see_them() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Server::start());
    let broken = Tarball::new("o", "broken", &sha(2))
        .file("skills/a/SKILL.md", b"---\nname: [\n---\n")
        .build();
    server.publish("o/broken", "HEAD", &sha(2), broken);
    let dir = tempfile::tempdir().unwrap();
    let out = skillkit(dir.path(), &["import", "o/broken"])
        .env("GITHUB_API_URL", server.url())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_names(&out, "RUST_LOG=warn");
    assert!(!stderr(&out).contains("the log"), "{out:?}");
}

#[test]
fn model_errors_name_the_model_flag_and_base_url_variables() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("agent")).unwrap();

    let out = skillkit(
        dir.path(),
        &["run", "agent", "hi", "--model", "mistral://large"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_names(&out, "--model");

    // A server that answers 404: the base URL or the model name is wrong.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (prefix, model, path) in [
        ("ANTHROPIC", "anthropic://claude-sonnet-4-6", ""),
        ("OPENAI", "openai://gpt-4o-mini", "/v1"),
    ] {
        let server = runtime.block_on(llm_support::Server::start(vec![
            llm_support::Reply::status(404, r#"{"error": {"message": "no such route"}}"#),
        ]));
        let url = server.base_url.replace("http://", "http://user:secret@");
        let out = skillkit(dir.path(), &["run", "agent", "hi", "--model", model])
            .env(format!("{prefix}_BASE_URL"), format!("{url}{path}"))
            .env(format!("{prefix}_API_KEY"), "test-key")
            .env("RUST_LOG", "trace")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{prefix}: {out:?}");
        assert_names(&out, &format!("check {prefix}_BASE_URL"));
        assert!(!stderr(&out).contains("secret"), "{prefix}: {out:?}");
    }
}
