//! [`SqlBuilder`]: the URL, timeout and connection limit of an [`Sql`]
//! provider, and the pools it makes.

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::cache::Rows;
use super::connection::Address;
use super::error::without_credentials;
use super::{Connect, DEFAULT_MAX_CONNECTIONS, DEFAULT_TIMEOUT, Inner, Pool, Sql, SqlError};

/// How long a connection may sit idle and still be used without a ping.
const TRUSTED_IDLE: Duration = Duration::from_secs(1);

/// Configures an [`Sql`] provider; [`Sql::builder`] starts one.
///
/// ```
/// let sql = skillkit::Sql::builder("sqlite::memory:")
///     .timeout(std::time::Duration::from_secs(2))
///     .max_connections(2)
///     .build()
///     .unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct SqlBuilder {
    url: String,
    timeout: Duration,
    max_connections: u32,
}

impl SqlBuilder {
    /// The default settings for `url` (see [`Sql::builder`]).
    pub(super) fn new(url: &str) -> Self {
        SqlBuilder {
            url: url.to_owned(),
            timeout: DEFAULT_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }

    /// How long the database may take to answer one step of a query or
    /// write: getting a connection, one statement, the commit
    /// ([`DEFAULT_TIMEOUT`] unless set). It bounds waiting, not work: a write
    /// of any size (an import of 10,000 skills is 10,000 statements in one
    /// transaction) succeeds as long as each statement is answered in time.
    /// PostgreSQL also cancels a statement that runs longer, on the server.
    ///
    /// ```
    /// let builder = skillkit::Sql::builder("sqlite::memory:").timeout(std::time::Duration::from_millis(500));
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The most connections to open ([`DEFAULT_MAX_CONNECTIONS`] unless set;
    /// an in-memory SQLite database always has one).
    ///
    /// ```
    /// let builder = skillkit::Sql::builder("sqlite::memory:").max_connections(1);
    /// ```
    pub fn max_connections(mut self, max: u32) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// The provider. Fails only on a URL it cannot use; nothing connects yet.
    ///
    /// ```
    /// assert!(skillkit::Sql::builder("sqlite://skills.db").build().is_ok());
    /// assert!(skillkit::Sql::builder("ftp://x").build().is_err());
    /// ```
    pub fn build(self) -> Result<Sql, SqlError> {
        let url = self.url.trim();
        let bad_url = || SqlError::Url(without_credentials(url));
        let target = if url.starts_with("sqlite:") {
            let connect = sqlx::sqlite::SqliteConnectOptions::from_str(url)
                .map_err(|_| bad_url())?
                .create_if_missing(true)
                .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
                .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
                .busy_timeout(self.timeout);
            let in_memory = url.contains(":memory:") || url.contains("mode=memory");
            let options = self.pool_options();
            // An in-memory database lives as long as a connection to it: keep one.
            let options = match in_memory {
                true => options
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None),
                false => options,
            };
            let database = url.split('?').next().unwrap_or(url).to_owned();
            let pool = move || Pool::Sqlite(options.clone().connect_lazy_with(connect.clone()));
            Target {
                connect: Box::new(pool),
                database,
                user: String::new(),
                address: None,
            }
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            postgres(url, &self).ok_or_else(bad_url)?
        } else {
            return Err(bad_url());
        };
        Ok(Sql {
            inner: Arc::new(Inner {
                pool: Mutex::default(),
                connect: target.connect,
                label: format!("sql:{}", target.database),
                database: target.database,
                user: target.user,
                address: target.address,
                timeout: self.timeout,
                migrated: tokio::sync::OnceCell::new(),
                answer: Mutex::new(Arc::default()),
                rows: tokio::sync::Mutex::new(Rows::default()),
            }),
        })
    }

    /// The pool settings. A connection idle for a while is pinged before it
    /// is used; one used a moment ago is not, so a query with nothing
    /// changed is one round trip, not two. One that died with its server in
    /// that moment is caught by [`Sql::run`], which connects afresh.
    fn pool_options<DB: sqlx::Database>(&self) -> sqlx::pool::PoolOptions<DB> {
        sqlx::pool::PoolOptions::new()
            .max_connections(self.max_connections)
            .acquire_timeout(self.timeout)
            .test_before_acquire(false)
            .before_acquire(|connection, meta| {
                Box::pin(async move {
                    if meta.idle_for < TRUSTED_IDLE {
                        return Ok(true);
                    }
                    Ok(sqlx::Connection::ping(connection).await.is_ok())
                })
            })
    }
}

/// What a URL opens: how to make the pool, the database's name without
/// credentials, the user, and where the server is (PostgreSQL).
struct Target {
    connect: Connect,
    database: String,
    user: String,
    address: Option<Address>,
}

/// What a PostgreSQL URL opens; `None` for a bad URL (or a build without
/// the `postgres` feature).
#[cfg(feature = "postgres")]
fn postgres(url: &str, builder: &SqlBuilder) -> Option<Target> {
    let timeout = builder.timeout;
    let connect = sqlx::postgres::PgConnectOptions::from_str(url)
        .ok()?
        .application_name("skillkit")
        .options([("statement_timeout", format!("{}", timeout.as_millis()))]);
    let database = format!(
        "postgres://{}:{}/{}",
        connect.get_host(),
        connect.get_port(),
        connect.get_database().unwrap_or_default()
    );
    // Where sqlx connects: a unix socket when one is named or the host is
    // a directory, else the host and port.
    let socket = match connect.get_socket() {
        Some(dir) => Some(dir.display().to_string()),
        None => Some(connect.get_host().to_owned()).filter(|host| host.starts_with('/')),
    };
    let address = match socket {
        Some(dir) => Address::Unix(format!("{dir}/.s.PGSQL.{}", connect.get_port()).into()),
        None => Address::Tcp(connect.get_host().to_owned(), connect.get_port()),
    };
    let user = connect.get_username().to_owned();
    let options = builder.pool_options();
    let pool = move || Pool::Postgres(options.clone().connect_lazy_with(connect.clone()));
    Some(Target {
        connect: Box::new(pool),
        database,
        user,
        address: Some(address),
    })
}

#[cfg(not(feature = "postgres"))]
fn postgres(_: &str, _: &SqlBuilder) -> Option<Target> {
    None
}
