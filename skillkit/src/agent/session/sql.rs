//! [`Sql`] as a [`SessionStore`]: agent sessions in the same database as
//! the skills (tables `skillkit_sessions` and `skillkit_session_items`, made
//! by the embedded migrations). Every write compares and sets the session's
//! version on its head row, in the transaction that writes its items: a
//! writer that did not see the latest items changes no row and is refused
//! ([`SessionError::Stale`]), on SQLite and on PostgreSQL, in one process or
//! many.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::agent::session::{
    Loaded, SessionError, SessionInfo, SessionItem, SessionMeta, SessionStore, checked_id,
};
use crate::llm::Message;
use crate::providers::Sql;
use crate::providers::sql::{Pool, SqlError, on_pool, step};

const VERSION: &str = "SELECT version FROM skillkit_sessions WHERE session = $1";
const ITEMS: &str = "SELECT seq, message FROM skillkit_session_items \
     WHERE session = $1 AND seq > $2 AND seq <= $3 ORDER BY seq";
/// Sets the version of `$1` to `$2` (at `$3` ms) when it is `$4`.
const SET: &str =
    "UPDATE skillkit_sessions SET version = $2, updated = $3 WHERE session = $1 AND version = $4";
const CREATE: &str = "INSERT INTO skillkit_sessions (session, version, created, updated) \
     VALUES ($1, $2, $3, $3) ON CONFLICT (session) DO NOTHING";
const ADD: &str = "INSERT INTO skillkit_session_items (session, seq, message) VALUES ($1, $2, $3)";
const ONE: &str = "SELECT message FROM skillkit_session_items WHERE session = $1 AND seq = $2";
const DROP_ONE: &str = "DELETE FROM skillkit_session_items WHERE session = $1 AND seq = $2";
const DROP_ITEMS: &str = "DELETE FROM skillkit_session_items WHERE session = $1";
const DROP_HEAD: &str = "DELETE FROM skillkit_sessions WHERE session = $1";
const LIST: &str = "SELECT session, version, created, updated, title, agent \
     FROM skillkit_sessions ORDER BY session";
/// Sets the title (`$2`) and agent (`$3`) of `$1`, each unless NULL,
/// making its head row (at version 0) when it has none.
const DESCRIBE: &str = "INSERT INTO skillkit_sessions (session, version, created, updated, title, agent) \
     VALUES ($1, 0, $4, $4, $2, $3) ON CONFLICT (session) DO UPDATE SET \
     title = COALESCE(excluded.title, skillkit_sessions.title), \
     agent = COALESCE(excluded.agent, skillkit_sessions.agent)";
const COPY: &str = "INSERT INTO skillkit_session_items (session, seq, message) \
     SELECT $1, seq, message FROM skillkit_session_items WHERE session = $2 AND seq <= $3";

/// What a session write found instead of doing its work.
enum Refused {
    Stale(u64),
    NotFound,
    Exists,
}

fn now_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn checked(id: &str) -> Result<(), SessionError> {
    checked_id(id).map(drop)
}

fn store_error(error: SqlError) -> SessionError {
    SessionError::Store(Box::new(error))
}

fn refused(id: &str, expected: u64, refused: Refused) -> SessionError {
    match refused {
        Refused::Stale(found) => SessionError::Stale {
            session: id.to_owned(),
            expected,
            found,
        },
        Refused::NotFound => SessionError::NotFound(id.to_owned()),
        Refused::Exists => SessionError::Exists(id.to_owned()),
    }
}

