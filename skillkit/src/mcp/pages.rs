//! Pagination of the server's lists: items sorted by a key (a tool's,
//! prompt's name, a resource's URI); the cursor of the next page is the key
//! of the last item sent, so a page starts after it even when the catalog
//! changed in between (nothing is skipped or repeated around a change).

use rmcp::ErrorData;

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
        (true, Some(last)) => Some(key(last).to_owned()),
        _ => None,
    };
    (page, next)
}

/// The cursor of a request, refused when it is empty (a cursor this server
/// never gives).
pub(super) fn cursor(
    params: Option<&rmcp::model::PaginatedRequestParams>,
) -> Result<Option<&str>, ErrorData> {
    match params.and_then(|p| p.cursor.as_deref()) {
        Some("") => Err(ErrorData::invalid_params(
            "the cursor is empty; pass the `nextCursor` of the previous page, or no cursor for \
             the first page",
            None,
        )),
        cursor => Ok(cursor),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_each_other_without_gaps() {
        let items: Vec<String> = (0..5).map(|i| format!("item-{i}")).collect();
        let (first, next) = page(items.clone(), |s| s.as_str(), None, 2);
        assert_eq!(first, ["item-0", "item-1"]);
        let (second, next) = page(items.clone(), |s| s.as_str(), next.as_deref(), 2);
        assert_eq!(second, ["item-2", "item-3"]);
        let (last, next) = page(items.clone(), |s| s.as_str(), next.as_deref(), 2);
        assert_eq!(last, ["item-4"]);
        assert_eq!(next, None);
        // An item removed before the next page is asked for moves nothing.
        let fewer: Vec<String> = items.into_iter().filter(|s| s != "item-1").collect();
        let (page2, _) = page(fewer, |s| s.as_str(), Some("item-1"), 2);
        assert_eq!(page2, ["item-2", "item-3"]);
    }
}
