//! Pagination of the server's lists: items sorted by a key (a tool's,
//! prompt's name, a resource's URI); the cursor of the next page names the
//! key of the last item sent, so a page starts after it even when the catalog
//! changed in between (nothing is skipped or repeated around a change). A
//! cursor is opaque (`c1.` and the key in URL-safe base64), so one the server
//! did not give is told apart and refused, not answered with an empty page.
//!
//! The long lists (`skills/list`, `resources/list`) read their later pages
//! from the snapshot of their first ([`Held`]): their cursors (`c2.`) also
//! name it, so a listing of 10,000 skills is one catalog query, not one per
//! page. A snapshot no longer held (a minute on, or past the last 16) is
//! replaced by a new query, and the key still places the page.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;

use crate::catalog::Snapshot;

/// What every cursor of this server starts with.
const PREFIX: &str = "c1.";
/// What a cursor that also names a held snapshot starts with.
const HELD_PREFIX: &str = "c2.";
/// How many snapshots are held for later pages.
const HELD: usize = 16;
/// How long a snapshot is held for later pages.
const HELD_FOR: Duration = Duration::from_secs(60);

/// The snapshots of listings being paged through, by a number of their own.
#[derive(Default)]
pub(super) struct Held {
    snapshots: Mutex<VecDeque<(u64, Instant, Snapshot)>>,
    next: AtomicU64,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").finish_non_exhaustive()
    }
}

impl Held {
    /// Holds `snapshot` for the later pages of a listing; its number.
    pub(super) fn hold(&self, snapshot: &Snapshot) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut held = self
            .snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        held.retain(|(_, at, _)| at.elapsed() < HELD_FOR);
        while held.len() >= HELD {
            held.pop_front();
        }
        held.push_back((id, Instant::now(), snapshot.clone()));
        id
    }

    /// The snapshot held as `id`, while it is.
    pub(super) fn get(&self, id: u64) -> Option<Snapshot> {
        let held = self
            .snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        held.iter()
            .find(|(held, at, _)| *held == id && at.elapsed() < HELD_FOR)
            .map(|(_, _, snapshot)| snapshot.clone())
    }
}

/// The number of the held snapshot a request's cursor names, if any.
pub(super) fn held(params: Option<&rmcp::model::PaginatedRequestParams>) -> Option<u64> {
    decode(params.and_then(|p| p.cursor.as_deref())?).and_then(|(held, _)| held)
}

/// `next` (a cursor [`page`] or [`after`] gave) naming held snapshot `id`
/// too.
pub(super) fn holding(next: Option<String>, id: u64) -> Option<String> {
    let (_, key) = decode(&next?)?;
    Some(format!(
        "{HELD_PREFIX}{}",
        URL_SAFE_NO_PAD.encode(format!("{id}:{key}"))
    ))
}

/// The held snapshot's number (for a `c2.` cursor) and the key a cursor
/// names; `None` for a cursor this server never gives.
fn decode(cursor: &str) -> Option<(Option<u64>, String)> {
    let text = |encoded: &str| {
        URL_SAFE_NO_PAD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
    };
    let (held, key) = match (
        cursor.strip_prefix(PREFIX),
        cursor.strip_prefix(HELD_PREFIX),
    ) {
        (Some(key), _) => (None, text(key)?),
        (_, Some(both)) => {
            let both = text(both)?;
            let (id, key) = both.split_once(':')?;
            (Some(id.parse().ok()?), key.to_owned())
        }
        _ => return None,
    };
    (!key.is_empty()).then_some((held, key))
}

