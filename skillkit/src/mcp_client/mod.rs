//! Reaching MCP servers as a client (feature `mcp-client`): where a server is
//! ([`Endpoint`]: a command speaking stdio, or a Streamable HTTP URL), how to
//! connect to it, and a [`Session`] that keeps the connection up (restarting
//! or reconnecting with backoff) and caches the server's tool list.
//!
//! The [`McpSkills`](crate::McpSkills) provider reads skills from such servers, and an
//! agent takes their tools ([`AgentOptions`](crate::agent::AgentOptions)).
//! This module knows nothing of either: it sits below both.

mod endpoint;
mod session;

pub use endpoint::{ConnectError, Endpoint};
pub use session::{CallError, DEFAULT_CONNECT_TIMEOUT, Session, Status};
