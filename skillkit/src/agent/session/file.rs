//! [`FileSessionStore`]: one JSON-lines file per session in a folder.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{
    Loaded, SessionError, SessionInfo, SessionItem, SessionMeta, SessionStore, checked_id, valid_id,
};
use crate::llm::Message;

/// Sessions as files: `<id>.jsonl` in a folder, one item a line
/// (`{"seq":1,"message":{…}}`), and its title and agent in `<id>.meta.json`.
///
/// A write appends its lines and syncs them (a cost of the items written,
/// not of the session's length); a crash in the middle of one leaves a last
/// line without its end, which readers leave out and the next write cuts
/// off: the session is as it was before the write or after it. A pop cuts
/// the last line off; a fork writes a new file whole and renames it into
/// place. Writers to one session, in one process or several, take
/// turns on `<id>.lock` (a `flock` lock on Unix; elsewhere writers in
/// several processes are not kept apart), so the version a write expects is
/// checked against the file as it is. Its files are opened never through a
/// symbolic link and never waiting: a link, a FIFO or a device put in the
/// folder in a session's place is refused, saying what it is.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::agent::session::{FileSessionStore, SessionStore};
/// use skillkit::llm::Message;
/// let dir = tempfile::tempdir().unwrap();
/// let store = FileSessionStore::new(dir.path());
/// store.append("chat", 0, &[Message::user("Hi")]).await.unwrap();
/// let loaded = store.load("chat", None).await.unwrap();
/// assert_eq!(loaded.items[0].message, Message::user("Hi"));
/// assert!(dir.path().join("chat.jsonl").is_file());
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct FileSessionStore {
    dir: PathBuf,
}

impl FileSessionStore {
    /// Sessions in `dir` (made at the first write).
    ///
    /// ```
    /// let store = skillkit::agent::session::FileSessionStore::new("/var/lib/app/sessions");
    /// assert_eq!(store.dir(), std::path::Path::new("/var/lib/app/sessions"));
    /// ```
    pub fn new(dir: impl Into<PathBuf>) -> FileSessionStore {
        FileSessionStore { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, id: &str) -> Result<PathBuf, SessionError> {
        Ok(self.dir.join(format!("{}.jsonl", checked_id(id)?)))
    }

    /// Runs `f` holding session `id`'s lock, on a thread that may block.
    async fn locked<R: Send + 'static>(
        &self,
        id: &str,
        f: impl FnOnce(&Path) -> Result<R, SessionError> + Send + 'static,
    ) -> Result<R, SessionError> {
        let path = self.file(id)?;
        let dir = self.dir.clone();
        let lock = dir.join(format!("{id}.lock"));
        let run = move || {
            std::fs::create_dir_all(&dir)?;
            // Released when dropped, or when the process ends.
            let _held = crate::lock::exclusive(&lock)?;
            f(&path)
        };
        tokio::task::spawn_blocking(run)
            .await
            .map_err(|e| SessionError::Io(std::io::Error::other(e)))?
    }
}

/// Opens session file `path` itself: never a file a symbolic link there
/// points at (a link planted in the folder would make every write land on
/// its target), never waiting on a FIFO.
fn open_own(path: &Path, options: &mut OpenOptions) -> std::io::Result<File> {
    crate::whole::open_own(path, options, "a session file")
}

/// The items of the session file at `path` (none when there is no file),
/// and the length of its complete lines (a last line without its end, left
/// by a crash, is not one of them).
fn read(path: &Path, id: &str) -> Result<(Vec<SessionItem>, u64), SessionError> {
    let mut text = Vec::new();
    match open_own(path, OpenOptions::new().read(true)) {
        Ok(mut file) => file.read_to_end(&mut text)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e.into()),
    };
    let complete = text
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let mut items: Vec<SessionItem> = Vec::new();
    for (line, bytes) in text[..complete].split(|&b| b == b'\n').enumerate() {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let item: SessionItem =
            serde_json::from_slice(bytes).map_err(|e| SessionError::Corrupt {
                session: id.to_owned(),
                reason: format!("line {}: {e}", line + 1),
            })?;
        let expected = items.last().map_or(1, |last| last.seq + 1);
        if item.seq != expected {
            return Err(SessionError::Corrupt {
                session: id.to_owned(),
                reason: format!(
                    "line {}: item {} where {expected} was due",
                    line + 1,
                    item.seq
                ),
            });
        }
        items.push(item);
    }
    Ok((items, complete as u64))
}

