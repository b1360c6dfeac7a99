//! The `#[derive(Kit)]` macro of SkillKit. Use it through `skillkit::Kit`.
//!
//! The derive arrives with the compile-time kits work; this crate already exists
//! so the workspace layout is the final one.
