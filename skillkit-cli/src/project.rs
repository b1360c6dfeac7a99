//! The project's pinned skills from the command line: `add`, `install`,
//! `update`, `remove` (all through [`skillkit::lockfile::Project`]) and
//! `sign`. `verify` is in `verify.rs`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use skillkit::lockfile::{
    InstallMode, LOCKFILE_NAME, LockError, Project, UpdateMode, sign, signed_message,
};

use skillkit::McpSkills;
use skillkit::mcp_client::Endpoint;

use crate::args::Global;
use crate::failure::Failure;
use crate::mcp_args::McpArgs;
use crate::output::{err, inert, out};
use crate::sources;

/// Exit code of `install --locked`/`--frozen` when the lockfile would
/// change.
pub const WOULD_CHANGE: u8 = 3;

/// `skillkit add SOURCE [--plugin NAME] [--to DIR]`, or `add --mcp
/// 'COMMAND'` / `--mcp-url URL`.
pub fn add(
    global: &Global,
    project: Option<&Path>,
    source: Option<&str>,
    mcp: &McpArgs,
    plugin: Option<&str>,
    to: Option<&str>,
) -> Result<(), Failure> {
    let mut project = open(project)?;
    let servers = servers(mcp)?;
    let (github, bar) = crate::github::with_progress(global)?;
    let runtime = sources::runtime()?;
    let mut done = Vec::new();
    if let Some(source) = source {
        let added = runtime.block_on(async {
            match plugin {
                Some(plugin) => project.add_plugin(&github, source, plugin, to).await,
                None => project.add(&github, source, to).await,
            }
        });
        bar.finish_and_clear();
        done.push((source.to_owned(), added.map_err(failure)?));
    }
    for (source, server) in &servers {
        let added = runtime.block_on(project.add_mcp(server, source, to));
        done.push((source.clone(), added.map_err(failure)?));
    }
    for (source, added) in &done {
        let count = added.skills.len();
        let at = match added.sha.is_empty() {
            true => String::new(),
            false => format!(" at commit {}", added.sha),
        };
        out!(
            "added {count} skill{} from {}{at} into {}",
            if count == 1 { "" } else { "s" },
            inert(source),
            added.folder
        );
        for name in &added.skills {
            out!("  {name}");
        }
        for skipped in &added.skipped {
            err!("  skipped {}", inert(skipped));
        }
    }
    Ok(())
}

/// The MCP servers of `--mcp`/`--mcp-url`, each with the source a lock
/// names it by: `mcp+URL`, or `mcp+stdio:NAME` (never the command).
fn servers(mcp: &McpArgs) -> Result<Vec<(String, McpSkills)>, Failure> {
    Ok(mcp
        .servers()?
        .into_iter()
        .map(|(name, endpoint)| {
            let source = match &endpoint {
                Endpoint::Url { url, .. } => format!("mcp+{url}"),
                _ => format!("mcp+stdio:{name}"),
            };
            (source, McpSkills::new(endpoint).named(name))
        })
        .collect())
}

/// `skillkit install [--locked] [--offline] [--frozen]`: exit 0 installed,
/// 1 a skill could not be installed, 2 the lock cannot be read, 3 the lock
/// would change and `--locked` forbids it.
pub fn install(
    global: &Global,
    project: Option<&Path>,
    mcp: &McpArgs,
    mode: InstallMode,
) -> ExitCode {
    let result = (|| {
        let mut project = open(project)?;
        let mut servers = servers(mcp)?;
        // A skill the lock says comes from a URL is fetched from that URL,
        // without the token (a lock is not trusted with it).
        for locked in project.lock().skills.values() {
            if let Some(url) = locked.source.strip_prefix("mcp+")
                && (url.starts_with("https://") || url.starts_with("http://"))
                && !servers.iter().any(|(s, _)| *s == locked.source)
            {
                let server = McpSkills::new(Endpoint::url(url)).named("locked");
                servers.push((locked.source.clone(), server));
            }
        }
        let (github, bar) = crate::github::with_progress(global)?;
        let done = sources::runtime()?.block_on(project.install_with(&github, &servers, mode));
        bar.finish_and_clear();
        done.map_err(failure)
    })();
    match result {
        Ok(report) => {
            for name in &report.installed {
                out!("installed {name}");
            }
            out!(
                "{} skill{} installed, {} already as {} says{}",
                report.installed.len(),
                if report.installed.len() == 1 { "" } else { "s" },
                report.kept.len(),
                report.lockfile,
                if report.lock_written {
                    "; the lock was completed"
                } else {
                    ""
                }
            );
            ExitCode::SUCCESS
        }
        Err(failure) => failure.report(),
    }
}