/// A number as the database's BIGINT.
fn big(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A BIGINT the store wrote as a number (never negative).
fn small(n: i64) -> u64 {
    u64::try_from(n).unwrap_or_default()
}

#[async_trait::async_trait]
impl SessionStore for Sql {
    async fn load(&self, id: &str, last: Option<usize>) -> Result<Loaded, SessionError> {
        checked(id)?;
        self.ready().await.map_err(store_error)?;
        let limit = self.statement_timeout();
        let attempt = |pool: Pool| async move {
            on_pool!(&pool, p => {
                let mut tx = step(limit, p.begin()).await?;
                let version: Option<i64> =
                    step(limit, sqlx::query_scalar(VERSION).bind(id).fetch_optional(&mut *tx)).await?;
                let version = version.unwrap_or(0);
                let from = match last {
                    Some(last) => version.saturating_sub(i64::try_from(last).unwrap_or(i64::MAX)),
                    None => 0,
                };
                let rows: Vec<(i64, String)> = step(
                    limit,
                    sqlx::query_as(ITEMS).bind(id).bind(from).bind(version).fetch_all(&mut *tx),
                )
                .await?;
                step(limit, tx.commit()).await?;
                Ok((version, rows))
            })
        };
        let (version, rows) = self.run(attempt, || true).await.map_err(store_error)?;
        let items = rows
            .into_iter()
            .map(|(seq, message)| {
                let message: Message =
                    serde_json::from_str(&message).map_err(|e| SessionError::Corrupt {
                        session: id.to_owned(),
                        reason: format!("item {seq}: {e}"),
                    })?;
                Ok(SessionItem {
                    seq: small(seq),
                    message,
                })
            })
            .collect::<Result<_, SessionError>>()?;
        Ok(Loaded {
            items,
            version: small(version),
        })
    }

    async fn append(
        &self,
        id: &str,
        expected: u64,
        messages: &[Message],
    ) -> Result<u64, SessionError> {
        checked(id)?;
        self.ready().await.map_err(store_error)?;
        let texts = messages
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SessionError::Io(e.into()))?;
        let version = expected + texts.len() as u64;
        let limit = self.statement_timeout();
        let committing = AtomicBool::new(false);
        let attempt = |pool: Pool| {
            let (texts, committing) = (&texts, &committing);
            async move {
                on_pool!(&pool, p => {
                    let mut tx = step(limit, p.begin()).await?;
                    let set = sqlx::query(SET).bind(id).bind(big(version)).bind(now_ms()).bind(big(expected));
                    let mut moved = step(limit, set.execute(&mut *tx)).await?.rows_affected();
                    if moved == 0 && expected == 0 {
                        let create = sqlx::query(CREATE).bind(id).bind(big(version)).bind(now_ms());
                        moved = step(limit, create.execute(&mut *tx)).await?.rows_affected();
                    }
                    if moved == 0 {
                        let found: Option<i64> =
                            step(limit, sqlx::query_scalar(VERSION).bind(id).fetch_optional(&mut *tx)).await?;
                        step(limit, tx.rollback()).await?;
                        return Ok(Err(Refused::Stale(found.map_or(0, small))));
                    }
                    for (at, text) in texts.iter().enumerate() {
                        let seq = big(expected + at as u64 + 1);
                        step(limit, sqlx::query(ADD).bind(id).bind(seq).bind(text).execute(&mut *tx)).await?;
                    }
                    committing.store(true, Ordering::Relaxed);
                    step(limit, tx.commit()).await?;
                    Ok(Ok(version))
                })
            }
        };
        self.run(attempt, || !committing.load(Ordering::Relaxed))
            .await
            .map_err(store_error)?
            .map_err(|r| refused(id, expected, r))
    }

    async fn pop(&self, id: &str, expected: u64) -> Result<Option<SessionItem>, SessionError> {
        checked(id)?;
        self.ready().await.map_err(store_error)?;
        let limit = self.statement_timeout();
        let committing = AtomicBool::new(false);
        let attempt = |pool: Pool| {
            let committing = &committing;
            async move {
                on_pool!(&pool, p => {
                    let mut tx = step(limit, p.begin()).await?;
                    let found: Option<i64> =
                        step(limit, sqlx::query_scalar(VERSION).bind(id).fetch_optional(&mut *tx)).await?;
                    let found = found.map_or(0, small);
                    if found != expected {
                        step(limit, tx.rollback()).await?;
                        return Ok(Err(Refused::Stale(found)));
                    }
                    if expected == 0 {
                        step(limit, tx.rollback()).await?;
                        return Ok(Ok(None));
                    }
                    let set = sqlx::query(SET).bind(id).bind(big(expected - 1)).bind(now_ms()).bind(big(expected));
                    if step(limit, set.execute(&mut *tx)).await?.rows_affected() == 0 {
                        step(limit, tx.rollback()).await?;
                        return Ok(Err(Refused::Stale(found)));
                    }
                    let message: String =
                        step(limit, sqlx::query_scalar(ONE).bind(id).bind(big(expected)).fetch_one(&mut *tx)).await?;
                    step(limit, sqlx::query(DROP_ONE).bind(id).bind(big(expected)).execute(&mut *tx)).await?;
                    committing.store(true, Ordering::Relaxed);
                    step(limit, tx.commit()).await?;
                    Ok(Ok(Some(message)))
                })
            }
        };
        let popped = self
            .run(attempt, || !committing.load(Ordering::Relaxed))
            .await
            .map_err(store_error)?
            .map_err(|r| refused(id, expected, r))?;
        popped
            .map(|text| {
                let message = serde_json::from_str(&text).map_err(|e| SessionError::Corrupt {
                    session: id.to_owned(),
                    reason: format!("item {expected}: {e}"),
                })?;
                Ok(SessionItem {
                    seq: expected,
                    message,
                })
            })
            .transpose()
    }

    async fn clear(&self, id: &str) -> Result<(), SessionError> {
        checked(id)?;
        self.ready().await.map_err(store_error)?;
        let limit = self.statement_timeout();
        let attempt = |pool: Pool| async move {
            on_pool!(&pool, p => {
                let mut tx = step(limit, p.begin()).await?;
                step(limit, sqlx::query(DROP_ITEMS).bind(id).execute(&mut *tx)).await?;
                step(limit, sqlx::query(DROP_HEAD).bind(id).execute(&mut *tx)).await?;
                step(limit, tx.commit()).await?;
                Ok(())
            })
        };
        // Clearing twice is clearing once: retried freely.
        self.run(attempt, || true).await.map_err(store_error)
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, SessionError> {
        self.ready().await.map_err(store_error)?;
        let limit = self.statement_timeout();
        let attempt = |pool: Pool| async move {
            on_pool!(&pool, p => {
                #[allow(clippy::type_complexity)]
                let rows: Vec<(String, i64, i64, i64, Option<String>, Option<String>)> =
                    step(limit, sqlx::query_as(LIST).fetch_all(p)).await?;
                Ok(rows)
            })
        };
        let rows = self.run(attempt, || true).await.map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|(id, version, created, updated, title, agent)| {
                let time = |ms: i64| {
                    u64::try_from(ms)
                        .ok()
                        .map(|ms| UNIX_EPOCH + Duration::from_millis(ms))
                };
                let meta = SessionMeta { title, agent };
                SessionInfo {
                    id,
                    version: small(version),
                    meta,
                    created: time(created),
                    updated: time(updated),
                    error: None,
                }
            })
            .collect())
    }

    async fn describe(&self, id: &str, meta: &SessionMeta) -> Result<(), SessionError> {
        checked(id)?;
        self.ready().await.map_err(store_error)?;
        let limit = self.statement_timeout();
        let attempt = |pool: Pool| async move {
            on_pool!(&pool, p => {
                let describe = sqlx::query(DESCRIBE)
                    .bind(id)
                    .bind(meta.title.as_deref())
                    .bind(meta.agent.as_deref())
                    .bind(now_ms());
                step(limit, describe.execute(p)).await?;
                Ok(())
            })
        };
        // Setting the same fields twice is setting them once.
        self.run(attempt, || true).await.map_err(store_error)
    }

    async fn fork(&self, id: &str, at: u64, new_id: &str) -> Result<(), SessionError> {
        checked(id)?;
        checked(new_id)?;
        self.ready().await.map_err(store_error)?;
        let limit = self.statement_timeout();
        let committing = AtomicBool::new(false);
        let attempt = |pool: Pool| {
            let committing = &committing;
            async move {
                on_pool!(&pool, p => {
                    let mut tx = step(limit, p.begin()).await?;
                    let found: Option<i64> =
                        step(limit, sqlx::query_scalar(VERSION).bind(id).fetch_optional(&mut *tx)).await?;
                    let Some(found) = found else {
                        step(limit, tx.rollback()).await?;
                        return Ok(Err(Refused::NotFound));
                    };
                    let keep = found.min(big(at));
                    let create = sqlx::query(CREATE).bind(new_id).bind(keep).bind(now_ms());
                    if step(limit, create.execute(&mut *tx)).await?.rows_affected() == 0 {
                        step(limit, tx.rollback()).await?;
                        return Ok(Err(Refused::Exists));
                    }
                    step(limit, sqlx::query(COPY).bind(new_id).bind(id).bind(keep).execute(&mut *tx)).await?;
                    committing.store(true, Ordering::Relaxed);
                    step(limit, tx.commit()).await?;
                    Ok(Ok(()))
                })
            }
        };
        self.run(attempt, || !committing.load(Ordering::Relaxed))
            .await
            .map_err(store_error)?
            .map_err(|r| match r {
                Refused::Exists => refused(new_id, 0, r),
                r => refused(id, 0, r),
            })
    }
}
