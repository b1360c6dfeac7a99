//! What a skill's folder holds, read for a lock: its regular files with
//! their sizes and SHA-256s, and the entries that are not regular files.

use std::collections::BTreeMap;
use std::path::Path;

use super::{LockError, MAX_SKILL_BYTES};

/// One file read for a lock.
pub(super) struct Read {
    pub(super) size: u64,
    pub(super) sha256: [u8; 32],
}

/// What a skill's folder holds: its regular files, digested, and the
/// entries that are not (a symbolic link, a special file, a name that is
/// not UTF-8, something that could not be read), by relative path.
pub(super) struct Walked {
    pub(super) files: BTreeMap<String, Read>,
    pub(super) odd: Vec<String>,
    /// The bytes of all the files.
    pub(super) total: u64,
}

impl Walked {
    /// The aggregate digest of the files.
    pub(super) fn digest(&self) -> String {
        let framed: Vec<(&str, u64, [u8; 32])> = self
            .files
            .iter()
            .map(|(p, r)| (p.as_str(), r.size, r.sha256))
            .collect();
        crate::whole::aggregate(&framed)
    }

    /// Whether a lock may pin these files as skill `name`'s: regular files
    /// and folders only, within the size a lock reads.
    pub(super) fn pinnable(&self, name: &str) -> Result<(), LockError> {
        let refused =
            |problem: String| LockError::Refused(format!("cannot pin `{name}`: {problem}"));
        if let Some(entry) = self.odd.first() {
            return Err(refused(format!(
                "`{entry}` is a symbolic link, not a regular file, or unreadable"
            )));
        }
        if self.total > MAX_SKILL_BYTES {
            return Err(refused(format!(
                "its files pass {} MiB",
                MAX_SKILL_BYTES / 1024 / 1024
            )));
        }
        Ok(())
    }
}

/// Walks `folder`, digesting each regular file as the readers of skills
/// open them (`skillkit_parser::open_file`: never blocking on a FIFO put
/// in a file's place, refusing what is not a regular file) and streaming
/// its bytes through the hash.
pub(super) fn walk(folder: &Path) -> Walked {
    let mut walked = Walked {
        files: BTreeMap::new(),
        odd: Vec::new(),
        total: 0,
    };
    let mut buffer = vec![0u8; 64 * 1024];
    let mut stack = vec![(folder.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            walked.odd.push(prefix.trim_end_matches('/').to_owned());
            continue;
        };
        for entry in entries.flatten() {
            let relative = format!("{prefix}{}", entry.file_name().to_string_lossy());
            let name_ok = entry.file_name().to_str().is_some();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && name_ok => {
                    stack.push((entry.path(), format!("{relative}/")));
                }
                Ok(kind) if kind.is_file() && name_ok => {
                    match crate::whole::sha256_file(&entry.path(), &mut buffer, u64::MAX) {
                        Ok((size, sha256)) => {
                            walked.total += size;
                            walked.files.insert(relative, Read { size, sha256 });
                        }
                        Err(_) => walked.odd.push(relative),
                    }
                }
                _ => walked.odd.push(relative),
            }
        }
    }
    walked.odd.sort();
    walked
}