/// `skillkit update [SOURCE] [--allow-ref-change] [--allow-signer-change]`.
pub fn update(
    global: &Global,
    project: Option<&Path>,
    source: Option<&str>,
    mode: UpdateMode,
) -> Result<(), Failure> {
    let mut project = open(project)?;
    let (github, bar) = crate::github::with_progress(global)?;
    let done = sources::runtime()?.block_on(project.update(&github, source, mode));
    bar.finish_and_clear();
    let moved = done.map_err(failure)?;
    if moved.is_empty() {
        out!("every skill is up to date");
    }
    for one in &moved {
        out!(
            "{} updated from commit {} to {}",
            one.name,
            one.from.as_deref().unwrap_or("?"),
            one.to
        );
    }
    Ok(())
}

/// `skillkit remove NAME`: the skill out of the project. A NAME the lock
/// does not pin but that is an imported source is not forgotten from the
/// cache: that is `skillkit forget`, and the error says so.
pub fn remove(global: &Global, project: Option<&Path>, name: &str) -> Result<(), Failure> {
    let mut project = open(project)?;
    if !project.lock().skills.contains_key(name) {
        let imported = sources::github(global).ok().and_then(|github| {
            let all = sources::runtime().ok()?.block_on(github.imported()).ok()?;
            all.iter()
                .any(|s| s.reference.to_string() == name)
                .then_some(())
        });
        let hint = match imported {
            Some(()) => format!(
                "; `{}` is a source imported into the cache: `skillkit forget {}` forgets it",
                inert(name),
                inert(name)
            ),
            None => "; `skillkit verify` lists the locked skills".into(),
        };
        return Err(Failure::failed(format!(
            "the lock ({LOCKFILE_NAME}) pins no skill `{}`{hint}",
            inert(name)
        )));
    }
    let removed = project.remove(name).map_err(failure)?;
    out!("removed {name} ({})", removed.path);
    Ok(())
}

/// `skillkit sign DIR --key FILE`, or `--print-message`.
pub fn run_sign(folder: &Path, key: Option<&Path>, print_message: bool) -> Result<(), Failure> {
    if print_message {
        let message = signed_message(folder).map_err(failure)?;
        out!("{message}");
        return Ok(());
    }
    let Some(key) = key else {
        return Err(Failure::io(
            "give the private key with --key FILE, or --print-message to sign elsewhere",
        ));
    };
    let text = std::fs::read_to_string(key)
        .map_err(|e| Failure::io(format!("{}: cannot read the key: {e}", key.display())))?;
    let key = skillkit::lockfile::ssh_key::PrivateKey::from_openssh(text.trim()).map_err(|e| {
        Failure::io(format!(
            "{}: not an OpenSSH private key ({e})",
            key.display()
        ))
    })?;
    let signer = sign(folder, &key).map_err(failure)?;
    out!(
        "signed {} with {signer}",
        folder.join(skillkit::lockfile::SIGNATURE_FILE).display()
    );
    Ok(())
}

/// The project at `folder` (default: the working folder).
fn open(folder: Option<&Path>) -> Result<Project, Failure> {
    let root = folder.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    if !root.is_dir() {
        return Err(Failure::io(format!(
            "{}: not a folder; give the project's folder with --project",
            root.display()
        )));
    }
    Project::open(root).map_err(failure)
}

/// A lock error as the command's failure, with its exit code.
fn failure(error: LockError) -> Failure {
    match &error {
        LockError::Invalid { .. } | LockError::Newer { .. } | LockError::Io { .. } => {
            Failure::io(inert(&error.to_string()))
        }
        LockError::WouldChange(_) => Failure::with_code(WOULD_CHANGE, inert(&error.to_string())),
        _ => Failure::failed(inert(&error.to_string())),
    }
}
