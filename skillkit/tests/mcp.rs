//! `McpServer` through its public API: rmcp's client over an in-process
//! byte pipe, and raw lines over `JsonLines`, on a catalog of `Memory`
//! skills, some with Rust tools (Streamable HTTP: `mcp_http.rs`).
#![cfg(feature = "mcp")]

mod mcp_support;

use std::time::Duration;

use mcp_support::*;
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Value, json};
use skillkit::mcp::McpServer;
use skillkit::{Catalog, Memory, Skill, Tool, ToolExecution, ToolOutcome};

struct Faulty;
#[skillkit::async_trait]
impl Tool for Faulty {
    async fn execute(&self, e: ToolExecution) -> ToolOutcome {
        match e.input.get("arguments").and_then(Value::as_str) {
            Some("panic") => panic!("tool bug"),
            _ => ToolOutcome::error("the disk is full; free some space"),
        }
    }
}

/// `server` served on one end of a pipe, and `client` connected to the other.
async fn connect<C: rmcp::ClientHandler>(
    server: McpServer,
    client: C,
) -> RunningService<RoleClient, C> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_end).await.unwrap()
}

#[tokio::test]
async fn executable_skills_are_tools_of_their_own() {
    let memory = Memory::new();
    memory.put_tool(Skill::new("util:echo", "Echo."), Echo);
    memory.put_tool(Skill::new("util:faulty", "Fails."), Faulty);
    memory.put(Skill::new("util:guide", "How to echo.").with_body("Use echo."));
    let server = McpServer::new(Catalog::builder().provider(memory.clone()).build());
    let client = connect(server, ()).await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "activate_skill",
            "list_skills",
            "read_skill_file",
            "util_echo",
            "util_faulty"
        ]
    );
    let echo = tools.iter().find(|t| t.name == "util_echo").unwrap();
    assert_eq!(echo.title.as_deref(), Some("util:echo"));
    assert_eq!(echo.description.as_deref(), Some("Echo."));
    assert_eq!(
        echo.input_schema["properties"]["arguments"]["type"],
        "string"
    );

    let done = call(&client, "util_echo", json!({"arguments": "hi"})).await;
    assert_eq!(done.is_error, Some(false));
    assert_eq!(text(&done), "util:echo got hi");
    let listed: Value =
        serde_json::from_str(text(&call(&client, "list_skills", json!({})).await)).unwrap();
    assert_eq!(
        listed[0],
        json!({"name": "util:echo", "description": "Echo.", "tool": "util_echo"})
    );
    assert_eq!(
        listed[2],
        json!({"name": "util:guide", "description": "How to echo."})
    );

    // Input that does not fit the schema, a tool's error and a tool's panic:
    // error results, and the server goes on.
    let bad = call(&client, "util_echo", json!({"arguments": 5})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text(&bad).contains("property `arguments` must be of type string"),
        "{}",
        text(&bad)
    );
    let failed = call(&client, "util_faulty", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), "the disk is full; free some space");
    let panicked = call(&client, "util_faulty", json!({"arguments": "panic"})).await;
    assert_eq!(panicked.is_error, Some(true));
    assert!(text(&panicked).contains("tool bug"), "{}", text(&panicked));

    // Fresh on every request: a tool put now is listed and callable now, one
    // deleted is gone.
    memory.put_tool(Skill::new("util:shout", "Shout."), Echo);
    memory.delete("util:faulty");
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"util_shout".to_owned()), "{names:?}");
    assert!(!names.contains(&"util_faulty".to_owned()), "{names:?}");
    assert_eq!(
        text(&call(&client, "util_shout", json!({})).await),
        "util:shout got "
    );
    let gone = client
        .call_tool(CallToolRequestParams::new("util_faulty"))
        .await;
    assert!(matches!(gone, Err(ServiceError::McpError(_))), "{gone:?}");
    // A knowledge skill activates to the agent runtime's text.
    let guide = call(&client, "activate_skill", json!({"name": "util:guide"})).await;
    assert_eq!(
        text(&guide),
        "<skill_content name=\"util:guide\">\nUse echo.\n</skill_content>"
    );
}

