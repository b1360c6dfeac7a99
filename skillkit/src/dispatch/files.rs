//! The files beside a skill's `SKILL.md`: a path someone gives (a client
//! of the MCP server, a model calling `run_skill_script`) is resolved inside
//! the skill's folder or refused (absolute, hidden, or leading outside it
//! through `..` or a symlink).

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::time::SystemTime;

use skillkit_parser::layout::{Fingerprint, Stamp};

use crate::skill::memo::Memo;

/// The file at `path` (as a client wrote it, relative to `dir`), canonical,
/// if it lies inside `dir` and is not hidden; else what is wrong, said so the
/// client can fix its request.
///
/// The one check of a skill's files, for every route (the MCP server's
/// `read_skill_file` and `resources/read`, `run_skill_script`): the path is resolved first (`..` and every symlink
/// followed), then the resolved file must lie inside the resolved folder and
/// no component of its path below that folder may start with `.`, so a link
/// `env.txt -> .env` is refused as `.env` itself is.
pub(crate) fn resolve_file(dir: &Path, path: &str) -> Result<PathBuf, String> {
    let target = resolve(dir, path)?;
    if target.is_dir() {
        return Err(format!(
            "`{path}` is a folder; give the path of a file in it"
        ));
    }
    Ok(target)
}

/// The folder at `path` inside `dir`, by the same rule as
/// [`resolve_file`] (for MCP's `resources/directory/read`).
#[cfg(feature = "mcp")]
pub(crate) fn resolve_folder(dir: &Path, path: &str) -> Result<PathBuf, String> {
    let target = resolve(dir, path)?;
    if !target.is_dir() {
        return Err(format!("`{path}` is not a folder"));
    }
    Ok(target)
}

/// The file or folder at `path` inside `dir`, canonical, if it lies inside
/// `dir` and is not hidden.
fn resolve(dir: &Path, path: &str) -> Result<PathBuf, String> {
    if path.is_empty() {
        return Err(
            "the path is empty; give a file's path relative to the skill's folder, as \
             activate_skill lists them"
                .to_owned(),
        );
    }
    let relative = Path::new(path);
    if relative
        .components()
        .any(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
    {
        return Err(format!(
            "`{path}` is absolute; give a path relative to the skill's folder"
        ));
    }
    let root = std::fs::canonicalize(dir)
        .map_err(|e| format!("the skill's folder cannot be read ({e})"))?;
    let target = std::fs::canonicalize(root.join(relative)).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "there is no file `{path}` in the skill's folder; activate_skill lists its files"
        ),
        _ => format!("`{path}` cannot be read ({e})"),
    })?;
    let Ok(inside) = target.strip_prefix(&root) else {
        return Err(format!(
            "`{path}` leads outside the skill's folder; only files inside it can be used"
        ));
    };
    if inside
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
    {
        return Err(format!(
            "`{path}` is or leads to a hidden file or folder, which is not used"
        ));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::resolve_file as resolve;
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
    fn a_file_inside_the_folder_is_served() {
        let (_root, dir) = skill_dir();
        let path = resolve(&dir, "scripts/run.sh").unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), "echo hi\n");
        // `..` that stays inside is fine.
        assert!(resolve(&dir, "scripts/../SKILL.md").is_ok());
    }

    #[test]
    fn paths_leading_outside_are_refused() {
        let (root, dir) = skill_dir();
        let outside = resolve(&dir, "../../secret.txt").unwrap_err();
        assert!(
            outside.contains("leads outside the skill's folder"),
            "{outside}"
        );
        let absolute = root.path().join("kit/secret.txt");
        let err = resolve(&dir, absolute.to_str().unwrap()).unwrap_err();
        assert!(err.contains("is absolute"), "{err}");
        let err = resolve(&dir, ".env").unwrap_err();
        assert!(err.contains("hidden"), "{err}");
        let err = resolve(&dir, "scripts").unwrap_err();
        assert!(err.contains("is a folder"), "{err}");
        let err = resolve(&dir, "nope.txt").unwrap_err();
        assert!(err.contains("there is no file `nope.txt`"), "{err}");
        assert!(resolve(&dir, "").unwrap_err().contains("empty"));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_leading_outside_is_refused() {
        let (root, dir) = skill_dir();
        std::os::unix::fs::symlink(root.path().join("kit/secret.txt"), dir.join("link.txt"))
            .unwrap();
        let err = resolve(&dir, "link.txt").unwrap_err();
        assert!(err.contains("leads outside"), "{err}");
        std::os::unix::fs::symlink(dir.join("scripts/run.sh"), dir.join("inside.sh")).unwrap();
        assert!(resolve(&dir, "inside.sh").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_a_hidden_file_or_folder_is_refused() {
        let (_root, dir) = skill_dir();
        std::fs::create_dir(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".git/config"), "secret").unwrap();
        std::os::unix::fs::symlink(".env", dir.join("env.txt")).unwrap();
        std::os::unix::fs::symlink(".git", dir.join("git")).unwrap();
        for path in ["env.txt", "git/config", "scripts/../.env"] {
            let err = resolve(&dir, path).unwrap_err();
            assert!(err.contains("hidden"), "{path}: {err}");
        }
        // A skill inside a hidden folder (`.claude/skills/x`) is served: only
        // the path below the skill's folder counts.
        let hidden_root = dir.join(".claude/skills/x");
        std::fs::create_dir_all(&hidden_root).unwrap();
        std::fs::write(hidden_root.join("notes.md"), "n").unwrap();
        assert!(resolve(&hidden_root, "notes.md").is_ok());
    }
}

/// The most files read beside a skill: past it, its listing is not whole
/// (the MCP server then serves its files as `"dynamic"`).
/// The files beside a skill, by its folder, each listing weighing one.
static LISTINGS_BESIDE: LazyLock<Memo<Arc<Beside>>> = LazyLock::new(|| Memo::new(LISTINGS));

/// The most folder listings kept.
const LISTINGS: usize = 1024;

pub(crate) const MAX_FILES_BESIDE: usize = 1000;
/// How many folders deep the files beside a skill are read.
const MAX_DEPTH_BESIDE: usize = 8;

/// The files beside a skill's `SKILL.md`, and whether that is all of them.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Beside {
    /// Paths relative to the skill's folder, sorted; hidden entries skipped.
    pub(crate) files: Vec<String>,
    /// Whether every file is here: false past [`MAX_FILES_BESIDE`] files,
    /// or with a folder deeper than [`MAX_DEPTH_BESIDE`].
    pub(crate) whole: bool,
}

