//! [`Skill`]: a markdown prompt with frontmatter. A skill is data: the code
//! that executes a skill is bound to it by its provider
//! ([`KitProvider::tool`](crate::KitProvider::tool)).

mod body;
pub(crate) mod memo;
mod more;
mod render;

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use skillkit_parser::{Diagnostic, SkillDocument, kit, name};

pub use body::{Body, BodyError, BodySource};
pub(crate) use more::{Maps, More};
pub use render::Arguments;

use more::{EXTRA, METADATA};

/// A map of frontmatter values (`metadata`, `extra`, kit metadata).
///
/// ```
/// let mut metadata = skillkit::skill::Metadata::new();
/// metadata.insert("author".into(), "me".into());
/// assert_eq!(metadata["author"], "me");
/// ```
pub type Metadata = serde_json::Map<String, serde_json::Value>;

/// A skill: knowledge for an agent (the body). Whether a tool executes it is
/// its provider's business ([`KitProvider::tool`](crate::KitProvider::tool)),
/// so a skill value never carries code.
///
/// Text fields are `Cow<'static, str>`, so kits compiled into the binary serve
/// their skills without copying any text, while skills loaded at run time own
/// theirs.
///
/// The name, description, body and location are fields. The frontmatter
/// fields most skills leave out (`license`, `compatibility`, `allowed-tools`,
/// `metadata`, `model`, `required_scope`, and the `extra` keys) are read with
/// methods and set with `with_*` builders: they are kept out of line, so a
/// catalog of ten thousand skills does not hold ten thousand sets of empty
/// fields.
///
/// ```
/// use skillkit::Skill;
///
/// let skill = Skill::new("files:read", "Read a file.")
///     .with_body("Read the file at $ARGUMENTS.")
///     .with_license("MIT");
/// assert_eq!(skill.kit(), Some("files"));
/// assert_eq!(skill.bare_name(), "read");
/// assert_eq!(skill.license(), Some("MIT"));
/// assert_eq!(skill.render("notes.txt", None)?, "Read the file at notes.txt.");
/// # Ok::<(), skillkit::skill::BodyError>(())
/// ```
#[derive(Clone, Default)]
pub struct Skill {
    /// The fully qualified name, `<kit>:<skill>` (for example `files:read`).
    pub name: Cow<'static, str>,
    /// What the skill does and when to use it.
    pub description: Cow<'static, str>,
    /// The markdown prompt, with template tokens (see [`Skill::render`]): in
    /// memory, or left in its file until it is read (see [`Body`]).
    pub body: Body,
    /// The `SKILL.md` the skill was read from, when it came from a file
    /// (shared: a provider keeps one copy of a file's path for the skill,
    /// its [`Body`] and its own cache).
    pub location: Option<Arc<Path>>,
    /// The rarely present fields; `None` when they are all empty.
    more: Option<Box<More>>,
}

impl std::fmt::Debug for Skill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skill")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("body", &self.body)
            .field("license", &self.license())
            .field("compatibility", &self.compatibility())
            .field("allowed_tools", &self.allowed_tools())
            .field("metadata", self.metadata())
            .field("model", &self.model())
            .field("required_scope", &self.required_scope())
            .field("extra", self.extra())
            .field("location", &self.location)
            .finish()
    }
}

