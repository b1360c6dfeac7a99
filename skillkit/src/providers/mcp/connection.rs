//! The connection to the server: made on first use, made again after it
//! broke, and what it hears (the server's list-changed notifications).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ClientHandler;
use rmcp::model::{CustomNotification, ResourceUpdatedNotificationParam};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService};

use crate::mcp_client::Endpoint;
use crate::provider::ProviderError;

/// One server's endpoint and the connection to it, if one is up.
pub(super) struct Connection {
    endpoint: Endpoint,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Listener>>>,
    /// Bumped by every notification saying the server's skills changed,
    /// and by every new connection (what was listed before may be gone).
    changes: Arc<AtomicU64>,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Connection {
    pub(super) fn new(endpoint: Endpoint) -> Connection {
        Connection {
            endpoint,
            service: tokio::sync::Mutex::default(),
            changes: Arc::default(),
        }
    }

    pub(super) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// How many changes the server announced (and reconnections made) so far.
    pub(super) fn changes(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    /// The connection, made now when there is none or it closed.
    pub(super) async fn peer(&self) -> Result<Peer<RoleClient>, ProviderError> {
        let mut service = self.service.lock().await;
        if let Some(service) = service.as_ref()
            && !service.is_closed()
        {
            return Ok(service.peer().clone());
        }
        *service = None;
        self.changes.fetch_add(1, Ordering::SeqCst);
        let listener = Listener {
            changes: Arc::clone(&self.changes),
        };
        let connected = self
            .endpoint
            .connect(listener)
            .await
            .map_err(ProviderError::other)?;
        let peer = connected.peer().clone();
        *service = Some(connected);
        Ok(peer)
    }

    /// Drops the connection (it broke): the next use makes a new one.
    pub(super) async fn reset(&self) {
        *self.service.lock().await = None;
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
