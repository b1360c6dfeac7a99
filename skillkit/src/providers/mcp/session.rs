//! The connection to the server, the listing kept while it is fresh, and
//! what tells it is not (the server's list-changed notifications).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::model::{CustomNotification, ResourceUpdatedNotificationParam};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService, ServiceError};

use super::fetch::Files;
use super::listing;
use crate::kit::Kit;
use crate::mcp_client::Endpoint;
use crate::provider::ProviderError;

/// One server: its endpoint, the connection (made on the first query, made
/// again after it broke), the listing while fresh, and the files read.
pub(super) struct Session {
    endpoint: Endpoint,
    state: tokio::sync::Mutex<State>,
    /// Bumped by every notification saying the server's skills changed.
    changes: Arc<AtomicU64>,
    pub(super) files: Files,
}

#[derive(Default)]
struct State {
    service: Option<RunningService<RoleClient, Listener>>,
    listed: Option<Listed>,
}

/// A listing and when it stops being the answer.
struct Listed {
    kit: Kit,
    /// [`Session::changes`] when the listing was asked for.
    changes: u64,
    /// When its `ttlMs` ends, if the server gave one.
    expires: Option<Instant>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Session {
    pub(super) fn new(endpoint: Endpoint) -> Session {
        Session {
            endpoint,
            state: tokio::sync::Mutex::default(),
            changes: Arc::default(),
            files: Files::default(),
        }
    }

    pub(super) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The server's skills as kit `label` (else the server's name): the
    /// listing kept, while no notification and no TTL says otherwise; else
    /// listed now.
    pub(super) async fn kit(self: &Arc<Self>, label: Option<&str>) -> Result<Kit, ProviderError> {
        let mut state = self.state.lock().await;
        let peer = self.connected(&mut state).await?;
        let changes = self.changes.load(Ordering::SeqCst);
        let name = match label {
            Some(label) => label.to_owned(),
            None => default_label(&peer),
        };
        if let Some(listed) = &state.listed
            && listed.changes == changes
            && listed.kit.name == name
            && listed.expires.is_none_or(|at| Instant::now() < at)
        {
            return Ok(listed.kit.clone());
        }
        match listing::list(&peer, &name, self).await {
            Ok((kit, ttl)) => {
                state.listed = Some(Listed {
                    kit: kit.clone(),
                    changes,
                    expires: ttl.map(|ttl| Instant::now() + ttl),
                });
                Ok(kit)
            }
            Err(error) => {
                state.listed = None;
                if !matches!(error, ServiceError::McpError(_)) {
                    // The connection broke: the next query makes a new one.
                    state.service = None;
                }
                Err(ProviderError::other(format!(
                    "listing the skills of the MCP server {} failed: {error}; the next query tries again",
                    self.endpoint
                )))
            }
        }
    }

    /// The connection, made now when there is none or it closed.
    async fn connected(&self, state: &mut State) -> Result<Peer<RoleClient>, ProviderError> {
        if let Some(service) = &state.service
            && !service.is_closed()
        {
            return Ok(service.peer().clone());
        }
        state.service = None;
        state.listed = None;
        let listener = Listener {
            changes: Arc::clone(&self.changes),
        };
        let service = self
            .endpoint
            .connect(listener)
            .await
            .map_err(ProviderError::other)?;
        let peer = service.peer().clone();
        state.service = Some(service);
        Ok(peer)
    }

    /// The connection, for reading a file (made again if it broke).
    pub(super) async fn peer(&self) -> Result<Peer<RoleClient>, ProviderError> {
        let mut state = self.state.lock().await;
        self.connected(&mut state).await
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
    let trimmed: Vec<&str> = mapped.split('-').filter(|part| !part.is_empty()).collect();
    match trimmed.join("-") {
        empty if empty.is_empty() => "mcp".to_owned(),
        name => name.chars().take(64).collect(),
    }
}

/// What the connection hears from the server: every list-changed or
/// updated notification bumps the count a listing is checked against.
struct Listener {
    changes: Arc<AtomicU64>,
}

impl Listener {
    fn changed(&self) -> std::future::Ready<()> {
        self.changes.fetch_add(1, Ordering::SeqCst);
        std::future::ready(())
    }
}

impl ClientHandler for Listener {
    fn on_resource_list_changed(
        &self,
        _: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.changed()
    }

    fn on_resource_updated(
        &self,
        _: ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.changed()
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if notification.method.contains("skills/list_changed") {
            self.changes.fetch_add(1, Ordering::SeqCst);
        }
        std::future::ready(())
    }
}

/// How long a listing holds when the server says `ttlMs`.
pub(super) fn ttl(ms: Option<u64>) -> Option<Duration> {
    ms.map(Duration::from_millis)
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
