//! Change notifications: every catalog query of the server (a request, or
//! the background poll) is compared with the one before, and each list that
//! changed (`tools`, `prompts`, `resources`) is announced with its
//! `notifications/*/list_changed`: to every client connected by the
//! `initialize` handshake, and on every open `subscriptions/listen` stream
//! (revision 2026-07-28) that asked for that list. A skill's entry of the
//! skills extension is made of resources, so a change of `skills/list` (an
//! edited `SKILL.md`: its stamp is part of the resources' hash) is told as
//! `resources/list_changed`, as the extension says. The server queries its
//! catalog once before it serves anyone, so a `subscriptions/listen` stream
//! knows what the lists showed when it was acknowledged, and a change made
//! right after is told (a stream acknowledged before any query is told of
//! every list, rather than risk losing one).
//!
//! The comparison is cheap: when every skill of the snapshot is the same
//! `Arc` as at the previous query (providers keep the skills they did not
//! re-read), nothing changed; otherwise a hash of what each list shows (the
//! tool set's definitions, which the server's next `tools/list` takes from
//! the same cache; names, descriptions and locations) is compared. The
//! files beside each skill (its references, scripts, templates: resources
//! too) are compared by the poll alone, not by every request: their
//! listing (kept while its folders' stamps hold) and each file's stamp, so a
//! file added, removed, renamed or edited beside a skill is told as
//! `resources/list_changed` within one poll.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use skillkit_parser::layout::Stamp;

use crate::catalog::{Catalog, Snapshot};
use crate::dispatch::files::files_beside;
use crate::dispatch::toolset::{Cache as ToolCache, ToolSet};
use crate::skill::Skill;

/// How often the catalog is queried for changes while a client is
/// connected, unless [`McpServer::watch`](super::McpServer::watch) says
/// otherwise.
///
/// ```
/// assert_eq!(skillkit::mcp::DEFAULT_WATCH_INTERVAL.as_secs(), 2);
/// ```
pub const DEFAULT_WATCH_INTERVAL: Duration = Duration::from_secs(2);

/// What the lists of one snapshot show, hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lists {
    tools: u64,
    prompts: u64,
    resources: u64,
}

impl Lists {
    fn of(snapshot: &Snapshot, tools: &ToolSet) -> Lists {
        let (mut tool_hash, mut prompts, mut resources) = (
            DefaultHasher::new(),
            DefaultHasher::new(),
            DefaultHasher::new(),
        );
        for skill in snapshot.skills() {
            if skill.user_invocable() {
                (&skill.name, &skill.description, skill.argument_hint()).hash(&mut prompts);
            }
            (&skill.name, &skill.description, &skill.location).hash(&mut resources);
            if let Some(location) = skill.location.as_deref() {
                format!("{:?}", Stamp::of(location)).hash(&mut resources);
            }
        }
        for (definition, full) in tools.definitions.iter().zip(tools.full_names.iter()) {
            (&definition.name, full, &definition.description).hash(&mut tool_hash);
            definition.input_schema.to_string().hash(&mut tool_hash);
        }
        Lists {
            tools: tool_hash.finish(),
            prompts: prompts.finish(),
            resources: resources.finish(),
        }
    }
}

/// The last query seen and the clients to tell of a change.
#[derive(Default)]
struct State {
    skills: Vec<Arc<Skill>>,
    lists: Option<Lists>,
    /// The files beside the skills, hashed, at the last poll.
    beside: Option<u64>,
    peers: Vec<Peer<RoleServer>>,
    /// The open `subscriptions/listen` streams, by a number of their own.
    listeners: Vec<(u64, SubscriptionSink)>,
    next_listener: u64,
}

