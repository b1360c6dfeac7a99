//! `skillkit serve`: the catalog of the other commands (kit folders, or the
//! standard locations and the imported kits), served over MCP on stdio, so
//! Claude Code, Cursor or any MCP client uses its skills. Stdout carries the
//! protocol only; logs (`RUST_LOG`) go to stderr.

use std::path::PathBuf;

use skillkit::mcp::McpServer;

use crate::Global;
use crate::failure::Failure;
use crate::sources;

/// `skillkit serve [PATH...] [--each] [--github SOURCE]...`.
pub fn run(
    global: &Global,
    paths: &[PathBuf],
    each: bool,
    github: &[String],
) -> Result<(), Failure> {
    let runtime = sources::runtime()?;
    let mut builder = sources::catalog(global, paths, each)?;
    if !github.is_empty() {
        let provider = sources::github(global)?;
        for source in github {
            // Downloads only what is not in the cache yet.
            runtime
                .block_on(provider.import(source))
                .map_err(|e| Failure::failed(format!("--github {source}: {e}")))?;
        }
        if !paths.is_empty() {
            builder = builder.provider(provider);
        }
    }
    let server = McpServer::new(builder.build());
    runtime
        .block_on(server.serve_stdio())
        .map_err(Failure::failed)
}
