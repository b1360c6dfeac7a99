//! MCP servers' tools as an agent's tools (features `agent` + `mcp-client`).
//!
//! Each server given to [`AgentOptions::mcp_server`](crate::agent::AgentOptions::mcp_server)
//! is a [`Session`] under a prefix; its tool `echo` becomes the agent's tool
//! `<prefix>__echo` (full name and, being wire-safe, the name the model sees),
//! described with the server's description and input schema. Calls run by the
//! one tool path (`dispatch::run`: schema check, approval policy, timeout);
//! this module turns the server's answer into the tool result.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde_json::Value;

use crate::mcp_client::{Session, Status};
use crate::tool::ToolDefinition;
use crate::tool::ToolOutcome;

/// What joins a server's prefix and its tool's name.
pub(crate) const SEPARATOR: &str = "__";

/// One MCP server of an agent.
#[derive(Clone, Debug)]
pub(crate) struct McpServer {
    pub(crate) prefix: String,
    pub(crate) session: Session,
    /// The most characters of a result the model gets.
    pub(crate) max_output: usize,
}

/// The tools one server offers this turn.
pub(crate) struct ServerTools {
    pub(crate) prefix: String,
    pub(crate) session: Session,
    pub(crate) tools: Arc<[Tool]>,
    pub(crate) max_output: usize,
}

/// A tool call's target: tool `name` of `session`.
#[derive(Clone)]
pub(crate) struct McpTool {
    pub(crate) session: Session,
    pub(crate) name: String,
    pub(crate) max_output: usize,
}

