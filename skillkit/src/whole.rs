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
