//! What the `skillkit serve` tests share: a kit in a temp dir, the real
//! binary served over stdio or HTTP, rmcp's client and its notifications.
#![allow(dead_code)] // each test file uses some of it

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode};
use rmcp::service::{NotificationContext, RoleClient, RunningService, Service};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ServiceError, ServiceExt};
use serde_json::Value;

pub type Client = RunningService<RoleClient, ()>;

pub fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A kit `notes` with two skills, files beside one of them, a file outside
/// the skills and a symlink to it from inside one.
pub fn kit() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    let search = notes.join("skills/search");
    write(
        &search.join("SKILL.md"),
        "---\nname: search\ndescription: Search the notes.\n---\nSearch the notes for $ARGUMENTS.\n",
    );
    write(&search.join("scripts/find.sh"), "echo find\n");
    write(&search.join("data.bin"), [0x00, 0xff, 0x10]);
    write(
        &notes.join("skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: Tidy the notes.\n---\nTidy up.\n",
    );
    write(&notes.join("secret.txt"), "do not serve me");
    #[cfg(unix)]
    std::os::unix::fs::symlink(notes.join("secret.txt"), search.join("escape.txt")).unwrap();
    dir
}

pub async fn serve(args: &[&Path]) -> Client {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillkit")).configure(|c| {
        c.arg("serve").args(args);
    });
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .expect("skillkit serve answers the handshake")
}

pub async fn call<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let mut request = CallToolRequestParams::new(tool.to_owned());
    request.arguments = arguments.as_object().cloned();
    client.call_tool(request).await.expect("a tool result")
}

pub fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("text content").text
}

/// The text of a tool result that is an error.
pub fn failure(result: &CallToolResult) -> &str {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    text(result)
}

/// The message of a protocol error.
pub fn protocol_error<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> (ErrorCode, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code, e.message.to_string()),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

/// A client that forwards each list-changed notification it receives.
#[derive(Clone)]
pub struct Notified(pub tokio::sync::mpsc::UnboundedSender<&'static str>);

impl rmcp::ClientHandler for Notified {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send("tools");
    }
    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send("prompts");
    }
    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send("resources");
    }
}

pub type Notifications = tokio::sync::mpsc::UnboundedReceiver<&'static str>;

pub fn notified() -> (Notified, Notifications) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (Notified(tx), rx)
}

/// Waits until each of `lists` was notified (a hang guard, not a timing
/// assertion).
pub async fn expect(notifications: &mut Notifications, lists: &[&str]) {
    let mut missing: BTreeSet<&str> = lists.iter().copied().collect();
    while !missing.is_empty() {
        let got = tokio::time::timeout(Duration::from_secs(120), notifications.recv())
            .await
            .unwrap_or_else(|_| panic!("no notification of {missing:?}"))
            .expect("the client is connected");
        missing.remove(got);
    }
}

/// Edits the kit on disk and waits for each notification: a skill added,
/// then a description edited.
pub async fn edits_are_notified(notes: &Path, notifications: &mut Notifications) {
    write(
        &notes.join("skills/plan/SKILL.md"),
        "---\nname: plan\ndescription: Plan the week.\n---\nPlan.\n",
    );
    expect(notifications, &["prompts", "resources"]).await;
    write(
        &notes.join("skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: Tidy the notes, edited.\n---\nTidy up.\n",
    );
    expect(notifications, &["prompts", "resources"]).await;
}

/// `skillkit serve --http 0` (any free port on 127.0.0.1), killed when dropped.
pub struct HttpServe {
    child: std::process::Child,
    pub url: String,
}

impl HttpServe {
    pub fn start(args: &[&std::ffi::OsStr], token: Option<&str>) -> HttpServe {
        use std::io::{BufRead, BufReader};
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"));
        command
            .arg("serve")
            .args(args)
            .args(["--http", "0"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .env_remove("SKILLKIT_MCP_TOKEN");
        if let Some(token) = token {
            command.env("SKILLKIT_MCP_TOKEN", token);
        }
        let mut child = command.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("skillkit serve: MCP on ")
            .unwrap_or_else(|| panic!("no URL on stderr: {line:?}"))
            .to_owned();
        // The rest of stderr, kept so the token can be looked for in it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        HttpServe { child, url }
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
