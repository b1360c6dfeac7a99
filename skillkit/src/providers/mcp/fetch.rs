//! Reading a skill's files from the server (`resources/read`), each checked
//! against the digest its manifest lists and kept by that digest.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use base64::Engine;
use rmcp::model::{ReadResourceRequestParams, ResourceContents, SkillResource};
use rmcp::service::{Peer, RoleClient};

use super::connection::Connection;
use crate::skill::{BodyError, BodySource};

/// A server: the connection to it and the files read from it.
#[derive(Debug)]
pub(super) struct Server {
    pub(super) connection: Connection,
    pub(super) files: Files,
}

/// File bytes by digest: what was read and checked, for as long as a
/// listing still names the digest.
#[derive(Debug, Default)]
pub(super) struct Files(Mutex<HashMap<String, Arc<[u8]>>>);

impl Files {
    fn get(&self, digest: &str) -> Option<Arc<[u8]>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(digest)
            .cloned()
    }

    fn put(&self, digest: &str, bytes: Arc<[u8]>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(digest.to_owned(), bytes);
    }

    /// Forgets the files of digests no listing names any more.
    pub(super) fn keep(&self, digests: &HashSet<String>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|digest, _| digests.contains(digest));
    }
}

/// A skill's `SKILL.md` on the server: its body, fetched on activation.
#[derive(Debug)]
pub(super) struct SkillFile {
    /// Weak: the provider's listing holds the skills that hold this.
    server: Weak<Server>,
    uri: String,
    /// The manifest's entry (digest and size); `None` for a skill the
    /// server lists as `"dynamic"` or an older server's resource.
    entry: Option<SkillResource>,
}

impl SkillFile {
    pub(super) fn new(server: &Arc<Server>, uri: String, entry: Option<SkillResource>) -> Self {
        SkillFile {
            server: Arc::downgrade(server),
            uri,
            entry,
        }
    }
}

#[async_trait::async_trait]
impl BodySource for SkillFile {
    fn locator(&self) -> &str {
        &self.uri
    }

    async fn fetch(&self) -> Result<String, BodyError> {
        let error = |why: String| BodyError::remote(&self.uri, why);
        let server = self
            .server
            .upgrade()
            .ok_or_else(|| error("the Mcp provider that listed it was dropped".to_owned()))?;
        let kept = self
            .entry
            .as_ref()
            .and_then(|entry| server.files.get(&entry.digest));
        let bytes = match kept {
            Some(bytes) => bytes,
            None => {
                let peer = server
                    .connection
                    .peer()
                    .await
                    .map_err(|e| error(e.to_string()))?;
                let bytes = read(&peer, &self.uri).await.map_err(error)?;
                if let Some(entry) = &self.entry {
                    entry.verify(&bytes).map_err(|e| {
                        error(format!(
                            "{e}, so the file is refused (it may have changed since the listing)"
                        ))
                    })?;
                    server.files.put(&entry.digest, Arc::clone(&bytes));
                }
                bytes
            }
        };
        skillkit_parser::skill::body_of(&bytes).map_err(|d| error(d.message))
    }
}

/// How long a `resources/read` may take before the file is given up on (a
/// server that never answers must not hold an activation forever).
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The bytes of the resource at `uri` (text as UTF-8, a blob decoded).
pub(super) async fn read(peer: &Peer<RoleClient>, uri: &str) -> Result<Arc<[u8]>, String> {
    let request = peer.read_resource(ReadResourceRequestParams::new(uri));
    let result = tokio::time::timeout(READ_TIMEOUT, request)
        .await
        .map_err(|_| format!("resources/read got no answer within {READ_TIMEOUT:?}"))?
        .map_err(|e| format!("resources/read failed: {e}"))?;
    let mut contents = result.contents.into_iter();
    let content = contents
        .find(|content| content_uri(content) == uri)
        .ok_or_else(|| "the server answered resources/read without its contents".to_owned())?;
    match content {
        ResourceContents::TextResourceContents { text, .. } => Ok(Arc::from(text.into_bytes())),
        ResourceContents::BlobResourceContents { blob, .. } => {
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map(Arc::from)
                .map_err(|e| format!("the server sent a blob that is not base64 ({e})"))
        }
        _ => Err("the server answered resources/read with contents of an unknown kind".to_owned()),
    }
}

fn content_uri(content: &ResourceContents) -> &str {
    match content {
        ResourceContents::TextResourceContents { uri, .. }
        | ResourceContents::BlobResourceContents { uri, .. } => uri,
        _ => "",
    }
}
