//! An agent turn that calls an MCP tool over stdio, beside the same server's
//! own time for that call (target: the agent adds ≤ 1 ms).
//!
//! * `agent_mcp/raw_call`: rmcp's client calling server-everything's `echo`
//!   on a connection of its own: the server's time plus the transport's,
//!   what any client pays;
//! * `agent_mcp/agent_message`: one agent message on a scripted model whose
//!   first turn calls `everything__echo` (the same server, through a
//!   [`Session`]) and whose second turn answers: the tool list, the schema
//!   check, the approval policy, the call, the result as text, both model
//!   turns.
//!
//! The difference is what the agent adds. The server is server-everything
//! (npm `@modelcontextprotocol/server-everything`, installed by
//! `bench/peers/setup.sh`); without it the bench says so and measures
//! nothing.
//!
//! Run with `cargo bench -p skill-kit --features mcp-client --bench agent_mcp -- --measurement-time 3 --warm-up-time 1`.

use std::path::PathBuf;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use skillkit::agent::{AgentOptions, start_agent};
use skillkit::llm::{Registry, Scripted};
use skillkit::mcp_client::{Endpoint, Session};
use skillkit::{AgentDefinition, Catalog};

fn everything() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/peers/node_modules/.bin/mcp-server-everything");
    bin.exists().then_some(bin)
}

fn bench(c: &mut Criterion) {
    let Some(bin) = everything() else {
        eprintln!(
            "agent_mcp: bench/peers/node_modules/.bin/mcp-server-everything is missing; \
             run bench/peers/setup.sh. Nothing measured."
        );
        return;
    };
    let endpoint = Endpoint::command(bin.to_str().expect("a UTF-8 path"), Vec::<String>::new());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let arguments = json!({"message": "bench"})
        .as_object()
        .cloned()
        .expect("an object");

    let raw = runtime
        .block_on(endpoint.connect(()))
        .expect("server-everything starts");
    let session = Session::new(endpoint);
    runtime.block_on(async {
        session.start();
        assert!(session.wait_connected(Duration::from_secs(60)).await);
    });

    let mut group = c.benchmark_group("agent_mcp");
    group.bench_function("raw_call", |b| {
        b.iter(|| {
            let mut params = CallToolRequestParams::new("echo");
            params.arguments = Some(arguments.clone());
            runtime
                .block_on(raw.peer().call_tool(params))
                .expect("echo answers")
        })
    });
    group.bench_function("agent_message", |b| {
        b.iter_batched(
            || {
                // A fresh agent each time (so the history does not grow),
                // on the one connected session.
                let script = Scripted::new()
                    .tool_call("c1", "everything__echo", json!({"message": "bench"}))
                    .text("done");
                let options = AgentOptions::new(Catalog::builder().build())
                    .registry(Registry::empty().with("scripted", script))
                    .model("scripted://m")
                    .mcp_server("everything", session.clone());
                let _guard = runtime.enter();
                start_agent(AgentDefinition::new("bench", "Calls a tool."), options)
                    .expect("the agent starts")
            },
            |mut agent| {
                let answer = runtime
                    .block_on(agent.ask("go", |_| {}))
                    .expect("the agent answers");
                assert_eq!(answer, "done");
                agent
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
