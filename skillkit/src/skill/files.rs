//! The files beside a skill's `SKILL.md`: a path someone gives (a client
//! of the MCP server, a model calling `run_skill_script`) is resolved inside
//! the skill's folder or refused (absolute, hidden, or leading outside it
//! through `..` or a symlink).

use std::path::{Component, Path, PathBuf};

/// The file at `path` (as a client wrote it, relative to `dir`), canonical,
/// if it lies inside `dir` and is not hidden; else what is wrong, said so the
/// client can fix its request.
///
/// The one check of a skill's files, for every route (the MCP server's
/// `read_skill_file` and `resources/read`, `run_skill_script`): the path is resolved first (`..` and every symlink
/// followed), then the resolved file must lie inside the resolved folder and
/// no component of its path below that folder may start with `.`, so a link
/// `env.txt -> .env` is refused as `.env` itself is.
#[cfg(any(feature = "mcp", feature = "agent"))]
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

/// `path` (a file of a skill that is not on disk yet, such as one an MCP
/// server lists) as a path relative to the skill's folder, if it stays
/// inside the folder and is not hidden: every component a plain name not
/// starting with `.` (so no `..`, no `.`, nothing absolute); else what is
/// wrong. The rule [`resolve_file`] keeps for files that exist.
#[cfg(feature = "mcp-client")]
pub(crate) fn relative_path(path: &str) -> Result<PathBuf, String> {
    if path.is_empty() {
        return Err("the path is empty".to_owned());
    }
    let mut relative = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(name) if !name.to_string_lossy().starts_with('.') => {
                relative.push(name)
            }
            Component::Normal(_) | Component::CurDir => {
                return Err(format!(
                    "`{path}` is or leads to a hidden file or folder, which is not used"
                ));
            }
            Component::ParentDir => {
                return Err(format!(
                    "`{path}` leads outside the skill's folder; only files inside it can be used"
                ));
            }
            Component::Prefix(_) | Component::RootDir => {
                return Err(format!(
                    "`{path}` is absolute; give a path relative to the skill's folder"
                ));
            }
        }
    }
    Ok(relative)
}

/// The file or folder at `path` inside `dir`, canonical, if it lies inside
/// `dir` and is not hidden.
#[cfg(any(feature = "mcp", feature = "agent"))]
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

#[cfg(all(test, any(feature = "mcp", feature = "agent")))]
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
