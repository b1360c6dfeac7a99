//! The Anthropic adapter against recorded-format SSE fixtures, replayed from
//! memory (`Anthropic::replay`) and through a real HTTP server on 127.0.0.1.

use skillkit_tests::llm as support;

use serde_json::json;
use skillkit::RetryPolicy;
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::{
    Adapter, Event, LlmError, Message, Options, Request, StopReason, ToolCall, Usage,
};
use support::{Reply, Server, done, drain, fixture, usage};

const FIXTURES: [&str; 8] = [
    "text",
    "parallel_tools",
    "thinking",
    "ping",
    "error_mid_stream",
    "truncated",
    "max_tokens_in_tool",
    "server_tools",
];

fn decode(chunks: &[&[u8]]) -> Vec<Event> {
    support::collect(Anthropic::replay(support::pieces(chunks)))
}

fn whole(name: &str) -> Vec<Event> {
    decode(&[&fixture("anthropic", name)])
}

#[test]
fn text_only() {
    assert_eq!(
        whole("text"),
        [
            Event::delta("Bonjour"),
            Event::delta(", ça va ? "),
            Event::delta("Très bien 😀 —"),
            Event::delta(" \"quoted\"\nnew line\\"),
            usage(25, 14),
            done(StopReason::EndTurn),
        ]
    );
}

#[test]
fn parallel_tool_calls_with_interleaved_deltas_keep_their_own_json() {
    let start = |id: &str| Event::ToolCallStart {
        id: id.into(),
        name: "get_weather".into(),
    };
    assert_eq!(
        whole("parallel_tools"),
        [
            Event::delta("I'll check both cities."),
            start("toolu_01Paris"),
            start("toolu_02Rome"),
            Event::ToolCallComplete {
                id: "toolu_02Rome".into(),
                name: "get_weather".into(),
                input: json!({"city": "Rome", "days": [1, 2]}),
            },
            Event::ToolCallComplete {
                id: "toolu_01Paris".into(),
                name: "get_weather".into(),
                input: json!({"city": "Paris", "unit": "celsius"}),
            },
            Event::Usage(Usage {
                input_tokens: 412,
                output_tokens: 96,
                cache_creation_input_tokens: 1024,
                cache_read_input_tokens: 2048,
            }),
            done(StopReason::ToolUse),
        ]
    );
}

#[test]
fn thinking_and_redacted_thinking_are_tolerated() {
    assert_eq!(
        whole("thinking"),
        [
            Event::delta("2 + 2 = 4."),
            usage(50, 31),
            done(StopReason::EndTurn)
        ]
    );
}

#[test]
fn pings_are_ignored_even_with_crlf_lines() {
    assert_eq!(
        whole("ping"),
        [Event::delta("pong"), usage(8, 2), done(StopReason::EndTurn)]
    );
}

#[test]
fn server_tool_blocks_and_citations_are_tolerated() {
    assert_eq!(
        whole("server_tools"),
        [
            Event::delta("Found it."),
            usage(120, 40),
            done(StopReason::EndTurn)
        ]
    );
}

#[test]
fn an_error_event_mid_stream_is_one_error_event() {
    assert_eq!(
        whole("error_mid_stream"),
        [
            Event::delta("Let me think"),
            Event::Error(LlmError::Api {
                provider: "anthropic".into(),
                kind: "overloaded_error".into(),
                message: "Overloaded".into(),
            }),
        ]
    );
}

#[test]
fn a_stream_without_message_stop_is_an_error() {
    assert_eq!(
        whole("truncated"),
        [
            Event::delta("This answer will be"),
            Event::Error(LlmError::Truncated {
                provider: "anthropic".into()
            }),
        ]
    );
}

#[test]
fn max_tokens_inside_tool_json_is_an_error() {
    assert_eq!(
        whole("max_tokens_in_tool"),
        [
            Event::delta("Writing the file."),
            Event::ToolCallStart {
                id: "toolu_01Write".into(),
                name: "write_file".into()
            },
            Event::Error(LlmError::IncompleteToolInput {
                id: "toolu_01Write".into(),
                name: "write_file".into(),
                stop_reason: "max_tokens".into(),
            }),
        ]
    );
}

#[test]
fn every_split_into_two_chunks_gives_the_same_events() {
    for name in FIXTURES {
        let bytes = fixture("anthropic", name);
        let expected = decode(&[&bytes]);
        for at in 0..=bytes.len() {
            let (a, b) = bytes.split_at(at);
            assert_eq!(decode(&[a, b]), expected, "{name} split at byte {at}");
        }
    }
}

#[test]
fn one_byte_chunks_give_the_same_events() {
    for name in FIXTURES {
        let bytes = fixture("anthropic", name);
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(&chunks), decode(&[&bytes]), "{name}");
    }
}

fn adapter(server: &Server) -> Anthropic {
    Anthropic::builder()
        .base_url(&server.base_url)
        .api_key("sk-ant-test-key")
        .retry(RetryPolicy::none())
        .build()
}

