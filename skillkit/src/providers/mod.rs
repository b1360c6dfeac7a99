//! The providers SkillKit ships: [`Local`] directories, the [`Memory`] store
//! and [`GitHub`] repositories imported at run time; with the `sql` feature,
//! `Sql`, skills kept in a SQLite or PostgreSQL database.

pub mod github;
mod local;
mod memory;
#[cfg(feature = "sql")]
pub mod sql;

pub use github::GitHub;
pub use local::{DISCOVERED_KIT, Local};
pub use memory::Memory;
#[cfg(feature = "sql")]
pub use sql::Sql;
