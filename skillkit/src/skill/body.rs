//! [`Body`]: a skill's markdown prompt, held in memory or left in its file
//! until it is needed (progressive disclosure).

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use skillkit_parser::Diagnostic;

use super::memo;

/// A skill's markdown prompt.
///
/// A body is either text in memory (skills put in [`Memory`](crate::Memory),
/// compiled in by `#[derive(Kit)]`, built by hand) or a reference to the
/// `SKILL.md` it lives in. A catalog query needs only names and descriptions,
/// so the file providers ([`Local`](crate::Local) and the GitHub provider)
/// read a file only up to the end of its frontmatter and leave the body in
/// the file: [`Body::read`] reads it when the skill is activated or shown.
///
/// Which calls read the disk: [`Body::read`] (and so [`Skill::render`](crate::Skill::render))
/// and [`Body::read_head`] on a body from a file, every time, so an edited
/// body is never served stale. [`Body::read`] checks the file's stamp first
/// (size, inode, mtime, ctime) and answers with the text it read last time
/// while that stamp is unchanged (the rule [`Local`](crate::Local)'s cache
/// follows, racy stamps included); a bounded number of recent bodies are
/// kept so. Nothing else reads the disk; [`Body::as_text`] answers from
/// memory only.
///
/// ```
/// use skillkit::skill::Body;
///
/// let body = Body::from("Read $ARGUMENTS.");
/// assert_eq!(body.read()?, "Read $ARGUMENTS.");
/// assert_eq!(body.as_text(), Some("Read $ARGUMENTS."));
/// # Ok::<(), skillkit::skill::BodyError>(())
/// ```
#[derive(Clone, Default)]
pub struct Body(Repr);

#[derive(Clone)]
enum Repr {
    Text(Cow<'static, str>),
    File(Arc<Path>),
    Remote(Arc<Remote>),
}

/// A body kept by a server, fetched by [`Body::load`] and then held.
struct Remote {
    source: Arc<dyn BodySource>,
    text: OnceLock<Arc<str>>,
}

/// Where a body that lives on a server comes from: the
/// [`McpSkills`](crate::McpSkills) provider's skills fetch their `SKILL.md` through
/// `resources/read`, checked against its digest, only when the skill is
/// activated. Implement it for a provider of your own whose bodies are
/// fetched over the network.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::sync::Arc;
/// use skillkit::skill::{Body, BodyError, BodySource};
///
/// #[derive(Debug)]
/// struct Remote;
///
/// #[skillkit::async_trait]
/// impl BodySource for Remote {
///     fn locator(&self) -> &str {
///         "https://example.org/skills/greet/SKILL.md"
///     }
///     async fn fetch(&self) -> Result<String, BodyError> {
///         Ok("Say hello.".to_owned())
///     }
/// }
///
/// let body = Body::remote(Arc::new(Remote));
/// assert!(body.read().is_err()); // not fetched yet
/// body.load().await?;
/// assert_eq!(body.read()?, "Say hello.");
/// # Ok::<(), BodyError>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait BodySource: Send + Sync + fmt::Debug {
    /// Where the body is, as errors and `Debug` show it (a URI).
    fn locator(&self) -> &str;

    /// The body's text (what follows the frontmatter). Called by
    /// [`Body::load`] until it succeeds once; the text is then kept.
    async fn fetch(&self) -> Result<String, BodyError>;
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Text(Cow::Borrowed(""))
    }
}

impl Body {
    /// A body of static text, without a copy (what `#[derive(Kit)]` embeds).
    ///
    /// ```
    /// static BODY: skillkit::skill::Body = skillkit::skill::Body::from_static("Hello");
    /// assert_eq!(BODY.as_text(), Some("Hello"));
    /// ```
    pub const fn from_static(text: &'static str) -> Body {
        Body(Repr::Text(Cow::Borrowed(text)))
    }

