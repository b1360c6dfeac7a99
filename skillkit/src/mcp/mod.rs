//! Serving a [`Catalog`] over the Model Context Protocol (feature `mcp`), so
//! Claude Code, Cursor and any MCP client use its skills.
//!
//! [`McpServer`] is an [`rmcp`] server handler: serve it on stdio
//! ([`McpServer::serve_stdio`], or [`JsonLines`] on any pipe), on Streamable
//! HTTP ([`McpServer::serve_http`], or [`McpServer::router`] mounted in your
//! axum application), or on any rmcp transport. Every request asks the
//! catalog afresh, so a skill put, edited or imported is seen by the next one.
//! A client sees:
//!
//! * tools: `list_skills` (name and description of every skill),
//!   `activate_skill {name, arguments}` (the rendered body, exactly as the
//!   agent runtime's `activate_skill` returns it), `read_skill_file {name,
//!   path}` (a file beside the `SKILL.md`; absolute paths, paths leading
//!   outside the skill's folder, through `..` or a symlink, and hidden files,
//!   also reached through a symlink, are refused: the path is checked once
//!   resolved, as for `resources/read`), and each executable skill (one whose provider binds a
//!   [`Tool`](crate::Tool), as embedded kits do) as a tool of its own, under a
//!   wire-safe name (`files:read` → `files_read`). Every call runs by the
//!   agent runtime's path: its input checked against the tool's schema, the
//!   tool stopped after [`McpServer::tool_timeout`], a tool that asks for a
//!   decision answered with an error result (the server cannot ask back);
//!   `list_skills` and `read_skill_file` are annotated `readOnlyHint: true`,
//!   as `activate_skill` is unless scripts are enabled (then an activation
//!   runs the skill's `` !`command` ``s); `list_skills`
//!   has an `outputSchema` and returns `structuredContent`;
//! * prompts: one per skill, named safely for slash-command menus (the full
//!   name under the agent's wire-name rule, `files:read` → `files_read`,
//!   reversible; titled by the full name), with one `arguments` argument;
//!   `prompts/get` (by that name or the full name) returns the body rendered
//!   with them;
//! * resources: each skill's `SKILL.md` as `skill://<kit>/<skill>/SKILL.md`
//!   and the files beside it as `skill://<kit>/<skill>/<path>`;
//! * MCP's skills extension (`io.modelcontextprotocol/skills`, with
//!   `directoryRead`): `skills/list`, `skills/get` (each skill's frontmatter
//!   as written and a manifest of its files with `sha256` digests, computed
//!   once per file version; `"dynamic"` for a skill without a file) and
//!   `resources/directory/read` (see the `skills` module's docs);
//! * change notifications: `notifications/tools/list_changed`,
//!   `prompts/list_changed` and `resources/list_changed` (advertised with
//!   `listChanged: true`), sent to every connected client, and on every
//!   `subscriptions/listen` stream (revision 2026-07-28) that asked for
//!   them, when a query (a request, or the poll every
//!   [`DEFAULT_WATCH_INTERVAL`] while a client is connected, see
//!   [`McpServer::watch`]) finds that list changed.
//!
//! Revisions: 2024-11-05 to 2025-11-25 through `initialize` (sessions), and
//! 2026-07-28 through `server/discover`, served completely
//! (`subscriptions/listen`; every cacheable result carries `ttlMs: 0` and
//! `cacheScope: "private"`, as each request reads the catalog afresh).
//!
//! Lists are paginated ([`DEFAULT_PAGE_SIZE`] items a page). A tool call that
//! cannot be carried out (an unknown skill, a missing or malformed argument, a
//! path leading outside the skill) is a tool result with `isError`, saying what
//! to do; an unknown tool, prompt or resource, a malformed prompt argument,
//! params that do not fit their method (`tools/call` whose `arguments` is not
//! an object, `prompts/get` without `name`, `resources/read` without `uri`) or
//! a cursor this server did not give is `-32602 Invalid params` saying the
//! same; a method the server does not serve is `-32601 Method not found`; a
//! message that is not JSON, or not JSON-RPC, gets `-32700 Parse error` or
//! `-32600 Invalid Request` (id null) on both transports. The server keeps
//! serving either way.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use skillkit::mcp::McpServer;
//! use skillkit::mcp::rmcp::{ServiceExt, model::CallToolRequestParams};
//! use skillkit::{Catalog, Memory, Skill};
//!
//! let memory = Memory::new();
//! memory.put(Skill::new("style:haiku", "Write a haiku.").with_body("A haiku about $ARGUMENTS."));
//! let server = McpServer::new(Catalog::builder().provider(memory).build());
//!
//! // Any rmcp transport; here an in-process pipe to rmcp's client.
//! let (server_end, client_end) = tokio::io::duplex(64 * 1024);
//! tokio::spawn(async move {
//!     if let Ok(running) = server.serve(server_end).await {
//!         let _ = running.waiting().await;
//!     }
//! });
//! let client = ().serve(client_end).await.unwrap();
//!
//! let mut call = CallToolRequestParams::new("activate_skill");
//! call.arguments = serde_json::json!({"name": "style:haiku", "arguments": "rust"}).as_object().cloned();
//! let result = client.call_tool(call).await.unwrap();
//! let text = &result.content[0].as_text().unwrap().text;
//! assert!(text.contains("A haiku about rust."));
//! # });
//! ```

