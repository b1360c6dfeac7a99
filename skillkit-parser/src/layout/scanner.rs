//! [`Scanner`]: one kit scanned again and again, reading again only the
//! folders that changed.

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::listing::{Handle, Listing};
use super::{Fingerprint, KitLayout, Stamp, Walk};

/// Scans one kit again and again, cheaply: a directory whose stamp is unchanged
/// since the previous scan (and was not racy) is not read again, its entries
/// are reused. Adding, removing or renaming an entry changes a directory's
/// mtime, so the answer is the same as a fresh [`KitLayout::scan`]; only
/// directories are remembered, never file contents.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let root = dir.path();
/// std::fs::create_dir_all(root.join("a")).unwrap();
/// std::fs::write(root.join("a/SKILL.md"), "x").unwrap();
/// let mut scanner = skillkit_parser::layout::Scanner::new();
/// assert_eq!(scanner.scan(root).unwrap().skills.len(), 1);
/// std::fs::create_dir_all(root.join("b")).unwrap();
/// std::fs::write(root.join("b/SKILL.md"), "x").unwrap();
/// assert_eq!(scanner.scan(root).unwrap().skills.len(), 2);
/// ```
#[derive(Debug, Default)]
pub struct Scanner {
    /// The kit the listings are of; scanning another one starts afresh.
    root: PathBuf,
    dirs: Folders,
    /// Folders first read by the walk under way, merged into `dirs` after it.
    added: Vec<(Box<[u8]>, CachedListing)>,
}

/// The folders remembered, sorted by key: the path's bytes below the root
/// (the root's part is the same in every path). The keys lie one after
/// another in one buffer, so a folder costs no allocation of its own, and
/// the list is exactly as long as needed (a hash map keeps up to twice as
/// many slots) and searched by bisection.
#[derive(Debug, Default)]
struct Folders {
    keys: Vec<u8>,
    folders: Vec<Folder>,
}

#[derive(Debug)]
struct Folder {
    /// Its key is `keys[start..end]`.
    start: u32,
    end: u32,
    cached: CachedListing,
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(size_of::<Folder>() == 32);

#[derive(Debug)]
struct CachedListing {
    /// What proves the folder unchanged: `None` when its stamp was racy.
    proof: Option<Fingerprint>,
    listing: Listing,
    seen: bool,
}

impl Folders {
    fn key(&self, folder: &Folder) -> &[u8] {
        &self.keys[folder.start as usize..folder.end as usize]
    }

    fn find(&self, key: &[u8]) -> Option<usize> {
        self.folders
            .binary_search_by(|folder| self.key(folder).cmp(key))
            .ok()
    }

    /// Keeps the folders seen by the last walk, with the ones it `added`.
    fn update(&mut self, added: Vec<(Box<[u8]>, CachedListing)>) {
        if added.is_empty() && self.folders.iter().all(|folder| folder.cached.seen) {
            return;
        }
        let Folders { keys, folders } = std::mem::take(self);
        let (added_keys, added): (Vec<_>, Vec<_>) = added.into_iter().unzip();
        let mut all: Vec<(&[u8], CachedListing)> = folders
            .into_iter()
            .filter(|folder| folder.cached.seen)
            .map(|folder| {
                (
                    &keys[folder.start as usize..folder.end as usize],
                    folder.cached,
                )
            })
            .chain(added_keys.iter().map(|key| &**key).zip(added))
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        all.dedup_by(|a, b| a.0 == b.0);
        self.keys
            .reserve_exact(all.iter().map(|(key, _)| key.len()).sum());
        self.folders.reserve_exact(all.len());
        for (key, cached) in all {
            // Offsets are 32 bits: folders past 4 GiB of keys are simply not
            // remembered (read again on every scan), never mixed up.
            let start = self.keys.len();
            let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(start + key.len()))
            else {
                break;
            };
            self.keys.extend_from_slice(key);
            self.folders.push(Folder { start, end, cached });
        }
    }
}

impl Scanner {
    /// A scanner that remembers nothing yet.
    ///
    /// ```
    /// let scanner = skillkit_parser::layout::Scanner::new();
    /// ```
    pub fn new() -> Self {
        Scanner::default()
    }

    /// The files of the kit at `root`, as [`KitLayout::scan`] finds them.
    ///
    /// ```
    /// let mut scanner = skillkit_parser::layout::Scanner::new();
    /// assert!(scanner.scan("/no/such/kit".as_ref()).is_err());
    /// ```
    pub fn scan(&mut self, root: &Path) -> io::Result<KitLayout> {
        self.scan_with(root, &mut |_| {})
    }

    /// Like [`scan`](Scanner::scan), calling `on_file` with each file of the kit
    /// as soon as the walk finds it (in walk order, not sorted), so the caller
    /// can start reading files while the walk goes on.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # std::fs::create_dir_all(dir.path().join("a")).unwrap();
    /// # std::fs::write(dir.path().join("a/SKILL.md"), "x").unwrap();
    /// let mut seen = Vec::new();
    /// let layout = skillkit_parser::layout::Scanner::new()
    ///     .scan_with(dir.path(), &mut |path| seen.push(path.to_path_buf()))
    ///     .unwrap();
    /// assert_eq!(seen, layout.skills);
    /// ```
    pub fn scan_with(
        &mut self,
        root: &Path,
        on_file: &mut dyn FnMut(&Path),
    ) -> io::Result<KitLayout> {
        if self.root != root {
            self.dirs = Folders::default();
            root.clone_into(&mut self.root);
        }
        for folder in &mut self.dirs.folders {
            folder.cached.seen = false;
        }
        let read_at = SystemTime::now();
        let walk = Walk {
            scanner: Some(&mut *self),
            layout: KitLayout::default(),
            read_at,
            on_file,
        };
        let layout = walk.run(root);
        let added = std::mem::take(&mut self.added);
        self.dirs.update(added);
        layout
    }

