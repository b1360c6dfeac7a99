//! `skillkit serve`: the catalog of the other commands (kit folders, or the
//! standard locations and the imported kits), served over MCP on stdio, or
//! on Streamable HTTP with `--http`, so Claude Code, Cursor or any MCP client
//! uses its skills. On stdio, stdout carries the protocol only; logs
//! (`RUST_LOG`) and the HTTP address go to stderr.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::time::Duration;

use skillkit::approval::{Approval, ApprovalPolicy};
use skillkit::mcp::{HTTP_PATH, HttpOptions, McpServer};
use skillkit::script::Sandbox;

use crate::args::Global;
use crate::failure::Failure;
use crate::output::err;
use crate::sources;

/// The environment variable holding the bearer token HTTP clients must send.
pub const TOKEN_VARIABLE: &str = "SKILLKIT_MCP_TOKEN";

/// How `skillkit serve` serves.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Serve Streamable HTTP on ADDR instead of stdio: a port (`8080`, on
    /// 127.0.0.1) or `host:port` (`0.0.0.0:8080`); the URL is printed on
    /// stderr. When SKILLKIT_MCP_TOKEN is set, every request must carry
    /// `Authorization: Bearer <its value>` (else 401). Requests from browser
    /// pages of other origins than localhost, 127.0.0.1 and ::1 are
    /// refused (403), as are bodies over --max-request-bytes (413). An
    /// address other machines reach (0.0.0.0, a LAN address) is refused
    /// without SKILLKIT_MCP_TOKEN, unless --allow-unauthenticated.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http on an address other machines reach: serve without
    /// SKILLKIT_MCP_TOKEN, so anyone who reaches it may use the skills.
    #[arg(long, requires = "http")]
    allow_unauthenticated: bool,
    /// With --http: also accept requests from browser pages of ORIGIN
    /// (`https://app.example.com`, `http://host:*` for any port; repeatable).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// With --http: also answer requests sent to HOST (the `Host` header;
    /// only loopback names otherwise, against DNS rebinding; repeatable).
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,
    /// With --http: the largest request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = skillkit::mcp::DEFAULT_MAX_REQUEST_BYTES, requires = "http")]
    max_request_bytes: usize,
    /// How often, in seconds, the skills are checked for changes while a
    /// client is connected (clients are sent list_changed notifications);
    /// a change in a watched folder is told at once, whatever this is; 0:
    /// only when a client asks.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    watch_interval: f64,
    /// Also offer `run_skill_script` (a script inside a served skill's
    /// folder: python3, bash, sh, node, in one temporary working folder,
    /// with a scrubbed environment, a 60 s timeout and, on Linux, the
    /// script sandbox), and run the `!`command`` lines of a skill's file
    /// when it is activated. Nothing runs unless `--allow run_skill_script`
    /// too: over MCP there is no one to ask.
    #[arg(long)]
    allow_scripts: bool,
    /// With --allow-scripts: run scripts and `!`command`` lines without
    /// asking (`--allow run_skill_script`; the only tool name this takes).
    #[arg(long = "allow", value_name = "TOOL", requires = "allow_scripts", value_parser = clap::builder::PossibleValuesParser::new([skillkit::script::RUN_SKILL_SCRIPT]))]
    allow: Vec<String>,
    /// With --allow-scripts: run scripts even where the kernel cannot put up
    /// every layer of the sandbox (the layers in force are printed).
    #[arg(long, requires = "allow_scripts")]
    allow_weaker_sandbox: bool,
}

