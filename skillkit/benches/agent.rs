//! The agent loop's own cost, on a model that answers at once: one message
//! with one tool round trip (two model turns: a tool call, then the answer),
//! with 10 / 100 / 1,000 / 10,000 skills in the catalog (targets: ≤ 50 µs per
//! round trip at 10 skills, ≤ 2 ms per turn at 10,000 and at 100,000, where the
//! listing is over its budget). Before the benches it
//! prints the memory an idle agent holds and what a 100-turn conversation
//! adds, counted by a counting allocator.
//!
//! Run with `cargo bench -p skill-kit --bench agent`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use skillkit::agent::{Agent, AgentOptions, start_agent};
use skillkit::llm::{Adapter, Event, EventStream, LlmError, Registry, Request, StopReason, Usage};
use skillkit::{AgentDefinition, Catalog, Memory, Skill, Tool, ToolExecution, ToolOutcome};

/// Counts the bytes allocated and not yet freed.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A model that calls `util_echo` on every even request and answers on every
/// odd one; it keeps nothing.
#[derive(Default)]
struct PingPong {
    requests: AtomicUsize,
    always_text: bool,
}

#[skillkit::async_trait]
impl Adapter for PingPong {
    fn name(&self) -> &str {
        "pingpong"
    }

    fn default_model(&self) -> Option<&str> {
        Some("pingpong")
    }

