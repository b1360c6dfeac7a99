//! The MCP methods the server answers ([`ServerHandler`]): each takes the
//! connection's snapshot of the catalog and hands the work to the module of
//! its kind (tools, prompts, resources, skills, changes).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, Implementation, ListPromptsResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tracing::Instrument;

use super::{McpServer, direct, pages, params, prompts, resources, skills, tools};
use crate::catalog::Snapshot;

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "This server serves Agent Skills: instructions for specific tasks. \
    Call list_skills to see them; when a task matches a skill's description, call \
    activate_skill with its name (and arguments) to load its instructions, then follow them. \
    Files beside a skill are read with read_skill_file. Each skill is also a prompt, and its \
    files are skill:// resources.";

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_skills_with_directory_read()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("skillkit", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // The query changes are told against, from the start.
        self.snapshot(&context.peer).await;
        // A session of the HTTP transport: its requests can be answered
        // in the HTTP handler from now on.
        if let Some(id) = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| direct::session_id(&parts.headers))
        {
            self.http_sessions.ready(id, context.peer.clone());
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = pages::cursor(request.as_ref())?;
        let snapshot = self.snapshot(&context.peer).await;
        let tools = tools::definitions(
            &self
                .tools
                .get(&snapshot, &tools::scope(self.scripts.is_some())),
        );
        let (page, next) = pages::page(tools, |t| &t.name, cursor.as_deref(), self.page_size);
        let mut result = ListToolsResult::with_all_items(page);
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let snapshot = self.snapshot(&context.peer).await;
        let tools = self
            .tools
            .get(&snapshot, &tools::scope(self.scripts.is_some()));
        let id = context.id.to_string();
        let scripts = self.scripts.as_deref();
        // The client's trace, from the request's `_meta`.
        let meta = request.meta.as_deref().unwrap_or(&context.meta);
        let span = crate::telemetry::served_tool_span(
            &request.name,
            &id,
            meta.get_traceparent(),
            meta.get_tracestate(),
        );
        let result = tools::call(
            &self.catalog,
            &tools,
            &snapshot,
            request,
            id,
            self.tool_timeout,
            scripts,
        )
        .instrument(span.clone())
        .await?;
        if result.is_error == Some(true) {
            crate::telemetry::fail(&span, "tool_error");
        }
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let cursor = pages::cursor(request.as_ref())?;
        let snapshot = self.snapshot(&context.peer).await;
        let prompts = prompts::list(&snapshot);
        let (page, next) = pages::page(prompts, |p| &p.name, cursor.as_deref(), self.page_size);
        let mut result = ListPromptsResult::with_all_items(page);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let snapshot = self.snapshot(&context.peer).await;
        Ok(prompts::get(&snapshot, &request).await?.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = pages::cursor(request.as_ref())?;
        let (snapshot, held) = self.paged(request.as_ref(), &context.peer).await;
        let cursor = cursor.as_deref();
        let resources = resources::after(&snapshot, cursor, self.page_size);
        let (page, next) = pages::page(resources, |r| &r.uri, cursor, self.page_size);
        let mut result = ListResourcesResult::with_all_items(page);
        result.next_cursor = pages::holding(next, held);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let snapshot = self.snapshot(&context.peer).await;
        fetch(&snapshot, &request.uri).await?;
        Ok(resources::read(&snapshot, &request.uri)?.into())
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let cursor = pages::cursor(request.as_ref())?;
        let (snapshot, held) = self.paged(request.as_ref(), &context.peer).await;
        let digests = Arc::clone(&self.digests);
        let page_size = self.page_size;
        let by_uri = Arc::clone(&self.by_uri);
        // Reading files to digest them is blocking work (and so is sorting
        // the URIs of a catalog that changed).
        let mut result = tokio::task::spawn_blocking(move || {
            let skills = by_uri.of(&snapshot);
            skills::list(&skills, &digests, cursor.as_deref(), page_size)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        result.next_cursor = pages::holding(result.next_cursor.take(), held);
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let snapshot = self.snapshot(&context.peer).await;
        fetch(&snapshot, &request.uri).await?;
        let digests = Arc::clone(&self.digests);
        tokio::task::spawn_blocking(move || skills::get(&snapshot, &digests, &request.uri))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let cursor = pages::key(request.cursor.as_deref())?;
        let snapshot = self.snapshot(&context.peer).await;
        fetch(&snapshot, &request.uri).await?;
        skills::directory(&snapshot, &request.uri, cursor.as_deref(), self.page_size)
    }

    /// `subscriptions/listen` (revision 2026-07-28): every list-changed
    /// notification the client asks for (rmcp keeps to those advertised).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = requested.clone();
        // This server has no `resources/subscribe` updates to send.
        accepted.resource_subscriptions = None;
        // What the lists show before the stream is acknowledged: a change
        // found before it is registered is told by `listen`.
        if let Ok(mut since) = self.listen_since.lock() {
            *since = self.changes.lists();
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let since = self.listen_since.lock().ok().and_then(|mut s| s.take());
        let number = self.changes.listen(context.sink().clone());
        let snapshot = self.catalog.snapshot().await;
        self.changes.observe(&snapshot);
        self.changes.catch_up(context.sink(), since).await;
        context.cancelled().await;
        self.changes.unlisten(number);
        Ok(())
    }

    /// A request rmcp could not read as any method's: `-32602` when the
    /// method is one this server serves (its params are wrong), else
    /// `-32601`.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(params::refuse(&request.method, request.params.as_ref()))
    }
}

/// Fetches the skill `uri` names when it is kept by another server (an
/// [`McpSkills`](crate::McpSkills) provider's, fetched on first use) so its files are
/// there to read. A URI that names no skill is left to the caller to refuse.
async fn fetch(snapshot: &Snapshot, uri: &str) -> Result<(), ErrorData> {
    if let Ok(Some((skill, _))) = resources::locate(snapshot, uri) {
        skill
            .body
            .load()
            .await
            .map_err(|e| ErrorData::internal_error(format!("skill `{}`: {e}", skill.name), None))?;
    }
    Ok(())
}
