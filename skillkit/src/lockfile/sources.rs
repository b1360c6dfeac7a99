//! Where a project's skills come from: a GitHub source at a commit (the
//! cache's checkouts), the skill folders in it, the server it is fetched
//! from, and an MCP server's skills.

use std::path::{Path, PathBuf};

use super::{LockError, LockedSkill};
use crate::providers::github::{Checkout, GitHub, GitHubError, Reference};

/// How deep in a source a skill's folder is looked for.
const MAX_DEPTH: usize = 6;

/// The MCP servers an install may ask, by the source the lock names.
#[cfg(feature = "mcp-client")]
pub(super) type Servers<'a> = &'a [(String, crate::McpSkills)];
#[cfg(not(feature = "mcp-client"))]
pub(super) type Servers<'a> = &'a [(String, ())];

/// Whether a lock's source is an MCP server.
pub(super) fn is_mcp(source: &str) -> bool {
    source.starts_with("mcp+")
}

/// The skills of an MCP server.
#[cfg(feature = "mcp-client")]
pub(super) async fn mcp_skills(
    server: &crate::McpSkills,
) -> Result<Vec<std::sync::Arc<crate::Skill>>, LockError> {
    use crate::provider::KitProvider as _;
    let kits = server
        .list_kits()
        .await
        .map_err(|e| LockError::Source(format!("the MCP server: {e}")))?;
    Ok(kits
        .iter()
        .flat_map(|kit| kit.skills.iter().cloned())
        .collect())
}

/// The folder an MCP skill's files were written to, read and checked.
#[cfg(feature = "mcp-client")]
pub(super) async fn materialized(skill: &crate::Skill) -> Result<PathBuf, LockError> {
    skill.body.load().await.map_err(|e| {
        LockError::Source(format!(
            "`{}` cannot be read from its server: {e}",
            skill.name
        ))
    })?;
    skill
        .dir()
        .map(Path::to_path_buf)
        .ok_or_else(|| LockError::Source(format!("`{}`: its server gave no files", skill.name)))
}

/// The folder of locked skill `name` fetched again from its MCP server
/// (one of `servers`), and what keeps it alive.
#[cfg(feature = "mcp-client")]
pub(super) async fn mcp_folder(
    servers: Servers<'_>,
    name: &str,
    locked: &LockedSkill,
) -> Result<(PathBuf, std::sync::Arc<crate::Skill>), LockError> {
    let Some((_, server)) = servers.iter().find(|(source, _)| *source == locked.source) else {
        return Err(no_server(name, locked));
    };
    let skills = mcp_skills(server).await?;
    let skill = skills
        .into_iter()
        .find(|s| s.bare_name() == name)
        .ok_or_else(|| {
            LockError::Source(format!(
                "`{name}` is no longer served by `{}`",
                locked.source
            ))
        })?;
    let dir = materialized(&skill).await?;
    Ok((dir, skill))
}

#[cfg(not(feature = "mcp-client"))]
pub(super) async fn mcp_folder(
    _: Servers<'_>,
    name: &str,
    locked: &LockedSkill,
) -> Result<(PathBuf, ()), LockError> {
    Err(no_server(name, locked))
}

/// Why an MCP skill cannot be fetched: no server given for it.
pub(super) fn no_server(name: &str, locked: &LockedSkill) -> LockError {
    LockError::Source(format!(
        "`{name}` comes from the MCP server `{}`; give it (--mcp-url URL, or --mcp 'COMMAND' \
         for a server on stdio: install never starts a command the lock names)",
        locked.source
    ))
}

