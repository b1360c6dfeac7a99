//! [`Local`]: kits in directories on disk, always fresh, never re-parsed for
//! nothing.
//!
//! Every query checks the kit directory again, so a new, edited or deleted file
//! shows at once. A file is parsed again only when its stamp (size, mtime, inode,
//! ctime) changed, or when its mtime was too close to the moment it was read to
//! be trusted (the "racy" rule git uses: an edit within the filesystem's
//! timestamp granularity of the read can leave the stamp unchanged). Directories
//! are listed again only when their own stamp changed (adding, removing or
//! renaming an entry changes it), with the same racy rule; see
//! [`Scanner`](skillkit_parser::layout::Scanner).
//!
//! Progressive disclosure: a query reads each `SKILL.md` only up to the end of
//! its frontmatter (a catalog needs names and descriptions). A skill's
//! [`Body`] stays in its file and is read when the skill is activated or shown
//! ([`Body::read`], [`Skill::render`]), fresh from the file every time.

use std::borrow::Borrow;
use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::SystemTime;

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use skillkit_parser::layout::{self, Scanner, Stamp};
use skillkit_parser::{AGENT_FILE, AgentDocument, Diagnostic, KitLayout, SkillDocument};

use crate::agent::AgentDefinition;
use crate::kit::Kit;
use crate::provider::{KitProvider, ProviderError};
use crate::skill::{Body, Metadata, Skill};

/// The kit name of the standard locations [`Local::discover`] finds.
pub const DISCOVERED_KIT: &str = "skills";

/// Kits from directories.
///
/// * [`Local::new(dir)`](Local::new): `dir` is one kit, named after its base name
///   (or [`named`](Local::named)).
/// * [`Local::each(dir)`](Local::each): every non-hidden child directory of
///   `dir` is a kit.
/// * [`Local::discover(project)`](Local::discover): the standard locations
///   (`.agents/skills/`, `.claude/skills/`, in the project, then the user's).
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

/// What the previous query learned, per kit directory.
#[derive(Default)]
struct Cache {
    kits: HashMap<PathBuf, KitCache>,
}

/// One kit directory: its directory listings, its files (keyed by path
/// bytes, cheaper to hash than path components) and the kit last built.
#[derive(Default)]
struct KitCache {
    scanner: Scanner,
    files: HashMap<FileKey, CachedFile>,
    kit: Option<Kit>,
    generation: u64,
}

/// Files just read, by path; `None` for one that vanished after the walk.
type Loads = Vec<(Arc<Path>, Option<CachedFile>)>;

/// A cached file's path, the one its skill's body reads from (one copy of
/// the path per file); hashed and compared as bytes.
struct FileKey(Arc<Path>);

impl Hash for FileKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.as_os_str().hash(state);
    }
}

impl PartialEq for FileKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_os_str() == other.0.as_os_str()
    }
}

impl Eq for FileKey {}

impl Borrow<OsStr> for FileKey {
    fn borrow(&self) -> &OsStr {
        self.0.as_os_str()
    }
}

impl CachedFile {
    /// The line of the `name:` key.
    fn line(&self) -> usize {
        self.name_line as usize
    }
}

#[derive(Clone)]
enum Loaded {
    Skill(Arc<Skill>),
    Agent(Arc<AgentDefinition>),
    Failed,
}

/// What a query learned of one file (kept for every file of every kit, so
/// kept small: 80 bytes).
struct CachedFile {
    stamp: Stamp,
    loaded: Loaded,
    /// Problems met reading it (usually none, which takes no allocation).
    diagnostics: Box<[Diagnostic]>,
    /// The refresh that loaded it (fresh for that refresh even when racy).
    generation: u64,
    /// The line of the `name:` key, where a duplicate name is reported.
    name_line: u32,
    racy: bool,
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

