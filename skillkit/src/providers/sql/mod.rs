//! [`Sql`]: skills and agents kept as rows of a SQL database, one store
//! shared by every catalog that reads it, fresh on every query and cheap.
//!
//! SQLite (a file, or in memory; compiled in, no server) with the `sql`
//! feature; PostgreSQL too, for agents on many machines, with the `postgres`
//! feature. The schema is created by embedded migrations on first use.
//!
//! **Fresh and cheap.** Every write bumps a revision counter (in the same
//! transaction) and stamps the rows it touches with the new value. Every query
//! first reads the counter (one row, by its primary key): unchanged, and the
//! kits already built are the answer; changed, and only the rows stamped after
//! the revision held are read, in one snapshot, so every answer is exactly one
//! revision of the store. A write by another process is seen by the very next
//! query. The counter's row also holds the store's identity, made anew with
//! the store: a store dropped and created again is read whole, whatever its
//! revision. Write through [`Sql`]'s methods (or bump the counter and stamp the
//! rows yourself, as they do): the revision is what readers go by.
//!
//! **Faults.** A database that is down, a statement it does not answer within the
//! [timeout](SqlBuilder::timeout): the query fails with an [`SqlError`], which
//! a [`Catalog`](crate::Catalog) logs before serving its other providers; the
//! next query tries again, on fresh connections. A row that cannot be served
//! (a bad name, broken JSON, a pasted `SKILL.md` with broken frontmatter) is
//! skipped with a [`Diagnostic`](skillkit_parser::Diagnostic) that names the row
//! (`skillkit_skills/<kit>/<name>`), kept in its kit's
//! [`diagnostics`](crate::Kit::diagnostics).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use skillkit::{Catalog, Skill, Sql};
//!
//! let sql = Sql::open("sqlite::memory:").unwrap();
//! let catalog = Catalog::builder().provider(sql.clone()).build();
//! sql.put_skill("greet", &Skill::new("hello", "Say hello.").with_body("Hello, $ARGUMENTS!"))
//!     .await
//!     .unwrap();
//! let skill = catalog.get_skill("greet:hello").await.unwrap();
//! assert_eq!(skill.description, "Say hello.");
//! # });
//! ```

mod builder;
mod cache;
mod connection;
mod error;
mod rows;
mod schema;
mod store;

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

pub use builder::SqlBuilder;
use cache::Rows;
pub(crate) use connection::step;
pub use error::SqlError;
use rows::{AgentRow, SkillRow};

use crate::kit::Kit;
use crate::provider::{KitProvider, ProviderError};

/// How long the database may take to answer one step (a connection, a
/// statement, a commit) of a query or write, by default (less than the
/// catalog's own limit, so the provider reports first, saying what happened).
///
/// ```
/// assert!(skillkit::providers::sql::DEFAULT_TIMEOUT < skillkit::catalog::DEFAULT_TIMEOUT);
/// ```
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// How many connections a provider opens at most, by default.
///
/// ```
/// assert_eq!(skillkit::providers::sql::DEFAULT_MAX_CONNECTIONS, 5);
/// ```
pub const DEFAULT_MAX_CONNECTIONS: u32 = 5;

/// Skills and agents as rows of a SQLite or PostgreSQL database, served as
/// kits (rows grouped by their `kit` column). A cheap, cloneable handle: clones
/// share the connections and what was read.
///
/// [`Sql::open`] takes a URL: `sqlite://skills.db` (created if missing),
/// `sqlite::memory:` (private to this handle), `postgres://…` (with the
/// `postgres` feature). Nothing connects until the first query or write,
/// which also creates the tables; so a catalog starts even while the
/// database is down. The connections belong to the Tokio runtime of that
/// first call: use a handle within one runtime.
///
/// Writes ([`put_skill`](Sql::put_skill), [`delete_skill`](Sql::delete_skill),
/// [`put_agent`](Sql::put_agent), [`put_kit`](Sql::put_kit),
/// [`import`](Sql::import), …) each run in one transaction and return the
/// revision they made; every catalog reading the database, in this process
/// or another, sees them on its next query.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::{KitProvider, Skill, Sql};
/// # let dir = tempfile::tempdir().unwrap();
/// let url = format!("sqlite://{}", dir.path().join("skills.db").display());
///
/// let writer = Sql::open(&url).unwrap();
/// let reader = Sql::open(&url).unwrap(); // another pool, as another process would have
/// writer.put_skill("files", &Skill::new("read", "Read a file.")).await.unwrap();
/// let kits = reader.list_kits().await.unwrap();
/// assert_eq!(kits[0].skills[0].name, "files:read");
/// # });
/// ```
#[derive(Clone)]
pub struct Sql {
    inner: Arc<Inner>,
}

