//! The MCP peers other people wrote, for the tests that speak to them:
//! server-everything (npm `@modelcontextprotocol/server-everything`, the
//! official TypeScript SDK's example server) and the official Python SDK.
//! `bench/peers/setup.sh` installs both under `bench/peers/`. Without them a
//! test says loudly that it SKIPPED, unless `SKILLKIT_REQUIRE_PEERS=1` (as in
//! CI), where that is a failure.

use std::path::PathBuf;
use std::process::Command;

/// `bench/peers`.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bench/peers")
}

/// server-everything's program (stdio by default, `streamableHttp` as its
/// argument for HTTP), or why there is none.
pub fn everything() -> Result<PathBuf, String> {
    let bin = dir().join("node_modules/.bin/mcp-server-everything");
    match bin.exists() {
        true => Ok(bin),
        false => Err(format!(
            "{} is missing; run bench/peers/setup.sh (needs node and npm)",
            bin.display()
        )),
    }
}

/// The script starting server-everything's Streamable HTTP mode on
/// 127.0.0.1 (`PORT` in its environment), run by `node`.
pub fn everything_http() -> Result<PathBuf, String> {
    everything()?;
    Ok(dir().join("everything_http.mjs"))
}

/// `ssh-keygen` (OpenSSH's, for the signatures' agreement test), or why
/// there is none.
pub fn ssh_keygen() -> Result<PathBuf, String> {
    let found = std::process::Command::new("ssh-keygen")
        .arg("-?")
        .output()
        .map_err(|e| format!("ssh-keygen cannot be run ({e}); install openssh-client"))?;
    // `-?` prints the usage (and exits 1): it is there.
    match String::from_utf8_lossy(&found.stderr).contains("usage") {
        true => Ok(PathBuf::from("ssh-keygen")),
        false => Err("ssh-keygen printed no usage; install openssh-client".into()),
    }
}

/// A Python that can import the official MCP SDK (`bench/peers/.venv`
/// first, then `$SKILLKIT_PYTHON`, then `python3`), or why there is none.
pub fn python() -> Result<PathBuf, String> {
    python_with("mcp.server.mcpserver")
}

/// A Python that can import `module` (`bench/peers/.venv` first, then
/// `$SKILLKIT_PYTHON`, then `python3`), or why there is none.
pub fn python_with(module: &str) -> Result<PathBuf, String> {
    let mut candidates = vec![dir().join(".venv/bin/python")];
    if let Ok(python) = std::env::var("SKILLKIT_PYTHON") {
        candidates.insert(0, python.into());
    }
    candidates.push("python3".into());
    let mut tried = Vec::new();
    for python in candidates {
        let ok = Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|out| out.status.success());
        if ok {
            return Ok(python);
        }
        tried.push(python.display().to_string());
    }
    let package = module.split('.').next().unwrap_or(module);
    Err(format!(
        "no Python with the `{package}` package (tried {}); run bench/peers/setup.sh",
        tried.join(", ")
    ))
}

/// The peer `found`, or `None` after saying loudly that `what` is skipped
/// (a panic under `SKILLKIT_REQUIRE_PEERS=1`).
pub fn or_skip<T>(what: &str, found: Result<T, String>) -> Option<T> {
    match found {
        Ok(found) => Some(found),
        Err(why) if std::env::var("SKILLKIT_REQUIRE_PEERS").as_deref() != Ok("1") => {
            eprintln!("\n*** SKIPPED: {what} NOT CHECKED: {why} ***\n");
            None
        }
        Err(why) => panic!("SKILLKIT_REQUIRE_PEERS=1 but {why}"),
    }
}

/// [`python`], or `None` after saying loudly that `what` is not checked
/// (a panic under `SKILLKIT_REQUIRE_PEERS=1`).
pub fn python_or_skip(what: &str) -> Option<PathBuf> {
    or_skip(what, python())
}