/// `skillkit serve [PATH...] [--each] [--github SOURCE]... [--http ADDR]`.
pub fn run(
    global: &Global,
    paths: &[PathBuf],
    each: bool,
    github: &[String],
    args: &ServeArgs,
) -> Result<(), Failure> {
    let runtime = sources::serve_runtime()?;
    let mut builder = sources::catalog(global, paths, each, true)?;
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
        0.0 => None,
        // Positive and finite, and no more seconds than a duration holds.
        s => match Duration::try_from_secs_f64(s) {
            Ok(interval) if s > 0.0 => Some(interval),
            _ => {
                return Err(Failure::io(format!(
                    "--watch-interval {s:?}: give a number of seconds, or 0"
                )));
            }
        },
    };
    let catalog = builder.build();
    // A source that cannot be read: one line each, and the server goes on
    // with the others (a later failure is logged, under RUST_LOG).
    crate::list::warn_failures(&runtime.block_on(catalog.snapshot()));
    let mut server = McpServer::new(catalog);
    if args.allow_scripts {
        let sandbox = Sandbox::current();
        crate::agent::check_sandbox(&sandbox, args.allow_weaker_sandbox)?;
        let allowed = !args.allow.is_empty();
        err!(
            "scripts enabled (run_skill_script, !`command` lines){}; sandbox: {sandbox}",
            match allowed {
                true => "",
                false => ", but nothing runs until --allow run_skill_script",
            }
        );
        // MCP cannot ask: a policy that asks refuses every call.
        let approval = match allowed {
            true => ApprovalPolicy::allow_all(),
            false => ApprovalPolicy::new(|_| Approval::Ask),
        };
        server = server
            .scripts(crate::agent::script_options(args.allow_weaker_sandbox).approval(approval));
    }
    let server = server.watch(watch);
    match &args.http {
        None => runtime
            .block_on(server.serve_stdio())
            .map_err(Failure::failed),
        Some(addr) => runtime.block_on(serve_http(server, addr, args)),
    }
}

/// Binds ADDR (a bare port on 127.0.0.1), says where on stderr, and serves.
async fn serve_http(server: McpServer, addr: &str, args: &ServeArgs) -> Result<(), Failure> {
    let addr = match addr.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => addr.to_owned(),
    };
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|e| Failure::io(format!("--http {addr}: cannot listen there ({e})")))?;
    let local = listener
        .local_addr()
        .map_err(|e| Failure::io(format!("--http {addr}: {e}")))?;
    let mut options = HttpOptions::new().max_request_bytes(args.max_request_bytes);
    let token = std::env::var(TOKEN_VARIABLE).ok().filter(|t| !t.is_empty());
    if let Some(token) = token.clone() {
        options = options.bearer_token(token);
    }
    if args.allow_unauthenticated {
        options = options.allow_unauthenticated();
    }
    if options.check_bind(local).is_err() {
        return Err(Failure::io(format!(
            "--http {addr}: {local} is reachable from other machines, and without a token \
             anyone who reaches it is served; set {TOKEN_VARIABLE} to the token clients must \
             send, listen on 127.0.0.1, or pass --allow-unauthenticated if that is what you mean"
        )));
    }
    for origin in &args.allow_origin {
        options = options
            .allow_origin(origin)
            .map_err(|e| Failure::io(format!("--allow-origin: {e}")))?;
    }
    // A server bound to one outside address answers requests naming it.
    if !local.ip().is_loopback() && !local.ip().is_unspecified() {
        options = options.allow_host(local.ip().to_string());
    }
    for host in &args.allow_host {
        options = options.allow_host(host.clone());
    }
    // The URL printed is one a client here connects to: a wildcard address
    // is not one, its loopback counterpart is.
    let url_addr = match local.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, local.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, local.port()).into(),
        _ => local,
    };
    err!("skillkit serve: MCP on http://{url_addr}{HTTP_PATH}");
    if local.ip().is_unspecified() {
        let access = match token {
            Some(_) => format!("clients send {TOKEN_VARIABLE}'s token"),
            None => "without a token: anyone who reaches it is served".to_owned(),
        };
        err!(
            "skillkit serve: listening on all interfaces ({local}), {access}; other machines \
             use this machine's address, allowed with --allow-host NAME"
        );
    } else if !local.ip().is_loopback() && token.is_none() {
        err!(
            "skillkit serve: listening on {local} without a token: anyone who reaches it is served"
        );
    }
    server
        .serve_http(listener, options)
        .await
        .map_err(Failure::failed)
}
