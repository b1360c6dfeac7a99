//! An MCP server with the skills extension (`io.modelcontextprotocol/skills`)
//! written here on the official Rust SDK, served over Streamable HTTP on
//! 127.0.0.1, whose skills a test changes, breaks and counts the reads of.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    GetSkillRequestParams, GetSkillResult, Implementation, ListResourcesResult, ListSkillsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ServerCapabilities, ServerConfig, Skill, SkillFrontmatter,
    SkillResource, SkillResources,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};

/// One skill of the server: its `SKILL.md`, and the bytes served instead
/// when a test tampers with it (the listing keeps the real digest).
#[derive(Clone)]
struct Entry {
    skill_md: String,
    served: Option<String>,
    /// The other files, by path relative to the skill's folder: the bytes
    /// listed, and those served instead when a test tampers with one.
    files: BTreeMap<String, (String, Option<String>)>,
}

#[derive(Default)]
struct State {
    skills: BTreeMap<String, Entry>,
    reads: HashMap<String, usize>,
    lists: usize,
    ttl_ms: Option<u64>,
    peers: Vec<Peer<RoleServer>>,
}

/// The server: a handle to change it while it runs.
#[derive(Clone)]
pub struct SkillsServer {
    state: Arc<Mutex<State>>,
    kit: String,
    url: String,
    /// Whether it declares the skills extension (else it is an older
    /// server, with only the `skill://` resources).
    extension: bool,
}

