//! `skillkit trust [PLACE]`, `--list`, `--revoke`: the folders whose skills'
//! `allowed-tools` an agent grants. Naming a folder on the command line
//! (AGENT_DIR, `--skills`) loads it; it does not approve what its skills ask
//! for: their `allowed-tools` apply once the folder is trusted, here or by
//! the question `run` and `chat` ask on a terminal the first time such a
//! folder is used (without a terminal, it is not trusted). A folder is
//! trusted with the digest of its files, links followed: once a file
//! changes, it is asked about again.

use std::path::{Path, PathBuf};

use std::io::IsTerminal;

use skillkit::trust::{TrustPolicy, TrustStore};
use skillkit::{KitProvider, Local, Origin};

use crate::args::Global;
use crate::failure::Failure;
use crate::output::{err, error_text, inert, out};
use crate::sources;

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

/// The agent's trust: the folders of the store, and the user's own skill
/// folders; not a folder because the command line names it.
pub fn policy() -> TrustPolicy {
    let own = TrustPolicy::new(|kit| matches!(kit.origin, Origin::Embedded | Origin::User));
    match store() {
        Ok(store) => own.or_store(store),
        Err(_) => own,
    }
}

/// Before an agent starts on the kit folders `dirs` (named on the command
/// line): for each one whose skills pre-approve tools and that is not
/// trusted, asks on a terminal whether to trust it (and does, on `y`), or
/// says that it is not trusted and how to trust it.
pub fn first_use(dirs: &[PathBuf]) {
    let Ok(store) = store() else {
        return;
    };
    let asking = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    for dir in dirs {
        let Ok(kits) = Local::new(dir).load() else {
            continue;
        };
        let asks: Vec<String> = kits
            .iter()
            .flat_map(|kit| kit.skills.iter())
            .filter(|skill| !skill.allowed_tools().is_empty())
            .map(|skill| format!("{} ({})", skill.name, skill.allowed_tools().join(", ")))
            .collect();
        if asks.is_empty() || store.trusts(dir) {
            continue;
        }
        let shown = inert(&dir.display().to_string()).into_owned();
        let asks = inert(&asks.join("; ")).into_owned();
        err!("{shown} is not trusted, and its skills pre-approve tools: {asks}");
        let answer = match asking {
            true => {
                error_text(format_args!(
                    "trust this folder, so those tools run unasked while such a skill is active \
                     (until a file in it changes)? [y/N] "
                ));
                let mut line = String::new();
                let _ = std::io::stdin().read_line(&mut line);
                line
            }
            false => String::new(),
        };
        match answer.trim().eq_ignore_ascii_case("y") || answer.trim().eq_ignore_ascii_case("yes") {
            true => match store.trust(dir) {
                Ok(digest) => err!("trusted {shown} ({digest})"),
                Err(e) => err!("{shown}: cannot trust it: {e}"),
            },
            false => err!(
                "not trusted: those tools are asked like any other (`skillkit trust {shown}` \
                 trusts it)"
            ),
        }
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
