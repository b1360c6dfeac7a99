//! [`AgentOptions`]: what an agent runs over (catalog, models), its limits and
//! its approval policy.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::{CompactionPolicy, History};
use crate::agent_definition::AgentDefinition;
use crate::catalog::Catalog;
use crate::dispatch::approval::ApprovalPolicy;
use crate::dispatch::script::ScriptOptions;
use crate::dispatch::trust::TrustPolicy;
use crate::llm::Registry;

/// The model an agent uses when neither the options nor its definition name
/// one.
pub const DEFAULT_MODEL: &str = "anthropic://claude-sonnet-4-6?max_tokens=4096";
/// The most model turns (requests) one message may take, unless set.
pub const DEFAULT_MAX_TURNS: u32 = 25;
/// How deep sub-agents may nest (a sub-agent's sub-agent is depth 2), unless set.
pub const DEFAULT_MAX_AGENT_DEPTH: u32 = 3;
/// How many tool calls of one turn run at once, unless set.
pub const DEFAULT_TOOL_CONCURRENCY: usize = 8;
/// The most characters of an MCP server's tool result the model gets,
/// unless set ([`AgentOptions::mcp_output_limit`]): 100,000, about the
/// 25,000 tokens Claude Code allows (`MAX_MCP_OUTPUT_TOKENS`).
#[cfg(feature = "mcp-client")]
pub const DEFAULT_MCP_OUTPUT_LIMIT: usize = 100_000;

/// How to run an agent: the catalog its skills come from, the model
/// registry, and optional overrides. Every setter returns the options, so
/// they chain.
///
/// Limits resolve in this order: set here, then the agent definition's
/// (`max_turns`, `max_agent_depth` in `AGENT.md`), then the defaults
/// ([`DEFAULT_MAX_TURNS`], [`DEFAULT_MAX_AGENT_DEPTH`]). The model: set here,
/// then the definition's `model`, then [`DEFAULT_MODEL`].
///
/// ```
/// use std::time::Duration;
/// use skillkit::agent::AgentOptions;
/// use skillkit::llm::{Registry, Scripted};
/// use skillkit::{Catalog, Memory};
///
/// let options = AgentOptions::new(Catalog::builder().provider(Memory::new()).build())
///     .registry(Registry::new().with("scripted", Scripted::new().text("Hi")))
///     .model("scripted://demo")
///     .max_turns(4)
///     .tool_timeout(Duration::from_secs(5));
/// assert_eq!(options.model_for(&skillkit::AgentDefinition::new("a", "d")), "scripted://demo");
/// ```
#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub(crate) catalog: Catalog,
    /// `None` until set: the built-in registry is built when the agent starts.
    pub(crate) registry: Option<Registry>,
    pub(crate) model: Option<String>,
    pub(crate) max_turns: Option<u32>,
    pub(crate) max_agent_depth: Option<u32>,
    pub(crate) tool_concurrency: usize,
    pub(crate) tool_timeout: Duration,
    pub(crate) approval: ApprovalPolicy,
    pub(crate) trust: TrustPolicy,
    pub(crate) history: History,
    pub(crate) session: Option<(Arc<dyn crate::agent::session::SessionStore>, String)>,
    pub(crate) scripts: Option<ScriptOptions>,
    #[cfg(feature = "mcp-client")]
    pub(crate) mcp: Vec<crate::dispatch::mcp::McpServer>,
    #[cfg(feature = "mcp-client")]
    pub(crate) mcp_output_limit: usize,
    pub(crate) listing_budget: Option<usize>,
    pub(crate) pinned: Arc<[String]>,
    pub(crate) compaction: CompactionPolicy,
}

