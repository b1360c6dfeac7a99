//! `skillkit serve`: rmcp's client over stdio against the real binary, on
//! kit folders in temp dirs. Every bad request is answered with an error
//! saying what to do, and the server answers the next request.

mod serve_support;

use std::path::Path;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ErrorCode, GetPromptRequestParams, PaginatedRequestParams,
    ReadResourceRequestParams, ResourceContents,
};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use serve_support::*;

#[tokio::test]
async fn tools_list_activate_read_and_refuse_bad_calls() {
    let dir = kit();
    let notes = dir.path().join("notes");
    let client = serve(&[&notes]).await;

    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "skillkit");
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(tools, ["activate_skill", "list_skills", "read_skill_file"]);

    let listed: Value =
        serde_json::from_str(text(&call(&client, "list_skills", json!({})).await)).unwrap();
    assert_eq!(
        listed,
        json!([
            {"name": "notes:search", "description": "Search the notes."},
            {"name": "notes:tidy", "description": "Tidy the notes."}
        ])
    );

    let activated = call(
        &client,
        "activate_skill",
        json!({"name": "notes:search", "arguments": "rust"}),
    )
    .await;
    assert_eq!(activated.is_error, Some(false));
    let body = text(&activated);
    assert!(
        body.starts_with("<skill_content name=\"notes:search\">\nSearch the notes for rust.\n"),
        "{body}"
    );
    assert!(body.contains("- scripts/find.sh"), "{body}");
    assert!(body.ends_with("</skill_content>"), "{body}");

    let file = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": "scripts/find.sh"}),
    )
    .await;
    assert_eq!(text(&file), "echo find\n");

    // Bad calls: tool results with isError, saying what to do.
    let unknown = call(&client, "activate_skill", json!({"name": "notes:nope"})).await;
    assert!(failure(&unknown).contains("there is no skill `notes:nope`; call list_skills"));
    let missing = call(&client, "activate_skill", json!({})).await;
    // The agent's input check: what is wrong, and the schema to fit.
    assert!(failure(&missing).contains("lacks the required property `name`"));
    assert!(failure(&missing).contains("fits its schema"));
    let malformed = call(&client, "activate_skill", json!({"name": 7})).await;
    assert!(failure(&malformed).contains("`name` must be of type string, not a number"));
    let malformed = call(
        &client,
        "activate_skill",
        json!({"name": "notes:search", "arguments": ["a"]}),
    )
    .await;
    assert!(failure(&malformed).contains("`arguments` must be of type string, not an array"));
    let no_path = call(&client, "read_skill_file", json!({"name": "notes:search"})).await;
    assert!(failure(&no_path).contains("lacks the required property `path`"));
    let outside = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": "../../secret.txt"}),
    )
    .await;
    assert!(failure(&outside).contains("leads outside the skill's folder"));
    let secret = notes.join("secret.txt");
    let absolute = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": secret}),
    )
    .await;
    assert!(failure(&absolute).contains("is absolute"));
    #[cfg(unix)]
    {
        let link = call(
            &client,
            "read_skill_file",
            json!({"name": "notes:search", "path": "escape.txt"}),
        )
        .await;
        assert!(failure(&link).contains("leads outside the skill's folder"));
    }
    let binary = call(
        &client,
        "read_skill_file",
        json!({"name": "notes:search", "path": "data.bin"}),
    )
    .await;
    assert!(failure(&binary).contains("read it as the resource `skill://notes/search/data.bin`"));
    for result in [&outside, &absolute] {
        assert!(!text(result).contains("do not serve me"));
    }

    // An unknown tool is a protocol error.
    let (code, message) =
        protocol_error(client.call_tool(CallToolRequestParams::new("rm_rf")).await);
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert!(
        message.contains("there is no tool `rm_rf`; tools/list"),
        "{message}"
    );

    // Still serving, and fresh: a skill written now is listed now.
    write(
        &notes.join("skills/plan/SKILL.md"),
        "---\nname: plan\ndescription: Plan the week.\n---\nPlan.\n",
    );
    let listed = call(&client, "list_skills", json!({})).await;
    assert!(
        text(&listed).contains("\"notes:plan\""),
        "{}",
        text(&listed)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn one_prompt_per_skill_rendered_with_its_arguments() {
    let dir = kit();
    let client = serve(&[&dir.path().join("notes")]).await;

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["notes_search", "notes_tidy"]);
    assert_eq!(prompts[0].description.as_deref(), Some("Search the notes."));
    let arguments = prompts[0].arguments.as_ref().unwrap();
    assert_eq!(arguments.len(), 1);
    assert_eq!(arguments[0].name, "arguments");

    let mut request = GetPromptRequestParams::new("notes:search");
    request.arguments = json!({"arguments": "rust"}).as_object().cloned();
    let prompt = client.get_prompt(request).await.unwrap();
    let message = serde_json::to_value(&prompt.messages[0]).unwrap();
    assert_eq!(message["role"], "user");
    assert_eq!(message["content"]["text"], "Search the notes for rust.\n");

    let (_, message) = protocol_error(
        client
            .get_prompt(GetPromptRequestParams::new("notes:nope"))
            .await,
    );
    assert!(
        message.contains("there is no prompt `notes:nope`; prompts/list"),
        "{message}"
    );
    let mut bad = GetPromptRequestParams::new("notes:search");
    bad.arguments = json!({"arguments": 3}).as_object().cloned();
    let (code, message) = protocol_error(client.get_prompt(bad).await);
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert!(message.contains("must be a string"), "{message}");
    let mut bad = GetPromptRequestParams::new("notes:search");
    bad.arguments = json!({"query": "x"}).as_object().cloned();
    let (_, message) = protocol_error(client.get_prompt(bad).await);
    assert!(
        message.contains("takes one argument, `arguments`"),
        "{message}"
    );

    // Still serving.
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("notes:tidy"))
        .await
        .unwrap();
    assert_eq!(prompt.messages.len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn skill_files_are_resources_listed_by_page() {
    let dir = kit();
    let notes = dir.path().join("notes");
    // A second kit of 120 skills: more resources than one page holds.
    let many = dir.path().join("many");
    for i in 0..120 {
        write(
            &many.join(format!("skills/s{i:03}/SKILL.md")),
            format!("---\nname: s{i:03}\ndescription: Skill {i}.\n---\nBody {i}.\n"),
        );
    }
    let client = serve(&[&notes, &many]).await;

    let first = client.list_resources(None).await.unwrap();
    assert_eq!(first.resources.len(), 100);
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = client
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.next_cursor, None);
    let uris: Vec<String> = first
        .resources
        .iter()
        .chain(&second.resources)
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(uris.len(), 120 + 4, "{uris:?}");
    let notes_uris: Vec<&str> = uris
        .iter()
        .map(String::as_str)
        .filter(|u| u.starts_with("skill://notes/"))
        .collect();
    // Symlinks are not listed (and the one leading outside is not read).
    assert_eq!(
        notes_uris,
        [
            "skill://notes/search/SKILL.md",
            "skill://notes/search/data.bin",
            "skill://notes/search/scripts/find.sh",
            "skill://notes/tidy/SKILL.md",
        ]
    );
    let all = client.list_all_resources().await.unwrap();
    assert_eq!(all.len(), 124);

    let read = |uri: &str| client.read_resource(ReadResourceRequestParams::new(uri));
    let skill_md = read("skill://notes/search/SKILL.md").await.unwrap();
    let ResourceContents::TextResourceContents {
        text, mime_type, ..
    } = &skill_md.contents[0]
    else {
        panic!("{skill_md:?}");
    };
    assert_eq!(
        text,
        &std::fs::read_to_string(notes.join("skills/search/SKILL.md")).unwrap()
    );
    assert_eq!(mime_type.as_deref(), Some("text/markdown"));
    let binary = read("skill://notes/search/data.bin").await.unwrap();
    let ResourceContents::BlobResourceContents { blob, .. } = &binary.contents[0] else {
        panic!("{binary:?}");
    };
    assert_eq!(blob, "AP8Q");

    for (uri, says) in [
        ("skill://notes/nope/SKILL.md", "there is no resource"),
        (
            "skill://notes/search/..%2F..%2Fsecret.txt",
            "leads outside the skill's folder",
        ),
        (
            "skill://notes/search/escape.txt",
            "leads outside the skill's folder",
        ),
        ("file:///etc/passwd", "is not a skill:// URI"),
    ] {
        #[cfg(not(unix))]
        if uri.ends_with("escape.txt") {
            continue;
        }
        let (_, message) = protocol_error(read(uri).await);
        assert!(message.contains(says), "{uri}: {message}");
    }
    let (_, message) = protocol_error(
        client
            .list_resources(Some(
                PaginatedRequestParams::default().with_cursor(Some(String::new())),
            ))
            .await,
    );
    assert!(
        message.contains("the cursor is not one this server gave"),
        "{message}"
    );

    // Still serving.
    assert!(read("skill://many/s007/SKILL.md").await.is_ok());
    client.cancel().await.unwrap();
}

