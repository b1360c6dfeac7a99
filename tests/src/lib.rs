//! Helpers shared by SkillKit's integration tests (`tests/*.rs` here, and
//! `skillkit-cli`'s tests), compiled once: the modules below, and small
//! file helpers at the root.

pub mod agent;
pub mod embeddings;
pub mod github;
pub mod llm;
pub mod mcp_server;
pub mod otlp;
pub mod peers;
pub mod postgres;
pub mod sessions;
pub mod sql;
pub mod terminal;

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

/// Everything a tracing subscriber writes, kept in memory: give
/// `move || logs.clone()` to `tracing_subscriber::fmt().with_writer`, then
/// read it back with [`Logs::text`].
#[derive(Clone, Default)]
pub struct Logs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Logs {
    /// What has been written so far.
    pub fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
