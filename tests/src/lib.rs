//! Helpers shared by SkillKit's integration tests.

use std::path::{Path, PathBuf};

/// The corpus of 431 real SKILL.md files (MIT), with `skills-ref` verdicts.
pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus")
}

/// Writes `text` to `path`, creating parent directories.
pub fn write(path: impl AsRef<Path>, text: impl AsRef<[u8]>) {
    let path = path.as_ref();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create test directory");
    }
    std::fs::write(path, text).expect("write test file");
}

/// A minimal valid SKILL.md.
pub fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}")
}
