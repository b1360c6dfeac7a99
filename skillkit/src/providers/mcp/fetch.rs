//! Reading a skill's files from the server (`resources/read`), each checked
//! against the digest its manifest lists and kept by that digest; on
//! activation, every file of the manifest, written into a folder of the
//! skill's own (see [`Folder`]).

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use base64::Engine;
use rmcp::model::{ReadResourceRequestParams, ResourceContents, SkillResource};
use rmcp::service::{Peer, RoleClient};

use super::connection::Connection;
use crate::skill::{BodyError, BodySource};

/// A server: the connection to it, the files read from it, and the folder
/// its activated skills' files are written into.
#[derive(Debug)]
pub(super) struct Server {
    pub(super) connection: Connection,
    pub(super) files: Files,
    pub(super) folders: Folders,
}

/// The folder the provider owns (a temporary one, removed with the
/// provider), holding one folder per skill manifest, named by its digest.
#[derive(Debug, Default)]
pub(super) struct Folders(OnceLock<Option<tempfile::TempDir>>);

impl Folders {
    /// The provider's folder, made on first use; `None` when it cannot be
    /// made (the skills are then served without their files).
    pub(super) fn root(&self) -> Option<&Path> {
        self.0
            .get_or_init(|| {
                tempfile::Builder::new()
                    .prefix("skillkit-mcp-")
                    .tempdir()
                    .map_err(
                        |e| tracing::warn!(error = %e, "no folder for the files of MCP skills"),
                    )
                    .ok()
            })
            .as_ref()
            .map(tempfile::TempDir::path)
    }
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

/// A skill's `SKILL.md` on the server: its body, fetched on activation
/// with the other files of its manifest.
#[derive(Debug)]
pub(super) struct SkillFile {
    /// Weak: the provider's listing holds the skills that hold this.
    server: Weak<Server>,
    uri: String,
    /// The manifest's entry (digest and size); `None` for a skill the
    /// server lists as `"dynamic"` or an older server's resource.
    entry: Option<SkillResource>,
    /// Where the manifest's files go, when there is a manifest.
    folder: Option<Folder>,
}

impl SkillFile {
    pub(super) fn new(
        server: &Arc<Server>,
        uri: String,
        entry: Option<SkillResource>,
        folder: Option<Folder>,
    ) -> Self {
        SkillFile {
            server: Arc::downgrade(server),
            uri,
            entry,
            folder,
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
            .ok_or_else(|| error("the McpSkills provider that listed it was dropped".to_owned()))?;
        let (Some(entry), Some(folder)) = (&self.entry, &self.folder) else {
            let bytes = server
                .checked(&self.uri, self.entry.as_ref())
                .await
                .map_err(error)?;
            return skillkit_parser::skill::body_of(&bytes).map_err(|d| error(d.message));
        };
        if let Some(why) = &folder.refused {
            return Err(error(format!("{why}; the skill is refused")));
        }
        let skill_md = folder.dir.join("SKILL.md");
        // Written whole or not at all: a folder that is there is complete.
        let bytes = match tokio::fs::read(&skill_md).await {
            Ok(bytes) => Arc::from(bytes),
            Err(_) => {
                let bytes = server
                    .checked(&self.uri, Some(entry))
                    .await
                    .map_err(error)?;
                let mut files = vec![(PathBuf::from("SKILL.md"), bytes.clone())];
                for (path, file) in &folder.files {
                    let read = server
                        .checked(&file.uri, Some(file))
                        .await
                        .map_err(|why| error(format!("{why}; nothing of the skill is served")))?;
                    files.push((path.clone(), read));
                }
                let dir = folder.dir.clone();
                tokio::task::spawn_blocking(move || write_whole(&dir, &files))
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|written| written)
                    .map_err(|e| error(format!("its files cannot be written ({e})")))?;
                bytes
            }
        };
        skillkit_parser::skill::body_of(&bytes).map_err(|d| error(d.message))
    }
}

impl Server {
    /// The bytes of the file at `uri`: kept ones by the digest `entry`
    /// lists, else read and checked against `entry` (and then kept).
    async fn checked(&self, uri: &str, entry: Option<&SkillResource>) -> Result<Arc<[u8]>, String> {
        if let Some(kept) = entry.and_then(|entry| self.files.get(&entry.digest)) {
            return Ok(kept);
        }
        let peer = self.connection.peer().await.map_err(|e| e.to_string())?;
        let bytes = read(&peer, uri).await?;
        if let Some(entry) = entry {
            entry.verify(&bytes).map_err(|e| {
                format!("{e}, so the file is refused (it may have changed since the listing)")
            })?;
            self.files.put(&entry.digest, Arc::clone(&bytes));
        }
        Ok(bytes)
    }
}

/// The most files of one skill written into its folder (as many as
/// `activate_skill` lists).
const MAX_FILES: usize = 100;
/// The largest file of a skill written (as the server's `read_skill_file`).
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// The most bytes of one skill's files written.
const MAX_TOTAL_BYTES: u64 = 32 * 1024 * 1024;

/// The folder of one skill's files: `<provider folder>/<digest of the
/// server, the skill and its manifest>`, so a changed manifest is another
/// folder and an unchanged one is read from disk. It is written whole (a
/// hidden folder beside it, renamed into place), so a half-written folder
/// is never used; the manifest's paths are checked first by the crate's
/// rule for a skill's files (no `..`, nothing absolute, nothing hidden).
#[derive(Debug)]
pub(super) struct Folder {
    /// Where the files are (`SKILL.md` in it once fetched).
    pub(super) dir: PathBuf,
    /// The files other than `SKILL.md`: path inside `dir`, manifest entry.
    files: Vec<(PathBuf, SkillResource)>,
    /// Why the manifest is refused, when it is (said on activation).
    refused: Option<String>,
}

impl Folder {
    /// The folder under `root` of the skill at `uri` (its `SKILL.md`) of
    /// the server at `source`, whose manifest is `manifest`; `None` when
    /// `uri` is not a `…/SKILL.md` whose folder the other files can be in.
    pub(super) fn plan(
        root: &Path,
        source: &str,
        uri: &str,
        manifest: &[SkillResource],
    ) -> Option<Folder> {
        let prefix = uri.strip_suffix("SKILL.md")?;
        let mut key = format!("{source}\n{uri}\n");
        for file in manifest {
            key.push_str(&format!("{} {} {}\n", file.uri, file.digest, file.size));
        }
        let digest = rmcp::model::sha256_digest(key.as_bytes());
        let name = digest.strip_prefix("sha256:").unwrap_or(&digest);
        let mut folder = Folder {
            dir: root.join(name),
            files: Vec::new(),
            refused: None,
        };
        let others: Vec<&SkillResource> = manifest.iter().filter(|f| f.uri != uri).collect();
        // The sizes are the server's word: summed without overflow.
        let total = manifest
            .iter()
            .fold(0u64, |total, f| total.saturating_add(f.size));
        folder.refused = if others.len() + 1 > MAX_FILES {
            Some(format!(
                "its manifest lists {} files, more than the {MAX_FILES} a skill may have",
                others.len() + 1
            ))
        } else if let Some(big) = manifest.iter().find(|f| f.size > MAX_FILE_BYTES) {
            Some(format!(
                "its file {} is {} bytes, more than the {MAX_FILE_BYTES} a file may have",
                big.uri, big.size
            ))
        } else if total > MAX_TOTAL_BYTES {
            Some(format!(
                "its files are {total} bytes, more than the {MAX_TOTAL_BYTES} a skill may have"
            ))
        } else {
            others
                .iter()
                .find_map(|file| match relative(prefix, &file.uri) {
                    Ok(path) => {
                        folder.files.push((path, (*file).clone()));
                        None
                    }
                    Err(why) => Some(format!("its manifest lists {}: {why}", file.uri)),
                })
        };
        Some(folder)
    }
}

/// The path inside the skill's folder of the file at `uri`, the folder's
/// URI being `prefix`.
fn relative(prefix: &str, uri: &str) -> Result<PathBuf, String> {
    let path = uri
        .strip_prefix(prefix)
        .ok_or_else(|| "the file is not in the skill's folder".to_owned())?;
    let path = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| "its path is not UTF-8".to_owned())?;
    relative_path(&path)
}

