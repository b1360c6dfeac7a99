//! Sessions: an agent's conversation kept in a [`SessionStore`], so it
//! outlives the process ([`AgentOptions::session`](crate::agent::AgentOptions::session)).
//!
//! A session is a list of items (the agent's history messages), each with
//! its sequence number (1, 2, …). Its **version** is the number of its last
//! item (0 when empty). A write names the version it expects: a writer
//! that did not see the latest items is refused ([`SessionError::Stale`]),
//! never interleaved, and reloads before it writes again. The agent does so
//! by itself: two processes appending to one session both keep every item,
//! in the order the store accepted them.

mod file;
#[cfg(feature = "sql")]
mod sql;

use std::sync::Arc;
use std::time::SystemTime;

pub use file::FileSessionStore;

use crate::llm::Message;

/// One item of a session: a history message and its sequence number.
///
/// ```
/// use skillkit::agent::session::SessionItem;
/// use skillkit::llm::Message;
/// let item = SessionItem { seq: 1, message: Message::user("Hi") };
/// assert_eq!(item.seq, 1);
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionItem {
    /// Its place in the session, from 1.
    pub seq: u64,
    /// The message.
    pub message: Message,
}

/// What [`SessionStore::load`] read: the items asked for and the session's
/// version (the number of its last item; 0 for a session with none).
///
/// ```
/// let loaded = skillkit::agent::session::Loaded::default();
/// assert_eq!(loaded.version, 0);
/// assert!(loaded.items.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Loaded {
    /// The items, oldest first.
    pub items: Vec<SessionItem>,
    /// The session's version: give it to the next write.
    pub version: u64,
}

/// What a session is about, set with [`SessionStore::describe`]: a title for
/// people, and the agent that holds the conversation (the agent sets it at
/// its first write).
///
/// ```
/// use skillkit::agent::session::SessionMeta;
/// let meta = SessionMeta::default().title("Refund for order 4711");
/// assert_eq!(meta.title.as_deref(), Some("Refund for order 4711"));
/// assert_eq!(meta.agent, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct SessionMeta {
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The agent's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl SessionMeta {
    /// The same, titled `title`.
    ///
    /// ```
    /// let meta = skillkit::agent::session::SessionMeta::default().title("Onboarding");
    /// # let _ = meta;
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> SessionMeta {
        self.title = Some(title.into());
        self
    }

    /// The same, naming agent `agent`.
    ///
    /// ```
    /// let meta = skillkit::agent::session::SessionMeta::default().agent("support");
    /// assert_eq!(meta.agent.as_deref(), Some("support"));
    /// ```
    pub fn agent(mut self, agent: impl Into<String>) -> SessionMeta {
        self.agent = Some(agent.into());
        self
    }
}

/// A session as [`SessionStore::list`] shows it.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::agent::session::{FileSessionStore, SessionStore};
/// use skillkit::llm::Message;
/// let dir = tempfile::tempdir().unwrap();
/// let store = FileSessionStore::new(dir.path());
/// store.append("s1", 0, &[Message::user("Hi")]).await.unwrap();
/// let sessions = store.list().await.unwrap();
/// assert_eq!((sessions[0].id.as_str(), sessions[0].version), ("s1", 1));
/// assert!(sessions[0].updated.is_some() && sessions[0].error.is_none());
/// // A damaged session is listed with why, beside the others.
/// std::fs::write(dir.path().join("s2.jsonl"), "not json\n").unwrap();
/// let sessions = store.list().await.unwrap();
/// assert_eq!(sessions.len(), 2);
/// assert!(sessions[1].error.as_deref().unwrap().starts_with("its last line"));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// Its id.
    pub id: String,
    /// Its version (how many items it has had: the number of the last).
    pub version: u64,
    /// Its title and agent.
    pub meta: SessionMeta,
    /// When it was created, where the store knows.
    pub created: Option<SystemTime>,
    /// When it was last written, where the store knows.
    pub updated: Option<SystemTime>,
    /// Why its items cannot be read, when they cannot (a damaged file,
    /// something else than a file in its place): it is listed all the
    /// same, at version 0, so one damaged session does not hide the others,
    /// and [`clear`](SessionStore::clear) removes it.
    pub error: Option<String>,
}