#[tokio::test]
async fn over_http_each_fixture_in_one_byte_pieces_gives_the_decoded_events() {
    for name in FIXTURES {
        let server =
            Server::start(vec![Reply::sse(fixture("anthropic", name)).in_pieces_of(1)]).await;
        let stream = adapter(&server)
            .stream(Request::new(vec![Message::user("Hi")]))
            .await
            .unwrap();
        assert_eq!(drain(stream).await, whole(name), "{name}");
    }
}

#[tokio::test]
async fn sends_the_messages_api_request() {
    let server = Server::start(vec![Reply::sse(fixture("anthropic", "text"))]).await;
    let tool = skillkit::ToolDefinition::new("get_weather", "Weather.", json!({"type": "object"}));
    let request = Request::new(vec![
        Message::system("Be brief."),
        Message::user("Weather?"),
        Message::assistant(
            "",
            vec![ToolCall::new("t1", "get_weather", json!({"city": "Oslo"}))],
        ),
        Message::tool_result("t1", "cold"),
    ])
    .with_model("claude-haiku-4-5")
    .with_tools(vec![tool])
    .with_options(Options {
        temperature: Some(0.3),
        ..Default::default()
    });
    let events = drain(adapter(&server).stream(request).await.unwrap()).await;
    assert!(matches!(events.last(), Some(Event::Done { .. })));

    let received = server.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let body = sent.json();
    assert_eq!(body["model"], "claude-haiku-4-5");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["temperature"], 0.3);
    assert_eq!(body["system"][0]["text"], "Be brief.");
    assert_eq!(body["tools"][0]["name"], "get_weather");
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
    assert!(body.get("cache_control").is_none());
}

#[tokio::test]
async fn prompt_caching_marks_the_system_block_and_the_last_message() {
    let server = Server::start(vec![Reply::sse(fixture("anthropic", "text"))]).await;
    let request = Request::new(vec![Message::system("Long rules."), Message::user("Hi")])
        .with_options(Options {
            prompt_caching: Some(true),
            ..Default::default()
        });
    drain(adapter(&server).stream(request).await.unwrap()).await;
    let body = server.received()[0].json();
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["messages"][0]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
}

#[tokio::test]
async fn the_key_in_the_options_beats_the_configured_one() {
    let server = Server::start(vec![Reply::sse(fixture("anthropic", "text"))]).await;
    let request = Request::new(vec![Message::user("Hi")]).with_options(Options {
        api_key: Some("sk-from-options".into()),
        ..Default::default()
    });
    drain(adapter(&server).stream(request).await.unwrap()).await;
    assert_eq!(
        server.received()[0].header("x-api-key"),
        Some("sk-from-options")
    );
}

#[tokio::test]
async fn the_key_never_shows_in_debug_output_or_errors() {
    let server = Server::start(vec![Reply::status(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )])
    .await;
    let adapter = adapter(&server);
    let error = match adapter
        .stream(Request::new(vec![Message::user("Hi")]))
        .await
    {
        Err(error) => error,
        Ok(_) => panic!("a 401 must fail"),
    };
    assert!(matches!(error, LlmError::Status { status: 401, .. }));
    for text in [
        format!("{adapter:?}"),
        format!("{error:?}"),
        error.to_string(),
    ] {
        assert!(!text.contains("sk-ant-test-key"), "{text}");
    }
    assert!(error.to_string().contains("check the API key"));
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    use futures::StreamExt;
    let body = fixture("anthropic", "text");
    let first_delta_end = {
        let text = String::from_utf8(body.clone()).unwrap();
        text.find("Bonjour").unwrap()
            + text[text.find("Bonjour").unwrap()..].find("\n\n").unwrap()
            + 2
    };
    let server = Server::start(vec![
        Reply::sse(body[..first_delta_end].to_vec()).hold_open(),
    ])
    .await;
    let mut stream = adapter(&server)
        .stream(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap();
    assert!(matches!(stream.next().await, Some(Event::Started { .. })));
    assert_eq!(stream.next().await, Some(Event::delta("Bonjour")));
    drop(stream);
    assert!(
        server.client_closed().await,
        "the server never saw the connection close"
    );
}

#[tokio::test]
async fn a_silent_server_is_an_idle_timeout() {
    let body = fixture("anthropic", "text");
    let server = Server::start(vec![Reply::sse(body[..40].to_vec()).hold_open()]).await;
    let adapter = Anthropic::builder()
        .base_url(&server.base_url)
        .api_key("k")
        .retry(RetryPolicy::none())
        .idle_timeout(std::time::Duration::from_millis(200))
        .build();
    let events = drain(
        adapter
            .stream(Request::new(vec![Message::user("Hi")]))
            .await
            .unwrap(),
    )
    .await;
    assert!(
        matches!(&events[..], [Event::Error(LlmError::Timeout { during, .. })] if during == "streaming"),
        "{events:?}"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let adapter = Anthropic::builder()
        .base_url(base_url)
        .api_key("k")
        .retry(RetryPolicy::none())
        .build();
    match adapter
        .stream(Request::new(vec![Message::user("Hi")]))
        .await
    {
        Err(LlmError::Transport { provider, .. }) => assert_eq!(provider, "anthropic"),
        Err(other) => panic!("expected a transport error, got {other:?}"),
        Ok(_) => panic!("nothing listens there"),
    }
}
