//! [`Local`]: kits in directories on disk, always fresh, never re-parsed for
//! nothing.
//!
//! Every query walks the kit directory again, so a new, edited or deleted file
//! shows at once. A file is parsed again only when its stamp (size, mtime, inode,
//! ctime) changed, or when its mtime was too close to the moment it was read to
//! be trusted (the "racy" rule git uses: an edit within the filesystem's
//! timestamp granularity of the read can leave the stamp unchanged).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use skillkit_parser::{AGENT_FILE, AgentDocument, Diagnostic, KitLayout, SkillDocument, layout};

use crate::agent::AgentDefinition;
use crate::kit::Kit;
use crate::provider::{KitProvider, ProviderError};
use crate::skill::{Metadata, Skill};

/// A file whose mtime is this close to the moment it was read is read again at
/// the next query. Two seconds covers the coarsest common filesystems (FAT, SMB).
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Kits from directories.
///
/// * [`Local::new(dir)`](Local::new): `dir` is one kit, named after its base name
///   (or [`named`](Local::named)).
/// * [`Local::each(dir)`](Local::each): every non-hidden child directory of
///   `dir` is a kit.
///
/// Files that fail to parse are skipped with a warning (logged, and kept in
/// [`Kit::diagnostics`]); the rest of the kit loads.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::KitProvider;
/// # let dir = tempfile::tempdir().unwrap();
/// let kit_dir = dir.path().join("files");
/// std::fs::create_dir_all(kit_dir.join("skills/read")).unwrap();
/// std::fs::write(
///     kit_dir.join("skills/read/SKILL.md"),
///     "---\nname: read\ndescription: Read a file.\n---\nRead $ARGUMENTS.\n",
/// ).unwrap();
///
/// let kits = skillkit::Local::new(&kit_dir).list_kits().await.unwrap();
/// assert_eq!(kits[0].name, "files");
/// assert_eq!(kits[0].skills[0].name, "files:read");
/// # });
/// ```
#[derive(Clone)]
pub struct Local {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    name: Option<String>,
    each: bool,
    label: String,
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local")
            .field("dir", &self.inner.dir)
            .field("each", &self.inner.each)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Cache {
    files: HashMap<PathBuf, CachedFile>,
    kits: HashMap<PathBuf, CachedKit>,
}

/// What identifies a file's content without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: Option<SystemTime>,
    inode: u64,
    ctime: i128,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let (inode, ctime) = {
            use std::os::unix::fs::MetadataExt;
            (
                meta.ino(),
                i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            )
        };
        #[cfg(not(unix))]
        let (inode, ctime) = (0, 0);
        Some(Stamp {
            len: meta.len(),
            mtime: meta.modified().ok(),
            inode,
            ctime,
        })
    }

    /// Whether the file changed too close to `read_at` for the stamp to prove
    /// a later edit would change it.
    fn is_racy(&self, read_at: SystemTime) -> bool {
        match self.mtime {
            Some(mtime) => read_at
                .duration_since(mtime)
                .map_or(true, |age| age < RACY_WINDOW),
            None => true,
        }
    }
}

#[derive(Clone)]
enum Loaded {
    Skill(Arc<Skill>),
    Agent(Arc<AgentDefinition>),
    Failed,
}

struct CachedFile {
    stamp: Stamp,
    racy: bool,
    loaded: Loaded,
    diagnostics: Vec<Diagnostic>,
}

struct CachedKit {
    stamps: Vec<(PathBuf, Stamp)>,
    racy: bool,
    kit: Kit,
}