impl AgentOptions {
    /// Options over `catalog`, with the built-in model registry
    /// ([`Registry::new`]: Anthropic and OpenAI, keys from the environment),
    /// built when the agent starts unless [`registry`](Self::registry)
    /// replaces it.
    ///
    /// ```
    /// let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// # let _ = options;
    /// ```
    pub fn new(catalog: Catalog) -> Self {
        AgentOptions {
            catalog,
            registry: None,
            model: None,
            max_turns: None,
            max_agent_depth: None,
            tool_concurrency: DEFAULT_TOOL_CONCURRENCY,
            tool_timeout: crate::dispatch::DEFAULT_TOOL_TIMEOUT,
            approval: ApprovalPolicy::default(),
            trust: TrustPolicy::default(),
            history: History::default(),
            session: None,
            scripts: None,
            #[cfg(feature = "mcp-client")]
            mcp: Vec::new(),
            #[cfg(feature = "mcp-client")]
            mcp_output_limit: DEFAULT_MCP_OUTPUT_LIMIT,
            listing_budget: None,
            pinned: Arc::new([]),
            compaction: CompactionPolicy::default(),
        }
    }

    /// The registry that resolves model URIs.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.registry(skillkit::llm::Registry::new().with_default("openai"));
    /// ```
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// The model URI, over the definition's `model`.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.model("anthropic://claude-sonnet-4-6?max_tokens=1024");
    /// ```
    pub fn model(mut self, uri: impl Into<String>) -> Self {
        self.model = Some(uri.into());
        self
    }

