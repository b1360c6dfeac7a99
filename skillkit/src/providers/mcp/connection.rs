//! The connection to the server: made on first use (with the newest
//! revision the server offers), made again after it broke, and what it hears
//! (the server's list-changed notifications: through the handshake's
//! session on older revisions, on a `subscriptions/listen` stream on
//! 2026-07-28).

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    CustomNotification, ProtocolVersion, ResourceUpdatedNotificationParam, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService, Subscription};

use crate::mcp_client::Endpoint;
use crate::provider::ProviderError;

/// One server's endpoint and the connection to it, if one is up.
pub(super) struct Connection {
    endpoint: Endpoint,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Listener>>>,
    /// Bumped by every notification saying the server's skills changed,
    /// and by every new connection (what was listed before may be gone).
    changes: Arc<AtomicU64>,
    /// Whether a `subscriptions/listen` stream of the connection up now
    /// tells of changes (revision 2026-07-28); cleared when it ends.
    listening: Arc<AtomicBool>,
    /// The task reading that stream, stopped with the connection.
    stream: std::sync::Mutex<Option<tokio::task::AbortHandle>>,
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
            listening: Arc::default(),
            stream: std::sync::Mutex::default(),
        }
    }

    pub(super) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// How many changes the server announced (and reconnections made) so far.
    pub(super) fn changes(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    /// Whether the server tells this connection of every change to its
    /// lists on a `subscriptions/listen` stream (so a listing holds until it
    /// does, whatever cache hint came with it).
    pub(super) fn listening(&self) -> bool {
        self.listening.load(Ordering::SeqCst)
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
        self.stop_listening();
        self.changes.fetch_add(1, Ordering::SeqCst);
        let listener = Listener {
            changes: Arc::clone(&self.changes),
        };
        let connected = self
            .endpoint
            .connect_newest(listener)
            .await
            .map_err(ProviderError::other)?;
        let peer = connected.peer().clone();
        if peer
            .peer_info()
            .is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28)
        {
            self.listen(&peer).await;
        }
        *service = Some(connected);
        Ok(peer)
    }

    /// Opens a `subscriptions/listen` stream for the server's list changes
    /// and reads it in the background: each notification bumps the count of
    /// changes. A server that refuses the stream, or does not accept the
    /// resource list's notifications, is not listened to (its listings hold
    /// for their `ttlMs`).
    async fn listen(&self, peer: &Peer<RoleClient>) {
        let filter = SubscriptionFilter::builder()
            .resources_list_changed()
            .build();
        let subscription = match peer.listen(filter).await {
            Ok(subscription)
                if subscription.acknowledged().resources_list_changed == Some(true) =>
            {
                subscription
            }
            Ok(_) => return,
            Err(error) => {
                tracing::debug!(server = %self.endpoint, %error, "the MCP server refused subscriptions/listen");
                return;
            }
        };
        self.listening.store(true, Ordering::SeqCst);
        let task = tokio::spawn(hear(
            subscription,
            Arc::clone(&self.changes),
            Arc::clone(&self.listening),
        ));
        *self.stream.lock().unwrap_or_else(PoisonError::into_inner) = Some(task.abort_handle());
    }

    fn stop_listening(&self) {
        self.listening.store(false, Ordering::SeqCst);
        if let Some(task) = self
            .stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            task.abort();
        }
    }

    /// Drops the connection (it broke): the next use makes a new one.
    pub(super) async fn reset(&self) {
        let mut service = self.service.lock().await;
        self.stop_listening();
        *service = None;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stop_listening();
    }
}

/// Reads a listen stream until it ends: every notification on it bumps
/// `changes`; its end clears `listening` and bumps `changes` too (what was
/// listed may have changed unheard).
async fn hear(mut subscription: Subscription, changes: Arc<AtomicU64>, listening: Arc<AtomicBool>) {
    while let Ok(Some(_)) = subscription.next().await {
        changes.fetch_add(1, Ordering::SeqCst);
    }
    listening.store(false, Ordering::SeqCst);
    changes.fetch_add(1, Ordering::SeqCst);
}

/// What the connection hears from the server: every list-changed or
/// updated notification bumps the count a listing is checked against.
#[derive(Clone)]
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