impl Local {
    /// One kit: the directory `dir`, named after its base name.
    ///
    /// ```
    /// let local = skillkit::Local::new("/app/skills/files");
    /// ```
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self::build(dir.into(), false)
    }

    /// A kit for every non-hidden child directory of `dir`.
    ///
    /// ```
    /// let local = skillkit::Local::each("/app/skills");
    /// ```
    pub fn each(dir: impl Into<PathBuf>) -> Self {
        Self::build(dir.into(), true)
    }

    fn build(dir: PathBuf, each: bool) -> Self {
        let label = format!("local:{}", dir.display());
        Local {
            inner: Arc::new(Inner {
                dir,
                name: None,
                each,
                label,
                cache: Mutex::new(Cache::default()),
            }),
        }
    }

    /// The same provider with the kit named `name` instead of the directory's
    /// base name (for [`Local::new`]; [`Local::each`] names kits by directory).
    ///
    /// ```
    /// let local = skillkit::Local::new("/app/skills/v2").named("files");
    /// ```
    pub fn named(self, name: impl Into<String>) -> Self {
        let inner = Inner {
            dir: self.inner.dir.clone(),
            name: Some(name.into()),
            each: self.inner.each,
            label: self.inner.label.clone(),
            cache: Mutex::new(Cache::default()),
        };
        Local {
            inner: Arc::new(inner),
        }
    }

    /// The directory this provider reads.
    ///
    /// ```
    /// assert_eq!(skillkit::Local::new("/x").dir(), std::path::Path::new("/x"));
    /// ```
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Loads the kits now, on this thread (the blocking form of
    /// [`KitProvider::list_kits`]).
    ///
    /// ```
    /// assert!(skillkit::Local::new("/no/such/dir").load().is_err());
    /// ```
    pub fn load(&self) -> Result<Vec<Kit>, ProviderError> {
        let inner = &self.inner;
        let mut cache = inner.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let mut seen = HashSet::new();
        let io = |source| ProviderError::Io {
            path: inner.dir.clone(),
            source,
        };
        let kits = if inner.each {
            let mut kits = Vec::new();
            for dir in layout::kit_dirs(&inner.dir).map_err(io)? {
                let Some(name) = layout::kit_name(&dir) else {
                    continue;
                };
                match KitLayout::scan(&dir) {
                    Ok(found) => kits.push(cache.kit(&inner.label, name, found, &mut seen)),
                    Err(e) => {
                        tracing::warn!(provider = %inner.label, path = %dir.display(), "kit directory skipped: {e}")
                    }
                }
            }
            kits
        } else {
            let found = KitLayout::scan(&inner.dir).map_err(io)?;
            let name = inner
                .name
                .clone()
                .or_else(|| layout::kit_name(&inner.dir))
                .unwrap_or_else(|| "local".to_owned());
            vec![cache.kit(&inner.label, name, found, &mut seen)]
        };
        cache.files.retain(|path, _| seen.contains(path));
        cache.kits.retain(|path, _| seen.contains(path));
        Ok(kits)
    }
}

impl Cache {
    /// The kit of `found`, reusing the previous answer when no file changed.
    fn kit(
        &mut self,
        provider: &str,
        name: String,
        found: KitLayout,
        seen: &mut HashSet<PathBuf>,
    ) -> Kit {
        seen.insert(found.root.clone());
        let stamps: Vec<(PathBuf, Stamp)> = found
            .files()
            .filter_map(|path| Some((path.to_path_buf(), Stamp::of(path)?)))
            .collect();
        seen.extend(stamps.iter().map(|(path, _)| path.clone()));
        if let Some(cached) = self.kits.get(&found.root)
            && !cached.racy
            && cached.stamps == stamps
            && cached.kit.name == name
        {
            return cached.kit.clone();
        }
        let read_at = SystemTime::now();
        let mut skills = Vec::new();
        let mut agents = Vec::new();
        let mut agent = None;
        let mut diagnostics = found.diagnostics.clone();
        let mut racy = false;
        for (path, stamp) in &stamps {
            let Some(file) = self.file(provider, &name, path, *stamp, read_at) else {
                continue;
            };
            racy |= file.racy;
            diagnostics.extend(file.diagnostics.iter().cloned());
            match &file.loaded {
                Loaded::Skill(skill) => skills.push(Arc::clone(skill)),
                Loaded::Agent(def) if is_root_agent(path, &found.root) => {
                    agent = Some(Arc::clone(def))
                }
                Loaded::Agent(def) => agents.push(Arc::clone(def)),
                Loaded::Failed => {}
            }
        }
        let mut kit = Kit::assemble(Cow::Owned(name), agent, skills, agents, diagnostics);
        kit.metadata = local_metadata(&found.root);
        self.kits.insert(
            found.root.clone(),
            CachedKit {
                stamps,
                racy,
                kit: kit.clone(),
            },
        );
        kit
    }

