//! Trust: which kits' skills may pre-approve tools (`allowed-tools`). The
//! [`TrustPolicy`] decides per kit, by its [`Origin`](crate::Origin) unless the
//! application says more; a [`TrustStore`] remembers the folders a person
//! trusted, with the digest of their files, so an edited kit is untrusted
//! again until it is trusted anew (`skillkit trust PATH`).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::kit::Kit;

/// The most bytes of files a trusted folder's digest reads (a bigger folder
/// cannot be trusted: it is not a skill kit a person reviewed).
pub const MAX_TRUSTED_BYTES: u64 = 64 * 1024 * 1024;

/// Which kits' skills may pre-approve tools: while a skill whose
/// frontmatter lists `allowed-tools` is active in a conversation (the model
/// activated it), calls to those tools skip the approval policy's
/// [`Ask`](crate::dispatch::approval::Approval::Ask), but only when its kit is trusted. The default
/// trusts by [`Origin`](crate::Origin): kits the application chose and the
/// user's own folder, not a project's discovered folders, imports or stores.
///
/// ```
/// use skillkit::trust::TrustPolicy;
/// use skillkit::{Kit, Origin};
/// let default = TrustPolicy::default();
/// assert!(default.trusts(&Kit::new("app")));
/// assert!(!default.trusts(&Kit::new("repo").with_origin(Origin::Project)));
/// // Trust one reviewed project kit as well.
/// let reviewed = TrustPolicy::new(|kit| kit.origin.is_trusted() || kit.name == "repo");
/// assert!(reviewed.trusts(&Kit::new("repo").with_origin(Origin::Project)));
/// ```
#[derive(Clone)]
pub struct TrustPolicy(Arc<dyn Fn(&Kit) -> bool + Send + Sync>);

impl TrustPolicy {
    /// A policy from a function of the kit.
    ///
    /// ```
    /// let nobody = skillkit::trust::TrustPolicy::new(|_| false);
    /// assert!(!nobody.trusts(&skillkit::Kit::new("k")));
    /// ```
    pub fn new(trusts: impl Fn(&Kit) -> bool + Send + Sync + 'static) -> Self {
        TrustPolicy(Arc::new(trusts))
    }

    /// Whether the skills of `kit` may pre-approve tools.
    ///
    /// ```
    /// assert!(skillkit::trust::TrustPolicy::default().trusts(&skillkit::Kit::new("k")));
    /// ```
    pub fn trusts(&self, kit: &Kit) -> bool {
        (self.0)(kit)
    }
}

impl Default for TrustPolicy {
    /// Trusts by origin ([`Origin::is_trusted`](crate::Origin::is_trusted)).
    fn default() -> Self {
        TrustPolicy::new(|kit| kit.origin.is_trusted())
    }
}

impl fmt::Debug for TrustPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TrustPolicy(..)")
    }
}

impl TrustPolicy {
    /// Trusts what the default trusts, and the kits whose folder `store`
    /// trusts with the files it has now.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use skillkit::trust::{TrustPolicy, TrustStore};
    /// let store = TrustStore::open(dir.path().join("trust.json"));
    /// let policy = TrustPolicy::default().or_store(store);
    /// assert!(policy.trusts(&skillkit::Kit::new("app")));
    /// ```
    pub fn or_store(self, store: TrustStore) -> Self {
        TrustPolicy::new(move |kit| {
            self.trusts(kit) || kit_folder(kit).is_some_and(|dir| store.trusts(&dir))
        })
    }
}

/// The folder a kit was read from, as its provider says in its metadata
/// (`dir` for imports, `path` for local folders).
fn kit_folder(kit: &Kit) -> Option<PathBuf> {
    ["dir", "path"]
        .iter()
        .filter_map(|key| kit.metadata.get(*key)?.as_str())
        .map(PathBuf::from)
        .find(|dir| dir.is_absolute())
}

/// The folders a person trusted, kept in a JSON file, each with the digest
/// of its files when it was trusted. A folder whose files changed since is
/// not trusted.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let kit = dir.path().join("kit");
/// # std::fs::create_dir_all(kit.join("skills/a")).unwrap();
/// # std::fs::write(kit.join("skills/a/SKILL.md"), "---\nname: a\ndescription: d\n---\n").unwrap();
/// use skillkit::trust::TrustStore;
/// let store = TrustStore::open(dir.path().join("trust.json"));
/// store.trust(&kit).unwrap();
/// assert!(store.trusts(&kit));
/// std::fs::write(kit.join("skills/a/SKILL.md"), "---\nname: a\ndescription: edited\n---\n").unwrap();
/// assert!(!store.trusts(&kit)); // edited: asked about again
/// ```
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

/// One trusted folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trusted {
    /// The folder, absolute.
    pub folder: PathBuf,
    /// `sha256:<hex>` of its files when it was trusted.
    pub digest: String,
}

