//! Kit layout: which files on disk make up a kit. The runtime `Local` provider,
//! the GitHub provider and `#[derive(Kit)]` all use these rules, so they can never
//! disagree.
//!
//! ```text
//! my_kit/                 <- kit "my_kit"
//!   AGENT.md              <- root agent (optional)
//!   skills/read/SKILL.md  <- a skill (any depth below the kit, hidden folders skipped)
//!   agents/summarize.md   <- a sub-agent
//! ```
//! A directory that directly holds skill folders (`<dir>/<skill>/SKILL.md`) and a
//! single skill folder (`<dir>/SKILL.md`) are kits too.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::{AGENT_FILE, Diagnostic, SKILL_FILE};

/// The folder of sub-agent files inside a kit.
pub const AGENTS_DIR: &str = "agents";

/// How deep below the kit root `SKILL.md` files are looked for.
pub const MAX_DEPTH: usize = 8;

/// The files of one kit, in a deterministic (sorted) order.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let root = dir.path();
/// std::fs::create_dir_all(root.join("skills/read")).unwrap();
/// std::fs::write(root.join("skills/read/SKILL.md"), "---\nname: read\ndescription: d\n---\n").unwrap();
/// std::fs::write(root.join("AGENT.md"), "---\ndescription: d\n---\n").unwrap();
/// let layout = skillkit_parser::KitLayout::scan(root).unwrap();
/// assert_eq!(layout.skills, [root.join("skills/read/SKILL.md")]);
/// assert_eq!(layout.agent, Some(root.join("AGENT.md")));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KitLayout {
    /// The kit directory.
    pub root: PathBuf,
    /// `AGENT.md` at the root, if any.
    pub agent: Option<PathBuf>,
    /// Every `SKILL.md`, sorted by path (bytewise).
    pub skills: Vec<PathBuf>,
    /// Every `agents/*.md`, sorted by path (bytewise).
    pub agents: Vec<PathBuf>,
    /// Folders that could not be read (the rest of the kit still loads).
    pub diagnostics: Vec<Diagnostic>,
}

impl KitLayout {
    /// Finds the files of the kit at `root`. Fails only when `root` itself cannot
    /// be read as a directory.
    ///
    /// ```
    /// assert!(skillkit_parser::KitLayout::scan("/no/such/kit".as_ref()).is_err());
    /// ```
    pub fn scan(root: &Path) -> io::Result<KitLayout> {
        let mut layout = KitLayout {
            root: root.to_path_buf(),
            ..KitLayout::default()
        };
        let entries = fs::read_dir(root)?;
        layout.walk(entries, root, 0);
        // Byte order of the paths: deterministic, and cheaper than comparing
        // path components.
        layout
            .skills
            .sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        layout
            .agents
            .sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        Ok(layout)
    }

    /// Whether the kit holds nothing to load.
    ///
    /// ```
    /// assert!(skillkit_parser::KitLayout::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.agent.is_none() && self.skills.is_empty() && self.agents.is_empty()
    }

    /// Every file of the kit: root agent, skills, sub-agents.
    ///
    /// ```
    /// assert_eq!(skillkit_parser::KitLayout::default().files().count(), 0);
    /// ```
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.agent
            .iter()
            .chain(&self.skills)
            .chain(&self.agents)
            .map(PathBuf::as_path)
    }

    fn walk(&mut self, entries: fs::ReadDir, dir: &Path, depth: usize) {
        for entry in entries {
            let Ok(entry) = entry else { continue };
            let file_name = entry.file_name();
            let Some(name) = file_name.to_str() else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let Some(is_dir) = entry_is_dir(&entry, &path, dir) else {
                continue;
            };
            if !is_dir {
                if name == SKILL_FILE {
                    self.skills.push(path);
                } else if depth == 0 && name == AGENT_FILE {
                    self.agent = Some(path);
                }
            } else if depth == 0 && name == AGENTS_DIR {
                self.scan_agents(&path);
            } else if depth < MAX_DEPTH {
                match fs::read_dir(&path) {
                    Ok(children) => self.walk(children, &path, depth + 1),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => self.diagnostics.push(unreadable(&path, &e)),
                }
            }
        }
    }

    fn scan_agents(&mut self, dir: &Path) {
        match fs::read_dir(dir) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    let path = entry.path();
                    let hidden = entry
                        .file_name()
                        .to_str()
                        .is_none_or(|n| n.starts_with('.'));
                    let markdown = path.extension().is_some_and(|e| e == "md");
                    if !hidden && markdown && entry_is_dir(&entry, &path, dir) == Some(false) {
                        self.agents.push(path);
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => self.diagnostics.push(unreadable(dir, &e)),
        }
    }
}