#[tokio::test]
async fn lists_are_paginated_by_the_page_size() {
    let memory = Memory::new();
    for i in 0..5 {
        memory.put(Skill::new(format!("kit:s{i}"), "d"));
    }
    let server = McpServer::new(Catalog::builder().provider(memory).build()).page_size(2);
    let client = connect(server, ()).await;
    let first = client.list_prompts(None).await.unwrap();
    assert_eq!(first.prompts.len(), 2);
    let second = client
        .list_prompts(Some(
            PaginatedRequestParams::default().with_cursor(first.next_cursor.clone()),
        ))
        .await
        .unwrap();
    assert_eq!(second.prompts[0].name, "kit_s2");
    assert_eq!(client.list_all_prompts().await.unwrap().len(), 5);
    assert_eq!(client.list_all_tools().await.unwrap().len(), 3);
    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://kit/s0/SKILL.md",
            "skill://kit/s1/SKILL.md",
            "skill://kit/s2/SKILL.md",
            "skill://kit/s3/SKILL.md",
            "skill://kit/s4/SKILL.md"
        ]
    );
}

#[tokio::test]
async fn a_query_that_finds_the_catalog_changed_notifies_the_client() {
    let memory = Memory::new();
    memory.put(Skill::new("kit:first", "First."));
    let server = McpServer::new(Catalog::builder().provider(memory.clone()).build()).watch(None);
    let info = serde_json::to_value(rmcp::ServerHandler::get_info(&server)).unwrap();
    for list in ["tools", "prompts", "resources"] {
        assert_eq!(info["capabilities"][list]["listChanged"], true, "{info}");
    }
    let (handler, mut notifications) = notified();
    let client = connect(server, handler).await;
    client.list_all_tools().await.unwrap();

    // An executable skill put: a tool, a prompt and a resource more.
    memory.put_tool(Skill::new("kit:echo", "Echo."), Echo);
    client.list_all_prompts().await.unwrap();
    expect(&mut notifications, &["tools", "prompts", "resources"]).await;
    // A description edited: the prompts and resources show it.
    memory.put(Skill::new("kit:first", "First, edited."));
    client.list_all_resources().await.unwrap();
    expect(&mut notifications, &["prompts", "resources"]).await;
}

#[tokio::test]
async fn an_idle_client_is_told_of_a_change_by_the_poll() {
    let memory = Memory::new();
    let server = McpServer::new(Catalog::builder().provider(memory.clone()).build())
        .watch(Some(Duration::from_millis(20)));
    let (handler, mut notifications) = notified();
    let client = connect(server, handler).await;
    client.list_all_tools().await.unwrap();
    memory.put_tool(Skill::new("kit:echo", "Echo."), Echo);
    // No request: the poll finds it.
    expect(&mut notifications, &["tools", "prompts", "resources"]).await;
}

/// A kit `k` on disk whose skill `s` has a `.env` beside its `SKILL.md`,
/// a link `env.txt` to it, a hidden folder `.git` with a file, a link
/// `config` to that folder, and a plain `notes.txt`.
#[cfg(unix)]
fn kit_with_hidden_files() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let skill = root.path().join("k/skills/s");
    std::fs::create_dir_all(skill.join(".git")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: s\ndescription: A skill.\n---\nBody.\n",
    )
    .unwrap();
    std::fs::write(skill.join(".env"), "TOKEN=hunter2\n").unwrap();
    std::fs::write(skill.join(".git/config"), "[core] secret=hunter2\n").unwrap();
    std::fs::write(skill.join("notes.txt"), "plain\n").unwrap();
    std::os::unix::fs::symlink(".env", skill.join("env.txt")).unwrap();
    std::os::unix::fs::symlink(".git", skill.join("config")).unwrap();
    root
}