/// The change watch of one server, shared by all its connections.
pub(super) struct Changes {
    catalog: Catalog,
    /// The server's tool set, built once per change for the comparison and
    /// the requests alike.
    tools: Arc<ToolCache>,
    interval: Option<Duration>,
    /// Whether the tool set offers `run_skill_script`.
    scripts: bool,
    polling: AtomicBool,
    state: Mutex<State>,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes")
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl Changes {
    /// The watch of `catalog` (whose tool set `tools` caches), polled every
    /// `interval` (never with `None`).
    pub(super) fn new(
        catalog: Catalog,
        tools: Arc<ToolCache>,
        interval: Option<Duration>,
        scripts: bool,
    ) -> Changes {
        Changes {
            catalog,
            tools,
            interval,
            scripts,
            polling: AtomicBool::new(false),
            state: Mutex::new(State::default()),
        }
    }

    /// How often the catalog is polled.
    pub(super) fn interval(&self) -> Option<Duration> {
        self.interval
    }

    /// Tells `peer` of the changes found from now on, and starts the poll
    /// when it is not running.
    pub(super) fn join(self: &Arc<Self>, peer: Peer<RoleServer>) {
        if let Ok(mut state) = self.state.lock() {
            state.peers.push(peer);
        }
        self.start_polling();
    }

    /// Tells `sink` (an open `subscriptions/listen` stream) of the changes
    /// found from now on, until [`unlisten`](Self::unlisten) with the number
    /// returned; starts the poll when it is not running.
    pub(super) fn listen(self: &Arc<Self>, sink: SubscriptionSink) -> u64 {
        let mut number = 0;
        if let Ok(mut state) = self.state.lock() {
            number = state.next_listener;
            state.next_listener += 1;
            state.listeners.push((number, sink));
        }
        self.start_polling();
        number
    }

    /// What the lists showed at the last query (`None` before the first).
    pub(super) fn lists(&self) -> Option<Lists> {
        self.state.lock().ok().and_then(|state| state.lists)
    }

    /// Tells `sink` of each list that changed since they showed `since`:
    /// a stream is acknowledged before it is registered, so a change found
    /// in between (by the poll, or a request) is told this way. When what
    /// they showed then is unknown (no query had been made), every list is
    /// told: a change made after the acknowledgement is never lost, at the
    /// cost of a client listing once more.
    pub(super) async fn catch_up(&self, sink: &SubscriptionSink, since: Option<Lists>) {
        let Some(now) = self.lists() else {
            return;
        };
        let since = since.unwrap_or(Lists {
            tools: !now.tools,
            prompts: !now.prompts,
            resources: !now.resources,
        });
        Changed::between(since, now).tell_stream(sink).await;
    }

    /// Stops telling the stream `number` of changes.
    pub(super) fn unlisten(&self, number: u64) {
        if let Ok(mut state) = self.state.lock() {
            state.listeners.retain(|(n, _)| *n != number);
        }
    }

    fn start_polling(self: &Arc<Self>) {
        if let Some(interval) = self.interval
            && !self.polling.swap(true, Ordering::AcqRel)
        {
            tokio::spawn(poll(Arc::downgrade(self), interval));
        }
    }

    /// Compares `snapshot` with the previous query and notifies every
    /// connected client of each list that changed (in the background).
    pub(super) fn observe(&self, snapshot: &Snapshot) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let same = state.skills.len() == snapshot.skills().count()
            && state
                .skills
                .iter()
                .zip(snapshot.skills())
                .all(|(a, b)| Arc::ptr_eq(a, b));
        if same && state.lists.is_some() {
            return;
        }
        state.skills = snapshot.skills().cloned().collect();
        let lists = Lists::of(
            snapshot,
            &self.tools.get(snapshot, &super::tools::scope(self.scripts)),
        );
        let Some(before) = state.lists.replace(lists) else {
            return;
        };
        if before == lists {
            return;
        }
        tracing::debug!("the catalog changed");
        tell(state, Changed::between(before, lists));
    }

    /// Compares the files beside the skills of `snapshot` with the last
    /// poll's, and tells every client that the resources changed when they
    /// did (the skills themselves are [`observe`](Self::observe)d).
    pub(super) fn observe_beside(&self, snapshot: &Snapshot) {
        let now = beside(snapshot);
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let Some(before) = state.beside.replace(now) else {
            return;
        };
        if before == now {
            return;
        }
        tracing::debug!("a file beside a skill changed");
        tell(
            state,
            Changed {
                tools: false,
                prompts: false,
                resources: true,
            },
        );
    }

