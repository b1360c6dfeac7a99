//! What a query of [`Local`](super::Local) learned, and the refresh that
//! checks it: per kit, the scanner's folder listings, every file's stamp and
//! parsed contents, and the kit last built. A file is parsed again only when
//! its stamp changed or was racy; a kit is rebuilt only when a file changed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use skillkit_parser::layout::{Scanner, Stamp, path_order};
use skillkit_parser::{AGENT_FILE, Diagnostic, KitLayout};

use super::file::{CachedFile, Loaded, Loads};
use super::read::load_files;
use crate::kit::Kit;
use crate::skill::Metadata;

/// What the previous query learned, per kit directory.
#[derive(Default)]
pub(super) struct Cache {
    pub(super) kits: HashMap<PathBuf, KitCache>,
    /// The kit folders [`Local::each`](super::Local::each) found last time
    /// (reused while the watch saw no entry of the folder come or go).
    pub(super) dirs: Option<Vec<PathBuf>>,
    /// The kit folders [`Local::each`](super::Local::each) left out last
    /// time (logged when they change).
    pub(super) skipped: Vec<Diagnostic>,
}

/// One kit directory: its directory listings, its files and the kit last
/// built.
#[derive(Default)]
pub(super) struct KitCache {
    scanner: Scanner,
    files: Files,
    /// What the last scan left out (logged when it changes).
    skipped: Vec<Diagnostic>,
    kit: Option<Kit>,
    /// Whether a file or folder of the kit (or the kit folder itself) is
    /// reached through a symbolic link: a change in its target is no event
    /// in the watched folder, so the kit is walked on every query.
    linked: bool,
}

impl KitCache {
    /// The kit last built, named `name`, when the watch saw no `changed` in
    /// its folder and none of it is reached through a link.
    pub(super) fn unchanged(&self, name: &str, changed: bool) -> Option<Kit> {
        if changed || self.linked {
            return None;
        }
        self.kit.as_ref().filter(|kit| kit.name == name).cloned()
    }

    /// How many files of the kit are known (each checked by a refresh).
    pub(super) fn file_count(&self) -> usize {
        self.files.len()
    }
}

/// The cached files of a kit, sorted by [`path_order`] (the order of a walk's
/// answer): exactly as long as needed, where a hash map keeps up to twice as
/// many slots, and searched by bisection. Each path is the one its skill's
/// body reads from: one copy of the path per file.
#[derive(Default)]
pub(super) struct Files(Vec<(Arc<Path>, CachedFile)>);

