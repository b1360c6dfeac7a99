//! Each embedded skill's aggregate digest, version 1, computed at build time
//! over its folder's files: the digest a project's lockfile pins for the
//! same folder (specified in `skillkit/src/lockfile/digest.rs`; the
//! derive's tests check that both agree), so a binary's embedded skills can
//! be checked against a lock.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// The domain tag of version 1.
const TAG: &[u8] = b"skillkit-skill-digest-v1\0";

/// `sha256:<hex>` over the regular files under `folder` and the files
/// read, or `None` when it holds a link, a special file or something that
/// cannot be read (a lock would not pin it either).
pub(crate) fn folder(folder: &Path) -> Option<(String, Vec<PathBuf>)> {
    let mut files = Vec::new();
    walk(folder, "", &mut files)?;
    files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    hasher.update(TAG);
    hasher.update((files.len() as u64).to_be_bytes());
    for (relative, path) in &files {
        let content = std::fs::read(path).ok()?;
        hasher.update((relative.len() as u64).to_be_bytes());
        hasher.update(relative.as_bytes());
        hasher.update((content.len() as u64).to_be_bytes());
        hasher.update(Sha256::digest(&content));
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Some((
        format!("sha256:{hex}"),
        files.into_iter().map(|(_, p)| p).collect(),
    ))
}

/// The regular files under `dir`, by path relative to the skill's folder.
fn walk(dir: &Path, prefix: &str, files: &mut Vec<(String, PathBuf)>) -> Option<()> {
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name().into_string().ok()?;
        let kind = entry.file_type().ok()?;
        let relative = format!("{prefix}{name}");
        if kind.is_dir() {
            walk(&entry.path(), &format!("{relative}/"), files)?;
        } else if kind.is_file() {
            files.push((relative, entry.path()));
        } else {
            return None;
        }
    }
    Some(())
}