    /// The standard skill locations, as agents look for them, highest
    /// priority first: the project's `.agents/skills/` and `.claude/skills/`,
    /// then the user's `~/.agents/skills/` and `~/.claude/skills/`. Each is a
    /// kit named [`DISCOVERED_KIT`] (`skills`), so a project skill shadows a
    /// user skill of the same name (the catalog's warning names both files).
    /// Only the locations that exist now are returned; register them in order:
    ///
    /// ```
    /// # let project = tempfile::tempdir().unwrap();
    /// std::fs::create_dir_all(project.path().join(".claude/skills/pdf")).unwrap();
    /// let locals = skillkit::Local::discover(project.path());
    /// assert!(locals[0].dir().ends_with(".claude/skills"));
    /// let catalog = skillkit::Catalog::builder().providers(locals).build();
    /// ```
    pub fn discover(project: impl AsRef<Path>) -> Vec<Local> {
        let project = project.as_ref();
        let home = dirs::home_dir();
        let mut candidates = vec![
            project.join(".agents/skills"),
            project.join(".claude/skills"),
        ];
        if let Some(home) = &home {
            candidates.push(home.join(".agents/skills"));
            candidates.push(home.join(".claude/skills"));
        }
        let mut seen = Vec::new();
        candidates
            .into_iter()
            .filter(|dir| dir.is_dir())
            .filter(|dir| {
                // A project inside the home folder must not list one place twice.
                let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
                let new = !seen.contains(&real);
                seen.push(real);
                new
            })
            .map(|dir| Local::new(dir).named(DISCOVERED_KIT))
            .collect()
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

    /// Loads the kits now, blocking this thread until they are loaded (the
    /// blocking form of [`KitProvider::list_kits`]). Files are read and parsed
    /// on a pool of threads of SkillKit's own, or on this thread when it is
    /// itself a [rayon](https://docs.rs/rayon) worker (a load there could
    /// otherwise run another task of its pool while it waits).
    ///
    /// ```
    /// assert!(skillkit::Local::new("/no/such/dir").load().is_err());
    /// ```
    pub fn load(&self) -> Result<Vec<Kit>, ProviderError> {
        // The cache is locked here, before the pool is entered: a worker
        // waiting for the files of one load runs other tasks of the pool
        // meanwhile, and a second load of this provider locking the cache on
        // that worker would wait for itself.
        let mut cache = self
            .inner
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let cache: &mut Cache = &mut cache;
        match pool() {
            Some(pool) if rayon::current_thread_index().is_none() => {
                let context = Context::current();
                pool.install(|| context.enter(|| self.load_here(cache, &context)))
            }
            _ => self.load_here(cache, &Context::current()),
        }
    }

    /// [`load`](Local::load) into the locked `cache`, in parallel when
    /// running on [`pool`], logging in the caller's `context`.
    fn load_here(&self, cache: &mut Cache, context: &Context) -> Result<Vec<Kit>, ProviderError> {
        let inner = &self.inner;
        let io = |source| ProviderError::Io {
            path: inner.dir.clone(),
            source,
        };
        if !inner.each {
            let name = inner
                .name
                .clone()
                .or_else(|| layout::kit_name(&inner.dir))
                .unwrap_or_else(|| "local".to_owned());
            let kit_cache = cache.kits.entry(inner.dir.clone()).or_default();
            return Ok(vec![
                refresh(&inner.label, name, &inner.dir, kit_cache).map_err(io)?,
            ]);
        }
        let mut previous = std::mem::take(&mut cache.kits);
        let mut jobs = Vec::new();
        for dir in layout::kit_dirs(&inner.dir).map_err(io)? {
            if let Some(name) = layout::kit_name(&dir) {
                let kit_cache = previous.remove(&dir).unwrap_or_default();
                jobs.push((dir, name, kit_cache));
            }
        }
        let refresh_one = |(dir, name, mut kit_cache): (PathBuf, String, KitCache)| {
            let kit = context.enter(|| refresh(&inner.label, name, &dir, &mut kit_cache));
            (dir, kit_cache, kit)
        };
        // Every kit at once on the pool: the files of a small kit load beside
        // those of a big one.
        let refreshed: Vec<_> = if on_pool() {
            jobs.into_par_iter().map(refresh_one).collect()
        } else {
            jobs.into_iter().map(refresh_one).collect()
        };
        let mut kits = Vec::with_capacity(refreshed.len());
        for (dir, kit_cache, kit) in refreshed {
            match kit {
                Ok(kit) => {
                    kits.push(kit);
                    cache.kits.insert(dir, kit_cache);
                }
                Err(e) => {
                    tracing::warn!(provider = %inner.label, path = %dir.display(), "kit directory skipped: {e}")
                }
            }
        }
        Ok(kits)
    }
}

/// The kit in `root`, re-reading only files whose stamp changed (or that were
/// racy), and reusing the previous kit when nothing changed at all. The first
/// time, files are read and parsed on [`pool`] while the walk goes on.
fn refresh(
    provider: &str,
    name: String,
    root: &Path,
    cache: &mut KitCache,
) -> std::io::Result<Kit> {
    cache.generation += 1;
    let generation = cache.generation;
    let read_at = SystemTime::now();
    let mut loaded = Vec::new();
    let found = if cache.files.is_empty() {
        let scanner = &mut cache.scanner;
        let (found, files) = load_files(&name, read_at, |load| scanner.scan_with(root, load));
        loaded = files;
        found?
    } else {
        cache.scanner.scan(root)?
    };
    let mut changed = !loaded.is_empty();
    store(provider, &name, generation, loaded, &mut cache.files);
    let paths: Vec<&Path> = found.files().collect();
    let to_load: Vec<&Path> = paths
        .iter()
        .copied()
        .filter(|path| {
            let cached = cache.files.get(path.as_os_str());
            !cached.is_some_and(|c| {
                c.generation == generation || (!c.racy && Stamp::of(path) == Some(c.stamp))
            })
        })
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
    let ((), loaded) = load_files(&name, read_at, |load| {
        to_load.iter().for_each(|path| load(path))
    });
    store(provider, &name, generation, loaded, &mut cache.files);
    if cache.files.len() != paths.len() {
        let present: std::collections::HashSet<&OsStr> =
            paths.iter().map(|p| p.as_os_str()).collect();
        cache
            .files
            .retain(|path, _| present.contains(path.0.as_os_str()));
    }
    let files: Vec<Option<&CachedFile>> = paths
        .iter()
        .map(|p| cache.files.get(p.as_os_str()))
        .collect();
    let kit = assemble(name, &found, &paths, &files);
    cache.kit = Some(kit.clone());
    Ok(kit)
}

/// Keeps freshly loaded files (logging their problems once, when they are
/// read) and forgets the ones that vanished.
fn store(
    provider: &str,
    kit: &str,
    generation: u64,
    loaded: Loads,
    files: &mut HashMap<FileKey, CachedFile>,
) {
    for (path, file) in loaded {
        let Some(mut file) = file else {
            files.remove(path.as_os_str());
            continue;
        };
        for diagnostic in &file.diagnostics {
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
        file.generation = generation;
        files.insert(FileKey(path), file);
    }
}

/// The most threads [`pool`] starts.
const MAX_THREADS: usize = 8;

/// The threads `Local` reads and parses files on, started at the first load
/// and kept for the life of the process, so a query starts no thread. A pool
/// of its own: loads never queue behind the program's other rayon work, and
/// no task of the program runs inside a load. `None` when no thread could be
/// started (files then load on the caller's thread).
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS);
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("skillkit-local-{i}"))
            .build()
            .inspect_err(|e| tracing::warn!("files will load on the calling thread: {e}"))
            .ok()
    })
    .as_ref()
}

