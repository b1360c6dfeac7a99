//! Reaching MCP servers as a client (feature `mcp-client`): where a server is
//! ([`Endpoint`]: a command speaking stdio, or a Streamable HTTP URL) and how
//! to connect to it.
//!
//! The [`Mcp`](crate::Mcp) provider reads skills from such servers, and an
//! agent takes their tools ([`AgentOptions`](crate::agent::AgentOptions)).
//! This module knows nothing of either: it sits below both.

mod endpoint;

pub use endpoint::{ConnectError, Endpoint};