/// What a [`SessionStore`] could not do.
///
/// ```
/// use skillkit::agent::session::SessionError;
/// let stale = SessionError::Stale { session: "s1".into(), expected: 3, found: 5 };
/// assert!(stale.to_string().contains("reload"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The session moved on since the writer read it.
    #[error(
        "session `{session}` is at version {found}, not {expected}: another writer added to it; reload it and write again"
    )]
    Stale {
        /// The session.
        session: String,
        /// The version the write expected.
        expected: u64,
        /// The version the store has.
        found: u64,
    },
    /// An id the store does not take (see [`valid_id`]).
    #[error(
        "`{0}` is not a session id: use 1 to 128 letters, digits, `-`, `_` or `.`, not starting with `.`"
    )]
    InvalidId(String),
    /// No session of that id (for a fork's source).
    #[error("there is no session `{0}`")]
    NotFound(String),
    /// A fork's new id is taken.
    #[error("session `{0}` exists already: choose another id for the fork")]
    Exists(String),
    /// A stored session that cannot be read.
    #[error("session `{session}` cannot be read: {reason}")]
    Corrupt {
        /// The session.
        session: String,
        /// What is wrong, and where.
        reason: String,
    },
    /// The store's storage failed.
    #[error("the session store failed: {0}")]
    Io(#[from] std::io::Error),
    /// The store's database failed (down, timed out, refused).
    #[error("the session store failed: {0}")]
    Store(Box<dyn std::error::Error + Send + Sync>),
}

/// Whether `id` is one every store takes: 1 to 128 ASCII letters, digits,
/// `-`, `_` or `.`, not starting with `.` (so a file store may name a file
/// after it, and no id is a path).
///
/// ```
/// use skillkit::agent::session::valid_id;
/// assert!(valid_id("support-4711"));
/// assert!(!valid_id("../etc/passwd"));
/// assert!(!valid_id(".hidden"));
/// assert!(!valid_id(""));
/// ```
pub fn valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `id` when it is [valid](valid_id), else the error that says what an id is.
pub(crate) fn checked_id(id: &str) -> Result<&str, SessionError> {
    match valid_id(id) {
        true => Ok(id),
        false => Err(SessionError::InvalidId(id.to_owned())),
    }
}