/// The caller's tracing subscriber and span, carried onto [`pool`]'s threads
/// so that warnings about skipped files reach whoever listens on the caller.
struct Context {
    dispatch: tracing::Dispatch,
    span: tracing::Span,
}

impl Context {
    fn current() -> Context {
        Context {
            dispatch: tracing::dispatcher::get_default(tracing::Dispatch::clone),
            span: tracing::Span::current(),
        }
    }

    fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        tracing::dispatcher::with_default(&self.dispatch, || self.span.in_scope(f))
    }
}

/// Whether this thread is one of [`pool`]'s.
fn on_pool() -> bool {
    pool().is_some_and(|pool| pool.current_thread_index().is_some())
}

/// Loads every file `feed` hands over (`None` for one that vanished since it
/// was found). On [`pool`], each file is a task started as soon as it is
/// handed over, so files are read and parsed while `feed` goes on (a walk,
/// say); elsewhere, one after the other.
fn load_files<R: Send>(
    kit: &str,
    read_at: SystemTime,
    feed: impl FnOnce(&mut dyn FnMut(&Path)) -> R + Send,
) -> (R, Loads) {
    let loaded = Mutex::new(Vec::new());
    let load = |path: Arc<Path>| {
        let file = load_file(kit, &path, read_at);
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
        diagnostics.extend(file.diagnostics.iter().cloned());
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

/// Reads and parses one file. `None` when the file vanished after the walk.
fn load_file(kit: &str, path: &Arc<Path>, read_at: SystemTime) -> Option<CachedFile> {
    let opened = std::fs::File::open(path).and_then(|file| {
        let meta = file.metadata()?;
        Ok((file, meta))
    });
    let (file, meta) = match opened {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            let diagnostic =
                Diagnostic::error(0, 0, format!("cannot read the file: {e}")).with_path(path);
            let stamp = Stamp::of(path)?;
            return Some(failed(stamp, read_at, diagnostic));
        }
    };
    let stamp = Stamp::from_metadata(&meta);
    let parsed = parse(kit, path, file, meta.len());
    Some(match parsed {
        Ok((loaded, name_line, warnings)) => CachedFile {
            stamp,
            racy: stamp.is_racy(read_at),
            loaded,
            name_line: u32::try_from(name_line).unwrap_or(u32::MAX),
            diagnostics: warnings.into(),
            generation: 0,
        },
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
        let doc = SkillDocument::read_frontmatter(file, len, path)?;
        let (warnings, line) = (doc.warnings.clone(), doc.name_line);
        let mut skill = Skill::from_document(kit, doc, Some(Arc::clone(path)))?;
        skill.body = Body::from_shared(Arc::clone(path));
        return Ok((Loaded::Skill(Arc::new(skill)), line, warnings));
    }
    let bytes = skillkit_parser::read_open_file(file, len, path)?;
    let mut doc = AgentDocument::parse_file(path, kit, &bytes)?;
    let warnings = std::mem::take(&mut doc.warnings);
    if path.file_name().is_none_or(|n| n != AGENT_FILE) {
        let origin = skillkit_parser::kit::Origin::new(&doc.name).at(path, doc.name_line);
        doc.name = skillkit_parser::kit::qualify(kit, &origin)?.name;
    }
    let line = doc.name_line;
    let def = AgentDefinition::from_document(doc, Some(path.to_path_buf()));
    Ok((Loaded::Agent(Arc::new(def)), line, warnings))
}

fn failed(stamp: Stamp, read_at: SystemTime, diagnostic: Diagnostic) -> CachedFile {
    CachedFile {
        stamp,
        racy: stamp.is_racy(read_at),
        loaded: Loaded::Failed,
        name_line: 0,
        diagnostics: Box::new([diagnostic]),
        generation: 0,
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
        std::fs::remove_file(root.join("skills/a/SKILL.md")).unwrap();
        let now = SystemTime::now();
        assert!(load_file("kit", &Arc::from(&*found.skills[0]), now).is_none());
        let loaded = load_file("kit", &Arc::from(&*found.skills[1]), now).unwrap();
        assert!(matches!(loaded.loaded, Loaded::Skill(s) if s.name == "kit:b"));
    }
}
