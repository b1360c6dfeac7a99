//! What a query learned of one file of a kit: the parsed skill or agent (or
//! that it failed), the proof that the file is unchanged, and the problems
//! met. Made by `read`, kept by `cache`.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use skillkit_parser::Diagnostic;
use skillkit_parser::layout::{Fingerprint, Stamp};

use crate::agent_definition::AgentDefinition;
use crate::skill::Skill;

/// Files just read, by path; `None` for one that vanished after the walk.
pub(super) type Loads = Vec<(Arc<Path>, Option<CachedFile>)>;

impl CachedFile {
    /// What was learned of a file with stamp `stamp`, read at `read_at`.
    pub(super) fn new(
        stamp: Stamp,
        read_at: SystemTime,
        loaded: Loaded,
        name_line: usize,
        diagnostics: Vec<Diagnostic>,
    ) -> Self {
        CachedFile {
            proof: stamp.proof(read_at),
            loaded,
            diagnostics: (!diagnostics.is_empty()).then(|| Box::new(diagnostics)),
            name_line: u32::try_from(name_line).unwrap_or(u32::MAX),
        }
    }

    /// The line of the `name:` key.
    pub(super) fn line(&self) -> usize {
        self.name_line as usize
    }

    /// Problems met reading the file.
    pub(super) fn diagnostics(&self) -> &[Diagnostic] {
        self.diagnostics.as_deref().map_or(&[], Vec::as_slice)
    }
}

#[derive(Clone)]
pub(super) enum Loaded {
    Skill(Arc<Skill>),
    Agent(Arc<AgentDefinition>),
    Failed,
}

/// What a query learned of one file (kept for every file of every kit, so
/// kept small: 40 bytes).
pub(super) struct CachedFile {
    /// What proves the file unchanged: `None` when its stamp was racy.
    pub(super) proof: Option<Fingerprint>,
    pub(super) loaded: Loaded,
    /// Problems met reading it: usually none, which takes no allocation (and
    /// a thin pointer, since every file has this field).
    #[expect(clippy::box_collection, reason = "8 bytes where a `Vec` takes 24")]
    pub(super) diagnostics: Option<Box<Vec<Diagnostic>>>,
    /// The line of the `name:` key, where a duplicate name is reported.
    pub(super) name_line: u32,
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(size_of::<CachedFile>() == 40);