/// Where sessions are kept. Every method is one atomic step: a write that
/// expects a version other than the session's is refused whole.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::agent::session::{FileSessionStore, SessionError, SessionStore};
/// use skillkit::llm::Message;
/// let dir = tempfile::tempdir().unwrap();
/// let store = FileSessionStore::new(dir.path());
/// let version = store.append("s1", 0, &[Message::user("Hi")]).await.unwrap();
/// assert_eq!(version, 1);
/// // A writer that did not see item 1 is refused.
/// let stale = store.append("s1", 0, &[Message::user("Hello")]).await;
/// assert!(matches!(stale, Err(SessionError::Stale { found: 1, .. })));
/// # });
/// ```
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// The session's last `last` items (all when `None`) and its version;
    /// an unknown session is empty, at version 0.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::agent::session::{FileSessionStore, SessionStore};
    /// use skillkit::llm::Message;
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = FileSessionStore::new(dir.path());
    /// store.append("s1", 0, &[Message::user("Hi"), Message::user("Still there?")]).await.unwrap();
    /// let last = store.load("s1", Some(1)).await.unwrap();
    /// assert_eq!((last.items.len(), last.items[0].seq, last.version), (1, 2, 2));
    /// assert_eq!(last.items[0].message, Message::user("Still there?"));
    /// // An unknown session is empty, at version 0.
    /// assert_eq!(store.load("new", None).await.unwrap().version, 0);
    /// # });
    /// ```
    async fn load(&self, id: &str, last: Option<usize>) -> Result<Loaded, SessionError>;

    /// Adds `messages` after item `expected` (the version the writer read);
    /// returns the new version. [`SessionError::Stale`] when the session is
    /// at another version: nothing is written.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::agent::session::{FileSessionStore, SessionStore};
    /// use skillkit::llm::Message;
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = FileSessionStore::new(dir.path());
    /// let version = store.append("s1", 0, &[Message::user("Hi")]).await.unwrap();
    /// let version = store.append("s1", version, &[Message::user("Again")]).await.unwrap();
    /// assert_eq!(version, 2);
    /// // A second writer that read version 1 is refused, and nothing is added.
    /// assert!(store.append("s1", 1, &[Message::user("Late")]).await.is_err());
    /// assert_eq!(store.load("s1", None).await.unwrap().items.len(), 2);
    /// # });
    /// ```
    async fn append(
        &self,
        id: &str,
        expected: u64,
        messages: &[Message],
    ) -> Result<u64, SessionError>;

    /// Takes the last item off (at version `expected`, else
    /// [`SessionError::Stale`]); `None` when the session is empty.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::agent::session::{FileSessionStore, SessionStore};
    /// use skillkit::llm::Message;
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = FileSessionStore::new(dir.path());
    /// let version = store.append("s1", 0, &[Message::user("Hi"), Message::user("Oops")]).await.unwrap();
    /// let popped = store.pop("s1", version).await.unwrap().unwrap();
    /// assert_eq!((popped.seq, popped.message), (2, Message::user("Oops")));
    /// assert_eq!(store.load("s1", None).await.unwrap().version, 1);
    /// assert!(store.pop("empty", 0).await.unwrap().is_none());
    /// # });
    /// ```
    async fn pop(&self, id: &str, expected: u64) -> Result<Option<SessionItem>, SessionError>;

    /// Removes the session (nothing when there is none).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::agent::session::{FileSessionStore, SessionStore};
    /// use skillkit::llm::Message;
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = FileSessionStore::new(dir.path());
    /// store.append("s1", 0, &[Message::user("Hi")]).await.unwrap();
    /// store.clear("s1").await.unwrap();
    /// assert_eq!(store.load("s1", None).await.unwrap().version, 0);
    /// store.clear("never-was").await.unwrap();
    /// # });
    /// ```
    async fn clear(&self, id: &str) -> Result<(), SessionError>;

    /// Every session, by id; one whose items cannot be read says why
    /// ([`SessionInfo::error`]) rather than fail the list.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::agent::session::{FileSessionStore, SessionStore};
    /// use skillkit::llm::Message;
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = FileSessionStore::new(dir.path());
    /// store.append("b", 0, &[Message::user("Hi")]).await.unwrap();
    /// store.append("a", 0, &[Message::user("Hello")]).await.unwrap();
    /// let ids: Vec<_> = store.list().await.unwrap().into_iter().map(|s| s.id).collect();
    /// assert_eq!(ids, ["a", "b"]);
    /// # });
    /// ```
    async fn list(&self) -> Result<Vec<SessionInfo>, SessionError>;

    /// Sets the title and agent of session `id` (a field left `None` keeps
    /// the one set before). The session need not have items yet.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::agent::session::{FileSessionStore, SessionStore};
    /// use skillkit::llm::Message;
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = FileSessionStore::new(dir.path());
    /// use skillkit::agent::session::SessionMeta;
    /// store.describe("s1", &SessionMeta::default().title("Refund")).await.unwrap();
    /// store.describe("s1", &SessionMeta::default().agent("support")).await.unwrap();
    /// let meta = &store.list().await.unwrap()[0].meta;
    /// assert_eq!((meta.title.as_deref(), meta.agent.as_deref()), (Some("Refund"), Some("support")));
    /// # });
    /// ```
    async fn describe(&self, id: &str, meta: &SessionMeta) -> Result<(), SessionError>;

    /// A new session `new_id` holding the items of `id` up to item `at`
    /// (numbered as they were); later writes to either leave the other.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::agent::session::{FileSessionStore, SessionStore};
    /// use skillkit::llm::Message;
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = FileSessionStore::new(dir.path());
    /// let version = store.append("s1", 0, &[Message::user("Hi"), Message::user("Plan A")]).await.unwrap();
    /// store.fork("s1", 1, "s1-b").await.unwrap();
    /// store.append("s1-b", 1, &[Message::user("Plan B")]).await.unwrap();
    /// let (a, b) = (store.load("s1", None).await.unwrap(), store.load("s1-b", None).await.unwrap());
    /// assert_eq!((a.version, &a.items[1].message), (version, &Message::user("Plan A")));
    /// assert_eq!((b.version, &b.items[1].message), (2, &Message::user("Plan B")));
    /// # });
    /// ```
    async fn fork(&self, id: &str, at: u64, new_id: &str) -> Result<(), SessionError>;

    /// Removes every session not written for `idle` (a time to live
    /// counted from the last write); returns their ids. A session whose
    /// last write the store does not know is kept.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use skillkit::agent::session::{FileSessionStore, SessionStore};
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = FileSessionStore::new(dir.path());
    /// store.append("fresh", 0, &[skillkit::llm::Message::user("Hi")]).await.unwrap();
    /// assert!(store.expire(Duration::from_secs(3600)).await.unwrap().is_empty());
    /// # });
    /// ```
    async fn expire(&self, idle: std::time::Duration) -> Result<Vec<String>, SessionError> {
        let Some(before) = SystemTime::now().checked_sub(idle) else {
            return Ok(Vec::new());
        };
        let mut expired = Vec::new();
        for session in self.list().await? {
            if session.updated.is_some_and(|updated| updated < before) {
                self.clear(&session.id).await?;
                expired.push(session.id);
            }
        }
        Ok(expired)
    }
}

/// A shared store is one.
#[async_trait::async_trait]
impl<S: SessionStore + ?Sized> SessionStore for Arc<S> {
    async fn load(&self, id: &str, last: Option<usize>) -> Result<Loaded, SessionError> {
        (**self).load(id, last).await
    }

    async fn append(
        &self,
        id: &str,
        expected: u64,
        messages: &[Message],
    ) -> Result<u64, SessionError> {
        (**self).append(id, expected, messages).await
    }

    async fn pop(&self, id: &str, expected: u64) -> Result<Option<SessionItem>, SessionError> {
        (**self).pop(id, expected).await
    }