/// The session's version, read from its last complete line alone, and the
/// length of its complete lines: what a write needs, at the cost of one
/// line however long the session.
fn tail(path: &Path, id: &str) -> Result<(u64, u64), SessionError> {
    #[derive(serde::Deserialize)]
    struct Seq {
        seq: u64,
    }
    let mut file = match open_own(path, OpenOptions::new().read(true)) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, 0)),
        Err(e) => return Err(e.into()),
    };
    let len = file.metadata()?.len();
    // Read backwards, a block at a time, until the line ends before the
    // last complete line and after it are both found.
    const BLOCK: u64 = 64 * 1024;
    let mut buffer: Vec<u8> = Vec::new();
    let mut start = len;
    loop {
        let ends: Vec<usize> = buffer
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(at, _)| at)
            .collect();
        // The end of the last complete line, and the one before it (or the
        // start of the file).
        let last_end = ends.last().copied();
        let before = ends.len().checked_sub(2).map(|i| ends[i]);
        match (last_end, before) {
            (Some(end), Some(before)) => {
                let line = &buffer[before + 1..end];
                let seq: Seq = serde_json::from_slice(line).map_err(|e| corrupt_tail(id, e))?;
                return Ok((seq.seq, start + end as u64 + 1));
            }
            (Some(end), None) if start == 0 => {
                let seq: Seq =
                    serde_json::from_slice(&buffer[..end]).map_err(|e| corrupt_tail(id, e))?;
                return Ok((seq.seq, end as u64 + 1));
            }
            (None, _) if start == 0 => return Ok((0, 0)),
            _ => {}
        }
        let from = start.saturating_sub(BLOCK);
        let mut block = vec![0u8; (start - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut block)?;
        block.extend_from_slice(&buffer);
        buffer = block;
        start = from;
    }
}

fn corrupt_tail(id: &str, e: serde_json::Error) -> SessionError {
    SessionError::Corrupt {
        session: id.to_owned(),
        reason: format!("its last line: {e}"),
    }
}

/// Appends `items` to `path` after its first `complete` bytes (a torn last
/// line beyond them is cut off first), and syncs them.
fn append_lines(path: &Path, complete: u64, items: &[SessionItem]) -> Result<(), SessionError> {
    let bytes = lines(items)?;
    let mut file = open_own(
        path,
        OpenOptions::new().create(true).truncate(false).write(true),
    )?;
    if file.metadata()?.len() != complete {
        file.set_len(complete)?;
    }
    file.seek(SeekFrom::Start(complete))?;
    file.write_all(&bytes)?;
    file.sync_data()?;
    Ok(())
}

/// The file of session `path`'s title and agent.
fn meta_path(path: &Path) -> PathBuf {
    path.with_extension("meta.json")
}

/// The most bytes of a session's title file read: a title and an agent's
/// name are short.
const MAX_META_BYTES: u64 = 1024 * 1024;