#[cfg(unix)]
#[tokio::test]
async fn a_link_to_a_hidden_file_is_not_served_on_either_route() {
    use rmcp::model::{ReadResourceRequestParams, ResourceContents};

    let root = kit_with_hidden_files();
    let catalog = Catalog::builder()
        .provider(skillkit::Local::new(root.path().join("k")))
        .build();
    let client = connect(McpServer::new(catalog), ()).await;

    let plain = call(
        &client,
        "read_skill_file",
        json!({"name": "k:s", "path": "notes.txt"}),
    )
    .await;
    assert_eq!(text(&plain), "plain\n");
    for path in ["env.txt", "config/config", ".env"] {
        let tool = call(
            &client,
            "read_skill_file",
            json!({"name": "k:s", "path": path}),
        )
        .await;
        assert_eq!(tool.is_error, Some(true), "{path}: {tool:?}");
        assert!(!text(&tool).contains("hunter2"), "{path}: {}", text(&tool));
        assert!(text(&tool).contains("hidden"), "{path}: {}", text(&tool));

        let uri = format!("skill://k/s/{path}");
        let resource = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await;
        let Err(ServiceError::McpError(e)) = &resource else {
            panic!("{uri} was served: {resource:?}");
        };
        assert!(e.message.contains("hidden"), "{uri}: {}", e.message);
        assert!(!e.message.contains("hunter2"), "{uri}: {}", e.message);
    }
    let read = client
        .read_resource(ReadResourceRequestParams::new("skill://k/s/notes.txt"))
        .await
        .unwrap();
    assert!(matches!(
        &read.contents[0],
        ResourceContents::TextResourceContents { text, .. } if text == "plain\n"
    ));
    let uris: Vec<String> = client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(uris, ["skill://k/s/SKILL.md", "skill://k/s/notes.txt"]);
}

/// A FIFO beside a `SKILL.md` (a cloned repository can ship one) never
/// blocks `read_skill_file` or `resources/read`: the server opens it as every
/// reader does and says what it is.
#[cfg(unix)]
#[tokio::test]
async fn a_fifo_beside_a_skill_is_said_not_read() {
    use rmcp::model::ReadResourceRequestParams;

    let root = tempfile::tempdir().unwrap();
    let skill = root.path().join("k/skills/s");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: s\ndescription: A skill.\n---\nBody.\n",
    )
    .unwrap();
    let fifo = skill.join("pipe.txt");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let catalog = Catalog::builder()
        .provider(skillkit::Local::new(root.path().join("k")))
        .build();
    let client = connect(McpServer::new(catalog), ()).await;
    let guard = Duration::from_secs(30); // a failure guard, not a timing claim
    let tool = tokio::time::timeout(
        guard,
        call(
            &client,
            "read_skill_file",
            json!({"name": "k:s", "path": "pipe.txt"}),
        ),
    )
    .await
    .expect("read_skill_file blocked on a FIFO");
    assert_eq!(tool.is_error, Some(true), "{tool:?}");
    assert!(text(&tool).contains("FIFO"), "{}", text(&tool));
    let resource = tokio::time::timeout(
        guard,
        client.read_resource(ReadResourceRequestParams::new("skill://k/s/pipe.txt")),
    )
    .await
    .expect("resources/read blocked on a FIFO");
    let Err(ServiceError::McpError(e)) = &resource else {
        panic!("a FIFO was served: {resource:?}");
    };
    assert!(e.message.contains("FIFO"), "{}", e.message);
}

