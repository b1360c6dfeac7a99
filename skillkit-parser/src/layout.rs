//! Kit layout: which files on disk make up a kit. The runtime `Local` provider,
//! the GitHub provider and `#[derive(Kit)]` all use these rules, so they can never
//! disagree.
//!
//! ```text
//! my_kit/                 <- kit "my_kit"
//!   AGENT.md              <- root agent (optional)
//!   skills/read/SKILL.md  <- a skill (up to MAX_DEPTH folders below the kit)
//!   agents/summarize.md   <- a sub-agent
//! ```
//! A directory that directly holds skill folders (`<dir>/<skill>/SKILL.md`) and a
//! single skill folder (`<dir>/SKILL.md`) are kits too.
//!
//! Hidden folders are searched like any other: real skills live in
//! `.claude/skills/`, `.agents/skills/` and `skills/.curated/`. Only folders
//! that never hold skills are skipped ([`is_skipped`]).

mod listing;
mod scanner;
mod stamp;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use listing::{Handle, Kind, Listing};
pub use scanner::Scanner;
pub use stamp::{Fingerprint, RACY_WINDOW, Stamp};

use crate::{AGENT_FILE, Diagnostic, SKILL_FILE};

/// Folders never searched for skills: version control (`.git`, `.hg`, `.svn`,
/// `.jj`) and dependency or build output (`node_modules`, `target`,
/// `__pycache__`, `.venv`).
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".jj",
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
];

/// Whether a folder named `name` is skipped when looking for skills: the one
/// rule of every provider, the derive and `validate`.
///
/// ```
/// use skillkit_parser::layout::is_skipped;
/// assert!(is_skipped(".git") && is_skipped("node_modules"));
/// assert!(!is_skipped(".claude") && !is_skipped(".curated") && !is_skipped("skills"));
/// ```
pub fn is_skipped(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name)
}

/// The folder of sub-agent files inside a kit.
pub const AGENTS_DIR: &str = "agents";

/// How many folders below the kit root skills are loaded from:
/// `<kit>/1/2/3/4/5/6/7/8/SKILL.md` is the deepest. A `SKILL.md` deeper than
/// that is not loaded, and the scan says so, naming it: below this depth the
/// walk goes on through real folders (not links, which could loop) only to
/// find and report such files, down to [`MAX_SEARCH_DEPTH`].
pub const MAX_DEPTH: usize = 8;

/// How many folders below the kit root a scan looks, to report skills deeper
/// than [`MAX_DEPTH`]; a folder deeper still is reported as not searched.
pub const MAX_SEARCH_DEPTH: usize = 4 * MAX_DEPTH;

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
    /// Whether a file or folder of the kit was reached through a symbolic
    /// link: a change made to its target elsewhere changes nothing in the
    /// kit's own folders (so a watcher of those folders does not see it).
    pub links: bool,
}

impl KitLayout {
    /// Finds the files of the kit at `root`. Fails only when `root` itself cannot
    /// be read as a directory.
    ///
    /// ```
    /// assert!(skillkit_parser::KitLayout::scan("/no/such/kit".as_ref()).is_err());
    /// ```
    pub fn scan(root: &Path) -> io::Result<KitLayout> {
        Walk {
            scanner: None,
            layout: KitLayout::default(),
            read_at: SystemTime::now(),
            on_file: &mut |_| {},
        }
        .run(root)
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
}

/// One scan of one kit.
struct Walk<'a> {
    scanner: Option<&'a mut Scanner>,
    layout: KitLayout,
    read_at: SystemTime,
    on_file: &'a mut dyn FnMut(&Path),
}