/// The title and agent kept beside session `path` (none when there is no
/// such file, or it cannot be read, is no file or is over
/// [`MAX_META_BYTES`]: they are for people).
fn read_meta(path: &Path) -> SessionMeta {
    let mut read = OpenOptions::new();
    read.read(true);
    crate::whole::open_own(&meta_path(path), &mut read, "a session's title file")
        .and_then(|file| crate::whole::read_limited(file, MAX_META_BYTES))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Writes `items` to `path` whole: beside it, then renamed into place.
fn write(path: &Path, items: &[SessionItem]) -> Result<(), SessionError> {
    Ok(crate::whole::write(path, &lines(items)?)?)
}

/// `items` as the file's lines.
fn lines(items: &[SessionItem]) -> Result<Vec<u8>, SessionError> {
    let mut bytes = Vec::new();
    for item in items {
        serde_json::to_writer(&mut bytes, item).map_err(std::io::Error::from)?;
        bytes.push(b'\n');
    }
    Ok(bytes)
}

fn version(items: &[SessionItem]) -> u64 {
    items.last().map_or(0, |item| item.seq)
}

fn stale(id: &str, expected: u64, found: u64) -> Result<(), SessionError> {
    match found == expected {
        true => Ok(()),
        false => Err(SessionError::Stale {
            session: id.to_owned(),
            expected,
            found,
        }),
    }
}

#[async_trait::async_trait]
impl SessionStore for FileSessionStore {
    async fn load(&self, id: &str, last: Option<usize>) -> Result<Loaded, SessionError> {
        let name = id.to_owned();
        self.locked(id, move |path| {
            if last == Some(0) {
                // The version alone: one line read.
                let (version, _) = tail(path, &name)?;
                return Ok(Loaded {
                    items: Vec::new(),
                    version,
                });
            }
            let (mut items, _) = read(path, &name)?;
            let version = version(&items);
            if let Some(last) = last {
                items.drain(..items.len().saturating_sub(last));
            }
            Ok(Loaded { items, version })
        })
        .await
    }

    async fn append(
        &self,
        id: &str,
        expected: u64,
        messages: &[Message],
    ) -> Result<u64, SessionError> {
        let name = id.to_owned();
        let messages = messages.to_vec();
        self.locked(id, move |path| {
            let (found, complete) = tail(path, &name)?;
            stale(&name, expected, found)?;
            let items: Vec<SessionItem> = messages
                .into_iter()
                .zip(found + 1..)
                .map(|(message, seq)| SessionItem { seq, message })
                .collect();
            let version = items.last().map_or(found, |item| item.seq);
            append_lines(path, complete, &items)?;
            Ok(version)
        })
        .await
    }

    async fn pop(&self, id: &str, expected: u64) -> Result<Option<SessionItem>, SessionError> {
        let name = id.to_owned();
        self.locked(id, move |path| {
            let (mut items, _) = read(path, &name)?;
            stale(&name, expected, version(&items))?;
            let popped = items.pop();
            if popped.is_some() {
                write(path, &items)?;
            }
            Ok(popped)
        })
        .await
    }

    async fn clear(&self, id: &str) -> Result<(), SessionError> {
        self.locked(id, |path| {
            for file in [path.to_owned(), meta_path(path)] {
                match std::fs::remove_file(file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                    _ => {}
                }
            }
            Ok(())
        })
        .await
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, SessionError> {
        let dir = self.dir.clone();
        let list = move || -> Result<Vec<SessionInfo>, SessionError> {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(e.into()),
            };
            // A session as its file (`<id>.jsonl`, or the title file of one
            // described before its first item) shows it: the file's birth
            // time, where the file system keeps it, and its last write.
            let info = |id: &str, entry: &std::fs::DirEntry, version, error| {
                let meta = entry.metadata().ok();
                SessionInfo {
                    id: id.to_owned(),
                    version,
                    meta: read_meta(&dir.join(format!("{id}.jsonl"))),
                    created: meta.as_ref().and_then(|m| m.created().ok()),
                    updated: meta.as_ref().and_then(|m| m.modified().ok()),
                    error,
                }
            };
            let mut sessions = Vec::new();
            let mut described = Vec::new();
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                if let Some(id) = name.strip_suffix(".meta.json")
                    && valid_id(id)
                    && entry.file_type().is_ok_and(|t| t.is_file())
                {
                    described.push((id.to_owned(), entry));
                    continue;
                }
                let Some(id) = name.strip_suffix(".jsonl") else {
                    continue;
                };
                if !valid_id(id) {
                    continue;
                }
                // A damaged session is listed, saying why: the others are
                // not lost with it.
                let (version, error) = match tail(&entry.path(), id) {
                    Ok((version, _)) => (version, None),
                    Err(SessionError::Corrupt { reason, .. }) => (0, Some(reason)),
                    Err(SessionError::Io(e)) => (0, Some(e.to_string())),
                    Err(e) => (0, Some(e.to_string())),
                };
                sessions.push(info(id, &entry, version, error));
            }
            sessions.sort_by(|a, b| a.id.cmp(&b.id));
            let with_items = sessions.len();
            for (id, entry) in &described {
                if sessions[..with_items]
                    .binary_search_by(|s| s.id.cmp(id))
                    .is_err()
                {
                    sessions.push(info(id, entry, 0, None));
                }
            }
            sessions.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(sessions)
        };
        tokio::task::spawn_blocking(list)
            .await
            .map_err(|e| SessionError::Io(std::io::Error::other(e)))?
    }

    async fn describe(&self, id: &str, meta: &SessionMeta) -> Result<(), SessionError> {
        let meta = meta.clone();
        self.locked(id, move |path| {
            let mut kept = read_meta(path);
            if meta.title.is_some() {
                kept.title = meta.title;
            }
            if meta.agent.is_some() {
                kept.agent = meta.agent;
            }
            let bytes = serde_json::to_vec(&kept).map_err(std::io::Error::from)?;
            Ok(crate::whole::write(&meta_path(path), &bytes)?)
        })
        .await
    }

    async fn fork(&self, id: &str, at: u64, new_id: &str) -> Result<(), SessionError> {
        let name = id.to_owned();
        let new_name = new_id.to_owned();
        let items = self
            .locked(id, move |path| {
                // A session described before its first item is one, empty
                // (its title file, never a link in its place).
                if !path.is_file() {
                    let described = std::fs::symlink_metadata(meta_path(path));
                    return match described.is_ok_and(|m| m.is_file()) {
                        true => Ok(Vec::new()),
                        false => Err(SessionError::NotFound(name)),
                    };
                }
                let (mut items, _) = read(path, &name)?;
                items.retain(|item| item.seq <= at);
                Ok(items)
            })
            .await?;
        self.locked(new_id, move |target| {
            if target.exists() || meta_path(target).exists() {
                return Err(SessionError::Exists(new_name));
            }
            write(target, &items)
        })
        .await
    }
}
