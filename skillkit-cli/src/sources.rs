//! Where the commands' skills come from: kit folders given on the command
//! line, the standard locations, the kits imported from GitHub (served
//! from the cache, without a network request), and MCP servers (`--mcp`,
//! `--mcp-url`).

use std::path::{Path, PathBuf};

use skillkit::catalog::CatalogBuilder;
use skillkit::mcp_client::Endpoint;
use skillkit::providers::github::{ApiToken, GitHubBuilder};
use skillkit::search::HttpEmbedder;
use skillkit::{GitHub, Local, McpSkills};

use crate::args::Global;
use crate::failure::Failure;
use crate::mcp_args::McpArgs;

/// The Tokio runtime the commands run on (two workers: the agent and the
/// providers' blocking work).
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    started(tokio::runtime::Builder::new_multi_thread().worker_threads(2))
}

/// The Tokio runtime of a command that reads the catalog and exits (`list`,
/// `show`, `search`): one thread. The files are read on `Local`'s own pool
/// and the other providers only wait on the network, so a second worker
/// would only be started, and woken, for nothing.
pub fn query_runtime() -> Result<tokio::runtime::Runtime, Failure> {
    started(&mut tokio::runtime::Builder::new_current_thread())
}

/// The Tokio runtime `serve` runs on: one thread for the requests (files
/// are read and kits loaded on the blocking pool, scripts are processes of
/// their own). A request's answer is then computed on the thread that read
/// it, with no wake-up of another worker on the way: over HTTP, an
/// `activate_skill` call took about 190 µs on two workers and 135 µs on one
/// (`cargo bench -p skillkit-cli --bench serve -- reqwest`).
pub fn serve_runtime() -> Result<tokio::runtime::Runtime, Failure> {
    started(&mut tokio::runtime::Builder::new_current_thread())
}

/// The runtime `builder` makes, with its timers and I/O.
fn started(builder: &mut tokio::runtime::Builder) -> Result<tokio::runtime::Runtime, Failure> {
    builder
        .enable_all()
        .build()
        .map_err(|e| Failure::io(format!("cannot start the runtime: {e}")))
}

/// `path` as an absolute directory (so skill locations are absolute too).
pub fn kit_dir(path: &Path) -> Result<PathBuf, Failure> {
    match std::fs::canonicalize(path) {
        Ok(dir) if dir.is_dir() => Ok(dir),
        Ok(_) => Err(Failure::io(format!(
            "{}: not a directory; give a kit folder",
            path.display()
        ))),
        Err(e) => Err(Failure::io(format!(
            "{}: cannot read it ({e}); check the path",
            path.display()
        ))),
    }
}

/// The GitHub provider as configured by the options and the environment:
/// any source may be imported (the person typing the command chose it),
/// `GITHUB_TOKEN` is read when a request is made.
pub fn github_builder(global: &Global) -> GitHubBuilder {
    let mut builder = GitHub::builder()
        .allow("*")
        .api_token(ApiToken::from_env("GITHUB_TOKEN"));
    if let Some(dir) = &global.cache_dir {
        builder = builder.cache_dir(dir);
    }
    if let Some(url) = &global.github_url {
        builder = builder.base_url(url);
    }
    builder
}

/// The GitHub provider, or the one-line reason it cannot be built.
pub fn github(global: &Global) -> Result<GitHub, Failure> {
    github_builder(global)
        .build()
        .map_err(crate::explain::github)
}

/// A catalog of each PATH as a kit (or, with `each`, every child folder of
/// it as a kit); without PATH, the standard locations (from the working
/// directory up to its repository root, then the user's) and the imported kits.
/// `watch`: whether the folders are watched for changes
/// ([`Local::watch`]), which pays off over many queries (`serve`); a
/// command that queries once does not start a watch it would never use.
pub fn catalog(
    global: &Global,
    paths: &[PathBuf],
    each: bool,
    watch: bool,
) -> Result<CatalogBuilder, Failure> {
    let mut builder = embedder(global, skillkit::Catalog::builder());
    if paths.is_empty() {
        builder = builder
            .providers(
                Local::discover(here()?)
                    .into_iter()
                    .map(|local| local.watch(watch)),
            )
            .provider(github(global)?);
    }
    for path in paths {
        let dir = kit_dir(path)?;
        builder = builder.provider(
            match each {
                true => Local::each(dir),
                false => Local::new(dir),
            }
            .watch(watch),
        );
    }
    Ok(builder)
}

/// `builder` ranking by meaning too when `--embed` (or `SKILLKIT_EMBED_URL`)
/// names an endpoint: its key from `SKILLKIT_EMBED_API_KEY` when that is
/// set (no other variable is sent to it), its vectors kept in the user's
/// cache folder (`skillkit/embeddings`).
pub fn embedder(global: &Global, builder: CatalogBuilder) -> CatalogBuilder {
    let Some(url) = global.embed.as_deref().filter(|url| !url.trim().is_empty()) else {
        return builder;
    };
    let mut embedder = HttpEmbedder::new(url);
    if let Some(model) = &global.embed_model {
        embedder = embedder.model(model);
    }
    if std::env::var_os(EMBED_KEY).is_some() {
        embedder = embedder.api_key_env(EMBED_KEY);
    }
    builder.embedder(embedder)
}

/// The variable `--embed`'s bearer token is read from.
const EMBED_KEY: &str = "SKILLKIT_EMBED_API_KEY";

/// `builder` with a provider for each MCP server of `mcp`, its kit named
/// after the server; a URL sends the bearer token of `SKILLKIT_MCP_TOKEN`
/// when that is set.
pub fn mcp(mut builder: CatalogBuilder, mcp: &McpArgs) -> Result<CatalogBuilder, Failure> {
    for line in &mcp.commands {
        let endpoint =
            Endpoint::parse_command(line).map_err(|e| Failure::io(format!("--mcp: {e}")))?;
        builder = builder.provider(McpSkills::new(endpoint));
    }
    for url in &mcp.urls {
        let mut endpoint = Endpoint::url(url);
        if std::env::var_os(MCP_TOKEN).is_some() {
            endpoint = endpoint.bearer_token_env(MCP_TOKEN);
        }
        builder = builder.provider(McpSkills::new(endpoint));
    }
    Ok(builder)
}

/// Whether `mcp` names no server.
pub fn no_mcp(mcp: &McpArgs) -> bool {
    mcp.commands.is_empty() && mcp.urls.is_empty()
}

/// The environment variable holding the bearer token for `--mcp-url`.
const MCP_TOKEN: &str = "SKILLKIT_MCP_TOKEN";

/// The folders searched for skills when no PATH is given, nearest first
/// (`Local::discovery_folders` of the working directory).
pub fn searched() -> Result<Vec<PathBuf>, Failure> {
    Ok(Local::discovery_folders(here()?))
}

fn here() -> Result<PathBuf, Failure> {
    std::env::current_dir().map_err(|e| Failure::io(format!("cannot read the current folder: {e}")))
}