/// The files under `dir` other than `SKILL.md` ([`Beside`]): at most
/// [`MAX_FILES_BESIDE`], from at most [`MAX_DEPTH_BESIDE`] folders down. The
/// listing of an earlier call is reused while every folder it read has the
/// stamp it had then (adding, removing or renaming an entry changes a
/// folder's stamp): one `stat` per folder instead of opening and reading
/// each.
pub(crate) fn files_beside(dir: &Path) -> Arc<Beside> {
    fn walk(
        root: &Path,
        dir: &Path,
        depth: usize,
        out: &mut Beside,
        proofs: &mut Vec<(Arc<Path>, Option<Fingerprint>)>,
        read_at: SystemTime,
    ) {
        let proof = Stamp::of(dir).and_then(|stamp| stamp.proof(read_at));
        proofs.push((Arc::from(dir), proof));
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if !out.whole {
                return;
            }
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() && depth < MAX_DEPTH_BESIDE => {
                    walk(root, &path, depth + 1, out, proofs, read_at);
                }
                // Deeper than read: the listing is not all of them.
                Ok(t) if t.is_dir() => out.whole = false,
                Ok(t) if t.is_file() => {
                    let relative = path.strip_prefix(root).unwrap_or(&path);
                    if relative != Path::new("SKILL.md") {
                        if out.files.len() >= MAX_FILES_BESIDE {
                            out.whole = false;
                            return;
                        }
                        out.files.push(relative.display().to_string());
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(beside) = LISTINGS_BESIDE.get(dir) {
        return beside;
    }
    let mut out = Beside {
        files: Vec::new(),
        whole: true,
    };
    let mut proofs = Vec::new();
    // Taken before the folders are read: an entry added after it gets a
    // later mtime.
    walk(dir, dir, 0, &mut out, &mut proofs, SystemTime::now());
    let beside = Arc::new(out);
    LISTINGS_BESIDE.keep(&Arc::from(dir), proofs, Arc::clone(&beside), 1);
    beside
}

#[cfg(test)]
mod beside_tests {
    use super::*;
    use crate::skill::memo::tests::{age, skill};
    use std::fs;

    #[test]
    fn a_listing_is_kept_until_a_folder_in_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s");
        fs::create_dir_all(root.join("scripts")).unwrap();
        skill(&root, "body");
        fs::write(root.join("scripts/run.py"), "").unwrap();
        age(&root.join("scripts"));
        age(&root);
        assert_eq!(files_beside(&root).files, ["scripts/run.py"]);
        assert!(super::LISTINGS_BESIDE.get(&root).is_some(), "kept");
        // A file added to the sub-folder changes that folder's stamp only.
        fs::write(root.join("scripts/new.py"), "").unwrap();
        assert_eq!(super::LISTINGS_BESIDE.get(&root), None);
        assert_eq!(
            files_beside(&root).files,
            ["scripts/new.py", "scripts/run.py"]
        );
        // Just changed: not kept, so a second change is seen too.
        assert_eq!(super::LISTINGS_BESIDE.get(&root), None);
        fs::remove_file(root.join("scripts/run.py")).unwrap();
        assert_eq!(files_beside(&root).files, ["scripts/new.py"]);
    }
}