struct Inner {
    /// The connections, made at the first query or write (sqlx's pool needs
    /// to run inside a Tokio runtime, which `Sql::open` does not), and made
    /// anew when one was found lost (see [`Sql::run`]).
    pool: Mutex<Connections>,
    connect: Connect,
    /// The URL without credentials: `sql:<url>` names the provider.
    database: String,
    /// The user the URL names (empty for SQLite), for errors.
    user: String,
    /// Where the server is (PostgreSQL), to tell at once that nothing
    /// listens there.
    address: Option<connection::Address>,
    label: String,
    timeout: Duration,
    migrated: tokio::sync::OnceCell<()>,
    /// The last answer: the kits of one revision.
    answer: Mutex<Arc<Answer>>,
    /// The rows read so far; held by the query that reads changes.
    rows: tokio::sync::Mutex<Rows>,
}

#[derive(Default)]
struct Answer {
    /// The store's revision and identity; `None` before the first read.
    state: Option<State>,
    kits: Vec<Kit>,
}

impl std::fmt::Debug for Sql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sql")
            .field("database", &self.inner.database)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// The connections: one concrete sqlx pool per backend (see [`on_pool!`]).
#[derive(Clone)]
pub(crate) enum Pool {
    Sqlite(sqlx::SqlitePool),
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
}

/// The pool in use, if made yet, and how many pools came before it.
#[derive(Default)]
struct Connections {
    generation: u64,
    pool: Option<Pool>,
}

/// Makes the pool (see [`Inner::pool`]).
type Connect = Box<dyn Fn() -> Pool + Send + Sync>;

/// Runs `$body` with `$p` bound to the concrete pool. The body is compiled
/// once per backend, so each query is written once and type-checked against
/// each driver, with no trait bounds to spell out and no dynamic `Any` layer
/// (whose value conversions and URL-only options the SQLite-specific settings
/// would not survive).
macro_rules! on_pool {
    ($pool:expr, $p:ident => $body:expr) => {
        match $pool {
            Pool::Sqlite($p) => $body,
            #[cfg(feature = "postgres")]
            Pool::Postgres($p) => $body,
        }
    };
}
pub(crate) use on_pool;

impl Sql {
    /// The provider for database `url` (see [`Sql`]), with the default
    /// settings. Fails only on a URL it cannot use; nothing connects yet.
    ///
    /// ```
    /// let sql = skillkit::Sql::open("sqlite://skills.db").unwrap();
    /// assert_eq!(skillkit::KitProvider::name(&sql), "sql:sqlite://skills.db");
    /// ```
    pub fn open(url: impl AsRef<str>) -> Result<Sql, SqlError> {
        Sql::builder(url).build()
    }

    /// A builder, to set the timeout or the number of connections.
    ///
    /// ```
    /// let sql = skillkit::Sql::builder("sqlite::memory:").max_connections(1).build().unwrap();
    /// ```
    pub fn builder(url: impl AsRef<str>) -> SqlBuilder {
        SqlBuilder::new(url.as_ref())
    }

