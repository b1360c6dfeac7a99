//! [`FileSessionStore`]: one JSON-lines file per session in a folder.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Loaded, SessionError, SessionInfo, SessionItem, SessionStore, valid_id};
use crate::llm::Message;

/// Sessions as files: `<id>.jsonl` in a folder, one item a line
/// (`{"seq":1,"message":{…}}`).
///
/// Every write replaces the file whole (written beside it, then renamed):
/// a crash leaves the session as it was before the write or after it, never
/// half-written. Writers to one session, in one process or several, take
/// turns on `<id>.lock` (a `flock` lock on Unix; elsewhere writers in
/// several processes are not kept apart), so the version a write expects is
/// checked against the file as it is.
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
        match valid_id(id) {
            true => Ok(self.dir.join(format!("{id}.jsonl"))),
            false => Err(SessionError::InvalidId(id.to_owned())),
        }
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
            let lock = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock)?;
            // Released when the file is closed, or the process ends.
            #[cfg(unix)]
            rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
                .map_err(std::io::Error::from)?;
            let result = f(&path);
            drop(lock);
            result
        };
        tokio::task::spawn_blocking(run)
            .await
            .map_err(|e| SessionError::Io(std::io::Error::other(e)))?
    }
}

/// The items of the session file at `path` (none when there is no file).
fn read(path: &Path, id: &str) -> Result<Vec<SessionItem>, SessionError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut items: Vec<SessionItem> = Vec::new();
    for (line, text) in text.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let item: SessionItem = serde_json::from_str(text).map_err(|e| SessionError::Corrupt {
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
    Ok(items)
}

/// Writes `items` to `path` whole: beside it, then renamed into place.
fn write(path: &Path, items: &[SessionItem]) -> Result<(), SessionError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    {
        let mut out = std::io::BufWriter::new(file.as_file_mut());
        for item in items {
            serde_json::to_writer(&mut out, item).map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
    }
    file.as_file().sync_data()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn version(items: &[SessionItem]) -> u64 {
    items.last().map_or(0, |item| item.seq)
}

fn stale(id: &str, expected: u64, items: &[SessionItem]) -> Result<(), SessionError> {
    match version(items) {
        found if found == expected => Ok(()),
        found => Err(SessionError::Stale {
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
            let mut items = read(path, &name)?;
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
            let mut items = read(path, &name)?;
            stale(&name, expected, &items)?;
            let mut seq = version(&items);
            for message in messages {
                seq += 1;
                items.push(SessionItem { seq, message });
            }
            write(path, &items)?;
            Ok(seq)
        })
        .await
    }

    async fn pop(&self, id: &str, expected: u64) -> Result<Option<SessionItem>, SessionError> {
        let name = id.to_owned();
        self.locked(id, move |path| {
            let mut items = read(path, &name)?;
            stale(&name, expected, &items)?;
            let popped = items.pop();
            if popped.is_some() {
                write(path, &items)?;
            }
            Ok(popped)
        })
        .await
    }

    async fn clear(&self, id: &str) -> Result<(), SessionError> {
        self.locked(id, |path| match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
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
            let mut sessions = Vec::new();
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
                    continue;
                };
                if !valid_id(id) {
                    continue;
                }
                let items = read(&entry.path(), id)?;
                let updated = entry.metadata().and_then(|m| m.modified()).ok();
                sessions.push(SessionInfo {
                    id: id.to_owned(),
                    version: version(&items),
                    updated,
                });
            }
            sessions.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(sessions)
        };
        tokio::task::spawn_blocking(list)
            .await
            .map_err(|e| SessionError::Io(std::io::Error::other(e)))?
    }

    async fn fork(&self, id: &str, at: u64, new_id: &str) -> Result<(), SessionError> {
        let target = self.file(new_id)?;
        let name = id.to_owned();
        let new_name = new_id.to_owned();
        let items = self
            .locked(id, move |path| {
                if !path.is_file() {
                    return Err(SessionError::NotFound(name));
                }
                let mut items = read(path, &name)?;
                items.retain(|item| item.seq <= at);
                Ok(items)
            })
            .await?;
        self.locked(new_id, move |_| {
            if target.exists() {
                return Err(SessionError::Exists(new_name));
            }
            write(&target, &items)
        })
        .await
    }
}