/// A line that is not JSON gets `-32700 Parse error`, JSON that is not a
/// JSON-RPC message `-32600 Invalid Request` (id null, or the request's id
/// when it has one), and the next request is answered.
#[test]
fn a_malformed_message_gets_the_protocols_error_and_the_server_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let dir = kit();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .arg("serve")
        .arg(dir.path().join("notes"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answer = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    writeln!(stdin, "{initialize}").unwrap();
    assert_eq!(answer()["id"], 1);
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    for (line, code, id) in [
        ("this is not json", -32700, Value::Null),
        (
            "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": ",
            -32700,
            Value::Null,
        ),
        ("[1, 2, 3]", -32600, Value::Null),
        ("{\"jsonrpc\": \"2.0\", \"id\": 4}", -32600, json!(4)),
    ] {
        writeln!(stdin, "{line}").unwrap();
        let error = answer();
        assert_eq!(error["jsonrpc"], "2.0", "{error}");
        assert_eq!(error["id"], id, "{line}: {error}");
        assert_eq!(error["error"]["code"], code, "{line}: {error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("send one JSON-RPC 2.0 message"),
            "{message}"
        );
    }
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    )
    .unwrap();
    let listed = answer();
    assert_eq!(listed["id"], 3, "{listed}");
    assert_eq!(listed["result"]["tools"][0]["name"], "activate_skill");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[tokio::test]
async fn a_skill_edited_on_disk_is_notified_over_stdio() {
    let dir = kit();
    let notes = dir.path().join("notes");
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillkit")).configure(|c| {
        c.arg("serve")
            .arg(&notes)
            .args(["--watch-interval", "0.05"]);
    });
    let (handler, mut notifications) = notified();
    let client = handler
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap();
    let capabilities = &client.peer_info().unwrap().capabilities;
    assert_eq!(
        capabilities.tools.as_ref().unwrap().list_changed,
        Some(true)
    );
    assert_eq!(
        capabilities.prompts.as_ref().unwrap().list_changed,
        Some(true)
    );
    assert_eq!(
        capabilities.resources.as_ref().unwrap().list_changed,
        Some(true)
    );
    client.list_all_prompts().await.unwrap();
    // The client asks nothing more: the server's poll finds the edits.
    edits_are_notified(&notes, &mut notifications).await;
    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "notes_plan"));
    client.cancel().await.unwrap();
}

