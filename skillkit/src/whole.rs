//! Files written whole and digests written out, as every store of SkillKit
//! does them: a file is written beside its place, synced, then renamed over
//! it (a reader sees the old file or the new one, never half of one); a
//! SHA-256 is written `sha256:<64 lowercase hex>`, the form of the MCP
//! skills extension.

use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` whole: a temporary file in its folder, synced,
/// then renamed over it.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let mut file = tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new(".")))?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// `digest` (a SHA-256) as `sha256:<64 lowercase hex>`.
pub(crate) fn sha256(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(7 + digest.len() * 2);
    out.push_str("sha256:");
    for byte in digest {
        out.push(HEX[usize::from(byte >> 4)] as char);
        out.push(HEX[usize::from(byte & 15)] as char);
    }
    out
}

/// The domain tag of the aggregate digest, version 1 (specified in
/// `lockfile/digest.rs`).
pub(crate) const AGGREGATE_TAG: &[u8] = b"skillkit-skill-digest-v1\0";

/// The aggregate digest, version 1, of files already digested: (path
/// relative to the folder, size, SHA-256 of the content), sorted by path.
/// The lockfile pins it and the trust store keeps it, so trusting a locked
/// skill trusts the bytes the lock pins.
pub(crate) fn aggregate(sorted: &[(&str, u64, [u8; 32])]) -> String {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(AGGREGATE_TAG);
    hasher.update((sorted.len() as u64).to_be_bytes());
    for (path, size, digest) in sorted {
        hasher.update((path.len() as u64).to_be_bytes());
        hasher.update(path.as_bytes());
        hasher.update(size.to_be_bytes());
        hasher.update(digest);
    }
    sha256(&hasher.finalize())
}
