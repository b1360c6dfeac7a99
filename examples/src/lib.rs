//! SkillKit examples: see the `[[example]]` targets in Cargo.toml.
