//! The one parser of SkillKit: `SKILL.md`, `AGENT.md` and `agents/<name>.md`
//! files, the kit layout on disk, the `<kit>:<skill>` naming rule and strict
//! Agent Skills validation.
//!
//! Both the runtime (`skillkit`'s providers) and the compile-time
//! `#[derive(Kit)]` use this crate, so a file parses the same way in both. It
//! has no proc-macro dependency and never panics on input: every failure is a
//! [`Diagnostic`] naming the file, line and column, and what to fix.
//!
//! ```
//! use skillkit_parser::SkillDocument;
//!
//! let skill = SkillDocument::parse("---\nname: read\ndescription: Read a file.\n---\nRead $ARGUMENTS.\n")?;
//! assert_eq!(skill.name, "read");
//! # Ok::<(), skillkit_parser::Diagnostic>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod agent;
pub mod build;
mod diagnostic;
mod fields;
pub mod frontmatter;
pub mod kit;
pub mod layout;
pub mod name;
mod open;
pub mod skill;
pub mod validate;
mod yaml;

#[cfg(fuzzing)]
#[doc(hidden)]
pub use yaml::check_fast_path;

use std::io::Read;
use std::path::Path;

pub use agent::{AGENT_FILE, AgentDocument};
pub use diagnostic::{Diagnostic, Severity};
pub use layout::KitLayout;
pub use open::{Folder, NotAFile, cannot_read, open_file};
pub use skill::{SKILL_FILE, SkillDocument};

/// The largest skill or agent file read, in bytes (64 MiB). A bigger file is a
/// diagnostic, not an out-of-memory.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads a skill or agent file, refusing files over [`MAX_FILE_BYTES`] and
/// anything but a regular file (opened with [`open_file`], so a FIFO named
/// `SKILL.md` never blocks). Errors are diagnostics naming the file.
///
/// ```
/// let err = skillkit_parser::read_file("/no/such/SKILL.md".as_ref()).unwrap_err();
/// assert!(err.message.contains("cannot read"));
/// # let dir = tempfile::tempdir().unwrap();
/// let err = skillkit_parser::read_file(dir.path()).unwrap_err();
/// assert!(err.message.starts_with("is a directory, not a file"));
/// ```
pub fn read_file(path: &Path) -> Result<Vec<u8>, Diagnostic> {
    let (file, meta) = open_file(path).map_err(|e| cannot_read(path, &e))?;
    read_open_file(file, meta.len(), path)
}

/// Reads an already opened skill or agent file of (expected) length `len`
/// (at `path`, for diagnostics), refusing files over [`MAX_FILE_BYTES`]. Open
/// it with [`open_file`], which never blocks and refuses what is not a file.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("SKILL.md");
/// std::fs::write(&path, "---\nname: a\n---\n").unwrap();
/// let (file, meta) = skillkit_parser::open_file(&path).unwrap();
/// assert_eq!(skillkit_parser::read_open_file(file, meta.len(), &path).unwrap().len(), 16);
/// ```
pub fn read_open_file(file: std::fs::File, len: u64, path: &Path) -> Result<Vec<u8>, Diagnostic> {
    if len > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0) + 1);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot_read(path, &e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    Ok(bytes)
}

/// A file read as its head (the frontmatter, up to and including the closing
/// delimiter line) and its body in a buffer of its own, with the body's first
/// line; or, when no frontmatter was found, the whole file as the head.
pub(crate) struct Parts {
    pub(crate) head: Vec<u8>,
    pub(crate) body: Option<(Vec<u8>, usize)>,
}

/// Bytes of a file read first, where its frontmatter is looked for (then
/// twice as many, and so on): every frontmatter of the corpus fits (the
/// longest is 1,316 bytes, the median 328), and what is read beyond it is
/// copied for nothing when only the frontmatter is wanted.
const FIRST_READ: u64 = 2048;

/// Reads an opened file of (expected) length `len`, cutting it after its
/// frontmatter while reading, so the body lands in its own buffer without a
/// copy; at most `body` bytes of the body are read (with 0, reading stops at
/// the end of the frontmatter and [`Parts::body`] holds only the body's first
/// line number; with `u64::MAX`, the whole body is read).
/// The head is read into `head` (cleared first), so a caller can hand the
/// same buffer to every file it reads.
pub(crate) fn read_parts(
    file: std::fs::File,
    len: u64,
    path: &Path,
    body: u64,
    mut head: Vec<u8>,
) -> Result<Parts, Diagnostic> {
    if len > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    let fail = |e: std::io::Error| cannot_read(path, &e);
    let mut reader = file.take(MAX_FILE_BYTES + 1);
    head.clear();
    head.reserve(usize::try_from(len.min(FIRST_READ)).unwrap_or(0));
    let mut chunk = FIRST_READ;
    loop {
        let before = head.len();
        // No more than the file held when it was opened: its last read is
        // then not followed by one that only finds the end (a file that
        // grew since is read to its end below when its frontmatter is not
        // found in what it held).
        let left = len.saturating_sub(before as u64);
        (&mut reader)
            .take(chunk.min(left))
            .read_to_end(&mut head)
            .map_err(fail)?;
        let at_end = ((head.len() - before) as u64) < chunk;
        match frontmatter::bounds(&head) {
            Ok(Some(found)) if body == 0 => {
                head.truncate(found.body_start);
                return Ok(Parts {
                    head,
                    body: Some((Vec::new(), found.body_line)),
                });
            }
            Ok(Some(found)) => {
                // The body's bytes wanted: those the file had when it was
                // opened (one read, no extra call to find the end; a file
                // still being written has a fresh mtime, so it is read again
                // next time), at most `body`.
                let wanted = len.saturating_sub(found.body_start as u64).min(body);
                let read = &head[found.body_start..];
                let read = &read[..read
                    .len()
                    .min(usize::try_from(wanted).unwrap_or(usize::MAX))];
                let mut body = Vec::with_capacity(usize::try_from(wanted).unwrap_or(0));
                body.extend_from_slice(read);
                head.truncate(found.body_start);
                let missing = wanted.saturating_sub(body.len() as u64);
                (&mut reader)
                    .take(missing)
                    .read_to_end(&mut body)
                    .map_err(fail)?;
                return Ok(Parts {
                    head,
                    body: Some((body, found.body_line)),
                });
            }
            Ok(None) if !at_end => chunk = chunk.saturating_mul(2),
            // No frontmatter, or not closed: the parser reports it on the whole text.
            _ => {
                reader.read_to_end(&mut head).map_err(fail)?;
                if head.len() as u64 > MAX_FILE_BYTES {
                    return Err(too_large(path));
                }
                return Ok(Parts { head, body: None });
            }
        }
    }
}

fn too_large(path: &Path) -> Diagnostic {
    Diagnostic::error(
        0,
        0,
        format!(
            "the file is larger than {} MiB; split it up",
            MAX_FILE_BYTES >> 20
        ),
    )
    .with_path(path)
}
