//! The providers SkillKit ships: [`Local`] directories, the [`Memory`] store
//! and, with the `github` feature, `GitHub` repositories imported at run time; with the `sql` feature,
//! `Sql`, skills kept in a SQLite or PostgreSQL database.

#[cfg(feature = "github")]
#[cfg_attr(docsrs, doc(cfg(feature = "github")))]
pub mod github;
mod local;
mod memory;
#[cfg(feature = "sql")]
#[cfg_attr(docsrs, doc(cfg(feature = "sql")))]
pub mod sql;

#[cfg(feature = "github")]
pub use github::GitHub;
pub(crate) use local::read_pool;
pub use local::{DISCOVERED_KIT, Local};
pub use memory::Memory;
#[cfg(feature = "sql")]
pub use sql::Sql;
