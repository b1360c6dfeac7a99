//! [`AgentDefinition`]: an agent's identity, model, limits and system prompt.

use std::borrow::Cow;
use std::path::PathBuf;

use skillkit_parser::AgentDocument;

use crate::skill::Metadata;

/// An agent definition, from a kit's `AGENT.md` (its root agent) or
/// `agents/<name>.md` (a sub-agent).
///
/// ```
/// let agent = skillkit::AgentDefinition::new("helper", "Helps with files.")
///     .with_system_prompt("You help with files.");
/// assert_eq!(agent.system_prompt, "You help with files.");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentDefinition {
    /// The agent's name. Sub-agents carry their kit's prefix (`files:summarize`).
    pub name: Cow<'static, str>,
    /// What the agent does (a parent agent sees this when it may delegate).
    pub description: Cow<'static, str>,
    /// Model URI, such as `anthropic://claude-sonnet-4-6?max_tokens=4096`.
    pub model: Option<Cow<'static, str>>,
    /// The system prompt (the file's body).
    pub system_prompt: Cow<'static, str>,
    /// Skills or tools the agent may use; empty means all.
    pub tools: Vec<Cow<'static, str>>,
    /// The most LLM turns one message may take.
    pub max_turns: Option<u32>,
    /// How deep this agent may nest sub-agents.
    pub max_agent_depth: Option<u32>,
    /// The `metadata` map.
    pub metadata: Metadata,
    /// Every other frontmatter key.
    pub extra: Metadata,
    /// The file the definition was read from, when it came from a file.
    pub location: Option<PathBuf>,
}

impl AgentDefinition {
    /// A definition with a name and a description.
    ///
    /// ```
    /// let agent = skillkit::AgentDefinition::new("helper", "Helps.");
    /// assert_eq!(agent.name, "helper");
    /// ```
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        AgentDefinition {
            name: name.into(),
            description: description.into(),
            ..AgentDefinition::default()
        }
    }

    /// The same definition with `prompt` as its system prompt.
    ///
    /// ```
    /// let agent = skillkit::AgentDefinition::new("a", "d").with_system_prompt("Be brief.");
    /// assert_eq!(agent.system_prompt, "Be brief.");
    /// ```
    pub fn with_system_prompt(mut self, prompt: impl Into<Cow<'static, str>>) -> Self {
        self.system_prompt = prompt.into();
        self
    }

    /// Builds a definition from a parsed agent file.
    ///
    /// ```
    /// let doc = skillkit_parser::AgentDocument::parse("---\nname: a\ndescription: d\n---\nPrompt", None).unwrap();
    /// let agent = skillkit::AgentDefinition::from_document(doc, None);
    /// assert_eq!(agent.system_prompt, "Prompt");
    /// ```
    pub fn from_document(doc: AgentDocument, location: Option<PathBuf>) -> Self {
        AgentDefinition {
            name: doc.name.into(),
            description: doc.description.into(),
            model: doc.model.map(Cow::Owned),
            system_prompt: doc.system_prompt.into(),
            tools: doc.tools.into_iter().map(Cow::Owned).collect(),
            max_turns: doc.max_turns,
            max_agent_depth: doc.max_agent_depth,
            metadata: doc.metadata,
            extra: doc.extra,
            location,
        }
    }
}
