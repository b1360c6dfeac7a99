//! OpenTelemetry export from the real binary: `skillkit run` over a model
//! script, with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at an OTLP/HTTP
//! receiver on 127.0.0.1 that decodes the protobuf with the official
//! definitions. The tree (invoke_agent → chat, execute_tool → load_skill,
//! the sub-agent's invoke_agent under its execute_tool), each GenAI
//! attribute, content only when opted in, the newest names by opt-in, and
//! the GenAI histograms with the conventions' buckets.

use std::path::Path;
use std::process::Command;

use skillkit_tests::otlp::{Receiver, Span, Value};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// An agent `helper` with a skill `helper:trip` and a sub-agent
/// `helper:sum`, and the script: activate the skill, delegate to the
/// sub-agent (which answers), answer.
fn fixture() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Plans trips.\n---\nYou plan trips.\n",
    );
    write(
        &dir.path().join("helper/skills/trip/SKILL.md"),
        "---\nname: trip\ndescription: Plan a trip day by day.\n---\nPlan each day.\n",
    );
    write(
        &dir.path().join("helper/agents/sum.md"),
        "---\ndescription: Sums up a plan.\n---\nSum up.\n",
    );
    let script = r#"[
        {"tool_calls": [{"name": "activate_skill", "input": {"name": "helper:trip"}, "id": "call_skill"}]},
        {"tool_calls": [{"name": "agent_helper_sum", "input": {"task": "Sum up the plan"}, "id": "call_sub"}]},
        {"text": "Summed: three days."},
        {"text": "Planned three days in Lisbon."}
    ]"#;
    let file = dir.path().join("script.json");
    write(&file, script);
    (dir, format!("scripted://{}", file.display()))
}

/// Runs the agent with `env`, exporting to `receiver`; its spans once the
/// process ended (it sends what is left as it exits).
async fn run(receiver: &Receiver, env: &[(&str, &str)]) -> Vec<Span> {
    let (dir, model) = fixture();
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir.path())
        .args([
            "run",
            "helper",
            "Plan three days in Lisbon",
            "--model",
            &model,
        ])
        .args(["--allow", "helper:sum"])
        .env("HOME", dir.path().join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.path().join("cache"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)
        .env("OTEL_SERVICE_NAME", "trip-planner")
        .env_remove("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .env_remove("OTEL_SEMCONV_STABILITY_OPT_IN")
        .env_remove("RUST_LOG");
    for (name, value) in env {
        command.env(name, value);
    }
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Planned three days in Lisbon.\n"
    );
    drop(dir);
    receiver.spans()
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found = named(spans, name);
    assert_eq!(
        found.len(),
        1,
        "one `{name}` span expected among {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    found[0]
}

fn parent_of<'a>(spans: &'a [Span], child: &Span) -> &'a Span {
    spans
        .iter()
        .find(|s| s.span_id == child.parent_span_id)
        .unwrap_or_else(|| panic!("no parent of `{}`", child.name))
}