    /// The body of the `SKILL.md` at `path`, read when asked for: everything
    /// after the frontmatter, CRLF turned into LF.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("SKILL.md");
    /// std::fs::write(&path, "---\nname: a\ndescription: d\n---\nRead it.\n").unwrap();
    /// let body = skillkit::skill::Body::from_file(&path);
    /// assert_eq!(body.as_text(), None); // nothing read yet
    /// assert_eq!(body.read()?, "Read it.\n");
    /// # Ok::<(), skillkit::skill::BodyError>(())
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Body {
        Body(Repr::File(Arc::from(path.as_ref())))
    }

    /// A body kept by `source` (a server), fetched by [`Body::load`] when the
    /// skill is activated; see [`BodySource`].
    pub fn remote(source: Arc<dyn BodySource>) -> Body {
        Body(Repr::Remote(Arc::new(Remote {
            source,
            text: OnceLock::new(),
        })))
    }

    /// Fetches a body kept by a server ([`Body::remote`]) if it is not
    /// fetched yet, so [`read`](Body::read) can answer; a body in memory or
    /// in a file has nothing to fetch. Whoever activates a skill calls this
    /// first (an agent's `activate_skill` does).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let body = skillkit::skill::Body::from("Hello");
    /// body.load().await.unwrap();
    /// assert_eq!(body.read().unwrap(), "Hello");
    /// # });
    /// ```
    pub async fn load(&self) -> Result<(), BodyError> {
        if let Repr::Remote(remote) = &self.0
            && remote.text.get().is_none()
        {
            let text = remote.source.fetch().await?;
            let _ = remote.text.set(Arc::from(text));
        }
        Ok(())
    }

    /// The body of the `SKILL.md` at `path`, sharing the path with whoever
    /// else holds it (a provider's cache).
    pub(crate) fn from_shared(path: Arc<Path>) -> Body {
        Body(Repr::File(path))
    }

    /// The text, reading it from its file when the body lives in one. A file
    /// moved, deleted or broken since the catalog listed the skill is an
    /// error saying so.
    ///
    /// ```
    /// let body = skillkit::skill::Body::from_file("/no/such/SKILL.md");
    /// let err = body.read().unwrap_err();
    /// assert!(err.to_string().contains("query the catalog again"), "{err}");
    /// ```
    pub fn read(&self) -> Result<Cow<'_, str>, BodyError> {
        match &self.0 {
            Repr::Text(text) => Ok(Cow::Borrowed(text)),
            Repr::File(path) => read_file(path)
                .map(|text| Cow::Owned(String::from(&*text)))
                .map_err(|diagnostic| BodyError {
                    path: path.to_path_buf(),
                    diagnostic,
                }),
            Repr::Remote(remote) => match remote.text.get() {
                Some(text) => Ok(Cow::Borrowed(text)),
                None => Err(BodyError::remote(
                    remote.source.locator(),
                    "it is kept by a server and not fetched yet; call `Body::load` first",
                )),
            },
        }
    }

    /// The first `limit` bytes of the text (all of it when shorter; cut at
    /// a character boundary), reading a file no further than that: the
    /// lead of a long body, which is what the catalog's search index reads.
    /// Errors as [`Body::read`].
    ///
    /// ```
    /// let body = skillkit::skill::Body::from("Overview. The rest.");
    /// assert_eq!(body.read_head(9)?, "Overview.");
    /// assert_eq!(body.read_head(1000)?, "Overview. The rest.");
    /// # Ok::<(), skillkit::skill::BodyError>(())
    /// ```
    pub fn read_head(&self, limit: usize) -> Result<Cow<'_, str>, BodyError> {
        let head = |text: &str| -> usize {
            let mut end = text.len().min(limit);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            end
        };
        match &self.0 {
            Repr::File(path) => skillkit_parser::skill::read_body_head(path, limit)
                .map(Cow::Owned)
                .map_err(|diagnostic| BodyError {
                    path: path.to_path_buf(),
                    diagnostic,
                }),
            _ => Ok(match self.read()? {
                Cow::Borrowed(text) => Cow::Borrowed(&text[..head(text)]),
                Cow::Owned(mut text) => {
                    text.truncate(head(&text));
                    Cow::Owned(text)
                }
            }),
        }
    }

    /// The text when it is in memory; `None` for a body still in its file
    /// (this call never reads the disk).
    ///
    /// ```
    /// assert_eq!(skillkit::skill::Body::from("x").as_text(), Some("x"));
    /// assert_eq!(skillkit::skill::Body::from_file("SKILL.md").as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match &self.0 {
            Repr::Text(text) => Some(text),
            Repr::File(_) => None,
            Repr::Remote(remote) => remote.text.get().map(|text| &**text),
        }
    }

    /// The file the body is read from, when it lives in one.
    ///
    /// ```
    /// let body = skillkit::skill::Body::from_file("kit/a/SKILL.md");
    /// assert_eq!(body.file(), Some(std::path::Path::new("kit/a/SKILL.md")));
    /// ```
    pub fn file(&self) -> Option<&Path> {
        match &self.0 {
            Repr::Text(_) | Repr::Remote(_) => None,
            Repr::File(path) => Some(path),
        }
    }
}

