//! Files and digests as every store of SkillKit handles them: a file is
//! written beside its place, synced, then renamed over it (a reader sees the
//! old file or the new one, never half of one); a store's own file is opened
//! never through a link and never waiting ([`open_own`]); a small file that
//! comes with a skill or a project is read bounded, as skill files are
//! ([`read_small`]); a path from such a file is resolved inside its folder
//! ([`within_linked`]); a SHA-256 is written `sha256:<64 lowercase hex>`,
//! the form of the MCP skills extension.

use std::io::{self, Write};
use std::path::Path;

/// `relative` (a relative path of plain names: no `..`, no root, not
/// empty) resolved inside `base`; `None` for any other path.
#[cfg(any(feature = "github", feature = "eval"))]
pub(crate) fn within(base: &Path, relative: &str) -> Option<std::path::PathBuf> {
    let path = Path::new(relative);
    let plain = !relative.is_empty()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    plain.then(|| base.join(path))
}

/// Why [`within_linked`] refused a path.
#[cfg(any(feature = "github", feature = "eval"))]
#[derive(Debug)]
pub(crate) enum OutOf {
    /// Not a relative path of plain names.
    NotPlain,
    /// A symbolic link on the way (relative to the base) leads out of the
    /// base, or nowhere.
    Link(std::path::PathBuf),
}

/// [`within`], and no symbolic link on the way leads out of `base` (nor
/// the last part's, when `follow_last`): links are followed only while
/// they stay inside. A folder of someone else's (a cloned project, a
/// script's outputs) can hold `data -> ~/.ssh`; a path through it must
/// not reach what the folder does not hold. Checked when called: a link
/// made after the check is not caught, so a caller holds the folder still
/// (no script of it running) while it uses the path.
#[cfg(any(feature = "github", feature = "eval"))]
pub(crate) fn within_linked(
    base: &Path,
    relative: &str,
    follow_last: bool,
) -> Result<std::path::PathBuf, OutOf> {
    let joined = within(base, relative).ok_or(OutOf::NotPlain)?;
    let Ok(root) = base.canonicalize() else {
        // No base folder: nothing below it exists to lead anywhere.
        return Ok(joined);
    };
    let parts: Vec<_> = Path::new(relative).components().collect();
    let checked = parts.len() - usize::from(!follow_last);
    let mut at = base.to_path_buf();
    for part in &parts[..checked] {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if !at.canonicalize().is_ok_and(|real| real.starts_with(&root)) {
                    let link = at.strip_prefix(base).unwrap_or(&at);
                    return Err(OutOf::Link(link.to_path_buf()));
                }
            }
            Ok(_) => {}
            // The rest of the path does not exist yet.
            Err(_) => break,
        }
    }
    Ok(joined)
}

/// The size and SHA-256 of the regular file at `path`, opened as every
/// reader of skills opens one (`skillkit_parser::open_file`: never blocking
/// on a FIFO put in a file's place) and streamed through the hash with
/// `buffer`; an error of kind `FileTooLarge` once more than `limit` bytes
/// were read.
pub(crate) fn sha256_file(
    path: &Path,
    buffer: &mut [u8],
    limit: u64,
) -> io::Result<(u64, [u8; 32])> {
    use sha2::Digest as _;
    let (mut file, _) = skillkit_parser::open_file(path)?;
    let mut hash = sha2::Sha256::new();
    let mut size = 0u64;
    loop {
        let n = io::Read::read(&mut file, buffer)?;
        if n == 0 {
            break;
        }
        hash.update(&buffer[..n]);
        size += n as u64;
        if size > limit {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("more than {limit} bytes"),
            ));
        }
    }
    Ok((size, hash.finalize().into()))
}

/// Writes `bytes` to `path` whole: a temporary file in its folder, synced,
/// then renamed over it.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let mut file = tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new(".")))?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Opens `path`, a file of one of SkillKit's own stores (`what` it is: "a
/// session file", "a lock file"), never through a symbolic link (one
/// planted there would have every write land on its target) and never
/// waiting (opening a FIFO waits for its other end): a link, or anything
/// but a regular file (checked on the handle), is refused with an error of
/// kind [`InvalidInput`](io::ErrorKind::InvalidInput) that says what it is
/// and to remove it. A path that is not there is
/// [`NotFound`](io::ErrorKind::NotFound), unless `options` create it.
#[cfg(any(feature = "github", feature = "agent"))]
pub(crate) fn open_own(
    path: &Path,
    options: &mut std::fs::OpenOptions,
    what: &str,
) -> io::Result<std::fs::File> {
    use skillkit_parser::NotAFile;
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        let flags = (OFlags::NOFOLLOW | OFlags::NONBLOCK).bits();
        std::os::unix::fs::OpenOptionsExt::custom_flags(options, flags as i32);
    }
    let refuse = |found: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is {found}, not {what}: remove it", path.display()),
        )
    };
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(e),
        // A link (`ELOOP`), or a FIFO opened for writing with no reader
        // (`ENXIO`): say what it is.
        Err(e) => {
            return Err(match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => refuse("a symbolic link"),
                Ok(meta) => NotAFile::of(meta.file_type()).map_or(e, |found| refuse(found.what())),
                Err(_) => e,
            });
        }
    };
    match NotAFile::of(file.metadata()?.file_type()) {
        Some(found) => Err(refuse(found.what())),
        None => Ok(file),
    }
}

/// A small text file that may come with a skill or a project (a lockfile,
/// a marketplace, an eval set), read as skill files are: never blocking on
/// a FIFO put in its place, refusing what is not a regular file (a cloned
/// project's `skillkit.lock.json -> /dev/zero`) and more than `limit`
/// bytes (whole MiB), saying so.
#[cfg(any(feature = "github", feature = "eval"))]
pub(crate) fn read_small(path: &Path, limit: u64) -> io::Result<String> {
    let (file, _) = skillkit_parser::open_file(path)?;
    read_limited(file, limit)
}

/// The text of the opened `file`, refused when it holds more than `limit`
/// bytes (whole MiB), saying so.
#[cfg(any(feature = "github", feature = "eval", feature = "agent"))]
pub(crate) fn read_limited(file: std::fs::File, limit: u64) -> io::Result<String> {
    use std::io::Read as _;
    let mut text = String::new();
    file.take(limit.saturating_add(1))
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {} MiB, which no such file is", limit >> 20),
        ));
    }
    Ok(text)
}

/// `digest` (a SHA-256) as `sha256:<64 lowercase hex>`.
pub(crate) fn sha256(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(7 + digest.len() * 2);
    out.push_str("sha256:");
    for byte in digest {
        out.push(HEX[usize::from(byte >> 4)] as char);
        out.push(HEX[usize::from(byte & 15)] as char);
    }
    out
}

/// The domain tag of the aggregate digest, version 1 (specified in
/// `lockfile/digest.rs`).
pub(crate) const AGGREGATE_TAG: &[u8] = b"skillkit-skill-digest-v1\0";

/// The aggregate digest, version 1, of files already digested: (path
/// relative to the folder, size, SHA-256 of the content), sorted by path.
/// The lockfile pins it and the trust store keeps it, so trusting a locked
/// skill trusts the bytes the lock pins.
pub(crate) fn aggregate(sorted: &[(&str, u64, [u8; 32])]) -> String {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(AGGREGATE_TAG);
    hasher.update((sorted.len() as u64).to_be_bytes());
    for (path, size, digest) in sorted {
        hasher.update((path.len() as u64).to_be_bytes());
        hasher.update(path.as_bytes());
        hasher.update(size.to_be_bytes());
        hasher.update(digest);
    }
    sha256(&hasher.finalize())
}