mod answer;
mod changes;
mod digests;
mod direct;
mod files;
mod handler;
mod http;
mod jsonrpc;
mod origin_header;
mod pages;
mod params;
mod prompts;
mod resources;
mod skills;
mod stdio;
mod tools;

/// The web framework of [`McpServer::router`], re-exported so an
/// application mounts the router with the same version.
pub use axum;
pub use changes::DEFAULT_WATCH_INTERVAL;
pub use http::{DEFAULT_MAX_REQUEST_BYTES, HTTP_PATH, HttpOptions};
pub use pages::DEFAULT_PAGE_SIZE;
/// The official Rust MCP SDK this module is built on, re-exported so a server
/// is started without a dependency of your own.
pub use rmcp;
pub use stdio::{JsonLines, MAX_LINE_BYTES};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::ServerInitializeError;
use rmcp::{Peer, RoleServer, ServiceExt};

use crate::catalog::{Catalog, Snapshot};
use crate::dispatch::DEFAULT_TOOL_TIMEOUT;
use crate::dispatch::script::{ScriptOptions, Scripts};
use crate::dispatch::toolset::Cache as ToolCache;
use changes::Changes;
use digests::Digests;

/// An MCP server over a [`Catalog`]: tools, prompts and resources made from
/// its skills, fresh on every request, and change notifications (see the
/// [module](self)). Clones share the catalog and the change watch; each
/// serves one connection.
///
/// ```
/// use skillkit::mcp::McpServer;
/// let server = McpServer::new(skillkit::Catalog::builder().build()).page_size(20);
/// assert_eq!(server.catalog().provider_names().len(), 0);
/// ```
#[derive(Debug)]
pub struct McpServer {
    catalog: Catalog,
    page_size: usize,
    changes: Arc<Changes>,
    /// The tools of the last query's catalog, shared by every connection.
    tools: Arc<ToolCache>,
    tool_timeout: Duration,
    /// `run_skill_script`, when enabled: one working folder for the server.
    scripts: Option<Arc<Scripts>>,
    /// Whether this connection's client is told of changes yet.
    joined: AtomicBool,
    /// The digests of the skills extension's manifests, per file version.
    digests: Arc<Digests>,
    /// The skills sorted by URI, for `skills/list`, per catalog change.
    by_uri: Arc<skills::Sorted>,
    /// The snapshots of listings being paged through.
    held: Arc<pages::Held>,
    /// What the lists showed when this connection's last
    /// `subscriptions/listen` was accepted (see `listen`).
    listen_since: Mutex<Option<changes::Lists>>,
    /// The initialized sessions of the HTTP transport, whose requests are
    /// answered in the HTTP handler (see `direct`).
    http_sessions: Arc<direct::Sessions>,
}

