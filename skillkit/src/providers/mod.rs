//! The providers SkillKit ships: [`Local`] directories, the [`Memory`] store
//! and [`GitHub`] repositories imported at run time.

pub mod github;
mod local;
mod memory;

pub use github::GitHub;
pub use local::{DISCOVERED_KIT, Local};
pub use memory::Memory;