impl Files {
    /// The cached file of each of `paths`. Paths in [`path_order`] (as a
    /// scan lists a kit's skills) are found in one pass beside the files,
    /// one comparison each; one out of order is found by bisection.
    fn get_each(&self, paths: &[&Path]) -> Vec<Option<&CachedFile>> {
        let files = &self.0;
        let mut at = 0;
        let mut last: Option<&Path> = None;
        paths
            .iter()
            .map(|&path| {
                if last.is_some_and(|last| path_order(last, path).is_gt()) {
                    at = files.partition_point(|(p, _)| path_order(p, path).is_lt());
                }
                last = Some(path);
                while files
                    .get(at)
                    .is_some_and(|(p, _)| path_order(p, path).is_lt())
                {
                    at += 1;
                }
                files
                    .get(at)
                    .filter(|(p, _)| **p == *path)
                    .map(|(_, file)| file)
            })
            .collect()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Keeps the files `loaded` (replacing what was known of them) and
    /// forgets the ones loaded as `None` (vanished).
    fn update(&mut self, mut loaded: Loads) {
        if loaded.is_empty() {
            return;
        }
        loaded.sort_unstable_by(|a, b| path_order(&a.0, &b.0));
        loaded.dedup_by(|a, b| path_order(&a.0, &b.0).is_eq());
        let old = std::mem::take(&mut self.0);
        let mut merged = Vec::with_capacity(old.len() + loaded.len());
        let mut old = old.into_iter().peekable();
        for (path, file) in loaded {
            while let Some(kept) = old.next_if(|(p, _)| path_order(p, &path).is_lt()) {
                merged.push(kept);
            }
            old.next_if(|(p, _)| path_order(p, &path).is_eq());
            if let Some(file) = file {
                merged.push((path, file));
            }
        }
        merged.extend(old);
        merged.shrink_to_fit();
        self.0 = merged;
    }

    /// Forgets every file not in `present` (sorted by [`path_order`]).
    fn keep_only(&mut self, present: &[&Path]) {
        let mut present = present.iter().peekable();
        self.0.retain(|(path, _)| {
            while present.next_if(|p| path_order(p, path).is_lt()).is_some() {}
            present.peek().is_some_and(|p| path_order(p, path).is_eq())
        });
        self.0.shrink_to_fit();
    }
}

/// The kit in `root`, re-reading only files whose stamp changed (or that were
/// racy), and reusing the previous kit when nothing changed at all. The first
/// time, files are read and parsed on [`pool`](super::pool::pool) while the walk goes on.
/// `link_root`: whether `root` itself being a link makes the kit linked (a
/// kit folder of [`Local::each`](super::Local::each), which the watch of
/// the folder does not follow).
pub(super) fn refresh(
    provider: &str,
    name: String,
    root: &Path,
    link_root: bool,
    cache: &mut KitCache,
) -> std::io::Result<Kit> {
    let read_at = SystemTime::now();
    let mut loaded = Vec::new();
    // With nothing cached, every file is read while the walk goes on, and
    // what this refresh read needs no second look.
    let first = cache.files.is_empty();
    let found = if first {
        let scanner = &mut cache.scanner;
        let (found, files) = load_files(&name, root, read_at, |load| scanner.scan_with(root, load));
        loaded = files;
        found?
    } else {
        cache.scanner.scan(root)?
    };
    cache.linked = found.links || (link_root && root.is_symlink());
    let mut changed = !loaded.is_empty();
    if found.diagnostics != cache.skipped {
        changed = true;
        log(provider, &name, &found.diagnostics);
        cache.skipped.clone_from(&found.diagnostics);
    }
    store(provider, &name, loaded, &mut cache.files);
    let paths: Vec<&Path> = found.files().collect();
    let to_load: Vec<&Path> = paths
        .iter()
        .zip(cache.files.get_each(&paths))
        .filter(|(path, cached)| {
            !cached.is_some_and(|c| {
                first
                    || c.proof
                        .is_some_and(|p| Stamp::of(path).is_some_and(|s| s.fingerprint() == p))
            })
        })
        .map(|(path, _)| *path)
        .collect();
    // Every file present is cached and unchanged, and none vanished.
    changed |= !to_load.is_empty() || cache.files.len() != paths.len();
    if let Some(kit) = cache
        .kit
        .as_ref()
        .filter(|kit| !changed && kit.name == name)
    {
        return Ok(kit.clone());
    }
    let ((), loaded) = load_files(&name, root, read_at, |load| {
        to_load.iter().for_each(|path| load(path))
    });
    store(provider, &name, loaded, &mut cache.files);
    if cache.files.len() != paths.len() {
        let mut present = paths.clone();
        present.sort_unstable_by(|a, b| path_order(a, b));
        cache.files.keep_only(&present);
    }
    let files = cache.files.get_each(&paths);
    let kit = assemble(name, &found, &paths, &files);
    cache.kit = Some(kit.clone());
    Ok(kit)
}

/// Keeps freshly loaded files (logging their problems once, when they are
/// read) and forgets the ones that vanished.
fn store(provider: &str, kit: &str, loaded: Loads, files: &mut Files) {
    for file in loaded.iter().filter_map(|(_, file)| file.as_ref()) {
        log(provider, kit, file.diagnostics());
    }
    files.update(loaded);
}

/// Logs each diagnostic as a warning.
fn log(provider: &str, kit: &str, diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        let at = diagnostic.path.as_ref().map(|p| p.display().to_string());
        let skipped = if diagnostic.is_error() {
            "file skipped: "
        } else {
            ""
        };
        tracing::warn!(
            provider,
            kit,
            path = at.as_deref(),
            line = diagnostic.line,
            "{skipped}{}",
            diagnostic.message
        );
    }
}

