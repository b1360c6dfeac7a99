//! [`SqlError`]: why the SQL provider could not read or write, and how a
//! database error is told apart (unreachable, connection lost).

use std::time::Duration;

use crate::provider::ProviderError;

/// Why the SQL provider could not read or write.
///
/// ```
/// let err = skillkit::Sql::open("mysql://db/skills").unwrap_err();
/// assert!(err.to_string().contains("sqlite://"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqlError {
    /// The URL names no database SkillKit can open.
    #[error(
        "`{0}` is not a database URL SkillKit can open; use `sqlite://<file>`, `sqlite::memory:` \
         or `postgres://<user>@<host>/<database>` (with the `postgres` feature)"
    )]
    Url(String),
    /// The database failed or could not be reached.
    #[error("database `{database}`: {source}; check that it is up and reachable")]
    Database {
        /// The database (its URL without credentials).
        database: String,
        /// What sqlx reported.
        source: sqlx::Error,
    },
    /// The server refused the login: the user, or its password, is wrong.
    #[error(
        "database `{database}`: authentication failed for user `{user}`; check the user and \
         password in the URL"
    )]
    Authentication {
        /// The database (its URL without credentials).
        database: String,
        /// The user the URL names.
        user: String,
        /// What the server said (it never holds the password).
        source: sqlx::Error,
    },
    /// The server has no database of the URL's name.
    #[error(
        "database `{database}` does not exist on the server; create it (`CREATE DATABASE`) or \
         name an existing one in the URL"
    )]
    NoDatabase {
        /// The database (its URL without credentials).
        database: String,
        /// What the server said.
        source: sqlx::Error,
    },
    /// Nothing accepts connections where the URL points (or the host
    /// cannot be found).
    #[error(
        "database `{database}`: connecting to {address} failed ({source}); check that the server \
         is up and listening there"
    )]
    Unreachable {
        /// The database (its URL without credentials).
        database: String,
        /// Where it was sought: `host:port`, or a unix socket's path.
        address: String,
        /// Why connecting failed.
        source: std::io::Error,
    },
    /// The schema could not be created or brought up to date.
    #[error("database `{database}`: creating SkillKit's tables failed: {source}")]
    Migrate {
        /// The database (its URL without credentials).
        database: String,
        /// What the migration reported.
        source: sqlx::migrate::MigrateError,
    },
    /// The database did not answer in time.
    #[error(
        "database `{database}` did not answer within {timeout:?}; it may be down, overloaded or \
         locked (the limit is `Sql::builder(…).timeout(…)`)"
    )]
    Timeout {
        /// The database (its URL without credentials).
        database: String,
        /// The limit.
        timeout: Duration,
    },
    /// A write was refused: a name breaks the naming rule, a field is missing.
    #[error("{0}")]
    Refused(String),
    /// The kit directory to import could not be read.
    #[error(transparent)]
    Import(ProviderError),
}

impl From<SqlError> for ProviderError {
    fn from(error: SqlError) -> Self {
        ProviderError::Other(Box::new(error))
    }
}

/// `url` with any `user:password@` part cut out, fit for messages.
pub(super) fn without_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((_, host)) => format!("{scheme}://…@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// Whether `error` says the database could not be reached at all.
pub(super) fn is_unreachable(error: &sqlx::Error) -> bool {
    matches!(
        error,
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed
    )
}

/// Whether `error` says the connection is gone: the socket closed, or the
/// server said it is shutting down or refused the connection (SQLSTATE
/// class 08, and 57P01–57P03).
pub(super) fn is_lost(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_) | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(error) => error
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P0")),
        _ => false,
    }
}

/// Why a server refused a connection, when it did (SQLSTATE 28000, 28P01:
/// the login; 3D000: no such database).
pub(super) enum Refusal {
    Login,
    NoDatabase,
}

/// Whether, and why, `error` is the server refusing the connection.
pub(super) fn refusal(error: &sqlx::Error) -> Option<Refusal> {
    let sqlx::Error::Database(error) = error else {
        return None;
    };
    match error.code()?.as_ref() {
        "28000" | "28P01" => Some(Refusal::Login),
        "3D000" => Some(Refusal::NoDatabase),
        _ => None,
    }
}
