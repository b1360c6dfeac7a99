//! The providers SkillKit ships: [`Local`] directories and the [`Memory`] store.

mod local;
mod memory;

pub use local::Local;
pub use memory::Memory;
