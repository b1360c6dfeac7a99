//! The schema: embedded migrations, run on first use, and the SQL text every
//! query and write uses (the same on SQLite and PostgreSQL).
//!
//! Tables (see `migrations/sqlite` and `migrations/postgres`):
//!
//! * `skillkit_revision`: one row, the store's revision, bumped by every
//!   write, and its identity, made with the store;
//! * `skillkit_skills`: a row per skill, keyed by `(kit, name)`;
//! * `skillkit_agents`: a row per agent, keyed by `(kit, root, name)`.
//!
//! Every row carries the revision of the write that last touched it; a
//! deleted row stays as a tombstone (`deleted`) so that readers learn of it.

use sqlx::migrate::Migrator;

/// The SQLite schema, embedded at build time.
pub(super) static SQLITE: Migrator = sqlx::migrate!("migrations/sqlite");

/// The PostgreSQL schema, embedded at build time.
#[cfg(feature = "postgres")]
pub(super) static POSTGRES: Migrator = sqlx::migrate!("migrations/postgres");

/// How often the migrations are tried when other processes create the
/// schema at the same moment. SQLite has no migration lock: a process lists
/// the migrations applied, and one that another process applies meanwhile
/// fails its try (its `CREATE TABLE` or its version row refused); the next
/// try lists again. Each failed try so means one more migration applied, so
/// one try more than there are migrations always ends, whatever the number
/// of processes (and one more is kept in hand).
pub(super) fn migration_tries() -> usize {
    SQLITE.migrations.len() + 2
}

/// The store's revision: one read of one row by its primary key.
pub(super) const REVISION: &str = "SELECT revision FROM skillkit_revision WHERE id = 1";

/// The store's revision and identity (made anew with the store, so a store
/// dropped and created again is told apart from the one it replaced): the
/// same one read.
pub(super) const STATE: &str = "SELECT revision, store FROM skillkit_revision WHERE id = 1";

/// Bumps the revision; the first statement of every write, so that writers
/// queue on the counter's row and commit in revision order.
pub(super) const BUMP: &str =
    "UPDATE skillkit_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision";

/// What differs between the backends, besides the SQL types of the
/// migrations.
pub(super) trait Backend: sqlx::Database {
    /// The embedded schema.
    const MIGRATOR: &'static Migrator;
    /// The statement that begins a read transaction that is one snapshot.
    const SNAPSHOT: &'static str;
}

impl Backend for sqlx::Sqlite {
    const MIGRATOR: &'static Migrator = &SQLITE;
    /// A SQLite transaction is one snapshot from its first read on.
    const SNAPSHOT: &'static str = "BEGIN";
}

#[cfg(feature = "postgres")]
impl Backend for sqlx::Postgres {
    const MIGRATOR: &'static Migrator = &POSTGRES;
    const SNAPSHOT: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";
}

/// The schema of `pool`'s backend.
pub(super) fn migrator<DB: Backend>(_pool: &sqlx::Pool<DB>) -> &'static Migrator {
    DB::MIGRATOR
}

/// The statement that begins a snapshot on `pool`'s backend.
pub(super) fn snapshot<DB: Backend>(_pool: &sqlx::Pool<DB>) -> &'static str {
    DB::SNAPSHOT
}

macro_rules! skill_columns {
    () => {
        "kit, name, description, body, license, compatibility, allowed_tools, metadata, model, \
         required_scope, extra, revision, deleted"
    };
}

macro_rules! agent_columns {
    () => {
        "kit, root, name, description, model, system_prompt, tools, max_turns, max_agent_depth, \
         metadata, extra, revision, deleted"
    };
}

/// The skill rows written after revision `$1`, up to `$2`.
pub(super) const SKILLS_SINCE: &str = concat!(
    "SELECT ",
    skill_columns!(),
    " FROM skillkit_skills WHERE revision > $1 AND revision <= $2"
);

/// The agent rows written after revision `$1`, up to `$2`.
pub(super) const AGENTS_SINCE: &str = concat!(
    "SELECT ",
    agent_columns!(),
    " FROM skillkit_agents WHERE revision > $1 AND revision <= $2"
);

/// Inserts or replaces a skill row (`$1`…`$12`, the last the revision).
pub(super) const PUT_SKILL: &str = concat!(
    "INSERT INTO skillkit_skills (",
    skill_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, FALSE) \
     ON CONFLICT (kit, name) DO UPDATE SET description = excluded.description, \
     body = excluded.body, license = excluded.license, compatibility = excluded.compatibility, \
     allowed_tools = excluded.allowed_tools, metadata = excluded.metadata, \
     model = excluded.model, required_scope = excluded.required_scope, extra = excluded.extra, \
     revision = excluded.revision, deleted = FALSE"
);

/// Tombstones skill `$2` (or `$3`, its prefixed form) of kit `$1` at revision `$4`.
pub(super) const DELETE_SKILL: &str = "UPDATE skillkit_skills SET deleted = TRUE, body = '', \
     revision = $4 WHERE kit = $1 AND (name = $2 OR name = $3) AND NOT deleted";

/// Tombstones every skill of kit `$1` at revision `$2`.
pub(super) const DELETE_KIT_SKILLS: &str = "UPDATE skillkit_skills SET deleted = TRUE, body = '', \
     revision = $2 WHERE kit = $1 AND NOT deleted";

/// Inserts or replaces an agent row (`$1`…`$12`, the last the revision).
pub(super) const PUT_AGENT: &str = concat!(
    "INSERT INTO skillkit_agents (",
    agent_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, FALSE) \
     ON CONFLICT (kit, root, name) DO UPDATE SET description = excluded.description, \
     model = excluded.model, system_prompt = excluded.system_prompt, tools = excluded.tools, \
     max_turns = excluded.max_turns, max_agent_depth = excluded.max_agent_depth, \
     metadata = excluded.metadata, extra = excluded.extra, revision = excluded.revision, \
     deleted = FALSE"
);

/// Tombstones agent `$3` (or `$4`, its prefixed form) of kit `$1` with role
/// `$2` (root or not) at revision `$5`.
pub(super) const DELETE_AGENT: &str = "UPDATE skillkit_agents SET deleted = TRUE, \
     system_prompt = '', revision = $5 \
     WHERE kit = $1 AND root = $2 AND (name = $3 OR name = $4) AND NOT deleted";

/// Tombstones the root agent of kit `$1` unless it is named `$2`, at revision `$3`.
pub(super) const DELETE_ROOT: &str = "UPDATE skillkit_agents SET deleted = TRUE, \
     system_prompt = '', revision = $3 WHERE kit = $1 AND root = TRUE AND name <> $2 AND NOT deleted";

/// Tombstones every agent of kit `$1` at revision `$2`.
pub(super) const DELETE_KIT_AGENTS: &str = "UPDATE skillkit_agents SET deleted = TRUE, \
     system_prompt = '', revision = $2 WHERE kit = $1 AND NOT deleted";
