//! [`Stamp`]: what identifies a file's content (or a directory's entry list)
//! without reading it, and its keyed [`Fingerprint`], with git's "racy" rule
//! ([`RACY_WINDOW`]). The layout walk stamps folders; `Local`'s cache keeps a
//! fingerprint per file to prove it unchanged on the next query.

use std::fs;
use std::hash::{BuildHasher, RandomState};
use std::num::NonZeroU64;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// A file or directory changed this close to the moment it was read is read
/// again next time: its stamp cannot prove a later change would alter it (git's
/// "racy" rule). Two seconds covers the coarsest common filesystems (FAT, SMB).
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// What identifies a file's content (or a directory's entry list) without
/// reading it: size, mtime, inode and ctime.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("SKILL.md");
/// std::fs::write(&path, "a").unwrap();
/// let stamp = skillkit_parser::layout::Stamp::of(&path).unwrap();
/// // Just written: too fresh to be trusted next time.
/// assert!(stamp.is_racy(std::time::SystemTime::now()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    inode: u64,
    /// Nanoseconds since the Unix epoch; [`Stamp::UNKNOWN`] when the
    /// filesystem gives none.
    mtime: i64,
    ctime: i64,
}

impl Stamp {
    /// The `mtime` of a file whose filesystem gives none (always racy).
    const UNKNOWN: i64 = i64::MIN;

    /// The stamp of the file or directory at `path` (symlinks followed), or
    /// `None` if it cannot be read.
    ///
    /// ```
    /// assert!(skillkit_parser::layout::Stamp::of("/no/such/file".as_ref()).is_none());
    /// ```
    pub fn of(path: &Path) -> Option<Stamp> {
        fs::metadata(path)
            .ok()
            .map(|meta| Stamp::from_metadata(&meta))
    }

    /// The stamp of already read metadata.
    ///
    /// ```
    /// let meta = std::fs::metadata(".").unwrap();
    /// let _ = skillkit_parser::layout::Stamp::from_metadata(&meta);
    /// ```
    pub fn from_metadata(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (inode, ctime) = {
            use std::os::unix::fs::MetadataExt;
            (
                meta.ino(),
                meta.ctime()
                    .wrapping_mul(1_000_000_000)
                    .wrapping_add(meta.ctime_nsec()),
            )
        };
        #[cfg(not(unix))]
        let (inode, ctime) = (0, 0);
        Stamp {
            len: meta.len(),
            inode,
            mtime: meta.modified().map_or(Stamp::UNKNOWN, nanos),
            ctime,
        }
    }

    /// Whether the file changed within [`RACY_WINDOW`] of `read_at`, so that an
    /// edit right after the read could leave the stamp unchanged.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let stamp = skillkit_parser::layout::Stamp::of(dir.path()).unwrap();
    /// let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3);
    /// assert!(!stamp.is_racy(later));
    /// ```
    pub fn is_racy(&self, read_at: SystemTime) -> bool {
        let window = RACY_WINDOW.as_nanos() as i64;
        self.mtime == Stamp::UNKNOWN || nanos(read_at).saturating_sub(self.mtime) < window
    }

    /// What a cache keeps of this stamp, taken at `read_at`: its
    /// [`Fingerprint`], or `None` when the stamp is racy and so can prove
    /// nothing next time (the entry is read again).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let stamp = skillkit_parser::layout::Stamp::of(dir.path()).unwrap();
    /// assert_eq!(stamp.proof(SystemTime::now()), None);
    /// let later = SystemTime::now() + Duration::from_secs(3);
    /// assert_eq!(stamp.proof(later), Some(stamp.fingerprint()));
    /// ```
    pub fn proof(&self, read_at: SystemTime) -> Option<Fingerprint> {
        (!self.is_racy(read_at)).then(|| self.fingerprint())
    }

    /// This stamp in eight bytes, for remembering (a cache keeps one per
    /// file and per folder).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let stamp = skillkit_parser::layout::Stamp::of(dir.path()).unwrap();
    /// assert_eq!(stamp.fingerprint(), stamp.fingerprint());
    /// ```
    pub fn fingerprint(&self) -> Fingerprint {
        static KEYS: OnceLock<RandomState> = OnceLock::new();
        let hash = KEYS
            .get_or_init(RandomState::new)
            .hash_one((self.len, self.inode, self.mtime, self.ctime));
        Fingerprint(NonZeroU64::new(hash).unwrap_or(NonZeroU64::MIN))
    }
}

/// A [`Stamp`] hashed to eight bytes, where the stamp takes 32. Equal stamps
/// give equal fingerprints; two different ones give the same with a chance
/// of one in 2⁶⁴, and since the hash is keyed anew in every process, no file
/// can be made to collide on purpose.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("SKILL.md");
/// use skillkit_parser::layout::Stamp;
/// std::fs::write(&path, "a").unwrap();
/// let before = Stamp::of(&path).unwrap().fingerprint();
/// std::fs::write(&path, "ab").unwrap();
/// assert_ne!(Stamp::of(&path).unwrap().fingerprint(), before);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(NonZeroU64);

/// `time` in nanoseconds since the Unix epoch (negative before it), which
/// holds every time from 1678 to 2262: eight bytes where a `SystemTime` takes
/// sixteen, and a plain integer to hash into a [`Fingerprint`].
fn nanos(time: SystemTime) -> i64 {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_nanos()).map_or(i64::MIN + 1, |n| -n),
    }
}
