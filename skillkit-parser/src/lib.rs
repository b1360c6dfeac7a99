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
    let fail = |e: std::io::Error| {
        Diagnostic::error(0, 0, format!("cannot read the file: {e}")).with_path(path)
    };
    let file = std::fs::File::open(path).map_err(fail)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Diagnostic::error(
            0,
            0,
            format!(
                "the file is larger than {} MiB; split it up",
                MAX_FILE_BYTES >> 20
            ),
        )
        .with_path(path));
    }
    Ok(bytes)
}
