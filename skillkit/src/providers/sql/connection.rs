//! The connections of an [`Sql`] provider: the pool, made at the first
//! query and made anew when its connections are lost; each step of a query
//! or write bounded by the timeout; and every failure named by its cause (a
//! login refused, a database missing, nothing listening, no answer in time).

use std::sync::PoisonError;
use std::time::Duration;

use sqlx::migrate::MigrateError;

use super::error::{Refusal, is_lost, is_unreachable, refusal};
use super::{Pool, Sql, SqlError, on_pool, schema};

impl Sql {
    /// The pool in use and its generation (made now if there is none).
    pub(super) fn pool(&self) -> (u64, Pool) {
        let mut current = self
            .inner
            .pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let generation = current.generation;
        let pool = current.pool.get_or_insert_with(|| (self.inner.connect)());
        (generation, pool.clone())
    }

    /// Drops pool `generation` if it is still the one in use, so the next
    /// query connects afresh; whether it did. A PostgreSQL connection dies
    /// with its server (a restart, a failover, a proxy timing out), and every
    /// idle connection of the pool died with it, pinged or not. SQLite's
    /// never do, and an in-memory database lives only in its pool: kept.
    fn forget(&self, generation: u64) -> bool {
        let mut current = self
            .inner
            .pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if current.generation != generation {
            // Another query replaced it meanwhile.
            return true;
        }
        if matches!(current.pool, Some(Pool::Sqlite(_))) {
            return false;
        }
        current.generation += 1;
        current.pool = None;
        true
    }

    /// Runs `attempt` on the pool, naming the database in its error; each
    /// step of it is bounded by the timeout (see [`step`]). When the
    /// connection turns out to be lost, the pool is replaced and, if
    /// `may_retry` says the attempt changed nothing yet, it runs once more on
    /// a fresh connection: the first query after a server restart succeeds.
    pub(crate) async fn run<T, F, Fut>(
        &self,
        attempt: F,
        may_retry: impl Fn() -> bool,
    ) -> Result<T, SqlError>
    where
        F: Fn(Pool) -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let mut tried = false;
        loop {
            let (generation, pool) = self.pool();
            self.reachable(&pool).await?;
            match attempt(pool).await {
                Ok(value) => return Ok(value),
                Err(Failure::Timeout) => {
                    return Err(SqlError::Timeout {
                        database: self.inner.database.clone(),
                        timeout: self.inner.timeout,
                    });
                }
                Err(Failure::Database(error)) => {
                    let fresh = is_lost(&error) && self.forget(generation);
                    if tried || !fresh || !may_retry() {
                        return Err(self.failed(error));
                    }
                    tried = true;
                }
            }
        }
    }

    /// `source`, named by its cause: a login refused, a database missing,
    /// or what else the database said.
    pub(super) fn failed(&self, source: sqlx::Error) -> SqlError {
        let database = self.inner.database.clone();
        match refusal(&source) {
            Some(Refusal::Login) => SqlError::Authentication {
                database,
                user: self.inner.user.clone(),
                source,
            },
            Some(Refusal::NoDatabase) => SqlError::NoDatabase { database, source },
            None => SqlError::Database { database, source },
        }
    }

    /// Fails at once, naming the address, when nothing accepts connections
    /// where a PostgreSQL pool with no connection yet would connect: sqlx's
    /// pool takes a refused connection for a server starting up and tries
    /// again until the timeout. A pool with connections needs no probe.
    async fn reachable(&self, pool: &Pool) -> Result<(), SqlError> {
        let Some(address) = &self.inner.address else {
            return Ok(());
        };
        let connected = on_pool!(pool, p => p.size() > 0);
        if connected {
            return Ok(());
        }
        match tokio::time::timeout(self.inner.timeout, address.probe()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(source)) => Err(SqlError::Unreachable {
                database: self.inner.database.clone(),
                address: address.to_string(),
                source,
            }),
            Err(_) => Err(SqlError::Timeout {
                database: self.inner.database.clone(),
                timeout: self.inner.timeout,
            }),
        }
    }

    /// How long one statement may take (`SqlBuilder::timeout`), for the
    /// agent's session store.
    #[cfg(feature = "agent")]
    pub(crate) fn statement_timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// Creates or updates the schema, once per handle (tried again on the
    /// next call when it failed).
    pub(crate) async fn ready(&self) -> Result<(), SqlError> {
        self.inner
            .migrated
            .get_or_try_init(|| async {
                let mut tries = 0;
                loop {
                    tries += 1;
                    let run = self.migrate().await;
                    match run {
                        Err(SqlError::Migrate { .. }) if tries < schema::migration_tries() => {}
                        other => return other,
                    }
                }
            })
            .await
            .copied()
    }

    async fn migrate(&self) -> Result<(), SqlError> {
        let database = self.inner.database.clone();
        let (generation, pool) = self.pool();
        self.reachable(&pool).await?;
        let run = async { on_pool!(&pool, p => schema::migrator(p).run(p).await) };
        let timeout = || SqlError::Timeout {
            database: database.clone(),
            timeout: self.inner.timeout,
        };
        match tokio::time::timeout(self.inner.timeout, run).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(MigrateError::Execute(sqlx::Error::PoolTimedOut))) | Err(_) => Err(timeout()),
            // Connecting failed: not the schema's fault, and not worth
            // another try (a wrong password, tried three times, is three
            // failed logins).
            Ok(Err(MigrateError::Execute(source)))
                if is_unreachable(&source) || refusal(&source).is_some() =>
            {
                if is_lost(&source) {
                    self.forget(generation);
                }
                Err(self.failed(source))
            }
            Ok(Err(source)) => Err(SqlError::Migrate { database, source }),
        }
    }
}

/// Why an attempt failed: what the database said, or a step that took
/// longer than the timeout.
pub(crate) enum Failure {
    Database(sqlx::Error),
    Timeout,
}

impl From<sqlx::Error> for Failure {
    fn from(error: sqlx::Error) -> Self {
        match error {
            sqlx::Error::PoolTimedOut => Failure::Timeout,
            error => Failure::Database(error),
        }
    }
}

/// Runs one step of a query or write (getting a connection, a statement, a
/// commit) within `limit`. The timeout bounds how long the database takes
/// to answer, not how much work a call holds: a write of 10,000 rows is
/// 10,000 steps, each of which may take the whole limit.
pub(crate) async fn step<T>(
    limit: Duration,
    step: impl Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(limit, step).await {
        Ok(outcome) => outcome.map_err(Failure::from),
        Err(_) => Err(Failure::Timeout),
    }
}

/// Where a PostgreSQL server is sought (see [`Sql::reachable`]).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(super) enum Address {
    /// A host name or address, and a port.
    Tcp(String, u16),
    /// A unix socket's path.
    Unix(std::path::PathBuf),
}

impl Address {
    /// Connects, and closes the connection at once (no PostgreSQL message
    /// is sent): whether anything listens there.
    async fn probe(&self) -> std::io::Result<()> {
        match self {
            Address::Tcp(host, port) => {
                tokio::net::TcpStream::connect((host.as_str(), *port)).await?;
            }
            #[cfg(unix)]
            Address::Unix(path) => {
                tokio::net::UnixStream::connect(path).await?;
            }
            #[cfg(not(unix))]
            Address::Unix(_) => {}
        }
        Ok(())
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Tcp(host, port) if host.contains(':') => write!(f, "[{host}]:{port}"),
            Address::Tcp(host, port) => write!(f, "{host}:{port}"),
            Address::Unix(path) => write!(f, "{}", path.display()),
        }
    }
}