    async fn clear(&self, id: &str) -> Result<(), SessionError> {
        (**self).clear(id).await
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, SessionError> {
        (**self).list().await
    }

    async fn describe(&self, id: &str, meta: &SessionMeta) -> Result<(), SessionError> {
        (**self).describe(id, meta).await
    }

    async fn fork(&self, id: &str, at: u64, new_id: &str) -> Result<(), SessionError> {
        (**self).fork(id, at, new_id).await
    }

    async fn expire(&self, idle: std::time::Duration) -> Result<Vec<String>, SessionError> {
        (**self).expire(idle).await
    }
}

/// The agent's end of a session: the store, the id, and how much of the
/// history the store holds.
#[derive(Debug)]
pub(crate) struct Saved {
    store: Arc<dyn SessionStore>,
    id: String,
    /// The agent's name, recorded at the session's first write.
    agent: String,
    /// Whether the session was read into the history yet.
    loaded: bool,
    /// Messages of the history the store holds (a prefix of it).
    saved: usize,
    /// The session's version when last read or written.
    version: u64,
}

impl Saved {
    pub(crate) fn new(store: Arc<dyn SessionStore>, id: String, agent: String) -> Saved {
        Saved {
            store,
            id,
            agent,
            loaded: false,
            saved: 0,
            version: 0,
        }
    }

    /// Brings `history` up to the session before a message is answered: the
    /// first time, the session's items replace its messages; later, when
    /// another writer added to the session, its items are read and put
    /// before the messages not written yet.
    pub(crate) async fn sync(
        &mut self,
        history: &std::sync::Mutex<crate::agent::History>,
    ) -> Result<(), SessionError> {
        if !self.loaded {
            let loaded = self.store.load(&self.id, None).await?;
            let mut history = history
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            history.messages = loaded.items.into_iter().map(|item| item.message).collect();
            self.saved = history.messages.len();
            self.version = loaded.version;
            self.loaded = true;
            return Ok(());
        }
        let head = self.store.load(&self.id, Some(0)).await?;
        if head.version != self.version {
            let theirs = self.store.load(&self.id, None).await?;
            self.adopt(history, theirs);
        }
        Ok(())
    }

    /// `history` made the session's items `theirs` followed by the messages
    /// this agent has not written yet.
    fn adopt(&mut self, history: &std::sync::Mutex<crate::agent::History>, theirs: Loaded) {
        let mut history = history
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = self.saved.min(history.messages.len());
        let ours = history.messages.split_off(at);
        history.messages = theirs.items.into_iter().map(|i| i.message).collect();
        self.saved = history.messages.len();
        self.version = theirs.version;
        history.messages.extend(ours);
    }

    /// Writes the messages of `history` the store does not hold yet, over
    /// the version last read: `false` when another writer appended
    /// meanwhile (nothing written, `history` unchanged), for a caller whose
    /// messages only make sense over what it read (a compaction).
    pub(crate) async fn commit(
        &mut self,
        history: &std::sync::Mutex<crate::agent::History>,
    ) -> Result<bool, SessionError> {
        let new: Vec<Message> = {
            let history = history
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            history.messages[self.saved.min(history.messages.len())..].to_vec()
        };
        if new.is_empty() {
            return Ok(true);
        }
        match self.store.append(&self.id, self.version, &new).await {
            Ok(version) => {
                self.wrote(version, new.len()).await?;
                Ok(true)
            }
            Err(SessionError::Stale { .. }) => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Records that `count` messages were written, the session now at
    /// `version`; names the agent at the session's first write.
    async fn wrote(&mut self, version: u64, count: usize) -> Result<(), SessionError> {
        let first = self.version == 0;
        self.version = version;
        self.saved += count;
        if first {
            let meta = SessionMeta::default().agent(self.agent.clone());
            self.store.describe(&self.id, &meta).await?;
        }
        Ok(())
    }

    /// Writes the messages of `history` the store does not hold yet. When
    /// another writer added to the session meanwhile, its items are read
    /// and put before ours in `history`, and ours written after them.
    pub(crate) async fn save(
        &mut self,
        history: &std::sync::Mutex<crate::agent::History>,
    ) -> Result<(), SessionError> {
        for _ in 0..8 {
            let new: Vec<Message> = {
                let history = history
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                history.messages[self.saved.min(history.messages.len())..].to_vec()
            };
            if new.is_empty() {
                return Ok(());
            }
            match self.store.append(&self.id, self.version, &new).await {
                Ok(version) => return self.wrote(version, new.len()).await,
                Err(SessionError::Stale { .. }) => {
                    let theirs = self.store.load(&self.id, None).await?;
                    self.adopt(history, theirs);
                }
                Err(error) => return Err(error),
            }
        }
        Err(SessionError::Stale {
            session: self.id.clone(),
            expected: self.version,
            found: self.version,
        })
    }
}