    async fn stream(&self, _: Request) -> Result<EventStream, LlmError> {
        let n = self.requests.fetch_add(1, Ordering::Relaxed);
        let mut events = Vec::with_capacity(4);
        let stop_reason = if n.is_multiple_of(2) && !self.always_text {
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

/// A catalog of `skills` skills: one executable (`util:echo`), the rest
/// knowledge skills of typical length in kits of 100.
fn catalog(skills: usize) -> Catalog {
    let memory = Memory::new();
    memory.put_tool(Skill::new("util:echo", "Echo the arguments."), Echo);
    for n in 1..skills {
        memory.put(
            Skill::new(
                format!("kit{}:skill-{n}", n / 100),
                format!(
                    "Does task number {n} of the benchmark; use it when the user asks for task {n}."
                ),
            )
            .with_body("Do the task. ".repeat(40)),
        );
    }
    Catalog::builder().provider(memory).build()
}

fn agent(catalog: &Catalog, model: PingPong) -> Agent {
    let options = AgentOptions::new(catalog.clone())
        .registry(Registry::empty().with("pingpong", model))
        .model("pingpong://bench");
    start_agent(
        AgentDefinition::new("bench", "Benchmarks.").with_system_prompt("You are fast."),
        options,
    )
    .expect("the model resolves")
}

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Prints the memory of an idle agent and of a 100-turn conversation.
fn memory(runtime: &tokio::runtime::Runtime) {
    let catalog = catalog(10);
    runtime.block_on(async {
        let before = live();
        let mut idle = agent(&catalog, PingPong::default());
        tokio::task::yield_now().await;
        let started = live();
        for _ in 0..50 {
            idle.ask("go", |_| {}).await.expect("answered");
        }
        let after = live();
        let messages = idle.history().messages.len();
        println!(
            "memory: idle agent {} bytes; a 100-turn conversation ({messages} messages, 50 tool \
             round trips) adds {} bytes ({} per turn)",
            started - before,
            after - started,
            (after - started) / 100
        );
        drop(idle);
    });
}

/// A long-lived agent over `catalog`, kept across criterion's samples (so a
/// sample of one message is not a new agent's) and replaced every 50
/// messages to keep the history short.
#[derive(Clone)]
struct Warm {
    catalog: Catalog,
    always_text: bool,
    /// The agent and how many messages it answered.
    agent: std::sync::Arc<tokio::sync::Mutex<(Option<Agent>, u64)>>,
}

impl Warm {
    fn new(catalog: Catalog, always_text: bool) -> Warm {
        Warm {
            catalog,
            always_text,
            agent: Default::default(),
        }
    }
}

/// The time of `iters` messages of `warm`'s agent. A new agent's first three
/// messages are not timed (they build its tools, and, over the listing
/// budget, make the recent user messages, the listing's query, the same from
/// then on), nor is the teardown of the agent it replaces.
async fn warm_messages(warm: Warm, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut state = warm.agent.lock().await;
    for _ in 0..iters {
        if state.1.is_multiple_of(50) {
            state.0 = None;
            tokio::task::yield_now().await;
            let model = PingPong {
                always_text: warm.always_text,
                ..PingPong::default()
            };
            let mut fresh = agent(&warm.catalog, model);
            for _ in 0..3 {
                fresh.ask("go", |_| {}).await.expect("answered");
            }
            state.0 = Some(fresh);
        }
        state.1 += 1;
        let agent = state.0.as_mut().expect("started above");
        let started = Instant::now();
        agent.ask("go", |_| {}).await.expect("answered");
        total += started.elapsed();
    }
    total
}

fn bench(c: &mut Criterion) {
    // One thread: the figures are the loop's own work, not the latency of
    // waking another worker thread (see `agent/multi_thread` for that).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let threads = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    memory(&runtime);

    // A new agent's first message: one tool round trip, its tools built on
    // the first turn.
    let mut group = c.benchmark_group("agent/tool_round_trip");
    for skills in [10, 100, 1_000, 10_000] {
        let catalog = catalog(skills);
        group.bench_with_input(BenchmarkId::from_parameter(skills), &skills, |b, _| {
            b.to_async(&runtime).iter_batched(
                || agent(&catalog, PingPong::default()),
                |mut agent| async move {
                    let answer = agent.ask("go", |_| {}).await.expect("answered");
                    assert_eq!(answer, "pong");
                    agent
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();

    // A long-lived agent whose catalog did not change since its last turn
    // (the common case: its tools are reused): one tool round trip (two
    // turns), and one text-only turn, at each size.
    for (name, always_text) in [("agent/warm_tool_round_trip", false), ("agent/turn", true)] {
        let mut group = c.benchmark_group(name);
        for skills in [10, 100, 1_000, 10_000] {
            let warm = Warm::new(catalog(skills), always_text);
            group.bench_with_input(BenchmarkId::from_parameter(skills), &skills, |b, _| {
                b.to_async(&runtime)
                    .iter_custom(|iters| warm_messages(warm.clone(), iters))
            });
        }
        group.finish();
    }

    // An unchanged turn at 100,000 skills in Memory (1,000 kits): the
    // snapshot, the tool set found unchanged kit by kit, the bounded listing
    // reused (target ≤ 2 ms).
    let mut group = c.benchmark_group("agent/turn_large");
    group.sample_size(20);
    let warm = Warm::new(catalog(100_000), true);
    group.bench_with_input(BenchmarkId::from_parameter(100_000), &100_000, |b, _| {
        b.to_async(&runtime)
            .iter_custom(|iters| warm_messages(warm.clone(), iters))
    });
    drop(warm);
    group.finish();

    // The first turn after the catalog changed (the tools are rebuilt).
    let mut group = c.benchmark_group("agent/turn_after_change");
    for skills in [10, 10_000] {
        let catalog = catalog(skills);
        group.bench_with_input(BenchmarkId::from_parameter(skills), &skills, |b, _| {
            b.to_async(&runtime).iter_batched(
                || {
                    agent(
                        &catalog,
                        PingPong {
                            always_text: true,
                            ..PingPong::default()
                        },
                    )
                },
                |mut agent| async move {
                    agent.ask("go", |_| {}).await.expect("answered");
                    agent
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();

    // The same round trip on a 2-thread runtime: events and messages cross
    // threads, so this adds the wake-up latency of the scheduler.
    let catalog = catalog(10);
    c.bench_function("agent/multi_thread/tool_round_trip/10", |b| {
        b.to_async(&threads).iter_batched(
            || agent(&catalog, PingPong::default()),
            |mut agent| async move {
                agent.ask("go", |_| {}).await.expect("answered");
                agent
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
