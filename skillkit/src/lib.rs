//! SkillKit: ship LLM agent skills.
//!
//! A skill is a `SKILL.md` file (YAML frontmatter + markdown prompt, the Agent
//! Skills format). Skills are bundled into [`Kit`](struct@Kit)s, served by providers
//! ([`Local`] directories, the [`Memory`] store, your own [`KitProvider`]s), and
//! aggregated by a [`Catalog`] that asks every provider on every query, so it is
//! never stale. A kit can also be compiled into the binary with
//! `#[derive(Kit)]`: see [`embed`].
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use skillkit::{Catalog, Local, Memory, Skill};
//! # let dir = tempfile::tempdir().unwrap();
//! # let kit_dir = dir.path().join("files");
//! # std::fs::create_dir_all(kit_dir.join("skills/read")).unwrap();
//! # std::fs::write(kit_dir.join("skills/read/SKILL.md"), "---\nname: read\ndescription: Read a file.\n---\nRead $ARGUMENTS.\n").unwrap();
//!
//! let memory = Memory::new();
//! let catalog = Catalog::builder()
//!     .provider(Local::new(&kit_dir))
//!     .provider(memory.clone())
//!     .build();
//! memory.put(Skill::new("greet:hello", "Say hello."));
//!
//! let names: Vec<String> = catalog.list_skills().await.into_iter().map(|s| s.name).collect();
//! assert_eq!(names, ["files:read", "greet:hello"]);
//! let read = catalog.get_skill("files:read").await.unwrap();
//! // The body is read from the file only now (progressive disclosure).
//! assert_eq!(read.render("notes.txt", None).unwrap(), "Read notes.txt.\n");
//! # });
//! ```
//!
//! # Features
//!
//! The default set is what an agent over local and GitHub skills needs:
//! `github` (the `GitHub` provider), `llm` (the HTTP adapters
//! `llm::anthropic` and `llm::openai`) and `agent` (the `agent` runtime).
//! Servers and databases are opt-in: `mcp` (the `mcp` server, implies
//! `agent`), `sql` (the `Sql` provider on SQLite) and `postgres`. With
//! `default-features = false` the crate is the catalog alone (`Local`,
//! `Memory`, `#[derive(Kit)]`, tools, the LLM types and `Scripted`) and builds
//! no HTTP stack.
#![warn(missing_docs, unreachable_pub)]
// `unsafe` lives in one module, `dispatch::script` (the script runner's process
// group and its kernel sandbox, between `fork` and `exec`), each block with
// its `SAFETY:` comment.
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "agent")]
#[cfg_attr(docsrs, doc(cfg(feature = "agent")))]
pub mod agent;
mod agent_definition;
pub mod catalog;
pub mod embed;
#[cfg(feature = "eval")]
#[cfg_attr(docsrs, doc(cfg(feature = "eval")))]
pub mod eval;
pub mod kit;
pub mod llm;
#[cfg(any(feature = "github", feature = "agent", feature = "mcp"))]
mod lock;
#[cfg(feature = "github")]
#[cfg_attr(docsrs, doc(cfg(feature = "github")))]
pub mod lockfile;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
#[cfg(feature = "mcp-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-client")))]
pub mod mcp_client;
pub mod prompt;
mod provider;
pub mod providers;
#[cfg(any(feature = "github", feature = "llm", feature = "mcp-client"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "github", feature = "llm", feature = "mcp-client")))
)]
pub mod retry;
pub mod search;
// The tool path, below the agent and the MCP server: its public parts are
// `approval`, `script` and `trust`.
#[cfg(any(feature = "agent", feature = "mcp"))]
mod dispatch;
#[cfg(any(feature = "agent", feature = "mcp"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "agent", feature = "mcp"))))]
pub use dispatch::{approval, script, trust};
pub mod skill;
pub mod telemetry;
pub mod tool;
#[cfg(any(feature = "github", feature = "agent", feature = "mcp"))]
mod whole;

// The root: the types most programs name, each also at its module (as
// axum re-exports `Router`); the rest are reached through their module.
pub use agent_definition::AgentDefinition;
#[doc(inline)]
pub use catalog::{Catalog, Snapshot};
#[doc(inline)]
pub use embed::EmbeddedKit;
#[doc(inline)]
pub use kit::{Kit, Origin};
pub use provider::{KitProvider, ProviderError};
#[cfg(feature = "github")]
#[cfg_attr(docsrs, doc(cfg(feature = "github")))]
#[doc(inline)]
pub use providers::GitHub;
#[cfg(feature = "mcp-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-client")))]
#[doc(inline)]
pub use providers::McpSkills;
#[cfg(feature = "sql")]
#[cfg_attr(docsrs, doc(cfg(feature = "sql")))]
#[doc(inline)]
pub use providers::Sql;
#[doc(inline)]
pub use providers::{Local, Memory};
#[cfg(any(feature = "github", feature = "llm", feature = "mcp-client"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "github", feature = "llm", feature = "mcp-client")))
)]
#[doc(inline)]
pub use retry::RetryPolicy;
#[doc(inline)]
pub use skill::Skill;
/// `#[derive(Kit)]`: a kit compiled into the binary; see [`embed`].
pub use skillkit_macros::Kit;
#[doc(inline)]
pub use tool::{Tool, ToolDefinition, ToolExecution, ToolOutcome};

/// The parser shared with `#[derive(Kit)]`: diagnostics, documents, layout,
/// validation.
pub use skillkit_parser as parser;
#[doc(inline)]
pub use skillkit_parser::Diagnostic;

/// The examples of the README and of the guides in `docs/`, compiled and run
/// as doctests so they cannot rot.
#[cfg(doctest)]
mod doc_examples {
    #[doc = include_str!("../../README.md")]
    pub struct Readme;
    #[doc = include_str!("../../docs/catalog.md")]
    pub struct Catalog;
    #[doc = include_str!("../../docs/search.md")]
    pub struct Search;
    #[doc = include_str!("../../docs/agents.md")]
    pub struct Agents;

    /// Paths that moved, each item at one path now (the old path fails to
    /// compile; `CHANGELOG.md` gives the new one):
    ///
    /// ```compile_fail
    /// use skillkit::agent::script::ScriptOptions; // skillkit::script::ScriptOptions
    /// ```
    /// ```compile_fail
    /// use skillkit::agent::ApprovalPolicy; // skillkit::approval::ApprovalPolicy
    /// ```
    /// ```compile_fail
    /// use skillkit::agent::TrustStore; // skillkit::trust::TrustStore
    /// ```
    /// ```compile_fail
    /// use skillkit::agent::AgentDefinition; // skillkit::AgentDefinition
    /// ```
    /// ```compile_fail
    /// use skillkit::llm::ToolDefinition; // skillkit::ToolDefinition
    /// ```
    ///
    /// and the new ones do:
    ///
    /// ```
    /// use skillkit::approval::{AgentPath, ApprovalPolicy};
    /// use skillkit::script::ScriptOptions;
    /// use skillkit::trust::TrustStore;
    /// use skillkit::{AgentDefinition, ToolDefinition};
    /// ```
    pub struct MovedPaths;
}

/// Re-exported so implementing [`KitProvider`] and [`Tool`] needs no extra
/// dependency: write `#[skillkit::async_trait]` on the impl.
pub use async_trait::async_trait;

#[doc(hidden)]
pub use embed::generated as __private;
