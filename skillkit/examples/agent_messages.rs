//! The agent loop's work, for instruction counts: N messages (default
//! 1,000), each one tool round trip on a model that answers at once, on one
//! thread, with no `tracing` subscriber. Counted under valgrind, it compares
//! two commits exactly where the machine's clock is too noisy to:
//!
//! ```sh
//! cargo build --release -p skill-kit --example agent_messages
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/agent_messages 600
//! ```
use serde_json::json;
use skillkit::agent::{AgentOptions, start_agent};
use skillkit::llm::{Adapter, Event, EventStream, LlmError, Registry, Request, StopReason, Usage};
use skillkit::{AgentDefinition, Catalog, Memory, Skill, Tool, ToolExecution, ToolOutcome};
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Default)]
struct PingPong(AtomicUsize);

#[skillkit::async_trait]
impl Adapter for PingPong {
    fn name(&self) -> &str {
        "pingpong"
    }
    async fn stream(&self, _: Request) -> Result<EventStream, LlmError> {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        let mut events = Vec::new();
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
    async fn execute(&self, e: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(e.arguments())
    }
}
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let memory = Memory::new();
    memory.put_tool(Skill::new("util:echo", "Echo the arguments."), Echo);
    let catalog = Catalog::builder().provider(memory).build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..n / 50 {
            let options = AgentOptions::new(catalog.clone())
                .registry(Registry::empty().with("pingpong", PingPong::default()))
                .model("pingpong://bench");
            let mut agent = start_agent(
                AgentDefinition::new("bench", "Benchmarks.").with_system_prompt("You are fast."),
                options,
            )
            .unwrap();
            for _ in 0..50 {
                agent.ask("go", |_| {}).await.unwrap();
            }
        }
    });
}