    /// The loaded file at `path`, parsed again only when its stamp changed or
    /// it was racy. `None` when it vanished since the walk.
    fn file(
        &mut self,
        provider: &str,
        kit: &str,
        path: &Path,
        stamp: Stamp,
        read_at: SystemTime,
    ) -> Option<&CachedFile> {
        let reusable = self
            .files
            .get(path)
            .is_some_and(|cached| cached.stamp == stamp && !cached.racy);
        if !reusable {
            let file = load_file(provider, kit, path, stamp, read_at)?;
            self.files.insert(path.to_path_buf(), file);
        }
        self.files.get(path)
    }
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

/// Reads and parses one file. `None` when the file vanished after the walk.
fn load_file(
    provider: &str,
    kit: &str,
    path: &Path,
    stamp: Stamp,
    read_at: SystemTime,
) -> Option<CachedFile> {
    let bytes = match skillkit_parser::read_file(path) {
        Ok(bytes) => bytes,
        Err(_) if !path.exists() => return None,
        Err(diagnostic) => return Some(failed(provider, kit, stamp, read_at, diagnostic)),
    };
    let is_skill = path
        .file_name()
        .is_some_and(|n| n == skillkit_parser::SKILL_FILE);
    let parsed = if is_skill {
        SkillDocument::parse_file(path, &bytes).and_then(|doc| {
            let warnings = doc.warnings.clone();
            let skill = Skill::from_document(kit, doc, Some(path.to_path_buf()))?;
            Ok((Loaded::Skill(Arc::new(skill)), warnings))
        })
    } else {
        AgentDocument::parse_file(path, kit, &bytes).and_then(|mut doc| {
            let warnings = std::mem::take(&mut doc.warnings);
            if path.file_name().is_none_or(|n| n != AGENT_FILE) {
                doc.name = skillkit_parser::name::qualify(kit, &doc.name)
                    .map_err(|m| Diagnostic::error(2, 1, m).with_path(path))?;
            }
            let def = AgentDefinition::from_document(doc, Some(path.to_path_buf()));
            Ok((Loaded::Agent(Arc::new(def)), warnings))
        })
    };
    match parsed {
        Ok((loaded, warnings)) => {
            for warning in &warnings {
                tracing::warn!(provider, kit, path = %path.display(), "{}", warning.message);
            }
            Some(CachedFile {
                stamp,
                racy: stamp.is_racy(read_at),
                loaded,
                diagnostics: warnings,
            })
        }
        Err(diagnostic) => Some(failed(provider, kit, stamp, read_at, diagnostic)),
    }
}

fn failed(
    provider: &str,
    kit: &str,
    stamp: Stamp,
    read_at: SystemTime,
    diagnostic: Diagnostic,
) -> CachedFile {
    let path = diagnostic.path.as_ref().map(|p| p.display().to_string());
    tracing::warn!(
        provider,
        kit,
        path = path.as_deref(),
        line = diagnostic.line,
        "skipped: {}",
        diagnostic.message
    );
    CachedFile {
        stamp,
        racy: stamp.is_racy(read_at),
        loaded: Loaded::Failed,
        diagnostics: vec![diagnostic],
    }
}

#[async_trait::async_trait]
impl KitProvider for Local {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.inner.label)
    }

    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        let this = self.clone();
        match tokio::task::spawn_blocking(move || this.load()).await {
            Ok(result) => result,
            Err(join) => Err(ProviderError::other(format!("loading kits failed: {join}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let stamps: Vec<Stamp> = found.skills.iter().map(|p| Stamp::of(p).unwrap()).collect();
        std::fs::remove_file(root.join("skills/a/SKILL.md")).unwrap();
        let now = SystemTime::now();
        assert!(load_file("test", "kit", &found.skills[0], stamps[0], now).is_none());
        let loaded = load_file("test", "kit", &found.skills[1], stamps[1], now).unwrap();
        assert!(matches!(loaded.loaded, Loaded::Skill(s) if s.name == "kit:b"));
    }

    #[test]
    fn fresh_files_are_racy_old_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "x").unwrap();
        let stamp = Stamp::of(&path).unwrap();
        assert!(stamp.is_racy(SystemTime::now()));
        assert!(!stamp.is_racy(SystemTime::now() + Duration::from_secs(3)));
    }
}