impl TrustStore {
    /// The store kept in `file` (created when a folder is first trusted).
    ///
    /// ```
    /// let store = skillkit::trust::TrustStore::open("/tmp/skillkit-trust.json");
    /// assert!(store.file().ends_with("skillkit-trust.json"));
    /// ```
    pub fn open(file: impl Into<PathBuf>) -> TrustStore {
        TrustStore { file: file.into() }
    }

    /// The file the store is kept in.
    ///
    /// ```
    /// let store = skillkit::trust::TrustStore::open("trust.json");
    /// assert_eq!(store.file(), std::path::Path::new("trust.json"));
    /// ```
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Trusts `folder` with the files it has now, and returns its digest.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let store = skillkit::trust::TrustStore::open(dir.path().join("trust.json"));
    /// let digest = store.trust(dir.path()).unwrap();
    /// assert!(digest.starts_with("sha256:"));
    /// ```
    pub fn trust(&self, folder: &Path) -> io::Result<String> {
        let folder = std::fs::canonicalize(folder)?;
        let digest = digest(&folder)?;
        let mut all = self.read()?;
        all.insert(folder, digest.clone());
        self.write(&all)?;
        Ok(digest)
    }

    /// Forgets `folder`; `false` when it was not trusted.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let store = skillkit::trust::TrustStore::open(dir.path().join("trust.json"));
    /// store.trust(dir.path()).unwrap();
    /// assert!(store.revoke(dir.path()).unwrap());
    /// assert!(!store.revoke(dir.path()).unwrap());
    /// ```
    pub fn revoke(&self, folder: &Path) -> io::Result<bool> {
        let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        let mut all = self.read()?;
        let removed = all.remove(&folder).is_some();
        if removed {
            self.write(&all)?;
        }
        Ok(removed)
    }

    /// Every trusted folder, sorted.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let store = skillkit::trust::TrustStore::open(dir.path().join("trust.json"));
    /// assert!(store.list().unwrap().is_empty());
    /// ```
    pub fn list(&self) -> io::Result<Vec<Trusted>> {
        Ok(self
            .read()?
            .into_iter()
            .map(|(folder, digest)| Trusted { folder, digest })
            .collect())
    }

    /// Whether `folder` is trusted and its files are those it was trusted
    /// with. A store that cannot be read trusts nothing.
    ///
    /// ```
    /// let store = skillkit::trust::TrustStore::open("/no/such/trust.json");
    /// assert!(!store.trusts(std::path::Path::new("/")));
    /// ```
    pub fn trusts(&self, folder: &Path) -> bool {
        let Ok(folder) = std::fs::canonicalize(folder) else {
            return false;
        };
        let Ok(all) = self.read() else {
            return false;
        };
        all.get(&folder)
            .is_some_and(|kept| digest(&folder).is_ok_and(|now| &now == kept))
    }

    fn read(&self) -> io::Result<BTreeMap<PathBuf, String>> {
        let text = match std::fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(e),
        };
        serde_json::from_str(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is not a trust store ({e}); move it away to start a new one",
                    self.file.display()
                ),
            )
        })
    }

    /// Writes `all` whole: a temporary file beside the store, then renamed
    /// over it, so a reader never sees half a store.
    fn write(&self, all: &BTreeMap<PathBuf, String>) -> io::Result<()> {
        let parent = self.file.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = parent.unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent)?;
        let mut bytes = serde_json::to_vec_pretty(all).map_err(io::Error::other)?;
        bytes.push(b'\n');
        crate::whole::write(&self.file, &bytes)
    }
}

/// `sha256:<hex>` of the files under `folder`, as they are served. A
/// folder of regular files (no links) gets the aggregate digest version 1
/// a project's lockfile pins (`lockfile/digest.rs`), so trusting a locked
/// skill trusts exactly the bytes the lock pins, and any change revokes it.
/// With links: each entry's path (relative, `/`-separated) and contents, in
/// path order; hidden entries and VCS folders are included (a hidden script runs
/// as well as any); a link is hashed as its target text and then followed,
/// so what it leads to (a file, or a folder and everything in it, wherever
/// it is) is hashed as if it were here, and an edit behind a link changes
/// the digest too. A link back into a folder already hashed is hashed as a
/// loop, not followed again; other special files are refused.
fn digest(folder: &Path) -> io::Result<String> {
    let mut files = Vec::new();
    let mut seen = std::collections::HashSet::new();
    seen.insert(std::fs::canonicalize(folder)?);
    collect(folder, folder, 0, &mut files, &mut seen)?;
    files.sort();
    if files.iter().all(|(_, _, link)| link.is_none()) {
        return aggregate(folder, &files);
    }
    let mut hash = Sha256::new();
    let mut total = 0u64;
    let mut buffer = vec![0u8; 64 * 1024];
    for (relative, path, link) in files {
        hash.update(relative.as_bytes());
        hash.update([0]);
        if let Some(target) = link {
            hash.update(b"link\0");
            hash.update(target.as_bytes());
            hash.update([0]);
            continue;
        }
        let (mut file, meta) = skillkit_parser::open_file(&path)?;
        total += meta.len();
        if total > MAX_TRUSTED_BYTES {
            return Err(io::Error::other(format!(
                "{} holds more than {} MiB of files; a kit to trust is smaller",
                folder.display(),
                MAX_TRUSTED_BYTES >> 20
            )));
        }
        hash.update(meta.len().to_le_bytes());
        loop {
            let n = file.read(&mut buffer)?;
            if n == 0 {
                break;
            }
            hash.update(&buffer[..n]);
        }
    }
    Ok(crate::whole::sha256(&hash.finalize()))
}

