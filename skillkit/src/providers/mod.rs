//! The providers SkillKit ships: [`Local`] directories, the [`Memory`] store
//! and, with the `github` feature, `GitHub` repositories imported at run time; with the `sql` feature,
//! `Sql`, skills kept in a SQLite or PostgreSQL database; with the `mcp-client`
//! feature, `McpSkills`, the skills an MCP server serves.

#[cfg(feature = "github")]
#[cfg_attr(docsrs, doc(cfg(feature = "github")))]
pub mod github;
mod local;
#[cfg(feature = "mcp")]
pub(crate) use local::activity;
#[cfg(feature = "mcp-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-client")))]
pub mod mcp;
mod memory;
#[cfg(feature = "sql")]
#[cfg_attr(docsrs, doc(cfg(feature = "sql")))]
pub mod sql;

#[cfg(feature = "github")]
pub use github::GitHub;
#[cfg(feature = "__test-hooks")]
pub use local::WatchFault;
pub(crate) use local::read_pool;
pub use local::{DISCOVERED_KIT, Local, WatchStatus};
#[cfg(feature = "mcp-client")]
pub use mcp::McpSkills;
pub use memory::Memory;
#[cfg(feature = "sql")]
pub use sql::Sql;
