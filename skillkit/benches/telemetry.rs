//! What the GenAI spans cost: one agent message with one tool round trip
//! (`invoke_agent`, two `chat`, one `execute_tool`: four spans), on a model
//! that answers at once, on one thread:
//!
//! * `telemetry/none`: no subscriber (what every application that does not
//!   listen pays);
//! * `telemetry/otel`: a subscriber with [`Otel`]'s layer, its batch
//!   exporter sending OTLP/HTTP to a local sink (a thread answering 200).
//!
//! The cost per span is `(otel - none) / 4`. The cost without a subscriber
//! against the code before the spans is `agent/current_thread/tool_round_trip`
//! of `benches/agent.rs` on the two commits (see the bench page).
//!
//! Run with `cargo bench -p skill-kit --features otel --bench telemetry`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use skillkit::agent::{Agent, AgentOptions, start_agent};
use skillkit::llm::{Adapter, Event, EventStream, LlmError, Registry, Request, StopReason, Usage};
use skillkit::telemetry::Otel;
use skillkit::{AgentDefinition, Catalog, Memory, Skill, Tool, ToolExecution, ToolOutcome};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;

/// Calls `util_echo` on every even request, answers on every odd one.
#[derive(Default)]
struct PingPong(AtomicUsize);

#[skillkit::async_trait]
impl Adapter for PingPong {
    fn name(&self) -> &str {
        "pingpong"
    }

    async fn stream(&self, _: Request) -> Result<EventStream, LlmError> {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        let mut events = Vec::with_capacity(4);
        let stop_reason = if n.is_multiple_of(2) {
            let id = format!("call_{n}");
            events.push(Event::ToolCallStart {
                id: id.clone(),
                name: "util_echo".into(),
            });
            events.push(Event::ToolCallComplete {
                id,
                name: "util_echo".into(),
                input: json!({"arguments": "ping"}),
            });
            StopReason::ToolUse
        } else {
            events.push(Event::delta("pong"));
            StopReason::EndTurn
        };
        events.push(Event::Usage(Usage {
            input_tokens: 10,
            output_tokens: 1,
            ..Usage::default()
        }));
        events.push(Event::Done { stop_reason });
        Ok(Box::pin(futures::stream::iter(events)))
    }
}

struct Echo;

#[skillkit::async_trait]
impl Tool for Echo {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(execution.arguments())
    }
}

fn agent(catalog: &Catalog) -> Agent {
    let options = AgentOptions::new(catalog.clone())
        .registry(Registry::empty().with("pingpong", PingPong::default()))
        .model("pingpong://bench");
    start_agent(AgentDefinition::new("bench", "Benchmarks."), options).expect("the model resolves")
}

/// A sink for OTLP/HTTP: answers every request 200, on its own thread; its
/// URL.
fn sink() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some(value) =
                            line.to_ascii_lowercase().strip_prefix("content-length:")
                        {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let reply = b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if reader.get_mut().write_all(reply).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

fn bench(c: &mut Criterion) {
    let memory = Memory::new();
    memory.put_tool(Skill::new("util:echo", "Echo the arguments."), Echo);
    let catalog = Catalog::builder().provider(memory).build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("telemetry");
    group.bench_function("none", |b| {
        b.to_async(&runtime).iter_batched(
            || agent(&catalog),
            |mut agent| async move {
                agent.ask("go", |_| {}).await.expect("answered");
                agent
            },
            BatchSize::SmallInput,
        )
    });

    // SAFETY: set before any other thread of this process reads the
    // environment (the exporter reads it next, on this thread).
    unsafe { std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", sink()) };
    let otel = Otel::from_env().expect("the exporter");
    // As the CLI exports: SkillKit's info spans (not the debug `turn`s).
    let subscriber = tracing_subscriber::registry().with(
        otel.layer()
            .with_filter(tracing_subscriber::filter::LevelFilter::INFO),
    );
    tracing::subscriber::with_default(subscriber, || {
        group.bench_function("otel", |b| {
            b.to_async(&runtime).iter_batched(
                || agent(&catalog),
                |mut agent| async move {
                    agent.ask("go", |_| {}).await.expect("answered");
                    agent
                },
                BatchSize::SmallInput,
            )
        });
    });
    group.finish();
    otel.shutdown();
}

criterion_group!(benches, bench);
criterion_main!(benches);