/// A prompt (`prompts/get`) is a skill as a person runs it: even where the
/// operator allows scripts, neither the skill's own `!`command`` nor one
/// smuggled in through the prompt's arguments runs; both stay text.
#[tokio::test]
async fn a_prompt_runs_no_command_even_where_scripts_are_allowed() {
    let dir = kit();
    let notes = dir.path().join("notes");
    let own = dir.path().join("OWN");
    let injected = dir.path().join("INJECTED");
    write(
        &notes.join("skills/dated/SKILL.md"),
        format!(
            "---\nname: dated\ndescription: Dated.\n---\nToday: !`touch {}`. For $ARGUMENTS.\n",
            own.display()
        ),
    );
    let client = serve(&[
        &notes,
        Path::new("--allow-scripts"),
        Path::new("--allow"),
        Path::new("run_skill_script"),
    ])
    .await;
    let mut request = GetPromptRequestParams::new("notes:dated");
    request.arguments = json!({"arguments": format!("x !`touch {}`", injected.display())})
        .as_object()
        .cloned();
    let prompt = client.get_prompt(request).await.unwrap();
    let message = serde_json::to_value(&prompt.messages[0]).unwrap();
    let text = message["content"]["text"].as_str().unwrap();
    assert!(text.contains("Today: !`touch"), "{text}");
    assert!(text.contains("For x !`touch"), "{text}");
    assert!(!own.exists(), "the skill's own command ran");
    assert!(!injected.exists(), "the smuggled command ran");
    client.cancel().await.unwrap();
}

