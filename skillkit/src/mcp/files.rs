//! The files beside a skill's `SKILL.md`, as the server hands them out: a
//! path a client gives is resolved inside the skill's folder by
//! [`resolve`] (the rule `run_skill_script` uses too) or refused.

use std::io::Read;

pub(super) use crate::dispatch::files::{resolve_file as resolve, resolve_folder};
use std::path::Path;

/// The largest file the server reads for a client.
pub(super) const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// What a file holds: text, or bytes that are not UTF-8.
#[derive(Debug, PartialEq)]
pub(super) enum Contents {
    Text(String),
    Binary(Vec<u8>),
}

/// Reads the file at `path` (`shown` is how the client named it), at most
/// [`MAX_FILE_BYTES`].
pub(super) fn read(path: &Path, shown: &str) -> Result<Contents, String> {
    let cannot = |e: std::io::Error| format!("`{shown}` cannot be read ({e})");
    // Opened as every reader opens a skill's files: never blocking, and
    // refusing a FIFO, a socket or a device with what it is.
    let (file, _) = skillkit_parser::open_file(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "`{shown}` is larger than {} MiB, the most this server sends",
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => Contents::Text(text),
        Err(e) => Contents::Binary(e.into_bytes()),
    })
}

/// The MIME type of a file named `name`, by its extension; bytes that are
/// not UTF-8 are never called text.
pub(super) fn mime_type(name: &str, contents: Option<&Contents>) -> &'static str {
    let by_name = mime_by_name(name);
    let binary = matches!(contents, Some(Contents::Binary(_)));
    match binary && (by_name.starts_with("text/") || by_name.starts_with("application/")) {
        true if by_name != "application/pdf" => "application/octet-stream",
        _ => by_name,
    }
}

fn mime_by_name(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("pdf") => "application/pdf",
        _ => "text/plain",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn skill_dir() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("kit/skills/read");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\nname: read\n---\n").unwrap();
        std::fs::write(dir.join("scripts/run.sh"), "echo hi\n").unwrap();
        std::fs::write(root.path().join("kit/secret.txt"), "secret").unwrap();
        std::fs::write(dir.join(".env"), "TOKEN=x").unwrap();
        (root, dir)
    }

    #[test]
    fn bytes_that_are_not_utf8_are_binary() {
        let (_root, dir) = skill_dir();
        std::fs::write(dir.join("logo.png"), [0x89, b'P', b'N', b'G', 0xff]).unwrap();
        let contents = read(&resolve(&dir, "logo.png").unwrap(), "logo.png").unwrap();
        assert!(matches!(contents, Contents::Binary(ref b) if b.len() == 5));
        assert_eq!(mime_type("logo.png", Some(&contents)), "image/png");
        assert_eq!(
            mime_type("notes.txt", Some(&contents)),
            "application/octet-stream"
        );
        assert_eq!(mime_type("SKILL.md", None), "text/markdown");
    }
}
