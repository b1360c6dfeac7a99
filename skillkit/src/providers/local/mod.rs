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
//! [`Scanner`](skillkit_parser::layout::Scanner). Each stamp is remembered as
//! its eight-byte [`Fingerprint`](skillkit_parser::layout::Fingerprint).
//!
//! Watching ([`Local::watch`], on by default, Linux only): the operating
//! system tells which kits changed, so a query of an unchanged folder checks
//! no file at all and returns the kits it returned before; the rule above
//! still holds, exactly (see the `watch` module).
//!
//! Progressive disclosure: a query reads each `SKILL.md` only up to the end of
//! its frontmatter (a catalog needs names and descriptions). A skill's
//! [`Body`](crate::skill::Body) stays in its file and is read when the skill is
//! activated or shown ([`Body::read`](crate::skill::Body::read),
//! [`Skill::render`](crate::Skill::render)), fresh from the file every time
//! (a body read lately is reused while the file's stamp, checked on every
//! read, is unchanged: the rule above).

mod cache;
mod file;
mod pool;
mod read;
mod watch;
#[cfg(feature = "mcp")]
pub(crate) use watch::activity;

/// The file-reading pool, shared with the search index's body build.
pub(crate) use pool::pool as read_pool;

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, TryLockError};

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use skillkit_parser::layout;

use crate::kit::{Kit, Origin};
use crate::provider::{KitProvider, ProviderError};

use cache::{Cache, KitCache, refresh};
use pool::{Pool, on_pool, pool};
use read::Context;
#[cfg(feature = "__test-hooks")]
pub use watch::WatchFault;
pub use watch::WatchStatus;
use watch::{Changes, Watch};

/// The kit name of the standard locations [`Local::discover`] finds.
pub const DISCOVERED_KIT: &str = "skills";

/// Kits from directories.
///
/// * [`Local::new(dir)`](Local::new): `dir` is one kit, named after its base name
///   (or [`named`](Local::named)).
/// * [`Local::each(dir)`](Local::each): every non-hidden child directory of
///   `dir` is a kit.
/// * [`Local::discover(project)`](Local::discover): the standard locations
///   (`.agents/skills/`, `.claude/skills/`, from the project folder up to its
///   repository root, nearest first, then the user's).
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

/// Where discovery looks inside each folder (and the user's home), highest
/// priority first.
const USER_PLACES: [&str; 2] = [".agents/skills", ".claude/skills"];

struct Inner {
    dir: PathBuf,
    name: Option<String>,
    each: bool,
    origin: Origin,
    label: String,
    cache: Mutex<Cache>,
    /// Whether watching was asked for ([`Local::watch`]).
    watching: bool,
    watch: Watch,
    /// How many files queries checked (stat or read), for tests.
    files_checked: AtomicU64,
}