/// Whether `prefix` can name a server's tools: ASCII letters, digits, `-`
/// and `_`, 1 to 32 bytes, no `__` (which separates it from the tool name).
pub(crate) fn valid_prefix(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix.len() <= 32
        && !prefix.contains(SEPARATOR)
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether a server's tool name is one the agent takes: MCP's own charset
/// (`[A-Za-z0-9_.-]`, 1 to 128 bytes), so it can be shown and logged as is.
fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// This turn's tools of every server. A server on its first attempt to
/// connect is waited for (all of them at once), up to its connect timeout; a
/// server with no tool list yet contributes none, and `warn` says so. A
/// server that went down after listing keeps its tools: their calls say it
/// is down.
pub(crate) async fn tools(servers: &[McpServer], warn: impl Fn(String)) -> Vec<ServerTools> {
    let listed = futures::future::join_all(servers.iter().map(|server| async move {
        if let Some(tools) = server.session.tools().await {
            return (server, Some(tools));
        }
        // Only the first attempt is waited for: a server that failed it is
        // retried in the background while the turns go on.
        if matches!(server.session.status(), Status::Connecting { attempt: 0 }) {
            let wait = server.session.connect_timeout_value();
            server.session.wait_settled(wait).await;
        }
        (server, server.session.tools().await)
    }))
    .await;
    listed
        .into_iter()
        .filter_map(|(server, tools)| match tools {
            Some(tools) => Some(ServerTools {
                prefix: server.prefix.clone(),
                session: server.session.clone(),
                tools,
                max_output: server.max_output,
            }),
            None => {
                warn(format!(
                    "the MCP server `{}` ({}) is not connected yet ({:?}): its tools are left out \
                     of this turn",
                    server.prefix,
                    server.session.endpoint(),
                    server.session.status()
                ));
                None
            }
        })
        .collect()
}

impl ServerTools {
    /// The full name, definition and target of each tool, skipping (with a
    /// warning) names outside MCP's charset.
    pub(crate) fn definitions(&self) -> impl Iterator<Item = (String, ToolDefinition, McpTool)> {
        self.tools.iter().filter_map(|tool| {
            if !valid_tool_name(&tool.name) {
                tracing::warn!(
                    server = %self.prefix,
                    "an MCP tool with a name outside [A-Za-z0-9_.-]{{1,128}} was left out"
                );
                return None;
            }
            let full = format!("{}{SEPARATOR}{}", self.prefix, tool.name);
            let description = tool
                .description
                .as_deref()
                .or(tool.title.as_deref())
                .unwrap_or_default();
            let schema = Value::Object((*tool.input_schema).clone());
            let definition = ToolDefinition::new(full.clone(), description, schema);
            let target = McpTool {
                session: self.session.clone(),
                name: tool.name.to_string(),
                max_output: self.max_output,
            };
            Some((full, definition, target))
        })
    }
}

impl McpTool {
    /// Calls the tool with `input`: its result as the call's outcome.
    pub(crate) async fn call(&self, input: &Value) -> ToolOutcome {
        let arguments = match input {
            Value::Object(map) => Some(map.clone()),
            Value::Null => None,
            _ => return ToolOutcome::error("the input of an MCP tool is an object"),
        };
        match self.session.call_tool(&self.name, arguments).await {
            Ok(result) => match outcome(&result) {
                ToolOutcome::Ok(Value::String(text)) => {
                    ToolOutcome::Ok(Value::String(cut(text, self.max_output)))
                }
                ToolOutcome::Error(text) => ToolOutcome::Error(cut(text, self.max_output)),
                other => other,
            },
            Err(error) => ToolOutcome::error(error.to_string()),
        }
    }
}

/// `text` within `max` characters: past it, its first `max` and a marker
/// saying how much was left out.
fn cut(text: String, max: usize) -> String {
    match crate::prompt::cut_at(&text, max) {
        None => text,
        Some((kept, left)) => format!(
            "{kept}\n[result cut: {left} more characters were left out (over this agent's limit \
             of {max} characters for an MCP tool's result)]"
        ),
    }
}

/// A tool result as the model's text: text blocks as they are, images and
/// audio as a note (the model gets no bytes), embedded text resources as
/// their text, links as their URI; the structured content when there are no
/// blocks; an error when the server says `isError`.
pub(crate) fn outcome(result: &CallToolResult) -> ToolOutcome {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = parts.join("\n");
    match result.is_error {
        Some(true) => ToolOutcome::error(text),
        _ => ToolOutcome::Ok(Value::String(text)),
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!(
            "[an image ({}, {} bytes) was returned; it is not shown here]",
            image.mime_type,
            image.data.len() / 4 * 3
        ),
        ContentBlock::Audio(audio) => format!(
            "[audio ({}, {} bytes) was returned; it is not shown here]",
            audio.mime_type,
            audio.data.len() / 4 * 3
        ),
        ContentBlock::Resource(resource) => match &resource.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents { uri, mime_type, .. } => format!(
                "[a binary resource {uri} ({}) was returned; it is not shown here]",
                mime_type.as_deref().unwrap_or("unknown type")
            ),
            other => serde_json::to_string(other).unwrap_or_default(),
        },
        ContentBlock::ResourceLink(link) => {
            format!("[resource link: {} ({})]", link.uri, link.name)
        }
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, ImageContent};

    #[test]
    fn a_result_over_the_limit_is_cut_saying_so() {
        assert_eq!(cut("short".into(), 10), "short");
        let cut = cut("é".repeat(50), 10);
        assert!(cut.starts_with(&"é".repeat(10)));
        assert!(
            cut.contains("[result cut: 40 more characters were left out"),
            "{cut}"
        );
    }

    #[test]
    fn results_become_text_images_a_note_and_is_error_an_error() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("Echo: hi"),
            ContentBlock::Image(ImageContent::new("AAAA", "image/png")),
        ]);
        let ToolOutcome::Ok(Value::String(text)) = outcome(&result) else {
            panic!("not ok text");
        };
        assert!(text.starts_with("Echo: hi\n[an image (image/png, 3 bytes)"));
        result.is_error = Some(true);
        assert!(matches!(outcome(&result), ToolOutcome::Error(t) if t.contains("Echo: hi")));
    }

    #[test]
    fn prefixes_are_checked() {
        assert!(valid_prefix("everything"));
        assert!(valid_prefix("my-server_2"));
        assert!(!valid_prefix(""));
        assert!(!valid_prefix("a__b"));
        assert!(!valid_prefix("a:b"));
        assert!(!valid_tool_name("bad name"));
        assert!(valid_tool_name("get-sum.v2"));
    }
}
