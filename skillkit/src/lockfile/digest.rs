//! The digests a lockfile pins: each file's (`sha256:<64 hex>`, the form of
//! the MCP skills extension) and one aggregate digest over exactly the files
//! of a skill, length-framed so that no two different sets of files share
//! the framed bytes.
//!
//! # The aggregate digest, version 1
//!
//! SHA-256 over the bytes:
//!
//! ```text
//! "skillkit-skill-digest-v1" 0x00
//! u64-be(number of files)
//! for each file, sorted by its path's UTF-8 bytes:
//!     u64-be(length of the path in bytes) path
//!     u64-be(size of the content in bytes) SHA-256(content)
//! ```
//!
//! Paths are relative to the skill's folder, with `/` between parts. The
//! result is written `sha256:<64 lowercase hex>`. Test vectors:
//! `skillkit/tests/vectors/skill-digest-v1.json`. (One implementation,
//! `crate::whole::aggregate`, serves the lock and the trust store.)

use sha2::{Digest as _, Sha256};

/// The domain tag that starts the aggregate's framed bytes.
pub const AGGREGATE_TAG: &[u8] = crate::whole::AGGREGATE_TAG;

/// `content`'s digest, `sha256:<64 hex>`.
///
/// ```
/// assert_eq!(
///     skillkit::lockfile::file_digest(b""),
///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// );
/// ```
pub fn file_digest(content: &[u8]) -> String {
    crate::whole::sha256(&Sha256::digest(content))
}

/// The aggregate digest of a skill's `files` (path relative to the skill's
/// folder, content), in any order.
///
/// ```
/// use skillkit::lockfile::aggregate_digest;
/// let a = aggregate_digest(&[("SKILL.md", b"x".as_slice()), ("ab", b"".as_slice())]);
/// let b = aggregate_digest(&[("ab", b"".as_slice()), ("SKILL.md", b"x".as_slice())]);
/// assert_eq!(a, b);
/// // Framed: moving a byte from a path into the content changes the digest.
/// assert_ne!(aggregate_digest(&[("a", b"b".as_slice())]), aggregate_digest(&[("ab", b"".as_slice())]));
/// ```
pub fn aggregate_digest(files: &[(&str, &[u8])]) -> String {
    let mut framed: Vec<(&str, u64, [u8; 32])> = files
        .iter()
        .map(|(path, content)| (*path, content.len() as u64, Sha256::digest(content).into()))
        .collect();
    framed.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    crate::whole::aggregate(&framed)
}