impl Walk<'_> {
    fn run(mut self, root: &Path) -> io::Result<KitLayout> {
        self.layout.root = root.to_path_buf();
        let (listing, handle) = self.listing(root, None)?;
        self.walk(&listing, root, handle.as_ref(), 0);
        let mut layout = self.layout;
        layout.skills.sort_unstable_by(|a, b| path_order(a, b));
        layout.agents.sort_unstable_by(|a, b| path_order(a, b));
        Ok(layout)
    }

    fn listing(
        &mut self,
        dir: &Path,
        parent: Option<(&Handle, &str)>,
    ) -> io::Result<(Listing, Option<Handle>)> {
        match &mut self.scanner {
            Some(scanner) => scanner.listing(dir, parent, self.read_at),
            None => {
                let (listing, _, handle) = Listing::open(dir, parent)?;
                Ok((listing, Some(handle)))
            }
        }
    }

    /// The listing of child directory `path` (`name` in the open `parent`,
    /// when given), or `None` (with a diagnostic when it exists but cannot
    /// be read).
    fn child(
        &mut self,
        path: &Path,
        parent: Option<(&Handle, &str)>,
    ) -> Option<(Listing, Option<Handle>)> {
        match self.listing(path, parent) {
            Ok(found) => Some(found),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                self.layout.diagnostics.push(unreadable(path, &e));
                None
            }
        }
    }

    /// Walks the entries of `dir`, open as `handle` when it was read now
    /// (a remembered listing has none: its children open by path), `depth`
    /// folders below the kit root.
    ///
    /// Whatever is named like a kit file (`SKILL.md`, the root's `AGENT.md`,
    /// `agents/*.md`) is listed as one, whatever it is: the reader refuses a
    /// directory or a FIFO of that name on its handle, saying what it is.
    fn walk(&mut self, listing: &Listing, dir: &Path, handle: Option<&Handle>, depth: usize) {
        for (name, kind) in listing.iter() {
            let path = joined(dir, name);
            if kind == Kind::NotUtf8 {
                self.warn(
                    path,
                    "skipped: its name is not UTF-8; rename it to load what it holds",
                );
                continue;
            }
            if name == SKILL_FILE {
                self.layout.links |= kind == Kind::Symlink;
                if depth > MAX_DEPTH {
                    self.warn(path, format!(
                        "skill not loaded: it is deeper than {MAX_DEPTH} folders below the kit; move its folder up"
                    ));
                } else {
                    (self.on_file)(&path);
                    self.layout.skills.push(path);
                }
                continue;
            }
            if depth == 0 && name == AGENT_FILE {
                self.layout.links |= kind == Kind::Symlink;
                (self.on_file)(&path);
                self.layout.agent = Some(path);
                continue;
            }
            if resolve(kind, &path, dir) != Some(true) {
                continue;
            }
            self.layout.links |= kind == Kind::Symlink;
            let parent = handle.map(|handle| (handle, name));
            if depth == 0 && name == AGENTS_DIR {
                self.agents(&path, parent);
            } else if depth >= MAX_DEPTH && kind == Kind::Symlink {
                self.warn(path, format!(
                    "link not followed: it is deeper than {MAX_DEPTH} folders below the kit, where skills are not loaded"
                ));
            } else if depth >= MAX_SEARCH_DEPTH {
                self.warn(path, format!(
                    "folder not searched: it is deeper than {MAX_SEARCH_DEPTH} folders below the kit"
                ));
            } else if let Some((children, handle)) = self.child(&path, parent) {
                self.walk(&children, &path, handle.as_ref(), depth + 1);
            }
        }
    }

    /// Lists the sub-agent files of the kit's `agents` folder at `path`.
    fn agents(&mut self, path: &Path, parent: Option<(&Handle, &str)>) {
        let Some((agents, _)) = self.child(path, parent) else {
            return;
        };
        for (name, kind) in agents.iter() {
            let file = joined(path, name);
            if kind == Kind::NotUtf8 {
                self.warn(file, "skipped: its name is not UTF-8; rename it to load it");
            } else if name.ends_with(".md") {
                self.layout.links |= kind == Kind::Symlink;
                (self.on_file)(&file);
                self.layout.agents.push(file);
            }
        }
    }

    /// Says that `path` was left out, and why.
    fn warn(&mut self, path: PathBuf, message: impl Into<String>) {
        let warning = Diagnostic::warning(0, 0, message).with_path(path);
        self.layout.diagnostics.push(warning);
    }
}

/// `dir` joined with the entry `name`, allocated once (`Path::join` copies
/// `dir` exactly, then grows the copy for `name`).
fn joined(dir: &Path, name: &str) -> PathBuf {
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
    path.push(dir);
    path.push(name);
    path
}