    /// The store's revision now: bumped by every write, from any process.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let sql = skillkit::Sql::open("sqlite::memory:").unwrap();
    /// let before = sql.revision().await.unwrap();
    /// let after = sql.put_skill("k", &skillkit::Skill::new("a", "A.")).await.unwrap();
    /// assert_eq!(after, before + 1);
    /// # });
    /// ```
    pub async fn revision(&self) -> Result<i64, SqlError> {
        self.ready().await?;
        let limit = self.inner.timeout;
        self.run(
            |pool| async move {
                on_pool!(&pool, p => step(limit, sqlx::query_scalar(schema::REVISION).fetch_one(p)).await)
            },
            || true,
        )
        .await
    }

    /// The kits as of now: the answer already built when the store and its
    /// revision are unchanged, else the changed rows applied to it (all the
    /// rows, for a store created anew).
    async fn kits(&self) -> Result<Arc<Answer>, SqlError> {
        self.ready().await?;
        let limit = self.inner.timeout;
        let state: State = self
            .run(
                |pool| async move {
                    on_pool!(&pool, p => step(limit, sqlx::query_as(schema::STATE).fetch_one(p)).await)
                },
                || true,
            )
            .await?;
        let held = self.answer();
        if held.state.as_ref() == Some(&state) {
            return Ok(held);
        }
        let mut rows = self.inner.rows.lock().await;
        let held = self.answer();
        if held.state.as_ref() == Some(&state) {
            // Another query read the same changes while this one waited.
            return Ok(held);
        }
        let changes = self.changes(rows.state.clone()).await?;
        if changes.since == 0 {
            // The first read, or another store: nothing held applies.
            *rows = Rows::default();
        }
        rows.apply(
            &self.inner.label,
            changes.state,
            changes.skills,
            changes.agents,
        );
        let answer = Arc::new(Answer {
            state: rows.state.clone(),
            kits: rows.kits(),
        });
        *self
            .inner
            .answer
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = answer.clone();
        Ok(answer)
    }

    fn answer(&self) -> Arc<Answer> {
        self.inner
            .answer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The store's state now and the rows written after `held` (the state
    /// of the rows held: all rows when it is another store, or none is
    /// held), read in one snapshot.
    async fn changes(&self, held: Option<State>) -> Result<Changes, SqlError> {
        let limit = self.inner.timeout;
        let attempt = |pool: Pool| {
            let held = held.clone();
            async move {
                on_pool!(&pool, p => {
                    let mut tx = step(limit, p.begin_with(schema::snapshot(p))).await?;
                    let state: State =
                        step(limit, sqlx::query_as(schema::STATE).fetch_one(&mut *tx)).await?;
                    let since = match held {
                        Some((revision, store)) if store == state.1 && revision <= state.0 => revision,
                        _ => 0,
                    };
                    let skills = sqlx::query_as(schema::SKILLS_SINCE)
                        .bind(since)
                        .bind(state.0)
                        .fetch_all(&mut *tx);
                    let skills = step(limit, skills).await?;
                    let agents = sqlx::query_as(schema::AGENTS_SINCE)
                        .bind(since)
                        .bind(state.0)
                        .fetch_all(&mut *tx);
                    let agents = step(limit, agents).await?;
                    step(limit, tx.commit()).await?;
                    Ok(Changes { state, since, skills, agents })
                })
            }
        };
        self.run(attempt, || true).await
    }
}

/// A store's revision and identity (see [`schema::STATE`]).
type State = (i64, String);

/// What [`Sql::changes`] read.
struct Changes {
    state: State,
    /// The revision the rows were read after: 0 for all of them.
    since: i64,
    skills: Vec<SkillRow>,
    agents: Vec<AgentRow>,
}

// Not listed when a type is not a provider: the note on `KitProvider` says
// what to write, and the list of SkillKit's own providers would not help.
#[diagnostic::do_not_recommend]
#[async_trait::async_trait]
impl KitProvider for Sql {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.inner.label)
    }

    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        Ok(self.kits().await?.kits.clone())
    }

    async fn get_kit(&self, name: &str) -> Result<Option<Kit>, ProviderError> {
        let answer = self.kits().await?;
        Ok(answer.kits.iter().find(|kit| kit.name == name).cloned())
    }
}
