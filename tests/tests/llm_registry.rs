//! The registry (model URIs, option layering) and the scripted adapter,
//! through the public API.

use skillkit_tests::llm as support;

use std::sync::{Arc, Mutex};

use serde_json::json;
use skillkit::RetryPolicy;
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::openai::OpenAi;
use skillkit::llm::{
    Event, LlmError, Message, Options, Registry, Reply, Request, Response, Scripted, StopReason,
};
use support::{Server, drain, fixture};

fn hi() -> Request {
    Request::new(vec![Message::user("Hi")])
}

async fn error_of(registry: &Registry, uri: &str) -> LlmError {
    match registry.stream(uri, hi()).await {
        Err(error) => error,
        Ok(_) => panic!("{uri} should not stream"),
    }
}

#[tokio::test]
async fn an_unknown_scheme_names_the_known_ones() {
    let registry = Registry::new().with("scripted", Scripted::new());
    let error = error_of(&registry, "mistral://large").await;
    assert_eq!(
        error,
        LlmError::UnknownScheme {
            scheme: "mistral".into(),
            known: "anthropic, openai, scripted".into()
        }
    );
}

#[tokio::test]
async fn a_bad_parameter_is_a_clear_error() {
    let registry = Registry::new();
    let error = error_of(&registry, "anthropic://claude?max_tokens=lots").await;
    assert!(
        matches!(&error, LlmError::InvalidParameter { name, value, .. } if name == "max_tokens" && value == "lots")
    );
    assert!(error.to_string().contains("whole number"), "{error}");
}

#[tokio::test]
async fn a_bare_model_goes_to_the_default_provider() {
    let script = Scripted::new().text("from script");
    let registry = Registry::new()
        .with("scripted", script.clone())
        .with_default("scripted");
    let response = Response::collect(registry.stream("llama3:8b", hi()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(response.message.text, "from script");
    assert_eq!(script.requests()[0].model, "llama3:8b");
}

#[tokio::test]
async fn code_options_beat_uri_parameters_which_beat_adapter_defaults() {
    let server = Server::start(vec![support::Reply::sse(fixture("anthropic", "text"))]).await;
    let adapter = Anthropic::builder()
        .base_url(&server.base_url)
        .api_key("k")
        .retry(RetryPolicy::none())
        .defaults(Options {
            max_tokens: Some(111),
            temperature: Some(0.9),
            top_p: Some(0.9),
            top_k: Some(9),
            ..Default::default()
        })
        .build();
    let registry = Registry::empty().with("anthropic", adapter);
    let request = hi().with_options(Options {
        temperature: Some(0.1),
        ..Default::default()
    });
    let uri = "anthropic://claude-x?temperature=0.5&top_p=0.5&max_tokens=222";
    drain(registry.stream(uri, request).await.unwrap()).await;
    let body = server.received()[0].json();
    assert_eq!(body["model"], "claude-x");
    assert_eq!(body["temperature"], 0.1, "code beats the URI");
    assert_eq!(body["top_p"], 0.5, "the URI beats the adapter");
    assert_eq!(body["max_tokens"], 222, "the URI beats the adapter");
    assert_eq!(body["top_k"], 9, "the adapter fills the rest");
}

#[tokio::test]
async fn an_empty_model_uses_the_adapters_default() {
    let server = Server::start(vec![support::Reply::sse(fixture("openai", "text"))]).await;
    let local = OpenAi::builder()
        .base_url(format!("{}/v1", server.base_url))
        .default_model("qwen2.5:7b")
        .build();
    let registry = Registry::new().with("ollama", local);
    drain(registry.stream("ollama://", hi()).await.unwrap()).await;
    assert_eq!(server.received()[0].json()["model"], "qwen2.5:7b");
}

#[tokio::test]
async fn scripted_plays_text_tool_calls_and_errors_in_order() {
    let inspected = Arc::new(Mutex::new(Vec::new()));
    let seen = inspected.clone();
    let script = Scripted::new()
        .tool_call("call_1", "clock", json!({"zone": "UTC"}))
        .text("It is noon.")
        .error(LlmError::Other {
            provider: "scripted".into(),
            message: "offline".into(),
        })
        .on_request(move |request| seen.lock().unwrap().push(request.messages.len()));
    script.push(Reply::Events(vec![
        Event::delta("par"),
        Event::Error(LlmError::Truncated {
            provider: "scripted".into(),
        }),
    ]));
    let registry = Registry::empty()
        .with("scripted", script.clone())
        .with_default("scripted");

    let first = Response::collect(registry.stream("scripted://m", hi()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(first.message.tool_calls[0].input, json!({"zone": "UTC"}));

    let second = Response::collect(registry.stream("m", hi()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(
        (second.message.text.as_str(), second.stop_reason),
        ("It is noon.", StopReason::EndTurn)
    );

    assert!(matches!(
        registry.stream("m", hi()).await,
        Err(LlmError::Other { .. })
    ));

    let fourth = drain(registry.stream("m", hi()).await.unwrap()).await;
    assert_eq!(fourth[0], Event::delta("par"));
    assert!(matches!(
        fourth[1],
        Event::Error(LlmError::Truncated { .. })
    ));

    assert_eq!(
        error_of(&registry, "m").await,
        LlmError::ScriptExhausted { request: 5 }
    );
    assert_eq!(*inspected.lock().unwrap(), [1, 1, 1, 1, 1]);
    assert_eq!(script.requests().len(), 5);
}