/// Builds the kit from its loaded files.
fn assemble(
    name: String,
    found: &KitLayout,
    paths: &[&Path],
    files: &[Option<&CachedFile>],
) -> Kit {
    let mut skills = Vec::new();
    let mut agents = Vec::new();
    let mut agent = None;
    let mut diagnostics = found.diagnostics.clone();
    for (path, file) in paths.iter().zip(files) {
        let Some(file) = file else { continue };
        diagnostics.extend(file.diagnostics().iter().cloned());
        match &file.loaded {
            Loaded::Skill(skill) => skills.push((Arc::clone(skill), file.line())),
            Loaded::Agent(def) if is_root_agent(path, &found.root) => agent = Some(Arc::clone(def)),
            Loaded::Agent(def) => agents.push((Arc::clone(def), file.line())),
            Loaded::Failed => {}
        }
    }
    let mut kit = Kit::assemble(Cow::Owned(name), agent, skills, agents, diagnostics);
    kit.metadata = local_metadata(&found.root);
    kit
}

fn is_root_agent(path: &Path, root: &Path) -> bool {
    path.parent() == Some(root) && path.file_name().is_some_and(|n| n == AGENT_FILE)
}

fn local_metadata(root: &Path) -> Metadata {
    let mut metadata = Metadata::new();
    metadata.insert("provider".into(), "local".into());
    metadata.insert("path".into(), root.display().to_string().into());
    metadata
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::local::read::failed;

    #[test]
    fn files_stay_sorted_through_updates() {
        let file = |line| CachedFile {
            name_line: line,
            ..failed(
                Stamp::of(Path::new(".")).unwrap(),
                SystemTime::now(),
                Diagnostic::error(0, 0, "x"),
            )
        };
        let path = |p: &str| Arc::<Path>::from(Path::new(p));
        let lines = |files: &Files| -> Vec<(String, u32)> {
            let all = files.0.iter();
            all.map(|(p, f)| (p.display().to_string(), f.name_line))
                .collect()
        };
        let mut files = Files::default();
        files.update(vec![
            (path("k/c"), Some(file(3))),
            (path("k/a"), Some(file(1))),
        ]);
        files.update(vec![
            (path("k/b"), Some(file(2))),
            (path("k/c"), Some(file(30))),
            (path("k/a"), None),
            (path("k/z"), None),
        ]);
        assert_eq!(lines(&files), [("k/b".into(), 2), ("k/c".into(), 30)]);
        let found = files.get_each(&[Path::new("k/c"), Path::new("k/a")]);
        assert_eq!(found[0].map(|f| f.name_line), Some(30));
        assert!(found[1].is_none());
        files.update(vec![(path("k/d"), Some(file(4)))]);
        files.keep_only(&[Path::new("k/a"), Path::new("k/c"), Path::new("k/d")]);
        assert_eq!(lines(&files), [("k/c".into(), 30), ("k/d".into(), 4)]);
        assert_eq!(files.0.capacity(), files.len(), "exactly as long as needed");
    }

    #[test]
    fn files_are_found_in_one_pass_or_out_of_order() {
        let mut files = Files::default();
        let stamp = Stamp::of(Path::new(".")).unwrap();
        let names = [
            "k/a",
            "k/a-b",
            "k/a/SKILL.md",
            "k/c/SKILL.md",
            "k/e/SKILL.md",
        ];
        files.update(
            names
                .iter()
                .enumerate()
                .map(|(line, name)| {
                    let mut file = failed(stamp, SystemTime::now(), Diagnostic::error(0, 0, "x"));
                    file.name_line = line as u32;
                    (Arc::<Path>::from(Path::new(name)), Some(file))
                })
                .collect(),
        );
        let lines = |paths: &[&str]| -> Vec<Option<u32>> {
            let paths: Vec<&Path> = paths.iter().map(Path::new).collect();
            let found = files.get_each(&paths);
            found.iter().map(|f| f.map(|f| f.name_line)).collect()
        };
        // In order, with paths that are not there between and after.
        assert_eq!(
            lines(&["k/a-b", "k/b/SKILL.md", "k/c/SKILL.md", "k/z"]),
            [Some(1), None, Some(3), None]
        );
        // Out of order: every one found all the same.
        assert_eq!(
            lines(&["k/e/SKILL.md", "k/a", "k/c/SKILL.md", "k/a/SKILL.md", "k/0"]),
            [Some(4), Some(0), Some(3), Some(2), None]
        );
        assert_eq!(lines(&[]), Vec::<Option<u32>>::new());
    }
}