/// `--allow-scripts` adds `run_skill_script` and turns on a skill's
/// `!`command`` lines, but over MCP there is no one to ask: nothing runs
/// until the operator allows it by name (`--allow run_skill_script`). Then
/// a script runs, the file's own commands run, and a command smuggled in
/// through the arguments never does. `activate_skill` claims to be
/// read-only only where it cannot run anything.
#[tokio::test]
async fn scripts_run_over_mcp_only_when_the_operator_allows_them() {
    let dir = kit();
    let notes = dir.path().join("notes");
    write(
        &notes.join("skills/dated/SKILL.md"),
        "---\nname: dated\ndescription: Dated.\n---\nToday: !`echo today-$((20+6))`. For $ARGUMENTS.\n",
    );
    let marker = dir.path().join("INJECTED");
    let injected = format!("hello !`touch {}; echo INJECTED`", marker.display());
    let read_only = |tools: &[rmcp::model::Tool], name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.annotations.as_ref())
            .and_then(|a| a.read_only_hint)
    };

    let plain = serve(&[&notes]).await;
    let missing = plain
        .call_tool({
            let mut request = CallToolRequestParams::new("run_skill_script");
            request.arguments = json!({"skill": "notes:search", "script": "scripts/find.sh"})
                .as_object()
                .cloned();
            request
        })
        .await;
    assert!(missing.is_err(), "{missing:?}");
    let tools = plain.list_all_tools().await.unwrap();
    assert_eq!(read_only(&tools, "activate_skill"), Some(true));
    let body =
        text(&call(&plain, "activate_skill", json!({"name": "notes:dated"})).await).to_owned();
    assert!(body.contains("Today: !`echo today-$((20+6))`."), "{body}");
    plain.cancel().await.unwrap();

    let offered = serve(&[&notes, Path::new("--allow-scripts")]).await;
    let tools = offered.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "activate_skill",
            "list_skills",
            "read_skill_file",
            "run_skill_script"
        ]
    );
    assert_eq!(read_only(&tools, "activate_skill"), None);
    assert_eq!(read_only(&tools, "run_skill_script"), None);
    let refused = call(
        &offered,
        "run_skill_script",
        json!({"skill": "notes:search", "script": "scripts/find.sh"}),
    )
    .await;
    assert!(
        failure(&refused).contains("--allow run_skill_script"),
        "{refused:?}"
    );
    let body = text(
        &call(
            &offered,
            "activate_skill",
            json!({"name": "notes:dated", "arguments": injected}),
        )
        .await,
    )
    .to_owned();
    assert!(body.contains("was not run"), "{body}");
    assert!(!body.contains("today-26"), "{body}");
    offered.cancel().await.unwrap();

    let client = serve(&[
        &notes,
        Path::new("--allow-scripts"),
        Path::new("--allow"),
        Path::new("run_skill_script"),
    ])
    .await;
    let ran = call(
        &client,
        "run_skill_script",
        json!({"skill": "notes:search", "script": "scripts/find.sh"}),
    )
    .await;
    assert_eq!(ran.is_error, Some(false), "{ran:?}");
    assert!(text(&ran).starts_with("exit code: 0\n"), "{}", text(&ran));
    assert!(
        text(&ran).contains("--- stdout ---\nfind\n"),
        "{}",
        text(&ran)
    );
    let body = text(
        &call(
            &client,
            "activate_skill",
            json!({"name": "notes:dated", "arguments": injected}),
        )
        .await,
    )
    .to_owned();
    assert!(body.contains("Today: today-26."), "{body}");
    assert!(body.contains(&format!("For {injected}.")), "{body}");
    assert!(!marker.exists(), "the command in the arguments ran");
    let escaped = call(
        &client,
        "run_skill_script",
        json!({"skill": "notes:search", "script": "escape.txt"}),
    )
    .await;
    assert!(failure(&escaped).contains("leads outside the skill's folder"));
}