impl Clone for McpServer {
    /// Another handle on the same server, for another connection.
    fn clone(&self) -> McpServer {
        McpServer {
            catalog: self.catalog.clone(),
            page_size: self.page_size,
            changes: Arc::clone(&self.changes),
            tools: Arc::clone(&self.tools),
            tool_timeout: self.tool_timeout,
            scripts: self.scripts.clone(),
            joined: AtomicBool::new(false),
            digests: Arc::clone(&self.digests),
            by_uri: Arc::clone(&self.by_uri),
            held: Arc::clone(&self.held),
            listen_since: Mutex::default(),
            http_sessions: Arc::clone(&self.http_sessions),
        }
    }
}

/// Why [`McpServer::serve_stdio`] stopped.
///
/// ```
/// let err = skillkit::mcp::ServeError::Task("the task panicked".into());
/// assert!(err.to_string().contains("the task panicked"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client did not complete MCP's handshake (it sent something else
    /// first, or closed the connection).
    #[error("the MCP client did not complete the handshake: {0}")]
    Handshake(#[source] Box<ServerInitializeError>),
    /// The task serving the connection failed.
    #[error("the MCP server stopped: {0}")]
    Task(String),
    /// The HTTP listener failed.
    #[error("the MCP server's HTTP listener failed: {0}")]
    Io(#[source] std::io::Error),
    /// An option is malformed (the message says how to write it).
    #[error("{0}")]
    Options(String),
    /// The HTTP listener is bound to an address other machines reach, and
    /// no bearer token is set: anyone who reaches it would be served.
    #[error(
        "refused to serve MCP on {addr} without a bearer token: that address is reachable from \
         other machines; set a token (HttpOptions::bearer_token), bind a loopback address \
         (127.0.0.1), or say that anyone who reaches it may use it \
         (HttpOptions::allow_unauthenticated)"
    )]
    NoToken {
        /// The address the listener is bound to.
        addr: std::net::SocketAddr,
    },
}

impl McpServer {
    /// A server over `catalog`.
    ///
    /// ```
    /// let server = skillkit::mcp::McpServer::new(skillkit::Catalog::builder().build());
    /// # let _ = server;
    /// ```
    pub fn new(catalog: Catalog) -> McpServer {
        let tools = Arc::<ToolCache>::default();
        McpServer {
            changes: Arc::new(Changes::new(
                catalog.clone(),
                Arc::clone(&tools),
                Some(DEFAULT_WATCH_INTERVAL),
                false,
            )),
            catalog,
            page_size: DEFAULT_PAGE_SIZE,
            tools,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            scripts: None,
            joined: AtomicBool::new(false),
            digests: Arc::default(),
            by_uri: Arc::default(),
            held: Arc::default(),
            listen_since: Mutex::default(),
            http_sessions: Arc::default(),
        }
    }

    /// Sets how often the catalog is queried for changes while a client is
    /// connected ([`DEFAULT_WATCH_INTERVAL`]); `None`: only requests find
    /// changes, so an idle client is not told of them.
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = skillkit::mcp::McpServer::new(skillkit::Catalog::builder().build())
    ///     .watch(Some(Duration::from_millis(500)));
    /// # let _ = server;
    /// ```
    pub fn watch(mut self, interval: Option<Duration>) -> McpServer {
        self.changes = Arc::new(Changes::new(
            self.catalog.clone(),
            Arc::clone(&self.tools),
            interval,
            self.scripts.is_some(),
        ));
        self
    }

    /// Offers `run_skill_script {skill, script, args, stdin}` too, running a
    /// script of any served skill as `options` say (see [`crate::dispatch::script`]);
    /// scripts share one working folder for the server's life, and an
    /// activation runs the skill's `` !`command` ``s (each as its file has
    /// it). MCP has no way to ask back, so nothing runs unless
    /// [`ScriptOptions::approval`] allows it: the default asks, and a call it
    /// asks about is an error result saying the operator did not allow it.
    /// Call it before [`watch`](Self::watch).
    ///
    /// ```
    /// use skillkit::approval::ApprovalPolicy;
    /// use skillkit::script::ScriptOptions;
    /// let server = skillkit::mcp::McpServer::new(skillkit::Catalog::builder().build())
    ///     .scripts(ScriptOptions::new().approval(ApprovalPolicy::allow_all()));
    /// # let _ = server;
    /// ```
    pub fn scripts(mut self, options: ScriptOptions) -> McpServer {
        self.scripts = Some(Arc::new(Scripts::new(options)));
        let interval = self.changes.interval();
        self.watch(interval)
    }