fn str<'a>(span: &'a Span, key: &str) -> &'a str {
    span.attr(key)
        .str()
        .unwrap_or_else(|| panic!("`{key}` of `{}` is not a string", span.name))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_run_exports_the_genai_tree_and_its_attributes() {
    let receiver = Receiver::start().await;
    let spans = run(&receiver, &[]).await;

    // The tree: the root agent, its chats and tool calls; the skill's
    // activation under its tool call; the sub-agent under its own.
    let root = one(&spans, "invoke_agent helper");
    assert_eq!(root.kind, 1, "internal");
    assert_eq!(str(root, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(str(root, "gen_ai.agent.name"), "helper");
    assert_eq!(str(root, "gen_ai.agent.id"), "helper");
    assert_eq!(str(root, "gen_ai.agent.description"), "Plans trips.");
    let conversation = str(root, "gen_ai.conversation.id").to_owned();
    assert!(!conversation.is_empty());
    assert_eq!(
        root.resource.get("service.name"),
        Some(&Value::Str("trip-planner".into()))
    );

    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .collect();
    assert_eq!(chats.len(), 4, "three of the root, one of the sub-agent");
    for chat in &chats {
        assert_eq!(chat.kind, 3, "client");
        assert_eq!(str(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(str(chat, "gen_ai.system"), "scripted");
        assert!(!chat.attributes.contains_key("gen_ai.provider.name"));
        assert!(str(chat, "gen_ai.response.id").starts_with("scripted-"));
        assert!(
            matches!(chat.attr("gen_ai.usage.input_tokens"), Value::Int(n) if *n > 0),
            "{chat:?}"
        );
        assert!(matches!(
            chat.attr("gen_ai.usage.output_tokens"),
            Value::Int(_)
        ));
        assert!(matches!(
            chat.attr("gen_ai.response.time_to_first_chunk"),
            Value::Double(_)
        ));
        assert_eq!(str(chat, "gen_ai.conversation.id"), conversation);
        // No content unless opted in.
        assert!(!chat.attributes.contains_key("gen_ai.input.messages"));
        assert!(!chat.attributes.contains_key("gen_ai.output.messages"));
    }
    let finishes: Vec<&Value> = chats
        .iter()
        .map(|c| c.attr("gen_ai.response.finish_reasons"))
        .collect();
    assert!(finishes.contains(&&Value::Strings(vec!["tool_call".into()])));
    assert!(finishes.contains(&&Value::Strings(vec!["stop".into()])));
    let root_chats = chats
        .iter()
        .filter(|c| c.parent_span_id == root.span_id)
        .count();
    assert_eq!(root_chats, 3);

    let activation = one(&spans, "execute_tool activate_skill");
    assert_eq!(activation.parent_span_id, root.span_id);
    assert_eq!(str(activation, "gen_ai.tool.name"), "activate_skill");
    assert_eq!(str(activation, "gen_ai.tool.call.id"), "call_skill");
    assert_eq!(str(activation, "gen_ai.tool.type"), "function");
    assert_eq!(str(activation, "skillkit.approval.decision"), "allow");
    assert!(
        !activation
            .attributes
            .contains_key("gen_ai.tool.call.arguments")
    );
    let load = one(&spans, "load_skill helper:trip");
    assert_eq!(load.parent_span_id, activation.span_id);
    assert_eq!(str(load, "gen_ai.operation.name"), "load_skill");
    assert_eq!(str(load, "gen_ai.skill.name"), "helper:trip");
    assert_eq!(
        str(load, "gen_ai.skill.description"),
        "Plan a trip day by day."
    );
    assert_eq!(str(load, "gen_ai.skill.source.uri"), "skill://helper/trip");

    let delegation = one(&spans, "execute_tool helper:sum");
    assert_eq!(delegation.parent_span_id, root.span_id);
    let sub = one(&spans, "invoke_agent helper:sum");
    assert_eq!(parent_of(&spans, sub).span_id, delegation.span_id);
    assert_eq!(str(sub, "gen_ai.agent.id"), "helper:sum@helper:sum");
    assert_eq!(str(sub, "gen_ai.conversation.id"), conversation);
    assert!(chats.iter().any(|c| c.parent_span_id == sub.span_id));
    // One trace.
    assert!(spans.iter().all(|s| s.trace_id == root.trace_id));

    // The metrics, with the conventions' buckets.
    let histograms = receiver.histograms();
    let duration = histograms
        .iter()
        .find(|h| h.name == "gen_ai.client.operation.duration")
        .expect("the duration histogram");
    assert_eq!(duration.bounds[..3], [0.01, 0.02, 0.04]);
    let tokens = histograms
        .iter()
        .find(|h| h.name == "gen_ai.client.token.usage")
        .expect("the token histogram");
    assert_eq!(tokens.bounds[..3], [1.0, 4.0, 16.0]);
    let types: Vec<&str> = tokens
        .points
        .iter()
        .filter_map(|(attrs, _, _)| attrs.get("gen_ai.token.type").and_then(Value::str))
        .collect();
    assert!(
        types.contains(&"input") && types.contains(&"output"),
        "{types:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn content_and_the_newest_names_only_when_opted_in() {
    let receiver = Receiver::start().await;
    let spans = run(
        &receiver,
        &[
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
            (
                "OTEL_SEMCONV_STABILITY_OPT_IN",
                "gen_ai_latest_experimental",
            ),
        ],
    )
    .await;
    let chat = spans
        .iter()
        .find(|s| {
            s.name.starts_with("chat ")
                && s.attributes.contains_key("gen_ai.output.messages")
                && str(s, "gen_ai.output.messages").contains("Planned three days")
        })
        .expect("the last chat, with its answer");
    assert_eq!(str(chat, "gen_ai.provider.name"), "scripted");
    assert!(!chat.attributes.contains_key("gen_ai.system"));
    let input: serde_json::Value =
        serde_json::from_str(str(chat, "gen_ai.input.messages")).unwrap();
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[0]["parts"][0]["content"], "Plan three days in Lisbon");
    assert!(str(chat, "gen_ai.system_instructions").contains("You plan trips."));
    let activation = one(&spans, "execute_tool activate_skill");
    assert!(str(activation, "gen_ai.tool.call.arguments").contains("helper:trip"));
    assert!(str(activation, "gen_ai.tool.call.result").contains("Plan each day."));
}

/// A host's trace goes on through `skillkit serve`: a `tools/call` whose
/// `_meta` carries W3C trace context is exported as a span of that trace,
/// a child of the client's span.
#[tokio::test(flavor = "multi_thread")]
async fn the_mcp_server_continues_the_client_s_trace() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const PARENT: &str = "00f067aa0ba902b7";
    let receiver = Receiver::start().await;
    let (dir, _) = fixture();
    let url = receiver.url.clone();
    let home = dir.path().join("home");
    let kit = dir.path().join("helper");
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillkit")).configure(|c| {
        c.arg("serve")
            .arg(&kit)
            .env("HOME", &home)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
            .env_remove("RUST_LOG");
    });
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let mut meta = MetaObject::new();
    meta.set_traceparent(format!("00-{TRACE}-{PARENT}-01"));
    let mut request = CallToolRequestParams::new("activate_skill");
    request.arguments = serde_json::json!({"name": "helper:trip"})
        .as_object()
        .cloned();
    request.meta = Some(RequestMetaObject(meta));
    let result = client.call_tool(request).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    client.cancel().await.unwrap();

    // The server sends its spans as it exits.
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let spans = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        loop {
            let spans = receiver.spans();
            if spans.iter().any(|s| s.name == "load_skill helper:trip") {
                return spans;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("stuck: the server's spans never arrived");
    let served = one(&spans, "execute_tool activate_skill");
    assert_eq!(served.kind, 2, "server");
    assert_eq!(hex(&served.trace_id), TRACE);
    assert_eq!(hex(&served.parent_span_id), PARENT);
    let load = one(&spans, "load_skill helper:trip");
    assert_eq!(load.parent_span_id, served.span_id);
    assert_eq!(hex(&load.trace_id), TRACE);
}

/// A failed model request's span says what went wrong (`error.type`, and
/// the error status), and so does the agent's.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_request_has_its_error_type() {
    let receiver = Receiver::start().await;
    let (dir, _) = fixture();
    // One answer only: the second request finds the script exhausted.
    let file = dir.path().join("short.json");
    write(
        &file,
        r#"[{"tool_calls": [{"name": "activate_skill", "input": {"name": "helper:trip"}}]}]"#,
    );
    let model = format!("scripted://{}", file.display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir.path())
        .args(["run", "helper", "Plan", "--model", &model])
        .env("HOME", dir.path().join("home"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)
        .env_remove("RUST_LOG");
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    let spans = receiver.spans();
    let failed: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat ") && s.status == 2)
        .collect();
    assert_eq!(failed.len(), 1, "{spans:?}");
    assert_eq!(str(failed[0], "error.type"), "script_exhausted");
    let agent = one(&spans, "invoke_agent helper");
    assert_eq!(agent.status, 2);
    assert_eq!(str(agent, "error.type"), "script_exhausted");
}

/// A script's call says which script ran, how it ended and the sandbox
/// layers this kernel put up around it.
#[tokio::test(flavor = "multi_thread")]
async fn a_script_call_names_the_script_its_exit_code_and_the_sandbox() {
    let receiver = Receiver::start().await;
    let (dir, _) = fixture();
    write(
        &dir.path().join("helper/skills/trip/scripts/days.sh"),
        "echo three days\n",
    );
    let file = dir.path().join("script.json");
    write(
        &file,
        r#"[
            {"tool_calls": [{"name": "run_skill_script", "input": {"skill": "helper:trip", "script": "scripts/days.sh"}}]},
            {"text": "Three days."}
        ]"#,
    );
    let model = format!("scripted://{}", file.display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir.path())
        .args(["run", "helper", "Plan", "--model", &model])
        .args(["--allow-scripts", "--allow", "run_skill_script"])
        .env("HOME", dir.path().join("home"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)
        .env_remove("RUST_LOG");
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("exit code: 0"), "{stderr}");
    let spans = receiver.spans();
    let call = one(&spans, "execute_tool run_skill_script");
    assert_eq!(str(call, "skillkit.script.path"), "scripts/days.sh");
    assert_eq!(call.attr("skillkit.script.exit_code"), &Value::Int(0));
    // The layers this kernel enforces, as the sandbox itself reports them.
    let expected: Vec<&str> = skillkit::script::Sandbox::current()
        .layers()
        .iter()
        .map(|layer| match layer {
            skillkit::script::Layer::Namespaces => "namespaces",
            skillkit::script::Layer::Landlock { .. } => "landlock",
            _ => "seccomp",
        })
        .collect();
    assert_eq!(str(call, "skillkit.script.sandbox"), expected.join(","));
}

/// `OTEL_EXPORTER_OTLP_PROTOCOL=grpc` exports over gRPC, to a receiver of
/// the collector's trace service.
#[tokio::test(flavor = "multi_thread")]
async fn the_export_speaks_grpc_too() {
    let receiver = Receiver::start_grpc().await;
    let spans = run(&receiver, &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).await;
    let root = one(&spans, "invoke_agent helper");
    assert_eq!(str(root, "gen_ai.agent.name"), "helper");
    assert!(spans.iter().any(|s| s.name == "load_skill helper:trip"));
}

/// The standard sampler variable is honoured: `always_off` exports no span.
#[tokio::test(flavor = "multi_thread")]
async fn the_sampler_variable_is_honoured() {
    let receiver = Receiver::start().await;
    let spans = run(&receiver, &[("OTEL_TRACES_SAMPLER", "always_off")]).await;
    assert!(spans.is_empty(), "{spans:?}");
    // The same run without it exports (the receiver works).
    let spans = run(&receiver, &[]).await;
    assert!(!spans.is_empty());
}

/// Over a real adapter (Anthropic's, on a local model server): the
/// endpoint, the request's parameters, the vendor's id and model of the
/// answer, and the usage with cache reads and writes counted into the
/// input, as the conventions say for Anthropic.
#[tokio::test(flavor = "multi_thread")]
async fn a_real_adapter_s_chat_names_its_server_parameters_and_usage() {
    use serde_json::json;
    use skillkit_tests::llm::{Reply, Server, anthropic_delta, anthropic_end, anthropic_sse};
    let receiver = Receiver::start().await;
    let start = json!({"type": "message_start", "message": {
        "id": "msg_trace", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-6-20260101", "content": [], "stop_reason": null,
        "usage": {"input_tokens": 20, "output_tokens": 1,
                  "cache_read_input_tokens": 300, "cache_creation_input_tokens": 40}}});
    let mut events = vec![
        start,
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        anthropic_delta("Hello."),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    events.extend(anthropic_end("end_turn"));
    let server = Server::start(vec![Reply::sse(anthropic_sse(&events))]).await;
    let (dir, _) = fixture();
    let port = server
        .base_url
        .rsplit(':')
        .next()
        .unwrap()
        .parse::<i64>()
        .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillkit"));
    command
        .current_dir(dir.path())
        .args(["run", "helper", "Hi", "--model"])
        .arg("anthropic://claude-sonnet-4-6?max_tokens=512&temperature=0.2")
        .env("HOME", dir.path().join("home"))
        .env("ANTHROPIC_BASE_URL", &server.base_url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)
        .env_remove("RUST_LOG");
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let spans = receiver.spans();
    let chat = one(&spans, "chat claude-sonnet-4-6");
    assert_eq!(str(chat, "gen_ai.system"), "anthropic");
    assert_eq!(str(chat, "server.address"), "127.0.0.1");
    assert_eq!(chat.attr("server.port"), &Value::Int(port));
    assert_eq!(chat.attr("gen_ai.request.max_tokens"), &Value::Int(512));
    assert_eq!(chat.attr("gen_ai.request.temperature"), &Value::Double(0.2));
    assert_eq!(str(chat, "gen_ai.response.id"), "msg_trace");
    assert_eq!(
        str(chat, "gen_ai.response.model"),
        "claude-sonnet-4-6-20260101"
    );
    assert_eq!(chat.attr("gen_ai.usage.input_tokens"), &Value::Int(360));
    assert_eq!(
        chat.attr("gen_ai.usage.cache_read.input_tokens"),
        &Value::Int(300)
    );
    assert_eq!(
        chat.attr("gen_ai.usage.cache_creation.input_tokens"),
        &Value::Int(40)
    );
    assert_eq!(chat.attr("gen_ai.usage.output_tokens"), &Value::Int(5));
    assert_eq!(
        chat.attr("gen_ai.response.finish_reasons"),
        &Value::Strings(vec!["stop".into()])
    );
}

/// `OTEL_EXPORTER_OTLP_HEADERS` reach the collector (an API key, as hosted
/// backends ask for).
#[tokio::test(flavor = "multi_thread")]
async fn the_headers_variable_reaches_the_collector() {
    let receiver = Receiver::start().await;
    let spans = run(
        &receiver,
        &[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-api-key=secret-123,x-team=trips",
        )],
    )
    .await;
    assert!(!spans.is_empty());
    assert!(
        receiver
            .header("x-api-key")
            .iter()
            .all(|v| v == "secret-123")
    );
    assert!(!receiver.header("x-api-key").is_empty());
    assert_eq!(receiver.header("x-team")[0], "trips");
}

/// A hostile client's trace context is not taken: a `traceparent` that is
/// garbage, all zeros, or a megabyte long leaves the server answering and
/// its span a trace of its own (as any W3C parser must), never a child of
/// the bogus ids.
#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_traceparent_is_ignored_and_the_server_goes_on() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

    let receiver = Receiver::start().await;
    let (dir, _) = fixture();
    let url = receiver.url.clone();
    let home = dir.path().join("home");
    let kit = dir.path().join("helper");
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillkit")).configure(|c| {
        c.arg("serve")
            .arg(&kit)
            .env("HOME", &home)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
            .env_remove("RUST_LOG");
    });
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let hostile = [
        "not a traceparent".to_owned(),
        "00-00000000000000000000000000000000-0000000000000000-01".to_owned(),
        format!("00-{}-00f067aa0ba902b7-01", "a".repeat(1 << 20)),
    ];
    for traceparent in &hostile {
        let mut meta = MetaObject::new();
        meta.set_traceparent(traceparent.clone());
        let mut request = CallToolRequestParams::new("activate_skill");
        request.arguments = serde_json::json!({"name": "helper:trip"})
            .as_object()
            .cloned();
        request.meta = Some(RequestMetaObject(meta));
        let result = client.call_tool(request).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
    client.cancel().await.unwrap();
    let spans = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        loop {
            let spans = receiver.spans();
            if spans
                .iter()
                .filter(|s| s.name == "execute_tool activate_skill")
                .count()
                == hostile.len()
            {
                return spans;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("stuck: the server's spans never arrived");
    for served in named(&spans, "execute_tool activate_skill") {
        assert!(served.parent_span_id.is_empty(), "a root span: {served:?}");
        assert!(served.trace_id.iter().any(|b| *b != 0));
    }
}