/// The aggregate digest (version 1) of `files`, sorted by relative path.
fn aggregate(folder: &Path, files: &[(String, PathBuf, Option<String>)]) -> io::Result<String> {
    let mut digested = Vec::with_capacity(files.len());
    let mut total = 0u64;
    let mut buffer = vec![0u8; 64 * 1024];
    for (relative, path, _) in files {
        let left = MAX_TRUSTED_BYTES - total;
        let (size, sha256) =
            crate::whole::sha256_file(path, &mut buffer, left).map_err(|e| match e.kind() {
                io::ErrorKind::FileTooLarge => io::Error::other(format!(
                    "{} holds more than {} MiB of files; a kit to trust is smaller",
                    folder.display(),
                    MAX_TRUSTED_BYTES >> 20
                )),
                _ => e,
            })?;
        total += size;
        digested.push((relative.as_str(), size, sha256));
    }
    Ok(crate::whole::aggregate(&digested))
}

/// The files under `dir`: (relative path, path, link target for links),
/// links followed (`seen`: the folders already walked, canonical).
fn collect(
    root: &Path,
    dir: &Path,
    depth: usize,
    out: &mut Vec<(String, PathBuf, Option<String>)>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> io::Result<()> {
    if depth > 16 {
        return Err(io::Error::other(format!(
            "{} is nested more than 16 folders deep",
            dir.display()
        )));
    }
    // In name order, so a folder reached twice (itself and through a link)
    // is walked and marked a loop the same way every time.
    let mut entries = std::fs::read_dir(dir)?.collect::<io::Result<Vec<_>>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type()?;
        let relative = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if kind.is_symlink() {
            let target = std::fs::read_link(&path)?;
            out.push((
                format!("{relative}\0link"),
                path.clone(),
                Some(target.to_string_lossy().into_owned()),
            ));
            // What the link leads to, as it is served.
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => {
                    let real = std::fs::canonicalize(&path)?;
                    match seen.insert(real) {
                        true => collect(root, &path, depth + 1, out, seen)?,
                        false => out.push((format!("{relative}\0loop"), path, Some(String::new()))),
                    }
                }
                Ok(_) => out.push((relative, path, None)),
                // A link to nothing serves nothing: its text is hashed.
                Err(_) => {}
            }
        } else if kind.is_dir() {
            seen.insert(std::fs::canonicalize(&path)?);
            collect(root, &path, depth + 1, out, seen)?;
        } else {
            out.push((relative, path, None));
        }
    }
    Ok(())
}

impl fmt::Display for Trusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.folder.display(), self.digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn an_edit_behind_a_linked_skill_folder_revokes_trust() {
        let dir = tempfile::tempdir().unwrap();
        let kit = dir.path().join("kits/tk");
        let ext = dir.path().join("ext/linked");
        std::fs::create_dir_all(kit.join("skills")).unwrap();
        std::fs::create_dir_all(&ext).unwrap();
        std::fs::write(
            ext.join("SKILL.md"),
            "---\nname: linked\ndescription: d\n---\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("../../../ext/linked", kit.join("skills/linked")).unwrap();
        // A link back up does not loop.
        std::os::unix::fs::symlink("..", kit.join("skills/up")).unwrap();
        let store = TrustStore::open(dir.path().join("trust.json"));
        store.trust(&kit).unwrap();
        assert!(store.trusts(&kit));
        std::fs::write(
            ext.join("SKILL.md"),
            "---\nname: linked\ndescription: d\nallowed-tools: run_skill_script\n---\n",
        )
        .unwrap();
        assert!(
            !store.trusts(&kit),
            "an edit behind the link kept the trust"
        );
        // A file added behind the link too.
        store.trust(&kit).unwrap();
        std::fs::write(ext.join("run.sh"), "echo hi\n").unwrap();
        assert!(!store.trusts(&kit));
    }
}