fn unreadable(path: &Path, err: &io::Error) -> Diagnostic {
    Diagnostic::warning(0, 0, format!("folder skipped, it cannot be read: {err}")).with_path(path)
}

/// Whether `entry` is a directory (following symlinks); `None` for entries to
/// skip: vanished ones and symlinks that loop back to an ancestor.
fn entry_is_dir(entry: &fs::DirEntry, path: &Path, parent: &Path) -> Option<bool> {
    let file_type = entry.file_type().ok()?;
    if !file_type.is_symlink() {
        return Some(file_type.is_dir());
    }
    let meta = fs::metadata(path).ok()?;
    if meta.is_dir() {
        let target = fs::canonicalize(path).ok()?;
        let here = fs::canonicalize(parent).ok()?;
        if here.starts_with(&target) {
            return None;
        }
    }
    Some(meta.is_dir())
}

/// The kit name of a directory: its base name.
///
/// ```
/// assert_eq!(skillkit_parser::layout::kit_name("/app/skills/files".as_ref()).as_deref(), Some("files"));
/// ```
pub fn kit_name(root: &Path) -> Option<String> {
    root.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .or_else(|| {
            fs::canonicalize(root)
                .ok()
                .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        })
}

/// Every non-hidden child directory of `dir`, sorted: the kits of a
/// directory of kits.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir(dir.path().join("b")).unwrap();
/// std::fs::create_dir(dir.path().join("a")).unwrap();
/// std::fs::create_dir(dir.path().join(".git")).unwrap();
/// let kits = skillkit_parser::layout::kit_dirs(dir.path()).unwrap();
/// assert_eq!(kits, [dir.path().join("a"), dir.path().join("b")]);
/// ```
pub fn kit_dirs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        let hidden = entry
            .file_name()
            .to_str()
            .is_none_or(|n| n.starts_with('.'));
        if !hidden && entry_is_dir(&entry, &path, dir) == Some(true) {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "---\nname: x\ndescription: d\n---\n").unwrap();
    }

    #[test]
    fn nested_flat_and_skills_folders_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("skills/a/SKILL.md"));
        write(&root.join("skills/a/deeper/b/SKILL.md"));
        write(&root.join("c/SKILL.md"));
        write(&root.join(".hidden/SKILL.md"));
        write(&root.join("agents/sum.md"));
        write(&root.join("agents/notes.txt"));
        let layout = KitLayout::scan(root).unwrap();
        assert_eq!(
            layout.skills,
            [
                root.join("c/SKILL.md"),
                root.join("skills/a/SKILL.md"),
                root.join("skills/a/deeper/b/SKILL.md"),
            ]
        );
        assert_eq!(layout.agents, [root.join("agents/sum.md")]);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("skills/a/SKILL.md"));
        std::os::unix::fs::symlink(root.join("skills"), root.join("skills/a/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("skills/a"), root.join("linked")).unwrap();
        let layout = KitLayout::scan(root).unwrap();
        assert_eq!(
            layout.skills,
            [root.join("linked/SKILL.md"), root.join("skills/a/SKILL.md")]
        );
    }

    #[test]
    fn single_skill_folder_is_a_kit() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("SKILL.md"));
        assert_eq!(KitLayout::scan(dir.path()).unwrap().skills.len(), 1);
    }
}