    /// Whether a client is connected.
    fn watched(&self) -> bool {
        self.state.lock().is_ok_and(|mut state| {
            state.peers.retain(|peer| !peer.is_transport_closed());
            !state.peers.is_empty() || !state.listeners.is_empty()
        })
    }
}

/// Which lists changed.
#[derive(Debug, Clone, Copy)]
struct Changed {
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl Changed {
    /// The lists that differ between `before` and `now`.
    fn between(before: Lists, now: Lists) -> Changed {
        Changed {
            tools: now.tools != before.tools,
            prompts: now.prompts != before.prompts,
            resources: now.resources != before.resources,
        }
    }

    /// Tells `sink` (an open `subscriptions/listen` stream; it drops what it
    /// did not ask for, and refuses once it ended).
    async fn tell_stream(self, sink: &SubscriptionSink) {
        if self.tools {
            let _ = sink.notify_tool_list_changed().await;
        }
        if self.prompts {
            let _ = sink.notify_prompt_list_changed().await;
        }
        if self.resources {
            let _ = sink.notify_resource_list_changed().await;
        }
    }

    /// Tells `peer` (a client connected by the handshake; one that left
    /// meanwhile is dropped at the next change).
    async fn tell_peer(self, peer: &Peer<RoleServer>) {
        if self.tools {
            let _ = peer.notify_tool_list_changed().await;
        }
        if self.prompts {
            let _ = peer.notify_prompt_list_changed().await;
        }
        if self.resources {
            let _ = peer.notify_resource_list_changed().await;
        }
    }
}

/// Tells every connected client and open stream of the `changed` lists, in
/// the background; reads who they are under the lock's guard `state`, and
/// releases it before sending.
fn tell(mut state: std::sync::MutexGuard<'_, State>, changed: Changed) {
    state.peers.retain(|peer| !peer.is_transport_closed());
    let peers = state.peers.clone();
    let listeners: Vec<SubscriptionSink> = state.listeners.iter().map(|(_, s)| s.clone()).collect();
    drop(state);
    tokio::spawn(async move {
        for sink in &listeners {
            changed.tell_stream(sink).await;
        }
        for peer in &peers {
            changed.tell_peer(peer).await;
        }
    });
}

/// Queries the catalog every `interval`, and as soon as a folder the
/// process watches changes (a `Local`'s, through the process's watch), while
/// a client is connected, until the server is dropped.
async fn poll(changes: Weak<Changes>, interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut activity = crate::providers::activity();
    loop {
        match &mut activity {
            Some(watch) => tokio::select! {
                _ = ticks.tick() => {}
                changed = watch.changed() => {
                    if changed.is_err() {
                        activity = None;
                    }
                }
            },
            None => {
                ticks.tick().await;
            }
        }
        let Some(changes) = changes.upgrade() else {
            return;
        };
        if changes.watched() {
            let snapshot = changes.catalog.snapshot().await;
            changes.observe(&snapshot);
            // One stat per folder (while its listing holds) and per file.
            let watch = Arc::clone(&changes);
            let _ = tokio::task::spawn_blocking(move || watch.observe_beside(&snapshot)).await;
        }
    }
}

/// The files beside every skill of `snapshot` read from a folder: each
/// one's path and stamp, hashed.
fn beside(snapshot: &Snapshot) -> u64 {
    let mut hash = DefaultHasher::new();
    for skill in snapshot.skills() {
        let Some(dir) = skill.dir() else {
            continue;
        };
        let listing = files_beside(dir);
        (dir, listing.whole).hash(&mut hash);
        for file in &listing.files {
            file.hash(&mut hash);
            format!("{:?}", Stamp::of(&dir.join(file))).hash(&mut hash);
        }
    }
    hash.finish()
}
