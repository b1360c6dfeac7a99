//! `skillkit search QUERY [PATH...]`: the skills that match a query, best
//! first, through the catalog's search (the one the agent's `search_skills`
//! and the MCP server's `list_skills {query}` use).

use std::path::PathBuf;

use serde_json::json;
use skillkit::prompt::shown_description;

use crate::args::Global;
use crate::failure::Failure;
use crate::list::{self, one_line, warn_failures};
use crate::mcp_args::McpArgs;
use crate::output::out;
use crate::sources;

/// How many hits `search` prints unless `--limit` says.
pub const DEFAULT_LIMIT: usize = 10;

/// `skillkit search QUERY [PATH...] [--each] [--json] [--limit N]`: PATHs
/// and discovery as `list`. Each hit on a line (name, score, description),
/// or with `--json` an array of `{name, description, score, path}` (`path`:
/// the skill's folder, `null` when it has none). Exit 1 when nothing
/// matches.
pub fn run(
    global: &Global,
    query: &str,
    paths: &[PathBuf],
    each: bool,
    json: bool,
    limit: usize,
) -> Result<(), Failure> {
    if query.trim().is_empty() {
        return Err(Failure::io(
            "the query is empty: give a few words about the task, or a skill's name",
        ));
    }
    let runtime = sources::query_runtime()?;
    let (catalog, snapshot) =
        list::load_catalog(&runtime, global, paths, &McpArgs::default(), each, json)?;
    warn_failures(&snapshot);
    let hits = runtime.block_on(catalog.search_snapshot(&snapshot, query, limit));
    if json {
        let hits: Vec<_> = hits
            .iter()
            .map(|hit| {
                json!({
                    "name": hit.skill.name,
                    "description": shown_description(&hit.skill.description),
                    "score": hit.score,
                    "path": hit.skill.dir().map(|dir| dir.display().to_string()),
                })
            })
            .collect();
        out!("{}", crate::output::json(&hits, true).unwrap_or_default());
    } else {
        let width = hits.iter().map(|h| h.skill.name.chars().count()).max();
        for hit in &hits {
            out!(
                "{:<width$}  {:>7.3}  {}",
                hit.skill.name,
                hit.score,
                one_line(&shown_description(&hit.skill.description)),
                width = width.unwrap_or(0)
            );
        }
    }
    if hits.is_empty() {
        return Err(Failure::failed(format!(
            "no skill matches `{query}`; try other words, or `skillkit list` for every skill"
        )));
    }
    Ok(())
}
