//! Agreement with the official Anthropic Python SDK: the SDK, pointed at the
//! same local fixture servers, accumulates the same text, tool inputs, stop
//! reason and usage as SkillKit.
//!
//! Needs Python with `anthropic` importable: `bench/peers/setup.sh` installs
//! it into `bench/peers/.venv`, which this test prefers; else `$SKILLKIT_PYTHON`,
//! else `python3`. Without it the test says loudly that it SKIPPED, unless
//! `SKILLKIT_REQUIRE_PEERS=1` (as in CI), where that is a failure.

use skillkit_tests::llm as support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use skillkit::RetryPolicy;
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::{Adapter, LlmError, Message, Request, Response};
use support::{Reply, Server, fixture};

const COMPLETE: [&str; 6] = [
    "text",
    "parallel_tools",
    "thinking",
    "ping",
    "server_tools",
    "bench_long",
];
const FAILING: [&str; 3] = ["error_mid_stream", "truncated", "max_tokens_in_tool"];

/// A Python that can import `anthropic`, or why there is none.
fn python() -> Result<PathBuf, String> {
    skillkit_tests::peers::python_with("anthropic")
}

/// What SkillKit's Anthropic adapter makes of `name`, in the script's shape.
async fn rust_side(name: &str) -> Value {
    let server = Server::start(vec![Reply::sse(fixture("anthropic", name))]).await;
    let adapter = Anthropic::builder()
        .base_url(&server.base_url)
        .api_key("k")
        .retry(RetryPolicy::none())
        .build();
    let events = adapter
        .stream(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap();
    match Response::collect(events).await {
        Ok(response) => json!({
            "text": response.message.text,
            "tool_calls": response.message.tool_calls.iter()
                .map(|c| json!({"id": c.id, "name": c.name, "input": c.input}))
                .collect::<Vec<_>>(),
            "stop_reason": response.stop_reason.as_str(),
            "usage": serde_json::to_value(response.usage).unwrap(),
        }),
        Err(error) => json!({"error": format!("{error:?}")}),
    }
}

async fn sdk_side(python: &PathBuf, names: &[&str]) -> Value {
    let mut servers = Vec::new();
    let mut command = Command::new(python);
    command.arg(skillkit_tests::peers::dir().join("anthropic_sdk_agreement.py"));
    for name in names {
        let server = Server::start(vec![Reply::sse(fixture("anthropic", name))]).await;
        command.arg(format!("--case={name}={}", server.base_url));
        servers.push(server);
    }
    // The servers answer on this runtime while the script runs.
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        output.status.success(),
        "the SDK script failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agrees_with_the_anthropic_python_sdk_or_skips_loudly_without_it() {
    let python = match python() {
        Ok(python) => python,
        Err(why) if std::env::var("SKILLKIT_REQUIRE_PEERS").as_deref() != Ok("1") => {
            eprintln!("\n*** SKIPPED: Anthropic SDK agreement NOT CHECKED: {why} ***\n");
            return;
        }
        Err(why) => panic!("SKILLKIT_REQUIRE_PEERS=1 but {why}"),
    };
    let names: Vec<&str> = COMPLETE.iter().chain(&FAILING).copied().collect();
    let sdk = sdk_side(&python, &names).await;

    for name in COMPLETE {
        assert_eq!(
            rust_side(name).await,
            sdk[name],
            "{name}: SkillKit and the SDK disagree"
        );
    }

    // An `error` event: both fail.
    assert_eq!(sdk["error_mid_stream"]["error"], "APIStatusError");
    assert!(
        rust_side("error_mid_stream").await["error"]
            .as_str()
            .unwrap()
            .contains("overloaded_error")
    );

    // Where the SDK returns a partial message without complaint, SkillKit
    // fails on purpose (DESIGN: no silent success). The SDK's own snapshot
    // shows the answer was incomplete.
    assert_eq!(
        sdk["truncated"]["stop_reason"],
        Value::Null,
        "the SDK saw no stop reason"
    );
    assert!(
        rust_side("truncated").await["error"]
            .as_str()
            .unwrap()
            .starts_with("Truncated")
    );
    assert_eq!(sdk["max_tokens_in_tool"]["stop_reason"], "max_tokens");
    assert_eq!(sdk["max_tokens_in_tool"]["text"], "Writing the file.");
    let rust = rust_side("max_tokens_in_tool").await;
    let expected = format!(
        "{:?}",
        LlmError::IncompleteToolInput {
            id: "toolu_01Write".into(),
            name: "write_file".into(),
            stop_reason: "max_tokens".into()
        }
    );
    assert_eq!(rust["error"], expected);
}