/// A small text file (a lockfile, a marketplace), read as
/// [`whole::read_small`](crate::whole::read_small) reads one.
pub(super) fn read_small(path: &Path, limit: u64) -> Result<String, LockError> {
    crate::whole::read_small(path, limit).map_err(|source| LockError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// The API root a lock records for `github`: none for github.com.
pub(super) fn api_of(github: &GitHub) -> Option<String> {
    let api = github.base_url().trim_end_matches('/');
    (api != "https://api.github.com").then(|| api.to_owned())
}

/// Refuses to fetch `locked` from another server than the one it was
/// added from (a repository of the same name elsewhere is another one).
pub(super) fn same_server(
    name: &str,
    locked: &LockedSkill,
    github: &GitHub,
) -> Result<(), LockError> {
    let here = api_of(github);
    match locked.api == here {
        true => Ok(()),
        false => Err(LockError::Source(format!(
            "`{name}` comes from the GitHub API at {}, and this run uses {}; give that server \
             with --github-url (or GITHUB_API_URL)",
            locked.api.as_deref().unwrap_or("https://api.github.com"),
            github.base_url()
        ))),
    }
}

/// `owner/repo[/path]`: a reference without its ref, as the lock keeps it.
pub(super) fn base_source(reference: &Reference) -> String {
    match reference.path() {
        Some(path) => format!("{}/{path}", reference.repository()),
        None => reference.repository(),
    }
}

/// The cached or downloaded files of `locked` at its commit (or, for an
/// entry written by hand, at its ref's commit now).
pub(super) async fn fetch(
    github: &GitHub,
    locked: &LockedSkill,
    offline: bool,
) -> Result<Checkout, LockError> {
    match (&locked.commit, offline) {
        (Some(sha), true) => github
            .cached_checkout(&locked.source, sha)
            .await
            .map_err(from_github)?
            .ok_or_else(|| {
                LockError::Source(format!(
                    "`{}` at commit {sha} is not in the cache, and --offline forbids \
                     downloading it; run `skillkit install` online once",
                    locked.source
                ))
            }),
        (None, true) => Err(LockError::Source(format!(
            "`{}` is not pinned to a commit, and --offline forbids asking GitHub",
            locked.source
        ))),
        (commit, false) => {
            let source = match (&locked.requested, commit) {
                (Some(r), None) => format!("{}@{r}", locked.source),
                _ => locked.source.clone(),
            };
            github
                .checkout(&source, commit.as_deref())
                .await
                .map_err(from_github)
        }
    }
}

/// The skill folders of a checkout: (name, folder within it). A folder
/// with a `SKILL.md` is a skill (its sub-folders are its files); names
/// that are not a plain folder name, and a second skill of one name, are
/// left out, with why.
pub(super) fn skills_in(checkout: &Checkout) -> (Vec<(String, String)>, Vec<String>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    if checkout.dir.join("SKILL.md").is_file() {
        let name = checkout
            .reference
            .path()
            .and_then(|p| p.rsplit('/').next())
            .unwrap_or(checkout.reference.repo())
            .to_owned();
        return (vec![(name, String::new())], skipped);
    }
    let mut stack = vec![(checkout.dir.clone(), String::new(), 0)];
    while let Some((dir, within, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if !entry.file_type().is_ok_and(|t| t.is_dir())
                || name.starts_with('.')
                || name == "node_modules"
            {
                continue;
            }
            let path = match within.is_empty() {
                true => name.clone(),
                false => format!("{within}/{name}"),
            };
            if entry.path().join("SKILL.md").is_file() {
                if !plain_name(&name) {
                    skipped.push(format!("{}: not a plain folder name", path.escape_debug()));
                } else if found.iter().any(|(n, _)| *n == name) {
                    skipped.push(format!("{path}: a second skill named `{name}`"));
                } else {
                    found.push((name, path));
                }
            } else if depth < MAX_DEPTH {
                stack.push((entry.path(), path, depth + 1));
            }
        }
    }
    found.sort();
    (found, skipped)
}

/// The folder within a checkout of the skill named `name` (its folder's
/// name, or its `SKILL.md`'s `name:`).
pub(super) fn find_named(checkout: &Checkout, name: &str) -> Result<String, LockError> {
    let (found, _) = skills_in(checkout);
    found
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, within)| within)
        .ok_or_else(|| {
            LockError::Source(format!(
                "`{}` at commit {} has no skill `{name}`",
                checkout.reference, checkout.sha
            ))
        })
}

/// vercel's `skillPath` (`skills/x/SKILL.md`) as the skill's folder.
pub(super) fn skill_folder_of(skill_path: &str) -> String {
    let folder = skill_path
        .strip_suffix("SKILL.md")
        .unwrap_or(skill_path)
        .trim_end_matches('/');
    folder.to_owned()
}

/// A name that is one plain folder name: ASCII letters, digits, `-`,
/// `_`, `.`, not starting with a dot, at most 64 bytes.
pub(super) fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `within` (relative, `/` between parts, from the lock) inside `dir`.
pub(super) fn join(dir: &Path, within: &str) -> PathBuf {
    within
        .split('/')
        .filter(|part| !part.is_empty() && *part != "." && *part != "..")
        .fold(dir.to_path_buf(), |path, part| path.join(part))
}

/// A GitHub error as a lock error.
pub(super) fn from_github(error: GitHubError) -> LockError {
    LockError::Source(error.to_string())
}