/// The body of the `SKILL.md` at `path`: the text of an earlier read while
/// the file's stamp shows it unchanged ([`memo`]), else read now (and kept
/// when the stamp can prove that next time).
fn read_file(path: &Arc<Path>) -> Result<Arc<str>, Diagnostic> {
    if let Some(text) = memo::BODIES.get(path) {
        return Ok(text);
    }
    // Taken before the read: an edit after it gets a later mtime.
    let read_at = SystemTime::now();
    let (text, stamp) = skillkit_parser::skill::read_body_stamped(path)?;
    let text: Arc<str> = text.into();
    let proof = stamp.proof(read_at);
    memo::BODIES.keep(
        path,
        vec![(Arc::clone(path), proof)],
        Arc::clone(&text),
        text.len(),
    );
    Ok(text)
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Text(text) => fmt::Debug::fmt(text, f),
            Repr::File(path) => f.debug_tuple("File").field(path).finish(),
            Repr::Remote(remote) => f
                .debug_tuple("Remote")
                .field(&remote.source.locator())
                .finish(),
        }
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Body {
        Body::from_static(text)
    }
}

impl From<String> for Body {
    fn from(text: String) -> Body {
        Body(Repr::Text(Cow::Owned(text)))
    }
}

impl From<Cow<'static, str>> for Body {
    fn from(text: Cow<'static, str>) -> Body {
        Body(Repr::Text(text))
    }
}

/// A skill body that could not be read from its file: the file was moved,
/// deleted or broken after the catalog listed the skill.
///
/// ```
/// let err = skillkit::skill::Body::from_file("/gone/SKILL.md").read().unwrap_err();
/// assert_eq!(err.path(), std::path::Path::new("/gone/SKILL.md"));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "cannot read the body of skill file `{}`: {}; it changed after the catalog listed it, query the catalog again",
    path.display(),
    diagnostic.message
)]
pub struct BodyError {
    path: PathBuf,
    diagnostic: Diagnostic,
}

impl BodyError {
    /// A body kept at `locator` (a server's URI) that could not be fetched,
    /// saying why: for [`BodySource`] implementations.
    ///
    /// ```
    /// let err = skillkit::skill::BodyError::remote("skill://docs/pdf/SKILL.md", "the server is down");
    /// assert!(err.to_string().contains("skill://docs/pdf/SKILL.md"));
    /// assert!(err.to_string().contains("the server is down"));
    /// ```
    pub fn remote(locator: &str, why: impl Into<String>) -> BodyError {
        BodyError {
            path: PathBuf::from(locator),
            diagnostic: Diagnostic::error(0, 0, why).with_path(locator),
        }
    }

    /// The `SKILL.md` that could not be read.
    ///
    /// ```
    /// let err = skillkit::skill::Body::from_file("/gone/SKILL.md").read().unwrap_err();
    /// assert!(err.path().ends_with("SKILL.md"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What went wrong, with the line when the file no longer parses.
    ///
    /// ```
    /// let err = skillkit::skill::Body::from_file("/gone/SKILL.md").read().unwrap_err();
    /// assert!(err.diagnostic().message.contains("cannot read"));
    /// ```
    pub fn diagnostic(&self) -> &Diagnostic {
        &self.diagnostic
    }
}