    /// The entries of `dir` (`name` in the open `parent`, when given):
    /// remembered ones when its stamp is unchanged, else read now, with the
    /// handle its children open relative to.
    pub(super) fn listing(
        &mut self,
        dir: &Path,
        parent: Option<(&Handle, &str)>,
        read_at: SystemTime,
    ) -> io::Result<(Listing, Option<Handle>)> {
        // Every folder of a walk is its root joined with more components.
        let key = dir
            .as_os_str()
            .as_encoded_bytes()
            .get(self.root.as_os_str().len()..)
            .unwrap_or_default();
        let found = self.dirs.find(key);
        if let Some(i) = found {
            let cached = &mut self.dirs.folders[i].cached;
            let stamp = Stamp::of(dir).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
            if cached.proof == Some(stamp.fingerprint()) {
                cached.seen = true;
                return Ok((cached.listing.clone(), None));
            }
        }
        let (listing, stamp, handle) = Listing::open(dir, parent)?;
        let cached = CachedListing {
            proof: stamp.proof(read_at),
            listing: listing.clone(),
            seen: true,
        };
        match found {
            Some(i) => self.dirs.folders[i].cached = cached,
            None => self.added.push((key.into(), cached)),
        }
        Ok((listing, Some(handle)))
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::layout::tests::write;

    /// Every key remembered, in order.
    fn keys(scanner: &Scanner) -> Vec<String> {
        let dirs = &scanner.dirs;
        dirs.folders
            .iter()
            .map(|folder| String::from_utf8_lossy(dirs.key(folder)).into_owned())
            .collect()
    }

    #[test]
    fn a_scanner_sees_additions_removals_and_edits_deep_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("skills/a/SKILL.md"));
        let mut scanner = Scanner::new();
        assert_eq!(scanner.scan(root).unwrap(), KitLayout::scan(root).unwrap());
        write(&root.join("skills/a/deep/b/SKILL.md"));
        write(&root.join("agents/x.md"));
        assert_eq!(scanner.scan(root).unwrap(), KitLayout::scan(root).unwrap());
        assert_eq!(scanner.scan(root).unwrap().skills.len(), 2);
        fs::remove_dir_all(root.join("skills/a/deep")).unwrap();
        assert_eq!(scanner.scan(root).unwrap(), KitLayout::scan(root).unwrap());
        assert_eq!(scanner.scan(root).unwrap().skills.len(), 1);
    }

    #[test]
    fn the_keys_stay_sorted_and_exact_through_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("b/SKILL.md"));
        write(&root.join("a/x/SKILL.md"));
        let mut scanner = Scanner::new();
        scanner.scan(root).unwrap();
        assert_eq!(keys(&scanner), ["", "/a", "/a/x", "/b"]);
        write(&root.join("a/w/SKILL.md"));
        write(&root.join("c/SKILL.md"));
        fs::remove_dir_all(root.join("b")).unwrap();
        scanner.scan(root).unwrap();
        assert_eq!(keys(&scanner), ["", "/a", "/a/w", "/a/x", "/c"]);
        let dirs = &scanner.dirs;
        let bytes: usize = keys(&scanner).iter().map(String::len).sum();
        assert_eq!(dirs.keys.len(), bytes, "no key of a removed folder is kept");
        assert_eq!(
            dirs.keys.capacity(),
            dirs.keys.len(),
            "exactly as long as needed"
        );
        assert_eq!(dirs.folders.capacity(), dirs.folders.len());
    }

    #[test]
    fn unchanged_old_directories_are_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("skills/a/SKILL.md"));
        let old = SystemTime::now() - Duration::from_secs(60);
        for d in [
            root.to_path_buf(),
            root.join("skills"),
            root.join("skills/a"),
        ] {
            fs::File::open(&d).unwrap().set_modified(old).unwrap();
        }
        let mut scanner = Scanner::new();
        scanner.scan(root).unwrap();
        let skills = |scanner: &Scanner| {
            let folder = &scanner.dirs.folders[1];
            assert_eq!(scanner.dirs.key(folder), b"/skills");
            Arc::clone(&folder.cached.listing.shared)
        };
        let before = skills(&scanner);
        scanner.scan(root).unwrap();
        assert!(Arc::ptr_eq(&before, &skills(&scanner)));
        // A racy (fresh) directory is read again.
        write(&root.join("skills/b/SKILL.md"));
        scanner.scan(root).unwrap();
        assert!(!Arc::ptr_eq(&before, &skills(&scanner)));
    }

    #[test]
    fn a_scanner_moved_to_another_kit_forgets_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        write(&a.join("skills/x/SKILL.md"));
        write(&b.join("skills/y/SKILL.md"));
        write(&b.join("skills/z/SKILL.md"));
        let mut scanner = Scanner::new();
        assert_eq!(
            scanner.scan(&a).unwrap().skills,
            [a.join("skills/x/SKILL.md")]
        );
        // The same relative folders (`/skills`), another kit.
        let found = scanner.scan(&b).unwrap().skills;
        assert_eq!(
            found,
            [b.join("skills/y/SKILL.md"), b.join("skills/z/SKILL.md")]
        );
        assert_eq!(
            scanner.scan(&a).unwrap().skills,
            [a.join("skills/x/SKILL.md")]
        );
    }
}
