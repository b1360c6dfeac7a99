//! The OpenAI-compatible adapter against chat-completions SSE fixtures, in
//! memory and through a real HTTP server on 127.0.0.1.

use skillkit_tests::llm as support;

use serde_json::json;
use skillkit::RetryPolicy;
use skillkit::llm::openai::{MaxTokensField, OpenAi};
use skillkit::llm::{Adapter, Event, LlmError, Message, Options, Request, StopReason, Usage};
use support::{Reply, Server, done, drain, fixture, usage};

const FIXTURES: [&str; 7] = [
    "text",
    "parallel_tools",
    "reasoning",
    "keepalive",
    "error_mid_stream",
    "truncated",
    "length_in_tool",
];

fn decode(chunks: &[&[u8]]) -> Vec<Event> {
    support::collect(OpenAi::replay(support::pieces(chunks)))
}

fn whole(name: &str) -> Vec<Event> {
    decode(&[&fixture("openai", name)])
}

#[test]
fn text_only() {
    assert_eq!(
        whole("text"),
        [
            Event::delta("Bonjour"),
            Event::delta(", ça va ? 😀"),
            Event::delta(" \"quoted\"\nnew line"),
            usage(19, 10),
            done(StopReason::EndTurn),
        ]
    );
}

#[test]
fn parallel_tool_calls_are_assembled_by_index() {
    assert_eq!(
        whole("parallel_tools"),
        [
            Event::ToolCallStart {
                id: "call_Paris".into(),
                name: "get_weather".into()
            },
            Event::ToolCallStart {
                id: "call_Rome".into(),
                name: "get_weather".into()
            },
            Event::ToolCallComplete {
                id: "call_Paris".into(),
                name: "get_weather".into(),
                input: json!({"city": "Paris", "unit": "celsius"}),
            },
            Event::ToolCallComplete {
                id: "call_Rome".into(),
                name: "get_weather".into(),
                input: json!({"city": "Rome", "days": [1, 2]}),
            },
            Event::Usage(Usage {
                input_tokens: 44,
                output_tokens: 60,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 256,
            }),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn reasoning_content_is_tolerated() {
    assert_eq!(
        whole("reasoning"),
        [
            Event::delta("2 + 2 = 4."),
            usage(12, 20),
            done(StopReason::EndTurn)
        ]
    );
}

#[test]
fn keep_alive_comments_are_ignored() {
    assert_eq!(
        whole("keepalive"),
        [Event::delta("pong"), usage(8, 2), done(StopReason::EndTurn)]
    );
}

#[test]
fn an_error_object_mid_stream_is_one_error_event() {
    assert_eq!(
        whole("error_mid_stream"),
        [
            Event::delta("Let me think"),
            Event::Error(LlmError::Api {
                provider: "openai".into(),
                kind: "server_error".into(),
                message: "The server had an error while processing your request.".into(),
            }),
        ]
    );
}

#[test]
fn a_stream_without_finish_reason_is_an_error() {
    assert_eq!(
        whole("truncated"),
        [
            Event::delta("This answer will be"),
            Event::Error(LlmError::Truncated {
                provider: "openai".into()
            }),
        ]
    );
}

#[test]
fn length_inside_tool_json_is_an_error() {
    assert_eq!(
        whole("length_in_tool"),
        [
            Event::ToolCallStart {
                id: "call_Write".into(),
                name: "write_file".into()
            },
            Event::Error(LlmError::IncompleteToolInput {
                id: "call_Write".into(),
                name: "write_file".into(),
                stop_reason: "max_tokens".into(),
            }),
        ]
    );
}

#[test]
fn every_split_into_two_chunks_gives_the_same_events() {
    for name in FIXTURES {
        let bytes = fixture("openai", name);
        let expected = decode(&[&bytes]);
        for at in 0..=bytes.len() {
            let (a, b) = bytes.split_at(at);
            assert_eq!(decode(&[a, b]), expected, "{name} split at byte {at}");
        }
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(&chunks), expected, "{name} in 1-byte chunks");
    }
}

#[tokio::test]
async fn over_http_each_fixture_in_one_byte_pieces_gives_the_decoded_events() {
    for name in FIXTURES {
        let server = Server::start(vec![Reply::sse(fixture("openai", name)).in_pieces_of(1)]).await;
        let adapter = OpenAi::builder()
            .base_url(format!("{}/v1", server.base_url))
            .retry(RetryPolicy::none())
            .build();
        let stream = adapter
            .stream(Request::new(vec![Message::user("Hi")]))
            .await
            .unwrap();
        assert_eq!(drain(stream).await, whole(name), "{name}");
    }
}

#[tokio::test]
async fn sends_a_chat_completions_request_with_a_bearer_key() {
    let server = Server::start(vec![Reply::sse(fixture("openai", "text"))]).await;
    let adapter = OpenAi::builder()
        .base_url(format!("{}/v1/", server.base_url))
        .api_key("sk-openai-test")
        .max_tokens_field(MaxTokensField::MaxCompletionTokens)
        .build();
    let request = Request::new(vec![Message::system("Be brief."), Message::user("Hi")])
        .with_model("gpt-4o")
        .with_options(Options {
            max_tokens: Some(100),
            top_p: Some(0.5),
            ..Default::default()
        });
    drain(adapter.stream(request).await.unwrap()).await;
    let sent = &server.received()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(sent.header("authorization"), Some("Bearer sk-openai-test"));
    let body = sent.json();
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_completion_tokens"], 100);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert!(!format!("{adapter:?}").contains("sk-openai-test"));
}

#[tokio::test]
async fn a_local_server_needs_no_key() {
    let server = Server::start(vec![Reply::sse(fixture("openai", "text"))]).await;
    let adapter = OpenAi::builder()
        .base_url(format!("{}/v1", server.base_url))
        .include_usage(false)
        .build();
    // `OPENAI_API_KEY` may be set where the tests run: the header is sent
    // exactly when it is.
    let events = drain(
        adapter
            .stream(Request::new(vec![Message::user("Hi")]).with_model("llama3:8b"))
            .await
            .unwrap(),
    )
    .await;
    assert!(matches!(events.last(), Some(Event::Done { .. })));
    let sent = &server.received()[0];
    assert_eq!(
        sent.header("authorization").is_some(),
        std::env::var("OPENAI_API_KEY").is_ok_and(|k| !k.trim().is_empty())
    );
    assert!(sent.json().get("stream_options").is_none());
    assert_eq!(sent.json()["model"], "llama3:8b");
}

#[tokio::test]
async fn http_errors_carry_the_servers_message() {
    let server = Server::start(vec![Reply::status(
        404,
        r#"{"error":"model 'nope' not found"}"#,
    )])
    .await;
    let adapter = OpenAi::builder()
        .base_url(format!("{}/v1", server.base_url))
        .retry(RetryPolicy::none())
        .build();
    match adapter
        .stream(Request::new(vec![Message::user("Hi")]))
        .await
    {
        Err(error @ LlmError::Status { status: 404, .. }) => {
            let text = error.to_string();
            assert!(
                text.contains("model 'nope' not found") && text.contains("check `base_url`"),
                "{text}"
            );
        }
        Err(other) => panic!("expected a 404, got {other:?}"),
        Ok(_) => panic!("a 404 must fail"),
    }
}

/// The completion's id and model come first, once (for traces).
#[test]
fn the_answer_s_id_and_model_come_first_once() {
    let events = futures::executor::block_on(futures::StreamExt::collect::<Vec<_>>(
        OpenAi::replay(support::pieces(&[&fixture("openai", "text")])),
    ));
    assert_eq!(
        events[0],
        Event::Started {
            id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG".into(),
            model: "gpt-4o-2024-08-06".into()
        }
    );
    let started = events
        .iter()
        .filter(|e| matches!(e, Event::Started { .. }))
        .count();
    assert_eq!(started, 1);
}
