//! Each model request has a `llm.request` tracing span with provider, model,
//! attempt, status and tokens. Alone in its binary: tracing caches per call
//! site whether anyone listens, so tests without a subscriber running
//! beside it could hide its spans.

use skillkit_tests::llm as support;

use std::sync::{Arc, Mutex};

use skillkit::RetryPolicy;
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::{Adapter, Message, Request};
use support::{Reply, Server, drain, fixture};

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

/// Field values of every `llm.request` span, recorded as text.
#[derive(Clone, Default)]
struct Spans(
    Arc<Mutex<std::collections::BTreeMap<u64, std::collections::BTreeMap<String, String>>>>,
);

struct Fields<'a>(&'a mut std::collections::BTreeMap<String, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if attrs.metadata().name() == "llm.request" {
            let mut spans = self.0.lock().unwrap();
            attrs.record(&mut Fields(spans.entry(id.into_u64()).or_default()));
        }
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if let Some(fields) = self.0.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
}

#[tokio::test]
async fn each_request_has_a_span_with_provider_model_attempt_status_and_tokens() {
    use tracing_subscriber::layer::SubscriberExt;
    let spans = Spans::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let server = Server::start(vec![
        Reply::status(529, OVERLOADED),
        Reply::sse(fixture("anthropic", "text")),
    ])
    .await;
    let retry = RetryPolicy::default().with_sleep(|_| Box::pin(async {}));
    let adapter = Anthropic::builder()
        .base_url(&server.base_url)
        .api_key("k")
        .retry(retry)
        .build();
    let request = Request::new(vec![Message::user("Hi")]).with_model("claude-haiku-4-5");
    drain(adapter.stream(request).await.unwrap()).await;

    let spans = spans.0.lock().unwrap();
    let fields: Vec<_> = spans.values().collect();
    assert_eq!(fields.len(), 1, "{fields:?}");
    let field = |name: &str| fields[0].get(name).map(String::as_str);
    assert_eq!(field("provider"), Some("\"anthropic\""));
    assert_eq!(field("model"), Some("claude-haiku-4-5"));
    assert_eq!(field("attempt"), Some("2"));
    assert_eq!(field("status"), Some("200"));
    assert_eq!(field("input_tokens"), Some("25"));
    assert_eq!(field("output_tokens"), Some("14"));
}
