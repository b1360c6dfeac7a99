//! `skillkit trust [PLACE]`, `--list`, `--revoke`: the folders whose skills'
//! `allowed-tools` an agent grants although they were found in a project or
//! imported (a kit the command line names, AGENT_DIR or `--skills`, is
//! trusted anyway). A folder is trusted with the digest of its files: once a
//! file changes, it is asked about again.

use std::path::{Path, PathBuf};

use skillkit::KitProvider;
use skillkit::agent::{TrustPolicy, TrustStore};

use crate::failure::Failure;
use crate::output::out;
use crate::{Global, sources};

/// The trust store: `SKILLKIT_TRUST_FILE`, else `trust.json` in the user's
/// data folder (`~/.local/share/skillkit/`).
pub fn store() -> Result<TrustStore, Failure> {
    if let Some(file) = std::env::var_os("SKILLKIT_TRUST_FILE") {
        return Ok(TrustStore::open(file));
    }
    let folder = dirs::data_local_dir().ok_or_else(|| {
        Failure::io("no data folder for the trust store; set SKILLKIT_TRUST_FILE to a file")
    })?;
    Ok(TrustStore::open(folder.join("skillkit").join("trust.json")))
}

/// The agent's trust: by origin, and the folders of the store.
pub fn policy() -> TrustPolicy {
    match store() {
        Ok(store) => TrustPolicy::default().or_store(store),
        Err(_) => TrustPolicy::default(),
    }
}

/// `skillkit trust`.
pub fn run(global: &Global, place: Option<&str>, list: bool, revoke: bool) -> Result<(), Failure> {
    let store = store()?;
    let io = |e: std::io::Error| Failure::io(format!("{}: {e}", store.file().display()));
    if list {
        for trusted in store.list().map_err(io)? {
            let state = match store.trusts(&trusted.folder) {
                true => "",
                false => " (changed since: not trusted until trusted again)",
            };
            out!("{} {}{state}", trusted.folder.display(), trusted.digest);
        }
        return Ok(());
    }
    let folder = folder(global, place.unwrap_or("."))?;
    if revoke {
        return match store.revoke(&folder).map_err(io)? {
            true => {
                out!("{} is no longer trusted", folder.display());
                Ok(())
            }
            false => Err(Failure::failed(format!(
                "{} was not trusted; `skillkit trust --list` shows what is",
                folder.display()
            ))),
        };
    }
    let digest = store
        .trust(&folder)
        .map_err(|e| Failure::io(format!("{}: cannot trust it: {e}", folder.display())))?;
    out!(
        "trusted {} ({digest}): its skills' allowed-tools are granted until a file in it changes",
        folder.display()
    );
    Ok(())
}

/// The folder `place` names: a folder, or an imported GitHub source (its
/// folder in the cache).
fn folder(global: &Global, place: &str) -> Result<PathBuf, Failure> {
    let path = Path::new(place);
    if path.is_dir() {
        return sources::kit_dir(path);
    }
    let github = sources::github(global)?;
    let runtime = sources::runtime()?;
    let kits = runtime
        .block_on(github.list_kits())
        .map_err(|e| Failure::io(e.to_string()))?;
    kits.iter()
        .find(|kit| kit.metadata.get("source").and_then(|s| s.as_str()) == Some(place))
        .and_then(|kit| kit.metadata.get("dir")?.as_str().map(PathBuf::from))
        .ok_or_else(|| {
            Failure::io(format!(
                "{place}: neither a folder nor an imported source; give a kit folder, or a \
                 source as `skillkit list --github` shows it"
            ))
        })
}
