//! [`McpSkills`]: the skills an MCP server serves, as one kit.
//!
//! **Which servers.** A server that declares the skills extension
//! (`io.modelcontextprotocol/skills`) is read through it: `skills/list`
//! (every page) gives each skill's frontmatter, read with the same field and
//! naming rules as a file (`skillkit-parser`), and the manifest of its files
//! with their `sha256:` digests. An older server without the extension that
//! lists `skill://…/SKILL.md` resources is read from those.
//!
//! **Progressive disclosure, checked.** A query needs names and descriptions
//! only: a skill's `SKILL.md` is read through `resources/read` when it is
//! activated ([`Body::load`](crate::skill::Body::load)), and its bytes must
//! have the size and digest the manifest lists; a file that does not is an
//! error naming it, never served. The other files its manifest lists are
//! read and checked with it, and the whole written into a folder of the
//! skill's own (its [`location`](crate::Skill::location), known at listing;
//! under a temporary folder the provider owns, named by the digest of the
//! manifest, renamed into place only once complete; a path leading outside
//! it or hidden is refused, and so is a manifest over 100 files, 8 MiB a
//! file or 32 MiB in all), so `activate_skill` shows the skill's directory
//! and files as for a skill on disk. One bad file refuses the activation:
//! nothing of the skill is served. Files are kept by digest, so activating
//! an unchanged skill again reads nothing.
//!
//! **Revisions.** The provider speaks the newest revision the server
//! offers: 2026-07-28 through `server/discover` where the server has it
//! (the kit's `revision` metadata says which), else the `initialize`
//! handshake of the older ones.
//!
//! **Fresh.** The listing is kept until the server says it changed
//! (`notifications/resources/list_changed`, `resources/updated`, or a
//! skills list-changed notification; on 2026-07-28 these come on a
//! `subscriptions/listen` stream the provider opens) or its `ttlMs` ends;
//! the next query then lists again. A `ttlMs` of 0 from a server that tells
//! the provider of its changes on such a stream does not make every query
//! list again: the stream is the freshness there.
//!
//! **Host rules.** A server is an origin of its own ([`Origin::Mcp`]: not
//! trusted, so its skills' `allowed-tools` grant nothing unless the
//! application trusts the kit), and its skills live in one kit named by the
//! label the application gives ([`McpSkills::named`]), by default the server's
//! name from its handshake. A name another provider also serves is reported
//! by the [`Catalog`](crate::Catalog) naming this provider (`mcp:<label>`).
//!
//! **Failures.** A server that cannot be started or reached, or fails a
//! request, is a [`ProviderError`] the catalog reports while serving its
//! other providers; the next query connects again (queries drive it: nothing
//! retries in the background).
//!
//! ```no_run
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use skillkit::mcp_client::Endpoint;
//! use skillkit::{Catalog, McpSkills};
//!
//! let docs = McpSkills::new(Endpoint::parse_command("python3 docs_server.py").unwrap()).named("docs");
//! let catalog = Catalog::builder().provider(docs).build();
//! for skill in catalog.list_skills().await {
//!     println!("{}: {}", skill.name, skill.description); // docs:pdf: Read PDFs.
//! }
//! # });
//! ```

mod connection;
mod fetch;
mod listing;
mod session;

use std::borrow::Cow;
use std::sync::Arc;

use crate::kit::{Kit, Origin};
use crate::mcp_client::Endpoint;
use crate::provider::{KitProvider, ProviderError};
use connection::Connection;
use fetch::Server;
use session::Session;

/// The skills of one MCP server, served as one kit: see the [module
/// documentation](self) for what is read when, and the rules it keeps.
///
/// Cloning is cheap and shares the connection and the files kept.
///
/// ```
/// use skillkit::mcp_client::Endpoint;
/// use skillkit::{KitProvider, McpSkills};
///
/// let docs = McpSkills::new(Endpoint::url("http://127.0.0.1:8080/mcp")).named("docs");
/// assert_eq!(docs.name(), "mcp:docs");
/// assert_eq!(docs.label(), Some("docs"));
/// ```
#[derive(Clone, Debug)]
pub struct McpSkills {
    session: Arc<Session>,
    label: Option<Arc<str>>,
}

impl McpSkills {
    /// The skills of the server at `endpoint`, in a kit named after the
    /// server (the name its handshake gives, made a kit name) unless
    /// [`named`](McpSkills::named). Nothing is started until the first query.
    ///
    /// ```
    /// let server = skillkit::mcp_client::Endpoint::command("python3", ["server.py"]);
    /// let mcp = skillkit::McpSkills::new(server);
    /// assert_eq!(mcp.label(), None);
    /// ```
    pub fn new(endpoint: Endpoint) -> McpSkills {
        McpSkills {
            session: Arc::new(Session::new(Server {
                connection: Connection::new(endpoint),
                files: Default::default(),
                folders: Default::default(),
            })),
            label: None,
        }
    }

    /// The same provider serving its skills under the kit name `label`
    /// (`<label>:<skill>`): the application's name for this server.
    ///
    /// ```
    /// let mcp = skillkit::McpSkills::new(skillkit::mcp_client::Endpoint::url("http://127.0.0.1:1/mcp"));
    /// assert_eq!(mcp.named("docs").label(), Some("docs"));
    /// ```
    pub fn named(self, label: impl Into<String>) -> McpSkills {
        McpSkills {
            label: Some(Arc::from(label.into())),
            ..self
        }
    }

    /// The kit name given with [`named`](McpSkills::named), if any.
    ///
    /// ```
    /// use skillkit::McpSkills;
    /// use skillkit::mcp_client::Endpoint;
    /// let server = McpSkills::new(Endpoint::url("http://127.0.0.1:8080/mcp"));
    /// assert_eq!(server.label(), None);
    /// assert_eq!(server.named("docs").label(), Some("docs"));
    /// ```
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// Where the server is.
    ///
    /// ```
    /// use skillkit::mcp_client::Endpoint;
    /// let mcp = skillkit::McpSkills::new(Endpoint::url("http://127.0.0.1:1/mcp"));
    /// assert_eq!(mcp.endpoint(), &Endpoint::url("http://127.0.0.1:1/mcp"));
    /// ```
    pub fn endpoint(&self) -> &Endpoint {
        self.session.server.connection.endpoint()
    }
}

// Not listed among "the types that are providers" when a type is none.
#[diagnostic::do_not_recommend]
#[async_trait::async_trait]
impl KitProvider for McpSkills {
    /// `mcp:<label>`, or `mcp:<endpoint>` before a label is known (never a
    /// token: an endpoint shows its command or URL only).
    fn name(&self) -> Cow<'_, str> {
        match &self.label {
            Some(label) => format!("mcp:{label}").into(),
            None => format!("mcp:{}", self.endpoint()).into(),
        }
    }

    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        let kit = self.session.kit(self.label.as_deref()).await?;
        debug_assert_eq!(kit.origin, Origin::Mcp);
        Ok(vec![kit])
    }
}
