//! Pagination of the server's lists: items sorted by a key (a tool's,
//! prompt's name, a resource's URI); the cursor of the next page names the
//! key of the last item sent, so a page starts after it even when the catalog
//! changed in between (nothing is skipped or repeated around a change). A
//! cursor is opaque (`c1.` and the key in URL-safe base64), so one the server
//! did not give is told apart and refused, not answered with an empty page.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;

/// What every cursor of this server starts with.
const PREFIX: &str = "c1.";

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
    cursor
        .strip_prefix(PREFIX)
        .and_then(|key| URL_SAFE_NO_PAD.decode(key).ok())
        .and_then(|key| String::from_utf8(key).ok())
        .filter(|key| !key.is_empty())
        .map(Some)
        .ok_or_else(|| {
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
    fn a_cursor_the_server_did_not_give_is_refused() {
        for bogus in ["", "item-1", "c1.", "c1.!!", "c1.__8"] {
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
