//! The private folder of the barrier files: one per process, shared by every
//! watch (each watcher watches it; each query waits for its own file's
//! event), named after the process so that a later process removes the
//! folders of processes that ended without removing theirs.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The start of the folder's name, before the process id.
const PREFIX: &str = "skillkit-watch-";

/// The process's barrier folder, made the first time (in the system's
/// temporary folder), or why it could not be made.
pub(super) fn folder() -> Result<&'static Path, String> {
    static FOLDER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOLDER
        .get_or_init(|| {
            let made = tempfile::Builder::new()
                .prefix(&format!("{PREFIX}{}-", std::process::id()))
                .tempdir()
                .map_err(|e| format!("no private folder could be made: {e}"))?
                .keep();
            sweep(&made);
            Ok(made)
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

/// A new barrier file's name (unique in the process).
pub(super) fn next() -> u64 {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    SEQUENCE.fetch_add(1, Ordering::Relaxed) + 1
}

/// The barrier file number `name` names, if it is one.
pub(super) fn number(name: &Path) -> Option<u64> {
    name.to_str()?.parse().ok()
}

/// Removes the barrier folders, beside `ours`, of processes that ended,
/// when they are this user's.
fn sweep(ours: &Path) {
    use std::os::unix::fs::MetadataExt;
    let (Some(temp), Ok(me)) = (ours.parent(), std::fs::symlink_metadata(ours)) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let theirs = entry
            .metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == me.uid());
        if theirs && pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