impl Skill {
    /// A knowledge skill with a name and a description and an empty body.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("greet:hello", "Say hello.");
    /// assert_eq!(skill.name, "greet:hello");
    /// ```
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        Skill {
            name: name.into(),
            description: description.into(),
            ..Skill::default()
        }
    }

    /// The same skill with `body` as its prompt.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_body("Hello");
    /// assert_eq!(skill.body.as_text(), Some("Hello"));
    /// ```
    pub fn with_body(mut self, body: impl Into<Body>) -> Self {
        self.body = body.into();
        self
    }

    /// The same skill read from the `SKILL.md` at `path` (its
    /// [`location`](Skill::location); the body is not changed).
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_location("/kits/a/b/SKILL.md");
    /// assert_eq!(skill.dir(), Some(std::path::Path::new("/kits/a/b")));
    /// ```
    pub fn with_location(mut self, path: impl AsRef<Path>) -> Self {
        self.location = Some(Arc::from(path.as_ref()));
        self
    }

    /// The kit part of the full name (`files` in `files:read`).
    ///
    /// ```
    /// assert_eq!(skillkit::Skill::new("files:read", "d").kit(), Some("files"));
    /// assert_eq!(skillkit::Skill::new("read", "d").kit(), None);
    /// ```
    pub fn kit(&self) -> Option<&str> {
        name::split(&self.name).0
    }

    /// The skill part of the full name (`read` in `files:read`).
    ///
    /// ```
    /// assert_eq!(skillkit::Skill::new("files:read", "d").bare_name(), "read");
    /// ```
    pub fn bare_name(&self) -> &str {
        name::split(&self.name).1
    }

    /// `license` (Agent Skills standard).
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_license("MIT");
    /// assert_eq!(skill.license(), Some("MIT"));
    /// ```
    pub fn license(&self) -> Option<&str> {
        self.more.as_ref()?.license.as_deref()
    }

    /// `compatibility` (Agent Skills standard): the environment the skill
    /// needs.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_compatibility("Needs git.");
    /// assert_eq!(skill.compatibility(), Some("Needs git."));
    /// ```
    pub fn compatibility(&self) -> Option<&str> {
        self.more.as_ref()?.compatibility.as_deref()
    }

    /// `allowed-tools` (Agent Skills standard); empty when not given.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_allowed_tools(["Read", "Grep"]);
    /// assert_eq!(skill.allowed_tools(), ["Read", "Grep"]);
    /// ```
    pub fn allowed_tools(&self) -> &[Cow<'static, str>] {
        self.more.as_ref().map_or(&[], |more| &more.allowed_tools)
    }

    /// `metadata` (Agent Skills standard); empty when not given.
    ///
    /// A skill read from a file keeps the map's entries in a compact list
    /// and builds the map the first time it is asked for (a catalog query
    /// never asks), so the first call costs one small allocation per entry.
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("a:b", "d");
    /// assert!(skill.metadata().is_empty());
    /// skill.metadata_mut().insert("author".into(), "me".into());
    /// assert_eq!(skill.metadata()["author"], "me");
    /// ```
    pub fn metadata(&self) -> &Metadata {
        &self.maps()[METADATA]
    }

    /// `model` (SkillKit): the model URI this skill prefers.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_model("anthropic://claude-haiku-4-5");
    /// assert_eq!(skill.model(), Some("anthropic://claude-haiku-4-5"));
    /// ```
    pub fn model(&self) -> Option<&str> {
        self.more.as_ref()?.model.as_deref()
    }

    /// `required_scope` (SkillKit): the scope a caller needs.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_required_scope("files:write");
    /// assert_eq!(skill.required_scope(), Some("files:write"));
    /// ```
    pub fn required_scope(&self) -> Option<&str> {
        self.more.as_ref()?.required_scope.as_deref()
    }

    /// Whether the model may invoke this skill: `false` when the frontmatter
    /// says `disable-model-invocation: true` (Claude Code), for skills a
    /// person runs on purpose (a deploy). The model never sees such a skill
    /// (not listed, not activatable); a person still invokes it (chat
    /// `/name`, `skillkit run --skill`, an MCP prompt).
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("ops:deploy", "Deploy.");
    /// assert!(skill.model_invocable());
    /// skill.extra_mut().insert("disable-model-invocation".into(), true.into());
    /// assert!(!skill.model_invocable());
    /// ```
    pub fn model_invocable(&self) -> bool {
        !self.flag("disable-model-invocation").unwrap_or(false)
    }

    /// Whether a person may invoke this skill: `false` when the frontmatter
    /// says `user-invocable: false` (Claude Code), for background knowledge
    /// the model uses. Such a skill is not offered as a chat command or an
    /// MCP prompt.
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("team:conventions", "Our conventions.");
    /// assert!(skill.user_invocable());
    /// skill.extra_mut().insert("user-invocable".into(), false.into());
    /// assert!(!skill.user_invocable());
    /// ```
    pub fn user_invocable(&self) -> bool {
        self.flag("user-invocable").unwrap_or(true)
    }

    /// `argument-hint` (Claude Code): what a person types after the skill's
    /// name, shown where arguments are typed. A YAML list (`argument-hint:
    /// [issue-number]`, as Claude Code's examples write it) reads as written.
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("gh:fix-issue", "Fix an issue.");
    /// skill.extra_mut().insert("argument-hint".into(), serde_json::json!(["issue-number"]));
    /// assert_eq!(skill.argument_hint().as_deref(), Some("[issue-number]"));
    /// ```
    pub fn argument_hint(&self) -> Option<Cow<'_, str>> {
        match self.extra_value("argument-hint")? {
            serde_json::Value::String(text) => Some(Cow::Borrowed(text.as_str())),
            serde_json::Value::Array(items) => Some(Cow::Owned(format!(
                "[{}]",
                items
                    .iter()
                    .map(|item| match item {
                        serde_json::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            serde_json::Value::Null => None,
            other => Some(Cow::Owned(other.to_string())),
        }
    }

    /// Whether activating this skill runs it in a sub-agent of its own
    /// (`context: fork`, Claude Code): the rendered body is that agent's task,
    /// without the conversation's history, and its answer is the result.
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("dev:research", "Research a topic.");
    /// assert!(!skill.forks());
    /// skill.extra_mut().insert("context".into(), "fork".into());
    /// assert!(skill.forks());
    /// ```
    pub fn forks(&self) -> bool {
        matches!(self.extra_value("context"), Some(serde_json::Value::String(c)) if c.trim() == "fork")
    }

    /// The agent a forked skill runs as (`agent:`, Claude Code): an agent of
    /// the catalog, by its full name or its name within the skill's kit.
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("dev:research", "Research a topic.");
    /// skill.extra_mut().insert("agent".into(), "explorer".into());
    /// assert_eq!(skill.fork_agent(), Some("explorer"));
    /// ```
    pub fn fork_agent(&self) -> Option<&str> {
        match self.extra_value("agent")? {
            serde_json::Value::String(name) if !name.trim().is_empty() => Some(name.trim()),
            _ => None,
        }
    }

    /// The value of frontmatter key `key` kept in `extra`, without building
    /// the map.
    fn extra_value(&self, key: &str) -> Option<&serde_json::Value> {
        self.more.as_ref()?.maps.as_ref()?.lookup(EXTRA, key)
    }

    /// A yes/no frontmatter key: a YAML boolean, or the text `true`/`false`.
    fn flag(&self, key: &str) -> Option<bool> {
        match self.extra_value(key)? {
            serde_json::Value::Bool(value) => Some(*value),
            serde_json::Value::String(text) => match text.trim() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// Every other frontmatter key (`argument-hint`, `user-invocable`, …);
    /// empty when there is none. Built when first asked for, like
    /// [`metadata`](Skill::metadata).
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("a:b", "d");
    /// skill.extra_mut().insert("argument-hint".into(), "<path>".into());
    /// assert_eq!(skill.extra()["argument-hint"], "<path>");
    /// ```
    pub fn extra(&self) -> &Metadata {
        &self.maps()[EXTRA]
    }

    /// The `metadata` map, to edit.
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("a:b", "d");
    /// skill.metadata_mut().insert("danger".into(), "high".into());
    /// assert_eq!(skill.metadata()["danger"], "high");
    /// ```
    pub fn metadata_mut(&mut self) -> &mut Metadata {
        &mut self.maps_mut()[METADATA]
    }

    /// The map of other frontmatter keys, to edit.
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("a:b", "d");
    /// skill.extra_mut().insert("user-invocable".into(), true.into());
    /// assert_eq!(skill.extra()["user-invocable"], true);
    /// ```
    pub fn extra_mut(&mut self) -> &mut Metadata {
        &mut self.maps_mut()[EXTRA]
    }

    /// The same skill with `license` set.
    ///
    /// ```
    /// assert_eq!(skillkit::Skill::new("a:b", "d").with_license("MIT").license(), Some("MIT"));
    /// ```
    pub fn with_license(mut self, license: impl Into<Cow<'static, str>>) -> Self {
        self.more_mut().license = Some(license.into());
        self
    }

    /// The same skill with `compatibility` set.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_compatibility("Linux");
    /// assert_eq!(skill.compatibility(), Some("Linux"));
    /// ```
    pub fn with_compatibility(mut self, compatibility: impl Into<Cow<'static, str>>) -> Self {
        self.more_mut().compatibility = Some(compatibility.into());
        self
    }

    /// The same skill with `allowed-tools` set.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_allowed_tools(["Bash(git:*)"]);
    /// assert_eq!(skill.allowed_tools(), ["Bash(git:*)"]);
    /// ```
    pub fn with_allowed_tools<T: Into<Cow<'static, str>>>(
        mut self,
        tools: impl IntoIterator<Item = T>,
    ) -> Self {
        self.more_mut().allowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// The same skill with `metadata` as its metadata map.
    ///
    /// ```
    /// let mut metadata = skillkit::skill::Metadata::new();
    /// metadata.insert("version".into(), "1.0".into());
    /// let skill = skillkit::Skill::new("a:b", "d").with_metadata(metadata);
    /// assert_eq!(skill.metadata()["version"], "1.0");
    /// ```
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.maps_mut()[METADATA] = metadata;
        self.shrink();
        self
    }

    /// The same skill with `model` set.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_model("scripted://demo");
    /// assert_eq!(skill.model(), Some("scripted://demo"));
    /// ```
    pub fn with_model(mut self, model: impl Into<Cow<'static, str>>) -> Self {
        self.more_mut().model = Some(model.into());
        self
    }

    /// The same skill with `required_scope` set.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_required_scope("admin");
    /// assert_eq!(skill.required_scope(), Some("admin"));
    /// ```
    pub fn with_required_scope(mut self, scope: impl Into<Cow<'static, str>>) -> Self {
        self.more_mut().required_scope = Some(scope.into());
        self
    }

    /// The same skill with `extra` as its map of other frontmatter keys.
    ///
    /// ```
    /// let mut extra = skillkit::skill::Metadata::new();
    /// extra.insert("argument-hint".into(), "<file>".into());
    /// let skill = skillkit::Skill::new("a:b", "d").with_extra(extra);
    /// assert_eq!(skill.extra()["argument-hint"], "<file>");
    /// ```
    pub fn with_extra(mut self, extra: Metadata) -> Self {
        self.maps_mut()[EXTRA] = extra;
        self.shrink();
        self
    }

    /// The skill with the rare fields `more` (none kept when all are empty).
    pub(crate) fn with_more(mut self, more: More) -> Self {
        self.more = (!more.is_empty()).then(|| Box::new(more));
        self
    }

    fn more_mut(&mut self) -> &mut More {
        self.more.get_or_insert_default()
    }

    fn maps(&self) -> &[Metadata; 2] {
        Maps::of(self.more.as_ref().and_then(|more| more.maps.as_deref()))
    }

    fn maps_mut(&mut self) -> &mut [Metadata; 2] {
        self.more_mut().maps.get_or_insert_default().get_mut()
    }

    /// Drops the maps, or all the rare fields, when they are empty again.
    fn shrink(&mut self) {
        if let Some(more) = self.more.as_deref_mut()
            && more.maps.as_ref().is_some_and(|maps| maps.is_empty())
        {
            more.maps = None;
        }
        if self.more.as_deref().is_some_and(More::is_empty) {
            self.more = None;
        }
    }

    /// The directory of the skill's `SKILL.md`, when it came from a file.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_location("/kits/a/skills/b/SKILL.md");
    /// assert_eq!(skill.dir(), Some(std::path::Path::new("/kits/a/skills/b")));
    /// ```
    pub fn dir(&self) -> Option<&Path> {
        self.location.as_deref().and_then(Path::parent)
    }

    /// Builds the skill of kit `kit` from a parsed `SKILL.md`, applying the
    /// naming rule (`<kit>:<skill>`; a prefix naming another kit is refused).
    /// The body is the document's; a provider that read only the frontmatter
    /// ([`SkillDocument::read_frontmatter`]) sets [`Body::from_file`] instead.
    ///
    /// ```
    /// use skillkit_parser::SkillDocument;
    /// let doc = SkillDocument::parse("---\nname: read\ndescription: d\n---\nbody").unwrap();
    /// let skill = skillkit::Skill::from_document("files", doc, None).unwrap();
    /// assert_eq!(skill.name, "files:read");
    /// ```
    pub fn from_document(
        kit: &str,
        doc: SkillDocument,
        location: Option<Arc<Path>>,
    ) -> Result<Skill, Diagnostic> {
        let origin = kit::Declared {
            name: &doc.name,
            path: location.as_deref(),
            line: doc.name_line,
        };
        let name = kit::qualify(kit, &origin)?.name;
        let skill = Skill {
            name: name.into(),
            description: doc.description.into(),
            body: doc.body.into(),
            location,
            more: None,
        };
        Ok(skill.with_more(More {
            license: doc.license.map(Cow::Owned),
            compatibility: doc.compatibility.map(Cow::Owned),
            allowed_tools: doc.allowed_tools.into_iter().map(Cow::Owned).collect(),
            model: doc.model.map(Cow::Owned),
            required_scope: doc.required_scope.map(Cow::Owned),
            maps: Maps::new(doc.metadata, doc.extra),
        }))
    }
}
