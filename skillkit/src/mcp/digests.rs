//! The digests of the skills extension's manifests (`sha256:<hex>` and the
//! size of each file), computed once per file version: a file is read and
//! hashed when it is first listed, and again only when its stamp (size,
//! mtime, inode, ctime) changed. A file changed within the filesystem's
//! timestamp granularity of its reading is read again next time (git's racy
//! rule, as the providers' caches do). A `SKILL.md`'s frontmatter, as
//! written, is parsed from the same bytes and kept with its digest, so a
//! manifest and its frontmatter always describe one version of the file.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rmcp::model::JsonObject;
use sha2::{Digest, Sha256};
use skillkit_parser::layout::Stamp;

/// What is known of one version of a file.
#[derive(Debug)]
pub(super) struct Facts {
    /// `sha256:` and 64 lowercase hex digits.
    pub(super) digest: String,
    /// Its length in bytes.
    pub(super) size: u64,
    /// For a `SKILL.md`: its frontmatter as written (`None` when it does
    /// not parse, or was not asked for).
    pub(super) frontmatter: Option<JsonObject>,
}

/// The digests of one server, shared by its connections.
#[derive(Debug, Default)]
pub(super) struct Digests {
    files: Mutex<HashMap<PathBuf, (Stamp, Arc<Facts>)>>,
    /// How many files were read and hashed (a test hook).
    computed: AtomicUsize,
}

impl Digests {
    /// The facts of the file at `path` (its frontmatter too when
    /// `frontmatter`), from the cache when its stamp is unchanged.
    pub(super) fn of(&self, path: &Path, frontmatter: bool) -> std::io::Result<Arc<Facts>> {
        // A stat proves a known version unchanged; only a new one is opened
        // (as every reader opens a skill's files: never blocking, refusing
        // what is not a regular file).
        if let Ok(meta) = std::fs::metadata(path)
            && let Ok(files) = self.files.lock()
            && let Some((known, facts)) = files.get(path)
            && *known == Stamp::from_metadata(&meta)
            && (!frontmatter || facts.frontmatter.is_some())
        {
            return Ok(Arc::clone(facts));
        }
        let (mut file, meta) = skillkit_parser::open_file(path)?;
        let stamp = Stamp::from_metadata(&meta);
        let read_at = SystemTime::now();
        let mut hash = Sha256::new();
        let mut kept = Vec::new();
        let mut size = 0u64;
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = file.read(&mut buffer)?;
            if n == 0 {
                break;
            }
            hash.update(&buffer[..n]);
            if frontmatter {
                kept.extend_from_slice(&buffer[..n]);
            }
            size += n as u64;
        }
        self.computed.fetch_add(1, Ordering::Relaxed);
        let facts = Arc::new(Facts {
            digest: crate::whole::sha256(&hash.finalize()),
            size,
            frontmatter: frontmatter.then(|| written_frontmatter(&kept)).flatten(),
        });
        if !stamp.is_racy(read_at)
            && let Ok(mut files) = self.files.lock()
        {
            files.insert(path.to_owned(), (stamp, Arc::clone(&facts)));
        }
        Ok(facts)
    }

    /// How many files were read and hashed so far.
    pub(super) fn computed(&self) -> usize {
        self.computed.load(Ordering::Relaxed)
    }
}

/// The frontmatter of a `SKILL.md`'s bytes, as written (read leniently, as
/// the file was loaded).
fn written_frontmatter(bytes: &[u8]) -> Option<JsonObject> {
    let text = skillkit_parser::frontmatter::decode(bytes).ok()?;
    let split = skillkit_parser::frontmatter::split(text).ok()?;
    skillkit_parser::frontmatter::parse_mapping_lenient(split.yaml, split.yaml_line)
        .ok()
        .map(|(map, _)| map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn age(path: &Path) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
    }

    #[test]
    fn a_file_is_hashed_once_per_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        std::fs::write(
            &path,
            "---\nname: a\ndescription: d\nx-y: [1, 2]\n---\nbody\n",
        )
        .unwrap();
        age(&path);
        let digests = Digests::default();
        let first = digests.of(&path, true).unwrap();
        assert_eq!(first.size, 48);
        assert_eq!(
            first.digest,
            rmcp::model::sha256_digest(&std::fs::read(&path).unwrap())
        );
        assert_eq!(
            first.frontmatter.as_ref().unwrap()["x-y"],
            serde_json::json!([1, 2])
        );
        let again = digests.of(&path, true).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(digests.computed(), 1);
        std::fs::write(&path, "---\nname: a\ndescription: e\n---\n").unwrap();
        age(&path);
        let edited = digests.of(&path, true).unwrap();
        assert_ne!(edited.digest, first.digest);
        assert_eq!(digests.computed(), 2);
    }

    #[test]
    fn a_file_written_just_now_is_hashed_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.md");
        std::fs::write(&path, "fresh").unwrap();
        let digests = Digests::default();
        digests.of(&path, false).unwrap();
        digests.of(&path, false).unwrap();
        assert_eq!(digests.computed(), 2);
    }
}