/// Writes `files` (paths inside the folder, bytes) as the folder `dir`:
/// into a hidden folder beside it first, renamed into place once whole.
fn write_whole(dir: &Path, files: &[(PathBuf, Arc<[u8]>)]) -> Result<(), String> {
    let parent = dir.parent().ok_or("the folder has no parent")?;
    let partial = tempfile::Builder::new()
        .prefix(".partial-")
        .tempdir_in(parent)
        .map_err(|e| e.to_string())?;
    for (path, bytes) in files {
        let target = partial.path().join(path);
        if let Some(folder) = target.parent() {
            std::fs::create_dir_all(folder).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        std::fs::write(&target, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    match std::fs::rename(partial.path(), dir) {
        Ok(()) => Ok(()),
        // Another activation wrote the same folder first: the same bytes.
        Err(_) if dir.join("SKILL.md").is_file() => Ok(()),
        Err(e) => Err(e.to_string()),
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

/// `path` (a file of a skill that is not on disk yet, such as one an MCP
/// server lists) as a path relative to the skill's folder, if it stays
/// inside the folder and is not hidden: every component a plain name not
/// starting with `.` (so no `..`, no `.`, nothing absolute); else what is
/// wrong. The rule the tool path keeps for files that exist.
fn relative_path(path: &str) -> Result<PathBuf, String> {
    if path.is_empty() {
        return Err("the path is empty".to_owned());
    }
    let mut relative = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(name) if !name.to_string_lossy().starts_with('.') => {
                relative.push(name)
            }
            Component::Normal(_) | Component::CurDir => {
                return Err(format!(
                    "`{path}` is or leads to a hidden file or folder, which is not used"
                ));
            }
            Component::ParentDir => {
                return Err(format!(
                    "`{path}` leads outside the skill's folder; only files inside it can be used"
                ));
            }
            Component::Prefix(_) | Component::RootDir => {
                return Err(format!(
                    "`{path}` is absolute; give a path relative to the skill's folder"
                ));
            }
        }
    }
    Ok(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(paths: &[&str]) -> Vec<SkillResource> {
        let mut files = vec![SkillResource::from_bytes("skill://k/s/SKILL.md", b"x")];
        files.extend(
            paths
                .iter()
                .map(|path| SkillResource::from_bytes(format!("skill://k/s/{path}"), b"y")),
        );
        files
    }

    fn refused(paths: &[&str]) -> Option<String> {
        Folder::plan(
            Path::new("/cache"),
            "srv",
            "skill://k/s/SKILL.md",
            &manifest(paths),
        )
        .expect("a SKILL.md's folder")
        .refused
    }

    #[test]
    fn manifest_paths_stay_inside_the_folder_and_visible() {
        assert_eq!(refused(&["scripts/run.sh", "a%20b.md"]), None);
        for (path, why) in [
            ("../x", "leads outside"),
            ("%2E%2E/x", "leads outside"),
            ("scripts/../../x", "leads outside"),
            (".env", "hidden"),
            ("a/.git/config", "hidden"),
            ("./x", "hidden"),
        ] {
            let said = refused(&[path]).unwrap_or_else(|| panic!("{path} accepted"));
            assert!(said.contains(path) && said.contains(why), "{path}: {said}");
        }
        let outside = Folder::plan(
            Path::new("/cache"),
            "srv",
            "skill://k/s/SKILL.md",
            &[SkillResource::from_bytes("skill://k/other/x", b"y")],
        );
        assert!(
            outside
                .unwrap()
                .refused
                .unwrap()
                .contains("not in the skill's folder")
        );
    }

    #[test]
    fn a_manifest_over_the_limits_is_refused() {
        let many: Vec<String> = (0..MAX_FILES).map(|i| format!("f{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(refused(&many).unwrap().contains("files, more than"));
        let mut big = manifest(&[]);
        big.push(SkillResource::new(
            "skill://k/s/big",
            "sha256:00",
            MAX_FILE_BYTES + 1,
        ));
        let plan = Folder::plan(Path::new("/c"), "srv", "skill://k/s/SKILL.md", &big).unwrap();
        assert!(plan.refused.unwrap().contains("skill://k/s/big is"));
        // Sizes no file has, whose sum overflows: refused, not a panic.
        let mut huge = manifest(&[]);
        for name in ["a", "b"] {
            let uri = format!("skill://k/s/{name}");
            huge.push(SkillResource::new(uri, "sha256:00", u64::MAX / 2 + 1));
        }
        let plan = Folder::plan(Path::new("/c"), "srv", "skill://k/s/SKILL.md", &huge).unwrap();
        assert!(plan.refused.unwrap().contains("skill://k/s/a is"));
    }

    #[test]
    fn the_folder_is_named_by_the_server_the_skill_and_its_manifest() {
        let dir = |source: &str, paths: &[&str]| {
            Folder::plan(
                Path::new("/c"),
                source,
                "skill://k/s/SKILL.md",
                &manifest(paths),
            )
            .unwrap()
            .dir
        };
        assert_eq!(dir("a", &["x"]), dir("a", &["x"]));
        assert_ne!(dir("a", &["x"]), dir("b", &["x"]));
        assert_ne!(dir("a", &["x"]), dir("a", &["y"]));
    }
}
