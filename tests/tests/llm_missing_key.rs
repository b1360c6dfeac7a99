//! A missing Anthropic API key fails before any request. Alone in its own test
//! binary because it clears `ANTHROPIC_API_KEY` for the process.

use skillkit_tests::llm as support;

use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::{Adapter, LlmError, Message, Request};
use support::{Reply, Server, fixture};

#[tokio::test]
async fn a_missing_key_is_an_error_before_any_request() {
    // SAFETY: this binary's only test; no other thread reads the environment yet.
    unsafe { std::env::remove_var("ANTHROPIC_API_KEY") };
    let server = Server::start(vec![Reply::sse(fixture("anthropic", "text"))]).await;
    let adapter = Anthropic::builder().base_url(&server.base_url).build();
    match adapter
        .stream(Request::new(vec![Message::user("Hi")]))
        .await
    {
        Err(error @ LlmError::MissingApiKey { .. }) => {
            assert!(error.to_string().contains("ANTHROPIC_API_KEY"), "{error}")
        }
        Err(other) => panic!("expected a missing-key error, got {other:?}"),
        Ok(_) => panic!("a request without a key must not stream"),
    }
    assert!(
        server.received().is_empty(),
        "a request was sent without a key"
    );

    // The environment is the last resort, read at request time.
    // SAFETY: as above.
    unsafe { std::env::set_var("ANTHROPIC_API_KEY", "sk-from-env") };
    let events = adapter
        .stream(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap();
    support::drain(events).await;
    assert_eq!(
        server.received()[0].header("x-api-key"),
        Some("sk-from-env")
    );
}