impl std::fmt::Debug for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local")
            .field("dir", &self.inner.dir)
            .field("each", &self.inner.each)
            .finish_non_exhaustive()
    }
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
    /// priority first: `.agents/skills/` then `.claude/skills/` in `project`
    /// and in each folder above it up to the repository root (the nearest
    /// folder holding `.git`; outside a repository, `project` alone), nearest
    /// first, then the user's `~/.agents/skills/` and `~/.claude/skills/`
    /// ([`discovery_folders`](Local::discovery_folders) lists them all). Each
    /// is a kit named [`DISCOVERED_KIT`] (`skills`), so a nearer skill shadows
    /// a farther one of the same name (the catalog's warning names both
    /// files). Only the locations that exist now are returned; register them
    /// in order:
    ///
    /// ```
    /// # let project = tempfile::tempdir().unwrap();
    /// std::fs::create_dir_all(project.path().join(".claude/skills/pdf")).unwrap();
    /// let locals = skillkit::Local::discover(project.path());
    /// assert!(locals[0].dir().ends_with(".claude/skills"));
    /// let catalog = skillkit::Catalog::builder().providers(locals).build();
    /// ```
    pub fn discover(project: impl AsRef<Path>) -> Vec<Local> {
        let mut seen = Vec::new();
        let user: Vec<PathBuf> = dirs::home_dir()
            .map(|home| USER_PLACES.iter().map(|place| home.join(place)).collect())
            .unwrap_or_default();
        Local::discovery_folders(project)
            .into_iter()
            .filter(|dir| dir.is_dir())
            .filter(|dir| {
                // A project inside the home folder must not list one place twice.
                let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
                let new = !seen.contains(&real);
                seen.push(real);
                new
            })
            .map(|dir| {
                let origin = match user.contains(&dir) {
                    true => Origin::User,
                    false => Origin::Project,
                };
                Local::new(dir).named(DISCOVERED_KIT).with_origin(origin)
            })
            .collect()
    }

    /// Every folder [`Local::discover`] looks in, highest priority first,
    /// whether it exists or not (to tell a person where skills are looked
    /// for): `.agents/skills` and `.claude/skills` in `project` and each
    /// folder above it up to the nearest one holding `.git` (only `project`
    /// when none does), then in the user's home folder.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let repo = dir.path().join("repo");
    /// std::fs::create_dir_all(repo.join(".git")).unwrap();
    /// std::fs::create_dir_all(repo.join("app")).unwrap();
    /// let folders = skillkit::Local::discovery_folders(repo.join("app"));
    /// assert_eq!(folders[..4], [
    ///     repo.join("app/.agents/skills"), repo.join("app/.claude/skills"),
    ///     repo.join(".agents/skills"), repo.join(".claude/skills"),
    /// ]);
    /// ```
    pub fn discovery_folders(project: impl AsRef<Path>) -> Vec<PathBuf> {
        let project = project.as_ref();
        let start = std::path::absolute(project).unwrap_or_else(|_| project.to_path_buf());
        let levels: Vec<&Path> = match start.ancestors().position(|dir| dir.join(".git").exists()) {
            Some(root) => start.ancestors().take(root + 1).collect(),
            None => vec![&start],
        };
        let home = dirs::home_dir();
        let mut folders: Vec<PathBuf> = Vec::new();
        for dir in levels.into_iter().chain(home.as_deref()) {
            for place in USER_PLACES {
                let folder = dir.join(place);
                if !folders.contains(&folder) {
                    folders.push(folder);
                }
            }
        }
        folders
    }

    fn build(dir: PathBuf, each: bool) -> Self {
        let label = format!("local:{}", dir.display());
        Local {
            inner: Arc::new(Inner {
                watch: Watch::new(&dir, each, true),
                dir,
                name: None,
                each,
                origin: Origin::Application,
                label,
                cache: Mutex::new(Cache::default()),
                watching: true,
                files_checked: AtomicU64::new(0),
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
        let origin = self.inner.origin;
        self.rebuilt(Some(name.into()), origin, self.inner.watching)
    }

    /// The same provider with its kits of `origin` (a `Local` is
    /// [`Origin::Application`]: a folder the application named;
    /// [`discover`](Local::discover) marks project and user folders).
    ///
    /// ```
    /// use skillkit::{Local, Origin};
    /// let local = Local::new("vendor/skills").with_origin(Origin::Project);
    /// assert_eq!(local.origin(), Origin::Project);
    /// ```
    pub fn with_origin(self, origin: Origin) -> Self {
        let name = self.inner.name.clone();
        self.rebuilt(name, origin, self.inner.watching)
    }

    /// The same provider, learning of changes from the operating system
    /// (`true`, the default) or checking every file on every query
    /// (`false`). Either way a change made before a query starts is seen by
    /// that query; watching makes a query of an unchanged folder cost no
    /// per-file work.
    ///
    /// On Linux, an inotify watch (one per folder) is set up on a thread of
    /// its own after the second query (a folder queried once, by a command
    /// that then exits, is never watched); each query then reads the watch's
    /// event queue until it is empty (the kernel queues a change's event
    /// before the call that made it returns, so every earlier change is
    /// there), and checks only the kits with events (returning the others as they were: the same
    /// skills, shared). A kit holding a symbolic link, or reached through
    /// one, is checked on every query. Where watching is unavailable, the
    /// system's limit of watches is reached, or events are lost (the
    /// kernel's queue overflowed), queries check every file, as without
    /// watching, and a warning says so once
    /// ([`watch_status`](Local::watch_status) says so too); after an overflow, watching
    /// resumes after one full check. Other platforms always check every file.
    ///
    /// ```
    /// let local = skillkit::Local::each("/app/skills").watch(false);
    /// assert_eq!(local.watch_status(), skillkit::providers::WatchStatus::Off);
    /// ```
    pub fn watch(self, watch: bool) -> Self {
        let (name, origin) = (self.inner.name.clone(), self.inner.origin);
        self.rebuilt(name, origin, watch)
    }

    /// Whether queries learn of changes from the operating system, or why
    /// not (see [`watch`](Local::watch)).
    ///
    /// ```
    /// use skillkit::Local;
    /// use skillkit::providers::WatchStatus;
    /// let local = Local::new("/app/skills/files");
    /// // Watching starts after the second query.
    /// assert!(matches!(local.watch_status(), WatchStatus::Starting | WatchStatus::Off));
    /// ```
    pub fn watch_status(&self) -> WatchStatus {
        self.inner.watch.status()
    }

    /// For tests: waits up to `timeout` for the watch being set up after a
    /// second query, and says where it stands.
    #[doc(hidden)]
    pub fn wait_for_watch(&self, timeout: std::time::Duration) -> WatchStatus {
        self.inner.watch.wait_set_up(timeout);
        self.watch_status()
    }

    /// For tests: simulates a fault of the watch, through the path a real
    /// one takes.
    #[cfg(feature = "__test-hooks")]
    #[doc(hidden)]
    pub fn simulate_watch_fault(&self, fault: WatchFault) {
        self.inner.watch.simulate(fault);
    }

    /// For tests: how many files queries checked so far (a stat or a read
    /// each). A query of an unchanged, watched folder adds none.
    #[doc(hidden)]
    pub fn files_checked(&self) -> u64 {
        self.inner.files_checked.load(Ordering::Relaxed)
    }

    /// The same folder with kit name `name`, `origin` and `watch`, and a
    /// fresh cache.
    fn rebuilt(&self, name: Option<String>, origin: Origin, watching: bool) -> Self {
        let dir = self.inner.dir.clone();
        let inner = Inner {
            watch: Watch::new(&dir, self.inner.each, watching),
            dir,
            name,
            each: self.inner.each,
            origin,
            label: self.inner.label.clone(),
            cache: Mutex::new(Cache::default()),
            watching,
            files_checked: AtomicU64::new(0),
        };
        Local {
            inner: Arc::new(inner),
        }
    }

    /// Where this provider's kits come from.
    ///
    /// ```
    /// assert_eq!(skillkit::Local::new("/x").origin(), skillkit::Origin::Application);
    /// ```
    pub fn origin(&self) -> Origin {
        self.inner.origin
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
    /// otherwise run another task of its pool while it waits). When the
    /// watch vouches that nothing changed since the last load
    /// ([`watch`](Local::watch)), that load's kits are returned at once, on
    /// this thread.
    ///
    /// ```
    /// assert!(skillkit::Local::new("/no/such/dir").load().is_err());
    /// ```
    pub fn load(&self) -> Result<Vec<Kit>, ProviderError> {
        if let Some(kits) = self.unchanged() {
            return Ok(kits);
        }
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
        let context = Context::current();
        match pool() {
            Some(pool) if rayon::current_thread_index().is_none() => {
                let threads = pool.threads();
                threads.install(|| context.enter(|| self.load_locked(cache, &context)))
            }
            _ => self.load_locked(cache, &context),
        }
    }

    /// Loads on [`pool`](fn@pool) itself, as a task of its own (no thread waits for
    /// it), sending the kits to the caller's task; `None` when another load
    /// of this provider holds the cache (the caller then loads on a thread
    /// that may wait for it: a worker of the pool never waits for a lock,
    /// since the load holding it may need that very worker).
    async fn load_on_pool(&self, pool: &Pool) -> Option<Result<Vec<Kit>, ProviderError>> {
        let (sender, answer) = tokio::sync::oneshot::channel();
        let this = self.clone();
        let context = Context::current();
        pool.spawn(move || {
            let loaded = std::panic::catch_unwind(AssertUnwindSafe(|| {
                let mut cache = match this.inner.cache.try_lock() {
                    Ok(cache) => cache,
                    Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                    Err(TryLockError::WouldBlock) => return None,
                };
                Some(context.enter(|| this.load_locked(&mut cache, &context)))
            }));
            let _ = sender.send(loaded.unwrap_or_else(|panic| {
                Some(Err(ProviderError::Panicked {
                    message: crate::tool::panic_message(&*panic),
                }))
            }));
        });
        // The sender is only dropped unsent when the pool is gone, which it
        // never is (it lives as long as the process).
        answer.await.ok().flatten()
    }

    /// [`load`](Local::load) with the cache locked: on [`pool`](fn@pool) when called
    /// there.
    fn load_locked(&self, cache: &mut Cache, context: &Context) -> Result<Vec<Kit>, ProviderError> {
        let changes = self.inner.watch.changes(&self.inner.label);
        let loaded = self.load_here(cache, context, &changes);
        self.inner.watch.after(loaded.is_ok());
        loaded
    }

    /// The kits of the last load when the watch says for certain that
    /// nothing changed since (and no load is under way); `None` when a load
    /// must look. Never blocks: reading the watch's queue is all it does.
    fn unchanged(&self) -> Option<Vec<Kit>> {
        let inner = &self.inner;
        let cache = inner.cache.try_lock().ok()?;
        if !inner.watch.quiet() {
            return None;
        }
        let dirs = match inner.each {
            true => cache.dirs.as_ref()?.as_slice(),
            false => std::slice::from_ref(&inner.dir),
        };
        let mut kits = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let name = match inner.each {
                true => layout::kit_name(dir),
                false => Some(self.single_kit_name()),
            };
            // A folder that is no kit is left out, as a load does.
            let Some(name) = name else { continue };
            let kit = cache.kits.get(dir)?.unchanged(&name, false)?;
            kits.push(kit.with_origin(inner.origin));
        }
        Some(kits)
    }

    /// The name of the one kit of [`Local::new`].
    fn single_kit_name(&self) -> String {
        let inner = &self.inner;
        inner
            .name
            .clone()
            .or_else(|| layout::kit_name(&inner.dir))
            .unwrap_or_else(|| "local".to_owned())
    }

    /// The kit in `dir` named `name`: the one `kit_cache` holds when
    /// `changes` say it is unchanged, else refreshed (counting the files
    /// checked).
    fn kit(
        &self,
        name: String,
        dir: &Path,
        kit_cache: &mut KitCache,
        changes: &Changes,
    ) -> std::io::Result<Kit> {
        let inner = &self.inner;
        if let Some(kit) = kit_cache.unchanged(&name, changes.kit(dir)) {
            return Ok(kit);
        }
        let kit = refresh(&inner.label, name, dir, inner.each, kit_cache);
        let checked = u64::try_from(kit_cache.file_count()).unwrap_or(u64::MAX);
        inner.files_checked.fetch_add(checked, Ordering::Relaxed);
        kit
    }

    /// [`load`](Local::load) into the locked `cache`, in parallel when
    /// running on [`pool`](fn@pool), logging in the caller's `context`, checking what
    /// may have `changes`.
    fn load_here(
        &self,
        cache: &mut Cache,
        context: &Context,
        changes: &Changes,
    ) -> Result<Vec<Kit>, ProviderError> {
        let inner = &self.inner;
        let io = |source| ProviderError::Io {
            path: inner.dir.clone(),
            source,
        };
        if !inner.each {
            let name = self.single_kit_name();
            let kit_cache = cache.kits.entry(inner.dir.clone()).or_default();
            let kit = self.kit(name, &inner.dir, kit_cache, changes).map_err(io)?;
            return Ok(vec![kit.with_origin(inner.origin)]);
        }
        let mut previous = std::mem::take(&mut cache.kits);
        let mut jobs = Vec::new();
        let dirs = match cache.dirs.take() {
            Some(dirs) if !changes.listing() => dirs,
            _ => {
                let (dirs, skipped) = layout::kit_dirs_and_skipped(&inner.dir).map_err(io)?;
                if skipped != cache.skipped {
                    for warning in &skipped {
                        let path = warning.path.as_ref().map(|p| p.display().to_string());
                        tracing::warn!(provider = %inner.label, path, "{}", warning.message);
                    }
                    cache.skipped = skipped;
                }
                dirs
            }
        };
        let mut walked = 0;
        for dir in &dirs {
            if let Some(name) = layout::kit_name(dir) {
                let kit_cache = previous.remove(dir).unwrap_or_default();
                walked += usize::from(kit_cache.unchanged(&name, changes.kit(dir)).is_none());
                jobs.push((dir.clone(), name, kit_cache));
            }
        }
        cache.dirs = Some(dirs);
        let refresh_one = |(dir, name, mut kit_cache): (PathBuf, String, KitCache)| {
            let kit = context.enter(|| self.kit(name, &dir, &mut kit_cache, changes));
            (dir, kit_cache, kit)
        };
        // Every kit at once on the pool: the files of a small kit load beside
        // those of a big one (the kits the watch vouches for cost nothing).
        let refreshed: Vec<_> = if on_pool() && walked > 1 {
            jobs.into_par_iter().map(refresh_one).collect()
        } else {
            jobs.into_iter().map(refresh_one).collect()
        };
        let mut kits = Vec::with_capacity(refreshed.len());
        for (dir, kit_cache, kit) in refreshed {
            match kit {
                Ok(kit) => {
                    kits.push(kit.with_origin(inner.origin));
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

// Not listed when a type is not a provider: the note on `KitProvider` says
// what to write, and the list of SkillKit's own providers would not help.
#[diagnostic::do_not_recommend]
#[async_trait::async_trait]
impl KitProvider for Local {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.inner.label)
    }

    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        // The watch vouches for every kit: the kits as they were, with no
        // file touched and no thread to hand the work to.
        if let Some(kits) = self.unchanged() {
            return Ok(kits);
        }
        // Straight onto the pool that reads the files: no thread of the
        // runtime's blocking pool is started or woken for the walk.
        if let Some(pool) = pool()
            && let Some(loaded) = self.load_on_pool(pool).await
        {
            return loaded;
        }
        let this = self.clone();
        match tokio::task::spawn_blocking(move || this.load()).await {
            Ok(result) => result,
            Err(join) => Err(ProviderError::other(format!("loading kits failed: {join}"))),
        }
    }
}
