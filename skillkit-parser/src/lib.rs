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
#![warn(missing_docs)]

pub mod agent;
pub mod build;
mod diagnostic;
mod fields;
pub mod frontmatter;
pub mod layout;
pub mod name;
pub mod skill;
pub mod validate;

use std::io::Read;
use std::path::Path;

pub use agent::{AGENT_FILE, AgentDocument};
pub use diagnostic::{Diagnostic, Severity};
pub use layout::KitLayout;
pub use skill::{SKILL_FILE, SkillDocument};

/// The largest skill or agent file read, in bytes (64 MiB). A bigger file is a
/// diagnostic, not an out-of-memory.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads a skill or agent file, refusing files over [`MAX_FILE_BYTES`]. Errors
/// are diagnostics naming the file.
///
/// ```
/// let err = skillkit_parser::read_file("/no/such/SKILL.md".as_ref()).unwrap_err();
/// assert!(err.message.contains("cannot read"));
/// ```
pub fn read_file(path: &Path) -> Result<Vec<u8>, Diagnostic> {
    let file = std::fs::File::open(path).map_err(|e| cannot_read(path, &e))?;
    read_open_file(file, path)
}

/// Reads an already opened skill or agent file (at `path`, for diagnostics),
/// refusing files over [`MAX_FILE_BYTES`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("SKILL.md");
/// std::fs::write(&path, "---\nname: a\n---\n").unwrap();
/// let file = std::fs::File::open(&path).unwrap();
/// assert_eq!(skillkit_parser::read_open_file(file, &path).unwrap().len(), 16);
/// ```
pub fn read_open_file(file: std::fs::File, path: &Path) -> Result<Vec<u8>, Diagnostic> {
    let too_large = || {
        Diagnostic::error(
            0,
            0,
            format!(
                "the file is larger than {} MiB; split it up",
                MAX_FILE_BYTES >> 20
            ),
        )
        .with_path(path)
    };
    let len = file.metadata().map_or(0, |m| m.len());
    if len > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0) + 1);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot_read(path, &e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

fn cannot_read(path: &Path, err: &std::io::Error) -> Diagnostic {
    Diagnostic::error(0, 0, format!("cannot read the file: {err}")).with_path(path)
}
