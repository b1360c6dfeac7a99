//! `AGENT.md` and `agents/<name>.md`: an agent's identity, model, limits and
//! system prompt.

use std::path::Path;

use serde_json::{Map, Value};

use crate::fields::Fields;
use crate::skill::to_lf;
use crate::{Diagnostic, frontmatter};

/// The file name of a kit's root agent.
pub const AGENT_FILE: &str = "AGENT.md";

/// A parsed agent definition file.
///
/// `name` defaults to the file's stem for `agents/<name>.md` (and to the given
/// default for a root `AGENT.md`); `description` is required. The body is the
/// system prompt. Limits may be top-level keys or, as in the Elixir original,
/// keys of `metadata`.
///
/// ```
/// let doc = skillkit_parser::AgentDocument::parse(
///     "---\nname: helper\ndescription: Helps.\nmodel: anthropic://claude-sonnet-4-6\nmax_turns: 8\ntools: files:read, files:write\n---\nYou help.\n",
///     None,
/// ).unwrap();
/// assert_eq!(doc.max_turns, Some(8));
/// assert_eq!(doc.tools, ["files:read", "files:write"]);
/// assert_eq!(doc.system_prompt, "You help.\n");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDocument {
    /// The agent's name.
    pub name: String,
    /// The 1-based file line of the `name` key (1, the opening `---`, when the
    /// name is the default).
    pub name_line: usize,
    /// What the agent does (shown to a parent agent that may delegate to it).
    pub description: String,
    /// Model URI, such as `anthropic://claude-sonnet-4-6?max_tokens=4096`.
    pub model: Option<String>,
    /// Skills or tools the agent may use (`tools`, or the original's `capabilities`);
    /// empty means all.
    pub tools: Vec<String>,
    /// The most LLM turns one message may take.
    pub max_turns: Option<u32>,
    /// How deep this agent may nest sub-agents.
    pub max_agent_depth: Option<u32>,
    /// `metadata` map.
    pub metadata: Map<String, Value>,
    /// Every other frontmatter key, unchanged.
    pub extra: Map<String, Value>,
    /// The body: the agent's system prompt, CRLF turned into LF.
    pub system_prompt: String,
    /// The 1-based file line where the body starts.
    pub body_line: usize,
    /// Problems that did not stop the agent from loading.
    pub warnings: Vec<Diagnostic>,
}

impl AgentDocument {
    /// Parses agent file text; `default_name` is used when there is no `name`.
    ///
    /// ```
    /// let doc = skillkit_parser::AgentDocument::parse("---\ndescription: d\n---\n", Some("files")).unwrap();
    /// assert_eq!(doc.name, "files");
    /// ```
    pub fn parse(text: &str, default_name: Option<&str>) -> Result<Self, Diagnostic> {
        let split = frontmatter::split(text)?;
        let (map, yaml_warnings) = frontmatter::parse_mapping_lenient(split.yaml, split.yaml_line)?;
        let mut fields = Fields::new(map, split.yaml, split.yaml_line);
        fields.warnings.extend(yaml_warnings);
        let name = match (fields.has("name"), default_name) {
            (false, Some(default)) => default.to_owned(),
            _ => fields.required("name", "my-agent")?,
        };
        let name_line = fields.line("name");
        let description = fields.required("description", "What this agent does.")?;
        let model = fields.text("model");
        let mut tools = fields.list("tools");
        tools.extend(fields.list("capabilities"));
        let mut max_turns = fields.count("max_turns");
        let mut max_agent_depth = fields.count("max_agent_depth");
        let mut metadata = fields.map("metadata");
        for (key, slot) in [
            ("max_turns", &mut max_turns),
            ("max_agent_depth", &mut max_agent_depth),
        ] {
            if let (None, Some(value)) = (&*slot, metadata.get(key)) {
                *slot = frontmatter::as_text(value).and_then(|t| t.trim().parse().ok());
            }
        }
        metadata.retain(|_, v| !v.is_null());
        let (extra, warnings) = fields.rest();
        Ok(AgentDocument {
            name,
            name_line,
            description,
            model,
            tools,
            max_turns,
            max_agent_depth,
            metadata,
            extra,
            system_prompt: to_lf(split.body.to_owned()),
            body_line: split.body_line,
            warnings,
        })
    }

    /// Parses the bytes of the agent file at `path`. The default name is the
    /// file stem for `agents/<name>.md`, or `kit` for a root `AGENT.md`.
    ///
    /// ```
    /// let doc = skillkit_parser::AgentDocument::parse_file(
    ///     "kit/agents/summarize.md".as_ref(), "kit", b"---\ndescription: Sums up.\n---\nSum up.",
    /// ).unwrap();
    /// assert_eq!(doc.name, "summarize");
    /// ```
    pub fn parse_file(path: &Path, kit: &str, bytes: &[u8]) -> Result<Self, Diagnostic> {
        let default = if path.file_name().and_then(|f| f.to_str()) == Some(AGENT_FILE) {
            Some(kit)
        } else {
            path.file_stem().and_then(|s| s.to_str())
        };
        let mut doc = frontmatter::decode(bytes)
            .and_then(|text| Self::parse(text, default))
            .map_err(|d| d.with_path(path))?;
        for warning in &mut doc.warnings {
            warning.path = Some(path.to_path_buf());
        }
        Ok(doc)
    }

    /// Reads and parses the agent file at `path` in kit `kit`.
    ///
    /// ```
    /// assert!(skillkit_parser::AgentDocument::read("/no/AGENT.md".as_ref(), "k").is_err());
    /// ```
    pub fn read(path: &Path, kit: &str) -> Result<Self, Diagnostic> {
        let bytes = crate::read_file(path)?;
        Self::parse_file(path, kit, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_may_live_in_metadata() {
        let doc = AgentDocument::parse(
            "---\nname: a\ndescription: d\nmetadata:\n  max_agent_depth: \"3\"\n---\n",
            None,
        )
        .unwrap();
        assert_eq!(doc.max_agent_depth, Some(3));
    }

    #[test]
    fn bad_limit_is_a_warning() {
        let doc =
            AgentDocument::parse("---\nname: a\ndescription: d\nmax_turns: lots\n---\n", None)
                .unwrap();
        assert_eq!(doc.max_turns, None);
        assert_eq!(doc.warnings[0].line, 4);
    }

    #[test]
    fn unquoted_colon_values_read_as_text_with_a_warning() {
        let doc = AgentDocument::parse(
            "---\ndescription: Reviews code: diffs and files\n---\nReview.\n",
            Some("review"),
        )
        .unwrap();
        assert_eq!(doc.description, "Reviews code: diffs and files");
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        assert_eq!(doc.warnings[0].line, 2);
    }

    #[test]
    fn missing_name_without_default_is_an_error() {
        assert!(AgentDocument::parse("---\ndescription: d\n---\n", None).is_err());
    }
}
