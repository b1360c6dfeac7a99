//! Reading and parsing a kit's files, on a pool of threads of `Local`'s own
//! while the walk that finds them goes on.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use skillkit_parser::layout::Stamp;
use skillkit_parser::{AGENT_FILE, AgentDocument, Diagnostic, Folder, SkillDocument};

use super::file::{CachedFile, Loaded, Loads};
use super::pool::on_pool;
use crate::agent_definition::AgentDefinition;
use crate::skill::{Body, Skill};

/// The caller's tracing subscriber and span, carried onto [`pool`](super::pool::pool)'s threads
/// so that warnings about skipped files reach whoever listens on the caller.
pub(super) struct Context {
    dispatch: tracing::Dispatch,
    span: tracing::Span,
}

impl Context {
    pub(super) fn current() -> Context {
        Context {
            dispatch: tracing::dispatcher::get_default(tracing::Dispatch::clone),
            span: tracing::Span::current(),
        }
    }

    pub(super) fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        tracing::dispatcher::with_default(&self.dispatch, || self.span.in_scope(f))
    }
}

/// Loads every file `feed` hands over, each below the kit's folder `root`
/// (`None` for one that vanished since it was found). On [`pool`](super::pool::pool), each
/// file is a task started as soon as it is handed over, so files are read
/// and parsed while `feed` goes on (a walk, say); elsewhere, one after the
/// other. The kit's folder is held open meanwhile, and files open from it
/// ([`Folder`]).
pub(super) fn load_files<R: Send>(
    kit: &str,
    root: &Path,
    read_at: SystemTime,
    feed: impl FnOnce(&mut dyn FnMut(&Path)) -> R + Send,
) -> (R, Loads) {
    let loaded = Mutex::new(Vec::new());
    let folder = Folder::open(root);
    let load = |path: Arc<Path>| {
        let file = load_file(kit, &folder, &path, read_at);
        loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((path, file));
    };
    let result = if on_pool() {
        rayon::scope(|scope| {
            feed(&mut |path| {
                let path = Arc::from(path);
                let load = &load;
                scope.spawn(move |_| load(path));
            })
        })
    } else {
        feed(&mut |path| load(Arc::from(path)))
    };
    let loaded = loaded.into_inner().unwrap_or_else(PoisonError::into_inner);
    (result, loaded)
}

/// Reads and parses one file, below `folder`. `None` when the file vanished
/// after the walk.
fn load_file(
    kit: &str,
    folder: &Folder,
    path: &Arc<Path>,
    read_at: SystemTime,
) -> Option<CachedFile> {
    // Never blocks: a FIFO (or anything but a regular file) named like a
    // skill file is refused on its handle, saying what it is.
    let (file, meta) = match folder.open_file(path) {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            let diagnostic = skillkit_parser::cannot_read(path, &e);
            // A link to nothing has no stamp of its target: its own.
            let link = || std::fs::symlink_metadata(path).ok();
            let stamp = Stamp::of(path).or_else(|| link().map(|m| Stamp::from_metadata(&m)))?;
            return Some(failed(stamp, read_at, diagnostic));
        }
    };
    let stamp = Stamp::from_metadata(&meta);
    let parsed = parse(kit, path, file, meta.len());
    Some(match parsed {
        Ok((loaded, name_line, warnings)) => {
            CachedFile::new(stamp, read_at, loaded, name_line, warnings)
        }
        Err(diagnostic) => failed(stamp, read_at, diagnostic),
    })
}

/// Reads and parses the opened skill or agent file of kit `kit`, with the
/// line of its `name:` key and its warnings.
fn parse(
    kit: &str,
    path: &Arc<Path>,
    file: std::fs::File,
    len: u64,
) -> Result<(Loaded, usize, Vec<Diagnostic>), Diagnostic> {
    if path
        .file_name()
        .is_some_and(|n| n == skillkit_parser::SKILL_FILE)
    {
        // Progressive disclosure: only the frontmatter is read; the body
        // stays in the file until the skill is activated or shown.
        let mut doc = SkillDocument::read_frontmatter(file, len, path)?;
        let (warnings, line) = (std::mem::take(&mut doc.warnings), doc.name_line);
        let mut skill = Skill::from_document(kit, doc, Some(Arc::clone(path)))?;
        skill.body = Body::from_shared(Arc::clone(path));
        return Ok((Loaded::Skill(Arc::new(skill)), line, warnings));
    }
    let bytes = skillkit_parser::read_open_file(file, len, path)?;
    let mut doc = AgentDocument::parse_file(path, kit, &bytes)?;
    let warnings = std::mem::take(&mut doc.warnings);
    if path.file_name().is_none_or(|n| n != AGENT_FILE) {
        let origin = skillkit_parser::kit::Declared::new(&doc.name).at(path, doc.name_line);
        doc.name = skillkit_parser::kit::qualify(kit, &origin)?.name;
    }
    let line = doc.name_line;
    let def = AgentDefinition::from_document(doc, Some(path.to_path_buf()));
    Ok((Loaded::Agent(Arc::new(def)), line, warnings))
}

pub(super) fn failed(stamp: Stamp, read_at: SystemTime, diagnostic: Diagnostic) -> CachedFile {
    CachedFile::new(stamp, read_at, Loaded::Failed, 0, vec![diagnostic])
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillkit_parser::KitLayout;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn file_deleted_between_walk_and_read_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kit");
        write(
            &root.join("skills/a/SKILL.md"),
            "---\nname: a\ndescription: A.\n---\n",
        );
        write(
            &root.join("skills/b/SKILL.md"),
            "---\nname: b\ndescription: B.\n---\n",
        );
        let found = KitLayout::scan(&root).unwrap();
        std::fs::remove_file(root.join("skills/a/SKILL.md")).unwrap();
        let now = SystemTime::now();
        assert!(
            load_file(
                "kit",
                &Folder::open(&root),
                &Arc::from(&*found.skills[0]),
                now
            )
            .is_none()
        );
        let loaded = load_file(
            "kit",
            &Folder::open(&root),
            &Arc::from(&*found.skills[1]),
            now,
        )
        .unwrap();
        assert!(matches!(loaded.loaded, Loaded::Skill(s) if s.name == "kit:b"));
    }
}