impl SkillsServer {
    /// Serves no skills yet, at `http://127.0.0.1:<port>/mcp`, as the skills
    /// `skill://<kit>/<name>/SKILL.md`.
    pub async fn start(kit: &str) -> SkillsServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        SkillsServer::start_on(listener, kit)
    }

    /// [`start`](SkillsServer::start) as an older server: no skills
    /// extension, its skills only as `skill://` resources.
    pub async fn start_without_extension(kit: &str) -> SkillsServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        SkillsServer::serve(listener, kit, false)
    }

    /// [`start`](SkillsServer::start) on `listener` (bound to 127.0.0.1).
    pub fn start_on(listener: tokio::net::TcpListener, kit: &str) -> SkillsServer {
        SkillsServer::serve(listener, kit, true)
    }

    fn serve(listener: tokio::net::TcpListener, kit: &str, extension: bool) -> SkillsServer {
        let url = format!(
            "http://{}/mcp",
            listener.local_addr().expect("local address")
        );
        let server = SkillsServer {
            state: Arc::default(),
            kit: kit.to_owned(),
            url,
            extension,
        };
        let handler = Handler(server.clone());
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let app = axum::Router::new().route_service("/mcp", service);
        tokio::spawn(async move { axum::serve(listener, app).await });
        server
    }

    /// Where it listens.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URI of skill `name`'s `SKILL.md`.
    pub fn uri(&self, name: &str) -> String {
        format!("skill://{}/{name}/SKILL.md", self.kit)
    }

    /// Serves `skill_md` as skill `name` (replacing one of that name).
    pub fn put(&self, name: &str, skill_md: &str) {
        self.lock().skills.insert(
            name.to_owned(),
            Entry {
                skill_md: skill_md.to_owned(),
                served: None,
                files: BTreeMap::new(),
            },
        );
    }

    /// Lists and serves `text` as file `path` (relative to the folder, as
    /// written: a test may give `../x`) of skill `name`.
    pub fn put_file(&self, name: &str, path: &str, text: &str) {
        if let Some(entry) = self.lock().skills.get_mut(name) {
            entry.files.insert(path.to_owned(), (text.to_owned(), None));
        }
    }

    /// File `path` of skill `name` is listed with its digest, but
    /// `resources/read` answers `served`.
    pub fn tamper_file(&self, name: &str, path: &str, served: &str) {
        if let Some(entry) = self.lock().skills.get_mut(name)
            && let Some(file) = entry.files.get_mut(path)
        {
            file.1 = Some(served.to_owned());
        }
    }

    /// The URI of file `path` of skill `name`.
    pub fn file_uri(&self, name: &str, path: &str) -> String {
        format!("skill://{}/{name}/{path}", self.kit)
    }

    /// How many times `resources/read` was asked, for any URI.
    pub fn all_reads(&self) -> usize {
        self.lock().reads.values().sum()
    }

    /// Skill `name` is listed with the digest of its `SKILL.md`, but
    /// `resources/read` answers `served`.
    pub fn tamper(&self, name: &str, served: &str) {
        if let Some(entry) = self.lock().skills.get_mut(name) {
            entry.served = Some(served.to_owned());
        }
    }

    /// `skills/list` answers say their listing holds `ms` milliseconds.
    pub fn ttl_ms(&self, ms: u64) {
        self.lock().ttl_ms = Some(ms);
    }

    /// How many times `skills/list` was asked.
    pub fn lists(&self) -> usize {
        self.lock().lists
    }

    /// How many times `resources/read` was asked for `uri`.
    pub fn reads(&self, uri: &str) -> usize {
        self.lock().reads.get(uri).copied().unwrap_or(0)
    }

    /// Sends `notifications/resources/list_changed` to every client.
    pub async fn notify_list_changed(&self) {
        let peers = self.lock().peers.clone();
        for peer in peers {
            let _ = peer.notify_resource_list_changed().await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn listing(&self) -> Vec<Skill> {
        self.lock()
            .skills
            .iter()
            .map(|(name, entry)| {
                let uri = self.uri(name);
                // The frontmatter's `key: value` lines, as the extension
                // sends them (a test writes no nested YAML).
                let fields = entry
                    .skill_md
                    .lines()
                    .skip(1)
                    .take_while(|line| *line != "---")
                    .filter_map(|line| line.split_once(": "));
                let mut frontmatter = SkillFrontmatter::new(name, "");
                for (key, value) in fields {
                    match key {
                        "name" => frontmatter.name = value.to_owned(),
                        "description" => frontmatter.description = value.to_owned(),
                        _ => frontmatter = frontmatter.with_field(key, value),
                    }
                }
                let mut files = vec![SkillResource::from_bytes(&uri, entry.skill_md.as_bytes())];
                files.extend(entry.files.iter().map(|(path, (text, _))| {
                    SkillResource::from_bytes(self.file_uri(name, path), text.as_bytes())
                }));
                Skill::new(&uri, frontmatter, SkillResources::Files(files))
            })
            .collect()
    }
}

#[derive(Clone)]
struct Handler(SkillsServer);

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_list_changed();
        let capabilities = match self.0.extension {
            true => capabilities.enable_skills().build(),
            false => capabilities.build(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("Test Skills", "1.0.0"))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.0.lock().peers.push(context.peer);
    }

    async fn list_skills(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let mut result = ListSkillsResult::with_all_items(self.0.listing());
        let mut state = self.0.lock();
        state.lists += 1;
        result.ttl_ms = state.ttl_ms;
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.0
            .listing()
            .into_iter()
            .find(|skill| skill.uri == request.uri)
            .map(GetSkillResult::new)
            .ok_or_else(|| ErrorData::invalid_params("no such skill", None))
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let names: Vec<String> = self.0.lock().skills.keys().cloned().collect();
        let resources = names
            .iter()
            .map(|name| Resource::new(self.0.uri(name), name.clone()))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let mut state = self.0.lock();
        *state.reads.entry(request.uri.clone()).or_default() += 1;
        let skill_md = state
            .skills
            .iter()
            .find(|(name, _)| self.0.uri(name) == request.uri)
            .map(|(_, entry)| {
                entry
                    .served
                    .clone()
                    .unwrap_or_else(|| entry.skill_md.clone())
            });
        let other = || {
            state.skills.iter().find_map(|(name, entry)| {
                entry.files.iter().find_map(|(path, (text, served))| {
                    (self.0.file_uri(name, path) == request.uri)
                        .then(|| served.clone().unwrap_or_else(|| text.clone()))
                })
            })
        };
        let text = skill_md
            .or_else(other)
            .ok_or_else(|| ErrorData::resource_not_found(request.uri.clone(), None))?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }
}
