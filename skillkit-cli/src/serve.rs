//! `skillkit serve`: the catalog of the other commands (kit folders, or the
//! standard locations and the imported kits), served over MCP on stdio, so
//! Claude Code, Cursor or any MCP client uses its skills. Stdout carries the
//! protocol only; logs (`RUST_LOG`) go to stderr.

use std::path::PathBuf;
use std::time::Duration;

use skillkit::mcp::McpServer;

use crate::Global;
use crate::failure::Failure;
use crate::sources;

/// How `skillkit serve` serves.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// How often, in seconds, the skills are checked for changes while a
    /// client is connected (clients are sent list_changed notifications);
    /// 0: only when a client asks.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    watch_interval: f64,
}

/// `skillkit serve [PATH...] [--each] [--github SOURCE]...`.
pub fn run(
    global: &Global,
    paths: &[PathBuf],
    each: bool,
    github: &[String],
    args: &ServeArgs,
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
    let watch = match args.watch_interval {
        s if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        0.0 => None,
        s => {
            return Err(Failure::io(format!(
                "--watch-interval {s}: give a number of seconds, or 0"
            )));
        }
    };
    let server = McpServer::new(builder.build()).watch(watch);
    runtime
        .block_on(server.serve_stdio())
        .map_err(Failure::failed)
}