    /// The most model turns one message may take.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.max_turns(10);
    /// ```
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns.max(1));
        self
    }

    /// How deep sub-agents may nest; 0 allows none.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.max_agent_depth(1);
    /// ```
    pub fn max_agent_depth(mut self, depth: u32) -> Self {
        self.max_agent_depth = Some(depth);
        self
    }

    /// How many tool calls of one turn run at once (at least 1).
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.tool_concurrency(2);
    /// ```
    pub fn tool_concurrency(mut self, calls: usize) -> Self {
        self.tool_concurrency = calls.max(1);
        self
    }

    /// How long one tool call may run before it becomes an error result.
    /// Time spent waiting for the caller's decision does not count.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.tool_timeout(std::time::Duration::from_secs(30));
    /// ```
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = timeout;
        self
    }

    /// The policy that decides each tool call before it runs (all allowed by
    /// default).
    ///
    /// ```
    /// use skillkit::approval::{Approval, ApprovalPolicy};
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.approval(ApprovalPolicy::new(|_| Approval::Ask));
    /// ```
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = policy;
        self
    }

    /// Sets which kits' skills may pre-approve tools with `allowed-tools`
    /// ([`TrustPolicy::default`]: by the kit's origin). A kit it does not
    /// trust grants nothing; when its origin is not a trusted one either
    /// (found in a project, imported, from a database or a server), its
    /// scripts and `` !`command` ``s are also asked every time, whatever the
    /// approval policies say.
    ///
    /// ```
    /// use skillkit::agent::AgentOptions;
    /// use skillkit::trust::TrustPolicy;
    /// let options = AgentOptions::new(skillkit::Catalog::builder().build())
    ///     .trust(TrustPolicy::new(|_| false)); // every call asked as the policy says
    /// # let _ = options;
    /// ```
    pub fn trust(mut self, policy: TrustPolicy) -> Self {
        self.trust = policy;
        self
    }

    /// Offers the model `run_skill_script {skill, script, args, stdin}`, which
    /// runs a file inside the folder of a skill it may activate, as
    /// `options` say (off by default; see [`crate::dispatch::script`] for what bounds a
    /// script). Every call goes through the approval policy and then
    /// [`ScriptOptions::approval`], which asks by default.
    ///
    /// ```
    /// use skillkit::script::ScriptOptions;
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.scripts(ScriptOptions::new().timeout(std::time::Duration::from_secs(20)));
    /// # let _ = options;
    /// ```
    pub fn scripts(mut self, options: ScriptOptions) -> Self {
        self.scripts = Some(options);
        self
    }

    /// Gives the agent the tools of an MCP server (feature `mcp-client`): a
    /// program on stdio or a Streamable HTTP URL
    /// ([`Endpoint`](crate::mcp_client::Endpoint)), or a
    /// [`Session`](crate::mcp_client::Session) the application keeps a clone
    /// of (to watch it, or to set its backoff and connect timeout).
    ///
    /// The server's tool `echo` is the agent's tool `<prefix>__echo` (its
    /// name in events, for the approval policy, in `allowed-tools` and, being
    /// wire-safe, for the model), with the server's description and input
    /// schema; an `AGENT.md` `tools` list allows it by that name or by the
    /// prefix. `prefix`: ASCII letters, digits, `-`, `_`, at most 32 bytes,
    /// no `__`, one per server; [`start_agent`](crate::agent::start_agent)
    /// refuses others.
    ///
    /// The agent connects to every server when it starts, concurrently; a
    /// turn waits for a server still connecting the first time up to its
    /// connect timeout, and a server not up by then contributes no tools that
    /// turn (an [`EventKind::Warning`](crate::agent::EventKind::Warning) says
    /// so). The tool list is kept and listed again only when the server says
    /// it changed (`notifications/tools/list_changed`). Calls go through the
    /// approval policy like any tool (an MCP server is not trusted: nothing is
    /// pre-approved but by the `allowed-tools` of a skill of a trusted kit,
    /// naming the tool's full name) and the tool timeout. A server that dies
    /// is restarted or reconnected with backoff; calls meanwhile are error
    /// results saying so, and the agent goes on.
    ///
    /// ```
    /// use skillkit::mcp_client::Endpoint;
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options
    ///     .mcp_server("everything", Endpoint::command("npx", ["-y", "@modelcontextprotocol/server-everything"]))
    ///     .mcp_server("remote", Endpoint::url("http://127.0.0.1:8080/mcp").bearer_token_env("MCP_TOKEN"));
    /// # let _ = options;
    /// ```
    #[cfg(feature = "mcp-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-client")))]
    pub fn mcp_server(
        mut self,
        prefix: impl Into<String>,
        server: impl Into<crate::mcp_client::Session>,
    ) -> Self {
        self.mcp.push(crate::dispatch::mcp::McpServer {
            prefix: prefix.into(),
            session: server.into(),
            max_output: DEFAULT_MCP_OUTPUT_LIMIT,
        });
        self
    }

    /// The most characters of an MCP server's tool result the model gets
    /// ([`DEFAULT_MCP_OUTPUT_LIMIT`] unless set); a longer result is cut,
    /// with a line saying how much was left out.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.mcp_output_limit(20_000);
    /// # let _ = options;
    /// ```
    #[cfg(feature = "mcp-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-client")))]
    pub fn mcp_output_limit(mut self, characters: usize) -> Self {
        self.mcp_output_limit = characters.max(1);
        self
    }

    /// The budget of the `<available_skills>` listing in the system prompt,
    /// in characters (by default [`default_listing_budget`] of the model:
    /// 1% of its context window). While every skill the model may activate
    /// fits, all are listed, as for a small catalog; past it, the listing
    /// holds the skills used in the conversation, then the
    /// [pinned](Self::pin_skills) ones, then those most relevant to the
    /// latest user messages, then others while they fit, and says how many
    /// more exist; the model finds those with `search_skills` and
    /// `activate_skill` takes any name.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.listing_budget(16_000);
    /// ```
    ///
    /// [`default_listing_budget`]: crate::agent::default_listing_budget
    pub fn listing_budget(mut self, characters: usize) -> Self {
        self.listing_budget = Some(characters);
        self
    }

    /// Skills (full names) listed to the model right after those used in the
    /// conversation whenever the listing is over its
    /// [budget](Self::listing_budget), in this order. A name the model may not
    /// activate (unknown, or only people may run it) is left out.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.pin_skills(["support:refunds", "support:escalate"]);
    /// ```
    pub fn pin_skills<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.pinned = names.into_iter().map(Into::into).collect();
        self
    }

    /// How the conversation is kept within the model's context window: by
    /// default it is compacted past
    /// [`DEFAULT_COMPACT_AT_PERCENT`](crate::agent::DEFAULT_COMPACT_AT_PERCENT)
    /// of the window, keeping the skills in use (see [`CompactionPolicy`]).
    ///
    /// ```
    /// use skillkit::agent::CompactionPolicy;
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.compaction(CompactionPolicy::new().context_window(32_768));
    /// ```
    pub fn compaction(mut self, policy: CompactionPolicy) -> Self {
        self.compaction = policy;
        self
    }

    /// Starts from an earlier conversation (its messages and session id), to
    /// resume it.
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let saved = r#"{"session_id":"s1","messages":[{"role":"user","text":"Hi"}]}"#;
    /// let options = options.history(serde_json::from_str(saved).unwrap());
    /// ```
    pub fn history(mut self, history: History) -> Self {
        self.history = history;
        self
    }

    /// Keeps the conversation in `store` as session `id`: its items are read
    /// before the first message is answered (they replace
    /// [`history`](Self::history)'s messages), and each turn's messages are
    /// written as the turn completes, so a process that dies loses at most
    /// the turn in flight, and another process goes on with the same
    /// `session(store, id)`. When another writer added to the session
    /// meanwhile, the agent reads its items and writes its own after them.
    ///
    /// ```
    /// use skillkit::agent::session::FileSessionStore;
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.session(FileSessionStore::new("/var/lib/app/sessions"), "support-4711");
    /// ```
    pub fn session(
        mut self,
        store: impl crate::agent::session::SessionStore + 'static,
        id: impl Into<String>,
    ) -> Self {
        let id = id.into();
        self.history.session_id = id.clone();
        self.session = Some((Arc::new(store), id));
        self
    }

    /// The session id (a fresh one unless the history brings one).
    ///
    /// ```
    /// # let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let options = options.session_id("support-4711");
    /// ```
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.history.session_id = id.into();
        self
    }

    /// The model URI `definition` runs with under these options.
    ///
    /// ```
    /// let options = skillkit::agent::AgentOptions::new(skillkit::Catalog::builder().build());
    /// let agent = skillkit::AgentDefinition::new("a", "d");
    /// assert_eq!(options.model_for(&agent), skillkit::agent::DEFAULT_MODEL);
    /// ```
    pub fn model_for(&self, definition: &AgentDefinition) -> String {
        self.model
            .clone()
            .or_else(|| definition.model.as_deref().map(str::to_owned))
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned())
    }

    /// The registry set, else the built-in one.
    pub(crate) fn registry_or_default(&self) -> Registry {
        self.registry.clone().unwrap_or_default()
    }

    pub(crate) fn max_depth_for(&self, definition: &AgentDefinition) -> u32 {
        self.max_agent_depth
            .or(definition.max_agent_depth)
            .unwrap_or(DEFAULT_MAX_AGENT_DEPTH)
    }
}

#[cfg(feature = "mcp-client")]
/// `servers`, their prefixes checked, each session started (connecting in
/// the background).
pub(crate) fn checked(
    servers: &[crate::dispatch::mcp::McpServer],
    max_output: usize,
) -> Result<Vec<crate::dispatch::mcp::McpServer>, crate::agent::AgentError> {
    let mut seen = std::collections::HashSet::new();
    for server in servers {
        let problem = match () {
            () if !crate::dispatch::mcp::valid_prefix(&server.prefix) => {
                "use 1 to 32 ASCII letters, digits, `-` or `_`, without `__`"
            }
            () if !seen.insert(server.prefix.as_str()) => "two servers have it; give each its own",
            () => continue,
        };
        return Err(crate::agent::AgentError::McpPrefix {
            prefix: server.prefix.escape_debug().to_string(),
            problem: problem.to_owned(),
        });
    }
    for server in servers {
        server.session.start();
    }
    Ok(servers
        .iter()
        .map(|server| crate::dispatch::mcp::McpServer {
            max_output,
            ..server.clone()
        })
        .collect())
}
