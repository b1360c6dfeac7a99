//! The peers written by others (`bench/peers`: the official Python MCP SDK),
//! found as `bench/peers/setup.sh` installs them. A test that needs one
//! skips loudly without it, and fails when `SKILLKIT_REQUIRE_PEERS=1` (CI).

use std::path::PathBuf;
use std::process::Command;

/// `bench/peers`.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bench/peers")
}

/// A Python that can import the `mcp` SDK (`bench/peers/.venv` first, then
/// `$SKILLKIT_PYTHON`, then `python3`), or why there is none.
pub fn python() -> Result<PathBuf, String> {
    let mut candidates = vec![dir().join(".venv/bin/python")];
    if let Ok(python) = std::env::var("SKILLKIT_PYTHON") {
        candidates.insert(0, python.into());
    }
    candidates.push("python3".into());
    let mut tried = Vec::new();
    for python in candidates {
        let ok = Command::new(&python)
            .args(["-c", "import mcp.server.mcpserver"])
            .output()
            .is_ok_and(|out| out.status.success());
        if ok {
            return Ok(python);
        }
        tried.push(python.display().to_string());
    }
    Err(format!(
        "no Python with the `mcp` package (tried {}); run bench/peers/setup.sh",
        tried.join(", ")
    ))
}

/// [`python`], or `None` after saying loudly that `what` is not checked;
/// a panic instead when `SKILLKIT_REQUIRE_PEERS=1`.
pub fn python_or_skip(what: &str) -> Option<PathBuf> {
    match python() {
        Ok(python) => Some(python),
        Err(why) if std::env::var("SKILLKIT_REQUIRE_PEERS").as_deref() != Ok("1") => {
            eprintln!("\n*** SKIPPED: {what} NOT CHECKED: {why} ***\n");
            None
        }
        Err(why) => panic!("SKILLKIT_REQUIRE_PEERS=1 but {why}"),
    }
}