/// How many items one page of `tools/list`, `prompts/list` or
/// `resources/list` holds, unless [`McpServer::page_size`](super::McpServer::page_size) says otherwise.
///
/// ```
/// assert_eq!(skillkit::mcp::DEFAULT_PAGE_SIZE, 100);
/// ```
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// The page of `items` (sorted by `key`, unique) after `cursor`, and the
/// cursor of the next page when there are more.
pub(super) fn page<T>(
    items: Vec<T>,
    key: impl Fn(&T) -> &str,
    cursor: Option<&str>,
    size: usize,
) -> (Vec<T>, Option<String>) {
    let start = match cursor {
        Some(cursor) => items.partition_point(|item| key(item) <= cursor),
        None => 0,
    };
    let more = items.len() > start + size;
    let page: Vec<T> = items.into_iter().skip(start).take(size).collect();
    let next = match (more, page.last()) {
        (true, Some(last)) => Some(after(key(last))),
        _ => None,
    };
    (page, next)
}

/// The cursor of the page after the item whose key is `key`.
pub(super) fn after(key: &str) -> String {
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(key))
}

/// The key a request's cursor names (after which its page starts); a
/// cursor this server never gives is refused.
pub(super) fn cursor(
    params: Option<&rmcp::model::PaginatedRequestParams>,
) -> Result<Option<String>, ErrorData> {
    key(params.and_then(|p| p.cursor.as_deref()))
}

/// The key `cursor` names; a cursor this server never gives is refused.
pub(super) fn key(cursor: Option<&str>) -> Result<Option<String>, ErrorData> {
    let Some(cursor) = cursor else {
        return Ok(None);
    };
    decode(cursor).map(|(_, key)| Some(key)).ok_or_else(|| {
        ErrorData::invalid_params(
            "the cursor is not one this server gave; pass the `nextCursor` of the \
                 previous page, or no cursor for the first page",
            None,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key `next` (a cursor given by [`page`]) names.
    fn key(next: Option<String>) -> Option<String> {
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(next);
        cursor(Some(&params)).unwrap()
    }

    #[test]
    fn pages_follow_each_other_without_gaps() {
        let items: Vec<String> = (0..5).map(|i| format!("item-{i}")).collect();
        let (first, next) = page(items.clone(), |s| s.as_str(), None, 2);
        assert_eq!(first, ["item-0", "item-1"]);
        let after = key(next.clone());
        assert_eq!(after.as_deref(), Some("item-1"));
        let (second, next) = page(items.clone(), |s| s.as_str(), after.as_deref(), 2);
        assert_eq!(second, ["item-2", "item-3"]);
        let (last, next) = page(items.clone(), |s| s.as_str(), key(next).as_deref(), 2);
        assert_eq!(last, ["item-4"]);
        assert_eq!(next, None);
        // An item removed before the next page is asked for moves nothing.
        let fewer: Vec<String> = items.into_iter().filter(|s| s != "item-1").collect();
        let (page2, _) = page(fewer, |s| s.as_str(), Some("item-1"), 2);
        assert_eq!(page2, ["item-2", "item-3"]);
    }

    #[test]
    fn a_held_cursor_names_its_snapshot_and_its_key() {
        let (_, next) = page(vec!["a", "b", "c"], |s| s, None, 2);
        let next = holding(next, 7);
        assert!(next.as_deref().is_some_and(|c| c.starts_with("c2.")));
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(next.clone());
        assert_eq!(held(Some(&params)), Some(7));
        assert_eq!(key(next).as_deref(), Some("b"));
        let snapshots = Held::default();
        let snapshot = Snapshot::default();
        let id = snapshots.hold(&snapshot);
        assert!(snapshots.get(id).is_some());
        assert!(snapshots.get(id + 1).is_none());
    }

    #[test]
    fn a_cursor_the_server_did_not_give_is_refused() {
        for bogus in ["", "item-1", "c1.", "c1.!!", "c1.__8", "c2.", "c2.YQ"] {
            let params =
                rmcp::model::PaginatedRequestParams::default().with_cursor(Some(bogus.to_owned()));
            let Err(error) = cursor(Some(&params)) else {
                panic!("`{bogus}` was taken");
            };
            assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(error.message.contains("nextCursor"), "{error:?}");
        }
    }
}