    /// Sets how many items a page of `tools/list`, `prompts/list` and
    /// `resources/list` holds (at least 1).
    ///
    /// ```
    /// let server = skillkit::mcp::McpServer::new(skillkit::Catalog::builder().build()).page_size(0);
    /// # let _ = server;
    /// ```
    pub fn page_size(mut self, size: usize) -> McpServer {
        self.page_size = size.max(1);
        self
    }

    /// Sets how long an executable skill's tool may run before its call is
    /// stopped and answered with an error result ([`DEFAULT_TOOL_TIMEOUT`],
    /// as for an agent).
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = skillkit::mcp::McpServer::new(skillkit::Catalog::builder().build())
    ///     .tool_timeout(Duration::from_secs(30));
    /// # let _ = server;
    /// ```
    pub fn tool_timeout(mut self, limit: Duration) -> McpServer {
        self.tool_timeout = limit;
        self
    }

    /// The catalog served.
    ///
    /// ```
    /// let catalog = skillkit::Catalog::builder().provider(skillkit::Memory::new()).build();
    /// let server = skillkit::mcp::McpServer::new(catalog);
    /// assert_eq!(server.catalog().provider_names(), ["memory"]);
    /// ```
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Serves one client on this process's stdin and stdout ([`JsonLines`])
    /// until it disconnects. Nothing else may write to stdout meanwhile (log
    /// to stderr).
    ///
    /// ```no_run
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let catalog = skillkit::Catalog::builder().provider(skillkit::Local::new("skills")).build();
    /// skillkit::mcp::McpServer::new(catalog).serve_stdio().await.unwrap();
    /// # });
    /// ```
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.baseline().await;
        let running = self
            .serve(JsonLines::new(tokio::io::stdin(), tokio::io::stdout()))
            .await
            .map_err(|e| ServeError::Handshake(Box::new(e)))?;
        running
            .waiting()
            .await
            .map_err(|e| ServeError::Task(e.to_string()))?;
        Ok(())
    }

    /// How many files the server has read and hashed for the skills
    /// extension's manifests (each file once per version): a test hook.
    #[doc(hidden)]
    pub fn digests_computed(&self) -> usize {
        self.digests.computed()
    }

    /// Queries the catalog once before the first client is served, so that
    /// what the lists show is known when a `subscriptions/listen` stream is
    /// acknowledged, and a change made after it is told against it.
    async fn baseline(&self) {
        let snapshot = self.catalog.snapshot().await;
        self.changes.observe(&snapshot);
        let changes = Arc::clone(&self.changes);
        let _ = tokio::task::spawn_blocking(move || changes.observe_beside(&snapshot)).await;
    }

    /// The snapshot a page of a long listing is read from: the first page's
    /// (held, and named by the cursor) for the pages after it, else a new
    /// query; and the number it is held as.
    async fn paged(
        &self,
        request: Option<&PaginatedRequestParams>,
        peer: &Peer<RoleServer>,
    ) -> (Snapshot, u64) {
        if let Some(id) = pages::held(request)
            && let Some(snapshot) = self.held.get(id)
        {
            return (snapshot, id);
        }
        let snapshot = self.snapshot(peer).await;
        let id = self.held.hold(&snapshot);
        (snapshot, id)
    }

    /// Another handle on this server for requests of sessions that joined
    /// the change watch already (see `direct`).
    fn for_joined(&self) -> McpServer {
        let server = self.clone();
        server.joined.store(true, Ordering::Release);
        server
    }

    /// A snapshot of the catalog, compared with the previous query (telling
    /// every client of a change), with `peer` told of changes from now on.
    async fn snapshot(&self, peer: &Peer<RoleServer>) -> Snapshot {
        if !self.joined.swap(true, Ordering::AcqRel) {
            self.changes.join(peer.clone());
        }
        let snapshot = self.catalog.snapshot().await;
        self.changes.observe(&snapshot);
        snapshot
    }
}
