//! The `skillkit` crate's cargo features, checked on the real dependency
//! graph (`cargo tree`, `cargo metadata` from the lock file, offline): the
//! catalog alone builds without an HTTP stack, the default set is the one the
//! README and docs/architecture.md state, and docs.rs documents every feature.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// The workspace root: this crate's parent folder.
fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("cargo prints UTF-8")
}

/// The names of the crates `skillkit` builds (normal dependencies only) with
/// `features` (after `--no-default-features` or not).
fn crates(features: &[&str]) -> BTreeSet<String> {
    let mut args = vec![
        "tree",
        "--offline",
        "--locked",
        "-p",
        "skill-kit",
        "-e",
        "normal",
        "--prefix",
        "none",
    ];
    args.extend_from_slice(features);
    cargo(&args)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

const HTTP_STACK: [&str; 6] = ["reqwest", "hyper", "rustls", "h2", "tar", "flate2"];
const SERVERS_AND_DATABASES: [&str; 3] = ["sqlx", "rmcp", "axum"];

#[test]
fn the_catalog_alone_builds_without_an_http_stack() {
    let minimal = crates(&["--no-default-features"]);
    assert!(minimal.contains("skillkit-parser"), "{minimal:?}");
    for name in HTTP_STACK.iter().chain(&SERVERS_AND_DATABASES) {
        assert!(
            !minimal.contains(*name),
            "`--no-default-features` still builds {name}: {minimal:?}"
        );
    }
    assert!(
        !minimal.contains("tokio-util"),
        "the agent runtime is opt-in"
    );
}

#[test]
fn the_default_set_is_an_agent_over_local_and_github_skills() {
    let default = crates(&[]);
    for name in ["reqwest", "tar", "flate2", "tokio-util"] {
        assert!(default.contains(name), "the default set lacks {name}");
    }
    for name in SERVERS_AND_DATABASES {
        assert!(
            !default.contains(name),
            "servers and databases are opt-in, yet the default set builds {name}"
        );
    }
}

#[test]
fn each_part_is_opt_in_on_its_own() {
    let only = |feature: &str| crates(&["--no-default-features", "--features", feature]);
    let github = only("github");
    assert!(github.contains("tar") && !github.contains("sqlx") && !github.contains("rmcp"));
    let llm = only("llm");
    assert!(llm.contains("reqwest") && !llm.contains("tar"));
    let agent = only("agent");
    assert!(agent.contains("tokio-util") && !agent.contains("reqwest"));
    let mcp = only("mcp");
    assert!(mcp.contains("rmcp") && !mcp.contains("reqwest") && !mcp.contains("tar"));
    let sql = only("sql");
    assert!(sql.contains("sqlx") && !sql.contains("reqwest"));
    let embed = only("embed");
    assert!(embed.contains("reqwest") && !embed.contains("tar") && !embed.contains("sqlx"));
    let eval = only("eval");
    assert!(eval.contains("regex") && eval.contains("tokio-util") && !eval.contains("reqwest"));
}

/// The features `feature` turns on, itself included, following the
/// package's own feature table (not its dependencies').
fn closure(features: &serde_json::Map<String, Value>, feature: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![feature.to_owned()];
    while let Some(next) = todo.pop() {
        if !seen.insert(next.clone()) {
            continue;
        }
        for implied in features[&next].as_array().expect("a feature's list") {
            let implied = implied.as_str().expect("a feature name");
            if features.contains_key(implied) {
                todo.push(implied.to_owned());
            }
        }
    }
    seen
}

/// The agent and the MCP server stand side by side on the tool path: a
/// server build compiles no agent loop, and an agent build no server.
#[test]
fn the_server_and_the_agent_share_the_tool_path_and_nothing_else() {
    let features = skillkit_features();
    let mcp = closure(&features, "mcp");
    let agent = closure(&features, "agent");
    assert!(!mcp.contains("agent"), "`mcp` builds the agent: {mcp:?}");
    assert!(
        !agent.contains("mcp"),
        "`agent` builds the server: {agent:?}"
    );
    assert!(mcp.contains("__tools") && agent.contains("__tools"));
    // The sandbox's crates come with the tool path, whichever side asks.
    let server = crates(&["--no-default-features", "--features", "mcp"]);
    for name in ["landlock", "seccompiler", "rmcp"] {
        assert!(server.contains(name), "the server build lacks {name}");
    }
}

/// The `skill-kit` package's feature table.
fn skillkit_features() -> serde_json::Map<String, Value> {
    let metadata: Value = serde_json::from_str(&cargo(&[
        "metadata",
        "--offline",
        "--locked",
        "--no-deps",
        "--format-version",
        "1",
    ]))
    .expect("cargo metadata prints JSON");
    metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|package| package["name"] == "skill-kit")
        .expect("the skillkit package")["features"]
        .as_object()
        .expect("features")
        .clone()
}

#[test]
fn docs_rs_documents_every_feature() {
    let metadata: Value = serde_json::from_str(&cargo(&[
        "metadata",
        "--offline",
        "--locked",
        "--no-deps",
        "--format-version",
        "1",
    ]))
    .expect("cargo metadata prints JSON");
    let package = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|package| package["name"] == "skill-kit")
        .expect("the skillkit package");
    let features = package["features"].as_object().expect("features");
    for feature in [
        "github", "llm", "agent", "mcp", "sql", "postgres", "embed", "eval",
    ] {
        assert!(features.contains_key(feature), "no `{feature}` feature");
    }
    assert_eq!(
        features["default"],
        serde_json::json!(["github", "llm", "agent"])
    );
    let docs_rs = &package["metadata"]["docs"]["rs"];
    assert_eq!(docs_rs["all-features"], true, "{docs_rs}");
    assert_eq!(
        docs_rs["rustdoc-args"],
        serde_json::json!(["--cfg", "docsrs"])
    );
}