/// A skill only people run (`disable-model-invocation: true`) is refused
/// by every tool a model calls: `activate_skill`, `read_skill_file` (its
/// `SKILL.md` is its instructions) and `run_skill_script`.
#[tokio::test]
async fn a_skill_only_people_run_is_refused_by_every_model_tool() {
    let dir = kit();
    let notes = dir.path().join("notes");
    write(
        &notes.join("skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploy.\ndisable-model-invocation: true\n---\nDeploy with the secret runbook.\n",
    );
    write(
        &notes.join("skills/deploy/scripts/go.sh"),
        "echo deployed\n",
    );
    let client = serve(&[
        &notes,
        Path::new("--allow-scripts"),
        Path::new("--allow"),
        Path::new("run_skill_script"),
    ])
    .await;
    for (tool, input) in [
        ("activate_skill", json!({"name": "notes:deploy"})),
        (
            "read_skill_file",
            json!({"name": "notes:deploy", "path": "SKILL.md"}),
        ),
        (
            "read_skill_file",
            json!({"name": "notes:deploy", "path": "scripts/go.sh"}),
        ),
        (
            "run_skill_script",
            json!({"skill": "notes:deploy", "script": "scripts/go.sh"}),
        ),
    ] {
        let refused = call(&client, tool, input).await;
        let said = failure(&refused);
        assert!(said.contains("run by people only"), "{tool}: {said}");
        assert!(
            !said.contains("secret runbook") && !said.contains("deployed"),
            "{said}"
        );
    }
    client.cancel().await.unwrap();
}

/// A file added or edited beside a skill (a reference, a script) is a
/// change of the resources, told like one, so clients do not keep stale
/// resources until they re-list.
#[tokio::test]
async fn a_file_beside_a_skill_added_or_edited_is_notified() {
    let dir = kit();
    let notes = dir.path().join("notes");
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillkit")).configure(|c| {
        c.arg("serve")
            .arg(&notes)
            .args(["--watch-interval", "0.05"]);
    });
    let (handler, mut notifications) = notified();
    let client = handler
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap();
    client.list_all_resources().await.unwrap();
    write(&notes.join("skills/search/reference.md"), "# Reference\n");
    expect(&mut notifications, &["resources"]).await;
    let listed = client.list_all_resources().await.unwrap();
    assert!(
        listed
            .iter()
            .any(|r| r.uri == "skill://notes/search/reference.md"),
        "{listed:?}"
    );
    // An edit of a file already listed: its bytes (and digest) changed.
    write(&notes.join("skills/search/scripts/find.sh"), "echo found\n");
    expect(&mut notifications, &["resources"]).await;
    client.cancel().await.unwrap();
}

/// A change in a watched folder is told as soon as the process's watch has
/// its event, not at the next poll: with a poll an hour apart, an added
/// skill and an edited file beside one are still told.
#[tokio::test]
async fn a_change_is_told_by_the_watch_not_the_poll() {
    let dir = kit();
    let notes = dir.path().join("notes");
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillkit")).configure(|c| {
        c.arg("serve")
            .arg(&notes)
            .args(["--watch-interval", "3600"]);
    });
    let (handler, mut notifications) = notified();
    let client = handler
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap();
    client.list_all_prompts().await.unwrap();
    // The watch is set up after the first queries; this one comes after it.
    client.list_all_prompts().await.unwrap();
    edits_are_notified(&notes, &mut notifications).await;
    write(&notes.join("skills/search/reference.md"), "# Reference\n");
    expect(&mut notifications, &["resources"]).await;
    client.cancel().await.unwrap();
}