/// `server` on [`JsonLines`](skillkit::mcp::JsonLines) over a pipe, past the
/// handshake: a function sending one raw line and reading the answer.
struct Lines {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Lines {
    async fn open(server: McpServer) -> Lines {
        use tokio::io::AsyncBufReadExt;
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(theirs);
        tokio::spawn(async move {
            if let Ok(running) = server
                .serve(skillkit::mcp::JsonLines::new(read, write))
                .await
            {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(ours);
        let mut lines = Lines {
            write,
            read: tokio::io::BufReader::new(read).lines(),
        };
        assert_eq!(lines.ask(&initialize()).await["id"], 0);
        lines
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        lines
    }

    async fn send(&mut self, message: &Value) {
        use tokio::io::AsyncWriteExt;
        let line = format!("{message}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// Sends `request` and reads lines up to the answer of its id.
    async fn ask(&mut self, request: &Value) -> Value {
        self.send(request).await;
        loop {
            let line = self.read.next_line().await.unwrap().expect("an answer");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer.get("id") == request.get("id") {
                return answer;
            }
        }
    }
}

#[tokio::test]
async fn wrong_params_of_a_known_method_are_invalid_params_on_stdio() {
    let mut lines = Lines::open(five_skills()).await;
    for (request, says) in wrong_params() {
        let answer = lines.ask(&request).await;
        assert_invalid_params(&request, &answer, says);
    }
    // An unknown method is still not found, and a cursor the server gave
    // still pages.
    let unknown = lines
        .ask(&json!({"jsonrpc": "2.0", "id": 20, "method": "tools/frobnicate"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let first = lines
        .ask(&json!({"jsonrpc": "2.0", "id": 21, "method": "prompts/list"}))
        .await;
    let cursor = first["result"]["nextCursor"].clone();
    assert!(cursor.is_string(), "{first}");
    let second = lines
        .ask(&json!({"jsonrpc": "2.0", "id": 22, "method": "prompts/list", "params": {"cursor": cursor}}))
        .await;
    assert_eq!(second["result"]["prompts"][0]["name"], "kit_s2", "{second}");
}

// ---- One path runs a tool, for the agent and the server ----

/// A tool that never finishes.
struct Stuck;
#[skillkit::async_trait]
impl Tool for Stuck {
    async fn execute(&self, _: ToolExecution) -> ToolOutcome {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        ToolOutcome::ok("never")
    }
}

/// A tool that asks before it goes on.
struct Asks;
#[skillkit::async_trait]
impl Tool for Asks {
    async fn execute(&self, _: ToolExecution) -> ToolOutcome {
        ToolOutcome::pending(json!({"question": "deploy?"}))
    }
}

#[tokio::test]
async fn the_server_runs_tools_by_the_agents_path() {
    use skillkit::agent::{AgentOptions, start_agent};
    use skillkit::llm::{Registry, Scripted};

    let memory = Memory::new();
    memory.put(
        Skill::new("notes:guide", "How to take notes.").with_body("Take notes on $ARGUMENTS."),
    );
    memory.put_tool(Skill::new("ops:stuck", "Never ends."), Stuck);
    memory.put_tool(Skill::new("ops:deploy", "Deploys."), Asks);
    let catalog = Catalog::builder().provider(memory).build();
    let server = McpServer::new(catalog.clone()).tool_timeout(Duration::from_millis(100));
    let client = connect(server, ()).await;

    // The agent, on the same catalog, activates the same skill.
    let model = Scripted::new()
        .tool_call(
            "c1",
            "activate_skill",
            json!({"name": "notes:guide", "arguments": "rust"}),
        )
        .text("done");
    let options = AgentOptions::new(catalog)
        .registry(Registry::new().with("scripted", model.clone()))
        .model("scripted://m");
    let mut agent = start_agent(skillkit::AgentDefinition::new("a", "d"), options).unwrap();
    let mut agent_result = String::new();
    agent
        .ask("notes please", |event| {
            if let skillkit::agent::EventKind::ToolResult { content, .. } = &event.kind {
                agent_result = content.clone();
            }
        })
        .await
        .unwrap();

    // `activate_skill` is defined once: one description, one answer.
    let tools = client.list_all_tools().await.unwrap();
    let served = tools.iter().find(|t| t.name == "activate_skill").unwrap();
    let offered = model.requests()[0]
        .tools
        .iter()
        .find(|t| t.name == "activate_skill")
        .cloned()
        .unwrap();
    assert_eq!(
        served.description.as_deref(),
        Some(offered.description.as_str())
    );
    let activated = call(
        &client,
        "activate_skill",
        json!({"name": "notes:guide", "arguments": "rust"}),
    )
    .await;
    assert_eq!(text(&activated), agent_result);
    assert!(
        agent_result.contains("Take notes on rust."),
        "{agent_result}"
    );

    // The agent's input check, timeout and pending rule hold on the server.
    let stuck = call(&client, "ops_stuck", json!({})).await;
    assert_eq!(stuck.is_error, Some(true));
    assert!(
        text(&stuck).contains("`ops:stuck` did not finish within 100ms (the tool timeout)"),
        "{}",
        text(&stuck)
    );
    let pending = call(&client, "ops_deploy", json!({})).await;
    assert_eq!(pending.is_error, Some(true));
    assert!(
        text(&pending).contains("cannot ask over MCP"),
        "{}",
        text(&pending)
    );
    let malformed = call(&client, "ops_deploy", json!({"arguments": 5})).await;
    assert!(
        text(&malformed).contains(
            "invalid input for `ops_deploy`: property `arguments` must be of type string"
        ),
        "{}",
        text(&malformed)
    );
}

/// A provider of one kit, built once, that counts how often the catalog
/// asks it for a skill's tool.
struct Counting {
    kit: skillkit::Kit,
    asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

#[skillkit::async_trait]
impl skillkit::KitProvider for Counting {
    async fn list_kits(&self) -> Result<Vec<skillkit::Kit>, skillkit::ProviderError> {
        Ok(vec![self.kit.clone()])
    }
    fn tool(self: std::sync::Arc<Self>, _: &Skill) -> Option<std::sync::Arc<dyn Tool>> {
        self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Some(std::sync::Arc::new(Echo))
    }
}

#[tokio::test]
async fn the_server_builds_its_tools_once_per_change_of_the_catalog() {
    use std::sync::atomic::Ordering;
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counting = Counting {
        kit: skillkit::Kit::new("util")
            .with_skill(Skill::new("util:a", "A."))
            .with_skill(Skill::new("util:b", "B.")),
        asked: asked.clone(),
    };
    let memory = Memory::new();
    let catalog = Catalog::builder()
        .provider(counting)
        .provider(memory.clone())
        .build();
    // Two connections share the server's tool set.
    let server = McpServer::new(catalog).watch(None);
    let first = connect(server.clone(), ()).await;
    let second = connect(server, ()).await;

    for client in [&first, &second] {
        assert_eq!(client.list_all_tools().await.unwrap().len(), 5);
        assert_eq!(
            text(&call(client, "util_a", json!({"arguments": "x"})).await),
            "util:a got x"
        );
    }
    // Each skill's tool was asked for once: one build for four requests.
    assert_eq!(asked.load(Ordering::SeqCst), 2);

    // A change of the catalog builds the set again, once.
    memory.put(Skill::new("notes:new", "New."));
    for client in [&first, &second] {
        assert_eq!(
            text(&call(client, "util_b", json!({})).await),
            "util:b got "
        );
    }
    assert_eq!(asked.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn prompts_are_for_people_and_tools_for_the_model() {
    use rmcp::model::GetPromptRequestParams;
    let memory = Memory::new();
    let mut deploy = Skill::new("ops:deploy", "Deploy.").with_body("Deploy $ARGUMENTS.");
    deploy
        .extra_mut()
        .insert("disable-model-invocation".into(), true.into());
    let mut context = Skill::new("ops:legacy", "The legacy system.").with_body("Invoices.");
    context
        .extra_mut()
        .insert("user-invocable".into(), false.into());
    let mut fix = Skill::new("ops:fix-issue", "Fix an issue.").with_body("Fix $ARGUMENTS.");
    fix.extra_mut()
        .insert("argument-hint".into(), json!(["issue-number"]));
    memory.put(deploy);
    memory.put(context);
    memory.put(fix);
    let client = connect(
        McpServer::new(Catalog::builder().provider(memory).build()),
        (),
    )
    .await;

    // Prompts: what a person may run, with the argument hint.
    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    // Named safely for slash-command menus, titled by the skill's full name.
    assert_eq!(names, ["ops_deploy", "ops_fix-issue"]);
    assert_eq!(prompts[0].title.as_deref(), Some("ops:deploy"));
    let hint = prompts[1].arguments.as_ref().unwrap()[0]
        .description
        .clone();
    assert!(hint.unwrap().contains("[issue-number]"));
    let deployed = client
        .get_prompt({
            let mut request = GetPromptRequestParams::new("ops:deploy");
            request.arguments = json!({"arguments": "v2"}).as_object().cloned();
            request
        })
        .await
        .unwrap();
    assert!(format!("{:?}", deployed.messages).contains("Deploy v2."));
    // The safe name is taken as the full name is.
    let safe = client
        .get_prompt({
            let mut request = GetPromptRequestParams::new("ops_deploy");
            request.arguments = json!({"arguments": "v3"}).as_object().cloned();
            request
        })
        .await
        .unwrap();
    assert!(format!("{:?}", safe.messages).contains("Deploy v3."));
    assert!(
        client
            .get_prompt(GetPromptRequestParams::new("ops:legacy"))
            .await
            .is_err()
    );

    // Tools: what the model may use; the deploy skill is not among them.
    let listed = text(&call(&client, "list_skills", json!({})).await).to_owned();
    assert!(!listed.contains("ops:deploy"), "{listed}");
    assert!(listed.contains("ops:legacy"), "{listed}");
    let refused = call(&client, "activate_skill", json!({"name": "ops:deploy"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("run by people only"),
        "{}",
        text(&refused)
    );
    let used = call(&client, "activate_skill", json!({"name": "ops:legacy"})).await;
    assert!(text(&used).contains("Invoices."));
}

#[tokio::test]
async fn list_skills_searches_with_a_query_and_a_limit() {
    let memory = Memory::new();
    for n in 0..40 {
        memory.put(Skill::new(
            format!("gen:task-{n}"),
            format!("Carries out generated task {n}."),
        ));
    }
    memory.put_tool(
        Skill::new("pdf:extract-tables", "Extract tables from PDF files."),
        Echo,
    );
    let mut hidden = Skill::new("pdf:hidden", "Also PDF files.");
    hidden
        .extra_mut()
        .insert("disable-model-invocation".into(), true.into());
    memory.put(hidden);
    let server = McpServer::new(Catalog::builder().provider(memory).build());
    let client = connect(server, ()).await;

    let tools = client.list_all_tools().await.unwrap();
    let list = tools.iter().find(|t| t.name == "list_skills").unwrap();
    assert_eq!(list.input_schema["properties"]["query"]["type"], "string");
    assert_eq!(list.input_schema["properties"]["limit"]["type"], "integer");

    let found = call(
        &client,
        "list_skills",
        json!({"query": "pdf:extract-tables", "limit": 3}),
    )
    .await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    let hits: Value = serde_json::from_str(text(&found)).unwrap();
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 3, "{hits:?}");
    assert_eq!(hits[0]["name"], "pdf:extract-tables");
    assert_eq!(hits[0]["description"], "Extract tables from PDF files.");
    assert_eq!(hits[0]["tool"], "pdf_extract-tables");
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {scores:?}"
    );
    // Only people run `pdf:hidden`: never a hit.
    assert!(hits.iter().all(|h| h["name"] != "pdf:hidden"), "{hits:?}");

    // A limit alone bounds the whole list; no query lists every skill, as before.
    let some: Value = serde_json::from_str(text(
        &call(&client, "list_skills", json!({"limit": 5})).await,
    ))
    .unwrap();
    assert_eq!(some.as_array().unwrap().len(), 5);
    let all: Value =
        serde_json::from_str(text(&call(&client, "list_skills", json!({})).await)).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 41);
    assert!(all[0].get("score").is_none());
}

/// A provider that counts how often the catalog lists it.
struct Listed {
    kit: skillkit::Kit,
    listed: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

#[skillkit::async_trait]
impl skillkit::KitProvider for Listed {
    async fn list_kits(&self) -> Result<Vec<skillkit::Kit>, skillkit::ProviderError> {
        self.listed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(vec![self.kit.clone()])
    }
}

/// The pages of `skills/list` and `resources/list` after the first are read
/// from the first page's snapshot: paging through 200 skills ten at a time
/// is one catalog query per listing, not one per page; and a listing is
/// consistent even when the catalog changes while it is paged.
#[tokio::test]
async fn the_pages_of_a_long_listing_come_from_one_snapshot() {
    use std::sync::atomic::Ordering;
    let listed = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let dir = tempfile::tempdir().unwrap();
    let mut kit = skillkit::Kit::new("big");
    for i in 0..200 {
        let folder = dir.path().join(format!("s{i:03}"));
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join("SKILL.md");
        std::fs::write(
            &file,
            format!("---\nname: s{i:03}\ndescription: d\n---\nBody.\n"),
        )
        .unwrap();
        kit.insert_skill(Skill::new(format!("big:s{i:03}"), "d").with_location(file));
    }
    let provider = Listed {
        kit,
        listed: listed.clone(),
    };
    let server = McpServer::new(Catalog::builder().provider(provider).build())
        .watch(None)
        .page_size(10);
    let client = connect(server, ()).await;
    // The handshake's own query (after `initialized`, in the background)
    // may land in the first count.
    let before = listed.load(Ordering::SeqCst);
    let skills = client.list_all_skills().await.unwrap();
    assert_eq!(skills.len(), 200);
    let queries = listed.load(Ordering::SeqCst) - before;
    assert!(queries <= 2, "{queries} catalog queries for 20 pages");
    let before = listed.load(Ordering::SeqCst);
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 200);
    assert_eq!(listed.load(Ordering::SeqCst) - before, 1, "20 pages");
}
