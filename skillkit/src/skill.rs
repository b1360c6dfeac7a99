//! [`Skill`]: a markdown prompt with frontmatter. A skill is data: the code
//! that executes a skill is bound to it by its provider
//! ([`KitProvider::tool`](crate::KitProvider::tool)).

mod body;
mod render;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use skillkit_parser::{Diagnostic, SkillDocument, kit, name};

pub use body::{Body, BodyError};
pub use render::Arguments;

/// A map of frontmatter values (`metadata`, `extra`, kit metadata).
///
/// ```
/// let mut metadata = skillkit::Metadata::new();
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
/// ```
/// use skillkit::Skill;
///
/// let skill = Skill::new("files:read", "Read a file.").with_body("Read the file at $ARGUMENTS.");
/// assert_eq!(skill.kit(), Some("files"));
/// assert_eq!(skill.bare_name(), "read");
/// assert_eq!(skill.render("notes.txt", None)?, "Read the file at notes.txt.");
/// # Ok::<(), skillkit::BodyError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Skill {
    /// The fully qualified name, `<kit>:<skill>` (for example `files:read`).
    pub name: Cow<'static, str>,
    /// What the skill does and when to use it.
    pub description: Cow<'static, str>,
    /// The markdown prompt, with template tokens (see [`Skill::render`]): in
    /// memory, or left in its file until it is read (see [`Body`]).
    pub body: Body,
    /// `license` (Agent Skills standard).
    pub license: Option<Cow<'static, str>>,
    /// `compatibility` (Agent Skills standard).
    pub compatibility: Option<Cow<'static, str>>,
    /// `allowed-tools` (Agent Skills standard).
    pub allowed_tools: Vec<Cow<'static, str>>,
    /// `metadata` (Agent Skills standard).
    pub metadata: Metadata,
    /// `model` (SkillKit): the model URI this skill prefers.
    pub model: Option<Cow<'static, str>>,
    /// `required_scope` (SkillKit): the scope a caller needs.
    pub required_scope: Option<Cow<'static, str>>,
    /// Every other frontmatter key (`argument-hint`, `user-invocable`, …).
    pub extra: Metadata,
    /// The `SKILL.md` the skill was read from, when it came from a file.
    pub location: Option<PathBuf>,
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

    /// The directory of the skill's `SKILL.md`, when it came from a file.
    ///
    /// ```
    /// let mut skill = skillkit::Skill::new("a:b", "d");
    /// skill.location = Some("/kits/a/skills/b/SKILL.md".into());
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
        location: Option<PathBuf>,
    ) -> Result<Skill, Diagnostic> {
        let origin = kit::Origin {
            name: &doc.name,
            path: location.as_deref(),
            line: doc.name_line,
        };
        let name = kit::qualify(kit, &origin)?.name;
        Ok(Skill {
            name: name.into(),
            description: doc.description.into(),
            body: doc.body.into(),
            license: doc.license.map(Cow::Owned),
            compatibility: doc.compatibility.map(Cow::Owned),
            allowed_tools: doc.allowed_tools.into_iter().map(Cow::Owned).collect(),
            metadata: doc.metadata,
            model: doc.model.map(Cow::Owned),
            required_scope: doc.required_scope.map(Cow::Owned),
            extra: doc.extra,
            location,
        })
    }

    /// The body with its template tokens substituted, as handed to a model when
    /// the skill is activated:
    ///
    /// * `$ARGUMENTS`: all arguments, as given;
    /// * `$ARGUMENTS[N]` and `$N`: argument `N` (0-based), only when it exists, so
    ///   `$5` in prose stays `$5` when fewer than six arguments were given;
    /// * `$SKILL_DIR` / `${SKILL_DIR}`: the skill's directory, when it has one;
    /// * `$SESSION_ID` / `${SESSION_ID}`: the session id, when given.
    ///
    /// Arguments are split like a shell does (quotes group words). When the body
    /// has no argument token and arguments were given, they are appended as
    /// `ARGUMENTS: …`. Nothing in the body is ever executed.
    ///
    /// A body that lives in its file is read now ([`Body::read`]); that is
    /// the only way this call fails.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_body("Copy $0 to $1; it costs $5.");
    /// assert_eq!(skill.render("'my file' backup", None)?, "Copy my file to backup; it costs $5.");
    /// let plain = skillkit::Skill::new("a:c", "d").with_body("Summarise.");
    /// assert_eq!(plain.render("the report", None)?, "Summarise.\n\nARGUMENTS: the report");
    /// # Ok::<(), skillkit::BodyError>(())
    /// ```
    pub fn render(&self, arguments: &str, session_id: Option<&str>) -> Result<String, BodyError> {
        let body = self.body.read()?;
        Ok(render::render(
            &body,
            self.dir(),
            &Arguments::parse(arguments),
            session_id,
        ))
    }
}