fn unreadable(path: &Path, err: &io::Error) -> Diagnostic {
    Diagnostic::warning(0, 0, format!("folder skipped, it cannot be read: {err}")).with_path(path)
}

/// Whether an entry of kind `kind` at `path` is a directory, following
/// symlinks; `None` for entries to skip: vanished ones, names that are not
/// UTF-8 and symlinks that loop back to an ancestor.
fn resolve(kind: Kind, path: &Path, parent: &Path) -> Option<bool> {
    match kind {
        Kind::File => Some(false),
        Kind::Dir => Some(true),
        Kind::NotUtf8 => None,
        Kind::Symlink => {
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
    }
}

/// The order of the lists a scan returns ([`KitLayout::skills`],
/// [`KitLayout::agents`]): paths compared as bytes, which is deterministic and
/// cheaper than comparing path components. A cache kept in this order can be
/// merged with the next scan's answer.
///
/// ```
/// use std::path::Path;
/// use skillkit_parser::layout::path_order;
/// assert!(path_order(Path::new("k/a-b"), Path::new("k/a/b")).is_lt()); // '-' < '/'
/// ```
pub fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    a.as_os_str().cmp(b.as_os_str())
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

/// Every child directory of `dir` that is not hidden (and not skipped),
/// sorted: the kits of a directory of kits. (Hidden folders are searched
/// INSIDE a kit; a hidden child is not a kit of its own.)
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
    kit_dirs_and_skipped(dir).map(|(dirs, _)| dirs)
}

/// [`kit_dirs`], with a warning naming each child folder left out because
/// its name is not UTF-8 (so a caller can say what it skipped).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir(dir.path().join("a")).unwrap();
/// let (kits, skipped) = skillkit_parser::layout::kit_dirs_and_skipped(dir.path()).unwrap();
/// assert_eq!((kits.len(), skipped.len()), (1, 0));
/// ```
pub fn kit_dirs_and_skipped(dir: &Path) -> io::Result<(Vec<PathBuf>, Vec<Diagnostic>)> {
    let (listing, _, _) = Listing::open(dir, None)?;
    let mut dirs = Vec::new();
    let mut skipped = Vec::new();
    for (name, kind) in listing.iter().filter(|(name, _)| !name.starts_with('.')) {
        let path = dir.join(name);
        if kind == Kind::NotUtf8 {
            let message = "kit folder skipped: its name is not UTF-8; rename it to load its skills";
            skipped.push(Diagnostic::warning(0, 0, message).with_path(path));
        } else if resolve(kind, &path, dir) == Some(true) {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok((dirs, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a minimal skill file at `path`, making its folders.
    pub(super) fn write(path: &Path) {
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

    #[test]
    fn hidden_folders_are_searched_but_vcs_and_build_output_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join(".claude/skills/x/SKILL.md"));
        write(&root.join("skills/.curated/y/SKILL.md"));
        write(&root.join(".git/z/SKILL.md"));
        write(&root.join("node_modules/pkg/SKILL.md"));
        write(&root.join("skills/w/target/t/SKILL.md"));
        let layout = KitLayout::scan(root).unwrap();
        assert_eq!(
            layout.skills,
            [
                root.join(".claude/skills/x/SKILL.md"),
                root.join("skills/.curated/y/SKILL.md"),
            ]
        );
        // A hidden child directory is searched inside a kit, but is no kit of its own.
        fs::create_dir(root.join("kit")).unwrap();
        assert_eq!(
            kit_dirs(root).unwrap(),
            [root.join("kit"), root.join("skills")]
        );
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
        assert!(layout.links, "a folder reached through a link");
        fs::remove_file(root.join("linked")).unwrap();
        assert!(
            !KitLayout::scan(root).unwrap().links,
            "only the loop, not followed"
        );
        std::os::unix::fs::symlink(root.join("skills/a/SKILL.md"), root.join("skills/SKILL.md"))
            .unwrap();
        assert!(KitLayout::scan(root).unwrap().links, "a linked file");
    }

    #[test]
    fn single_skill_folder_is_a_kit() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("SKILL.md"));
        assert_eq!(KitLayout::scan(dir.path()).unwrap().skills.len(), 1);
    }
}
