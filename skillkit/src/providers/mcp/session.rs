//! The listing kept while it is fresh: until the server announces a change
//! (or the connection is made again) or its `ttlMs` ends.
//!
//! A `ttlMs` of 0 says "ask again" only to a client the server does not tell
//! of changes: on a 2026-07-28 connection whose `subscriptions/listen`
//! stream carries the server's list changes, the listing holds until the
//! stream says otherwise (rmcp's servers, and this crate's, answer
//! `ttlMs: 0` and push every change). A positive `ttlMs` is honoured either
//! way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::service::{Peer, RoleClient, ServiceError};

use super::fetch::Server;
use super::listing;
use crate::kit::Kit;
use crate::provider::ProviderError;

/// One server and the listing of it last made.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) server: Arc<Server>,
    listed: tokio::sync::Mutex<Option<Listed>>,
}

/// A listing and when it stops being the answer.
#[derive(Debug)]
struct Listed {
    kit: Kit,
    /// The connection's count of changes when the listing was asked for.
    changes: u64,
    /// When its `ttlMs` ends, if the server gave one.
    expires: Option<Instant>,
}

impl Session {
    pub(super) fn new(server: Server) -> Session {
        Session {
            server: Arc::new(server),
            listed: tokio::sync::Mutex::default(),
        }
    }

    /// The server's skills as kit `label` (else the server's name): the
    /// listing kept, while no notification and no TTL says otherwise; else
    /// listed now.
    pub(super) async fn kit(&self, label: Option<&str>) -> Result<Kit, ProviderError> {
        let mut listed = self.listed.lock().await;
        let connection = &self.server.connection;
        let peer = connection.peer().await?;
        let changes = connection.changes();
        let name = match label {
            Some(label) => label.to_owned(),
            None => default_label(&peer),
        };
        if let Some(kept) = listed.as_ref()
            && kept.changes == changes
            && kept.kit.name == name
            && kept.expires.is_none_or(|at| Instant::now() < at)
        {
            return Ok(kept.kit.clone());
        }
        *listed = None;
        match listing::list(&peer, &name, &self.server).await {
            Ok((kit, ttl_ms)) => {
                let expires = match ttl_ms {
                    Some(0) if connection.listening() => None,
                    Some(ms) => Instant::now().checked_add(Duration::from_millis(ms)),
                    None => None,
                };
                *listed = Some(Listed {
                    kit: kit.clone(),
                    changes,
                    expires,
                });
                Ok(kit)
            }
            Err(error) => {
                if !matches!(error, ServiceError::McpError(_)) {
                    // The connection broke: the next query makes a new one.
                    connection.reset().await;
                }
                Err(ProviderError::other(format!(
                    "listing the skills of the MCP server {} failed: {error}; the next query tries again",
                    connection.endpoint()
                )))
            }
        }
    }
}

/// The kit name of a server without a label: its name from the handshake,
/// lowercased, anything but letters, digits and `-` made `-` (`mcp` when
/// nothing is left).
fn default_label(peer: &Peer<RoleClient>) -> String {
    let name = peer
        .peer_info()
        .and_then(|info| info.server_info.as_ref().map(|s| s.name.clone()))
        .unwrap_or_default();
    kit_name(&name)
}

fn kit_name(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9') => c,
            _ => '-',
        })
        .collect();
    let parts: Vec<&str> = mapped.split('-').filter(|part| !part.is_empty()).collect();
    match parts.join("-") {
        empty if empty.is_empty() => "mcp".to_owned(),
        name => name.chars().take(64).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::kit_name;

    #[test]
    fn a_server_name_becomes_a_kit_name() {
        assert_eq!(kit_name("Docs Server"), "docs-server");
        assert_eq!(kit_name("skills_ref.v2"), "skills-ref-v2");
        assert_eq!(kit_name("--"), "mcp");
        assert_eq!(kit_name("文档"), "mcp");
    }
}
