//! `SKILL.md`: a skill's frontmatter fields and its markdown body.

use std::path::Path;

use serde_json::{Map, Value};

use crate::fields::Fields;
use crate::layout::Stamp;
use crate::{Diagnostic, frontmatter, name};

thread_local! {
    /// The head buffer of [`SkillDocument::read_open`] and
    /// [`SkillDocument::read_frontmatter`], reused from file to file.
    static HEAD: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The largest head buffer kept for reuse (a bigger one is freed).
const MAX_REUSED_HEAD: usize = 64 << 10;

/// The file name of a skill inside its directory.
pub const SKILL_FILE: &str = "SKILL.md";

/// A parsed `SKILL.md`.
///
/// Loading is lenient (the Agent Skills client guide, and Claude Code): only a
/// missing or empty `description`, an empty `name` and broken frontmatter refuse
/// the file; other problems are [`warnings`](SkillDocument::warnings) and the
/// skill loads. A file read from a folder without `name` takes the folder's name,
/// and a top-level value containing `: ` without quotes is read as text (see
/// [`frontmatter::parse_mapping_lenient`]), each with a warning. Strict checks
/// are [`crate::validate`], which reports both.
///
/// ```
/// let doc = skillkit_parser::SkillDocument::parse(
///     "---\nname: read\ndescription: Read a file.\nargument-hint: <path>\n---\nRead $ARGUMENTS.\n",
/// ).unwrap();
/// assert_eq!(doc.name, "read");
/// assert_eq!(doc.extra["argument-hint"], "<path>");
/// assert_eq!(doc.body, "Read $ARGUMENTS.\n");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SkillDocument {
    /// `name`, trimmed, as written (it may carry the kit's own `kit:` prefix).
    pub name: String,
    /// The 1-based file line of the `name` key, where naming problems are reported.
    pub name_line: usize,
    /// `description`, trimmed.
    pub description: String,
    /// `license` (Agent Skills standard).
    pub license: Option<String>,
    /// `compatibility` (Agent Skills standard).
    pub compatibility: Option<String>,
    /// `allowed-tools` (Agent Skills standard): a YAML list, or text split on
    /// spaces and commas outside parentheses.
    pub allowed_tools: Vec<String>,
    /// `metadata` (Agent Skills standard): a map.
    pub metadata: Map<String, Value>,
    /// `model` (SkillKit extension): the model URI to run this skill with.
    pub model: Option<String>,
    /// `required_scope` (SkillKit extension): the scope a caller needs.
    pub required_scope: Option<String>,
    /// Every other frontmatter key, unchanged (`argument-hint`, `user-invocable`, …).
    pub extra: Map<String, Value>,
    /// The markdown after the frontmatter, with CRLF line endings turned into LF.
    pub body: String,
    /// The 1-based file line where the body starts.
    pub body_line: usize,
    /// Problems that did not stop the skill from loading.
    pub warnings: Vec<Diagnostic>,
}

impl SkillDocument {
    /// Parses the text of a `SKILL.md`.
    ///
    /// ```
    /// let err = skillkit_parser::SkillDocument::parse("---\nname: a\n---\n").unwrap_err();
    /// assert!(err.message.contains("description"));
    /// ```
    pub fn parse(text: &str) -> Result<Self, Diagnostic> {
        Self::parse_in(text, None, None)
    }

    /// Parses `text`; the body is `body` when given (read into its own buffer
    /// by [`SkillDocument::read_open`]), else the rest of `text`.
    fn parse_in(text: &str, body: Option<String>, dir: Option<&str>) -> Result<Self, Diagnostic> {
        let split = frontmatter::split(text)?;
        let (map, yaml_warnings) = frontmatter::parse_mapping_lenient(split.yaml, split.yaml_line)?;
        let mut fields = Fields::new(map, split.yaml, split.yaml_line);
        fields.warnings.extend(yaml_warnings);
        let body = to_lf(body.unwrap_or_else(|| split.body.to_owned()));
        Self::from_fields(fields, body, split.body_line, dir)
    }

    /// Builds the document from a frontmatter that arrived already parsed
    /// into a map (the MCP skills extension sends it as JSON), with the same
    /// field and naming rules as a file; `dir` is the name of the skill's
    /// folder (the segment before `SKILL.md`), `name`'s fallback and the
    /// name it is compared with. The body is empty, to be read later.
    ///
    /// ```
    /// let map = serde_json::json!({"name": "pdf", "description": "Read PDFs.", "argument-hint": "<file>"});
    /// let map = map.as_object().unwrap().clone();
    /// let doc = skillkit_parser::SkillDocument::from_frontmatter(map, Some("pdf")).unwrap();
    /// assert_eq!((doc.name.as_str(), doc.body.as_str()), ("pdf", ""));
    /// assert_eq!(doc.extra["argument-hint"], "<file>");
    /// let err = skillkit_parser::SkillDocument::from_frontmatter(Default::default(), None).unwrap_err();
    /// assert!(err.message.contains("missing required field `name`"));
    /// ```
    pub fn from_frontmatter(
        map: Map<String, Value>,
        dir: Option<&str>,
    ) -> Result<Self, Diagnostic> {
        Self::from_fields(Fields::new(map, "", 1), String::new(), 1, dir)
    }

    /// The document of the fields of a frontmatter and its (LF) body.
    fn from_fields(
        mut fields: Fields<'_>,
        body: String,
        body_line: usize,
        dir: Option<&str>,
    ) -> Result<Self, Diagnostic> {
        let name = match dir {
            // Claude Code's rule: a skill without `name` is named after its folder.
            Some(dir) if !fields.has("name") => {
                fields.warnings.push(Diagnostic::warning(
                    1,
                    1,
                    format!(
                        "missing field `name`: the skill takes its folder's name `{dir}`; \
                         add `name: {dir}` to the frontmatter"
                    ),
                ));
                dir.to_owned()
            }
            _ => fields.required("name", "my-skill")?,
        };
        let description =
            fields.required("description", "What the skill does and when to use it.")?;
        let name_line = fields.line("name");
        if fields.is_list("allowed-tools") {
            // Accepted, as Claude Code does; the spec writes one string.
            let line = fields.line("allowed-tools");
            fields.warnings.push(Diagnostic::warning(
                line,
                1,
                "`allowed-tools` is a YAML list; the Agent Skills specification writes it as one \
                 space-separated string: `allowed-tools: Read Grep`",
            ));
        }
        let doc_fields = SkillDocument {
            license: fields.text("license"),
            compatibility: fields.text("compatibility"),
            allowed_tools: fields.list("allowed-tools"),
            metadata: fields.map("metadata"),
            model: fields.text("model"),
            required_scope: fields.text("required_scope"),
            extra: Map::new(),
            name,
            name_line,
            description,
            body,
            body_line,
            warnings: Vec::new(),
        };
        let (extra, mut warnings) = fields.rest();
        let bare = name::split(&doc_fields.name).1;
        warnings.extend(
            name::problems(bare, dir)
                .into_iter()
                .map(|p| Diagnostic::warning(name_line, 1, p)),
        );
        Ok(SkillDocument {
            extra,
            warnings,
            ..doc_fields
        })
    }

    /// Parses the bytes of `SKILL.md` at `path`: UTF-8 is checked, diagnostics
    /// name `path`, and a name that differs from the skill's directory is a
    /// warning (the skill still loads).
    ///
    /// ```
    /// let doc = skillkit_parser::SkillDocument::parse_file(
    ///     "skills/write/SKILL.md".as_ref(),
    ///     b"---\nname: read\ndescription: d\n---\n",
    /// ).unwrap();
    /// assert!(doc.warnings[0].to_string().starts_with("skills/write/SKILL.md:2:1:"));
    /// ```
    pub fn parse_file(path: &Path, bytes: &[u8]) -> Result<Self, Diagnostic> {
        let parsed =
            frontmatter::decode(bytes).and_then(|text| Self::parse_in(text, None, dir_name(path)));
        Self::located(parsed, path)
    }

    /// Reads and parses an opened `SKILL.md` of length `len` at `path`, as
    /// [`parse_file`](SkillDocument::parse_file) does, but reading the body into
    /// its own buffer so it is never copied (the fast path of the runtime).
    /// Open it with [`open_file`](crate::open_file), which never blocks.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("SKILL.md");
    /// std::fs::write(&path, "---\nname: a\ndescription: d\n---\nBody\n").unwrap();
    /// let (file, meta) = skillkit_parser::open_file(&path).unwrap();
    /// let doc = skillkit_parser::SkillDocument::read_open(file, meta.len(), &path).unwrap();
    /// assert_eq!(doc.body, "Body\n");
    /// ```
    pub fn read_open(file: std::fs::File, len: u64, path: &Path) -> Result<Self, Diagnostic> {
        Self::read_open_parts(file, len, path, true)
    }

    /// Reads and parses only the frontmatter of an opened `SKILL.md` of length
    /// `len` at `path`: reading stops at the closing `---` line, so the body is
    /// never read (progressive disclosure: a catalog needs names and
    /// descriptions; [`read_body`] reads the body when the skill is activated).
    /// The document's `body` is empty; `body_line` says where it starts. Open
    /// the file with [`open_file`](crate::open_file), which never blocks.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("SKILL.md");
    /// std::fs::write(&path, "---\nname: a\ndescription: d\n---\nA long body\n").unwrap();
    /// let (file, meta) = skillkit_parser::open_file(&path).unwrap();
    /// let doc = skillkit_parser::SkillDocument::read_frontmatter(file, meta.len(), &path).unwrap();
    /// assert_eq!((doc.name.as_str(), doc.body.as_str(), doc.body_line), ("a", "", 5));
    /// ```
    pub fn read_frontmatter(
        file: std::fs::File,
        len: u64,
        path: &Path,
    ) -> Result<Self, Diagnostic> {
        Self::read_open_parts(file, len, path, false)
    }

    fn read_open_parts(
        file: std::fs::File,
        len: u64,
        path: &Path,
        with_body: bool,
    ) -> Result<Self, Diagnostic> {
        let body = if with_body { u64::MAX } else { 0 };
        let parts = crate::read_parts(file, len, path, body, HEAD.take())?;
        let parsed = frontmatter::decode(&parts.head).and_then(|head| {
            let body = match parts.body {
                Some((body, body_line)) => {
                    Some(String::from_utf8(body).map_err(|e| body_not_utf8(&e, body_line))?)
                }
                None => None,
            };
            Self::parse_in(head, body, dir_name(path))
        });
        // The buffer goes back for the next file this thread reads: no
        // allocation per file, and no freed 4 KiB blocks left between the
        // small ones a catalog keeps.
        if parts.head.capacity() <= MAX_REUSED_HEAD {
            HEAD.set(parts.head);
        }
        Self::located(parsed, path)
    }

    /// Names `path` in the diagnostic or in the document's warnings.
    fn located(parsed: Result<Self, Diagnostic>, path: &Path) -> Result<Self, Diagnostic> {
        let mut doc = parsed.map_err(|d| d.with_path(path))?;
        for warning in &mut doc.warnings {
            warning.path = Some(path.to_path_buf());
        }
        Ok(doc)
    }

    /// Reads and parses the `SKILL.md` at `path`.
    ///
    /// ```
    /// let err = skillkit_parser::SkillDocument::read("/no/such/SKILL.md".as_ref()).unwrap_err();
    /// assert!(err.to_string().starts_with("/no/such/SKILL.md:"));
    /// ```
    pub fn read(path: &Path) -> Result<Self, Diagnostic> {
        let bytes = crate::read_file(path)?;
        Self::parse_file(path, &bytes)
    }
}

/// Reads the body of the `SKILL.md` at `path` (everything after its
/// frontmatter, CRLF turned into LF), as [`SkillDocument::read`] would give it,
/// without parsing the frontmatter's YAML. A file that no longer exists, is
/// not UTF-8 or lost its frontmatter is a diagnostic naming it.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("SKILL.md");
/// std::fs::write(&path, "---\nname: a\ndescription: d\n---\r\nBody\r\n").unwrap();
/// assert_eq!(skillkit_parser::skill::read_body(&path).unwrap(), "Body\n");
/// assert!(skillkit_parser::skill::read_body("/no/such/SKILL.md".as_ref()).is_err());
/// ```
pub fn read_body(path: &Path) -> Result<String, Diagnostic> {
    read_body_stamped(path).map(|(body, _)| body)
}

/// [`read_body`], with the [`Stamp`] of the file it read (taken on the open
/// handle): what a cache of bodies keeps to tell, later, that the file is
/// unchanged.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("SKILL.md");
/// use skillkit_parser::layout::Stamp;
/// std::fs::write(&path, "---\nname: a\ndescription: d\n---\nBody").unwrap();
/// let (body, stamp) = skillkit_parser::skill::read_body_stamped(&path).unwrap();
/// assert_eq!(body, "Body");
/// assert_eq!(Some(stamp), Stamp::of(&path));
/// ```
pub fn read_body_stamped(path: &Path) -> Result<(String, Stamp), Diagnostic> {
    let (file, meta) = crate::open_file(path).map_err(|e| crate::cannot_read(path, &e))?;
    let bytes = crate::read_open_file(file, meta.len(), path)?;
    let body = body_of(&bytes).map_err(|d| d.with_path(path))?;
    Ok((body, Stamp::from_metadata(&meta)))
}

/// The first `limit` bytes of the body of the `SKILL.md` at `path` (all of
/// it when shorter; cut at a character boundary; CRLF turned into LF),
/// reading the file no further than that: the lead of a long body, which is
/// what a search index reads. With `usize::MAX` it is [`read_body`]. A file
/// that no longer exists, is not UTF-8 (in the part read) or lost its
/// frontmatter is a diagnostic naming it.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("SKILL.md");
/// std::fs::write(&path, "---\nname: a\ndescription: d\n---\nOverview. The rest.\n").unwrap();
/// assert_eq!(skillkit_parser::skill::read_body_head(&path, 9).unwrap(), "Overview.");
/// assert_eq!(skillkit_parser::skill::read_body_head(&path, 100).unwrap(), "Overview. The rest.\n");
/// ```
pub fn read_body_head(path: &Path, limit: usize) -> Result<String, Diagnostic> {
    let (file, meta) = crate::open_file(path).map_err(|e| crate::cannot_read(path, &e))?;
    let limit = u64::try_from(limit).unwrap_or(u64::MAX);
    let parts = crate::read_parts(file, meta.len(), path, limit.max(1), Vec::new())?;
    let located = |d: Diagnostic| d.with_path(path);
    let Some((mut body, body_line)) = parts.body else {
        // No frontmatter: the whole file was read, and says what is wrong.
        return body_of(&parts.head).map_err(located);
    };
    frontmatter::decode(&parts.head).map_err(located)?;
    body.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let cut = body.len() as u64 == limit;
    let text = match String::from_utf8(body) {
        Ok(text) => text,
        // A character cut in two by the limit is left out.
        Err(e) if cut && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
        Err(e) => return Err(located(body_not_utf8(&e, body_line))),
    };
    Ok(to_lf(text))
}

/// The diagnostic for a body (starting on line `body_line`) that is not
/// UTF-8: where its first invalid byte is.
fn body_not_utf8(e: &std::string::FromUtf8Error, body_line: usize) -> Diagnostic {
    let mut d = frontmatter::decode(&e.as_bytes()[..=e.utf8_error().valid_up_to()])
        .err()
        .unwrap_or_else(|| {
            Diagnostic::error(1, 1, "the file is not valid UTF-8; save it as UTF-8")
        });
    d.line += body_line - 1;
    d
}

/// The body of a `SKILL.md` whose bytes are `bytes` (everything after its
/// frontmatter, CRLF turned into LF), as [`read_body`] gives it for a file:
/// for bytes that arrived another way (an MCP server's `resources/read`).
///
/// ```
/// let body = skillkit_parser::skill::body_of(b"---\nname: a\ndescription: d\n---\r\nBody\r\n").unwrap();
/// assert_eq!(body, "Body\n");
/// assert!(skillkit_parser::skill::body_of(b"no frontmatter").is_err());
/// ```
pub fn body_of(bytes: &[u8]) -> Result<String, Diagnostic> {
    frontmatter::decode(bytes)
        .and_then(frontmatter::split)
        .map(|split| to_lf(split.body.to_owned()))
}

/// The name of the directory holding `path`.
fn dir_name(path: &Path) -> Option<&str> {
    path.parent()
        .and_then(Path::file_name)
        .and_then(|d| d.to_str())
}

/// The text with CRLF line endings turned into LF (unchanged, without a copy,
/// when it has none).
pub(crate) fn to_lf(text: String) -> String {
    // `memchr` over the bytes: `str::contains` on a `char` is a plain
    // loop, a tenth of a body build's reading time on whole bodies. Not
    // called on an empty body (a load reads frontmatters only): `memchr`'s
    // first call in a process detects the CPU's features, 30 µs under a
    // hypervisor (see `frontmatter::newline`).
    if !text.is_empty() && memchr::memchr(b'\r', text.as_bytes()).is_some() {
        text.replace("\r\n", "\n")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read stops at the size the file had when it was opened; a size
    /// that is wrong (a file that grew since, or one that reports 0 as
    /// `/proc` files do) still reads the whole frontmatter.
    #[test]
    fn a_size_smaller_than_the_file_still_reads_its_frontmatter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        let description = "d".repeat(3000);
        let text = format!("---\nname: a\ndescription: {description}\n---\nBody\n");
        std::fs::write(&path, &text).unwrap();
        for len in [0, 10, 2048, 2100, text.len() as u64] {
            let file = std::fs::File::open(&path).unwrap();
            let doc = SkillDocument::read_frontmatter(file, len, &path).unwrap();
            assert_eq!(doc.description, description, "{len}");
            let file = std::fs::File::open(&path).unwrap();
            let doc = SkillDocument::read_open(file, len, &path).unwrap();
            assert_eq!(doc.description, description, "{len}");
        }
    }

    #[test]
    fn standard_and_extension_fields_are_kept() {
        let doc = SkillDocument::parse(
            "---\nname: read\ndescription: d\nlicense: MIT\ncompatibility: any\n\
             allowed-tools: Read Grep\nmetadata:\n  author: me\nmodel: anthropic://x\n\
             required_scope: files\nuser-invocable: false\n---\nbody",
        )
        .unwrap();
        assert_eq!(doc.license.as_deref(), Some("MIT"));
        assert_eq!(doc.compatibility.as_deref(), Some("any"));
        assert_eq!(doc.allowed_tools, ["Read", "Grep"]);
        assert_eq!(doc.metadata["author"], "me");
        assert_eq!(doc.model.as_deref(), Some("anthropic://x"));
        assert_eq!(doc.required_scope.as_deref(), Some("files"));
        assert_eq!(doc.extra["user-invocable"], false);
        assert!(!doc.extra.contains_key("name"));
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    }

    #[test]
    fn crlf_bodies_become_lf() {
        let doc =
            SkillDocument::parse("---\r\nname: a\r\ndescription: d\r\n---\r\nx\r\ny\r\n").unwrap();
        assert_eq!(doc.body, "x\ny\n");
        assert_eq!(doc.body_line, 5);
    }

    #[test]
    fn missing_description_names_the_fix() {
        let err = SkillDocument::parse("---\nname: a\n---\n").unwrap_err();
        assert!(err.message.contains("add `description:"), "{}", err.message);
    }

    #[test]
    fn list_description_is_an_error_on_its_line() {
        let err = SkillDocument::parse("---\nname: a\ndescription:\n  - x\n---\n").unwrap_err();
        assert_eq!(err.line, 3);
    }

    #[test]
    fn bad_name_charset_is_a_warning_not_an_error() {
        let doc = SkillDocument::parse("---\nname: Read_File\ndescription: d\n---\n").unwrap();
        assert_eq!(doc.name, "Read_File");
        assert!(!doc.warnings.is_empty());
    }

    #[test]
    fn missing_name_takes_the_folder_name_with_a_warning() {
        let doc = SkillDocument::parse_file(
            "skills/pdf-reader/SKILL.md".as_ref(),
            b"---\ndescription: Reads PDFs.\n---\nBody\n",
        )
        .unwrap();
        assert_eq!(doc.name, "pdf-reader");
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        assert_eq!(
            doc.warnings[0].to_string(),
            "skills/pdf-reader/SKILL.md:1:1: warning: missing field `name`: the skill takes its \
             folder's name `pdf-reader`; add `name: pdf-reader` to the frontmatter"
        );
        // Without a folder there is no name to take.
        let err = SkillDocument::parse("---\ndescription: d\n---\n").unwrap_err();
        assert!(err.message.contains("add `name:"), "{}", err.message);
    }

    #[test]
    fn unquoted_colon_values_read_as_text_with_a_warning() {
        let doc = SkillDocument::parse(
            "---\nname: pdf\ndescription: Use when: the user asks about PDFs\n\
             argument-hint: [file]\n---\nBody\n",
        )
        .unwrap();
        assert_eq!(doc.description, "Use when: the user asks about PDFs");
        assert_eq!(doc.extra["argument-hint"], serde_json::json!(["file"]));
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        assert_eq!((doc.warnings[0].line, doc.warnings[0].column), (3, 14));
        assert!(
            doc.warnings[0]
                .message
                .contains("put it in double quotes, as `description: \"...\"`"),
            "{}",
            doc.warnings[0].message
        );
        // Other broken YAML still refuses the file, with the YAML error.
        let err =
            SkillDocument::parse("---\nname: a\ndescription: a: b\n  bad: [\n---\n").unwrap_err();
        assert!(err.message.contains("invalid YAML"), "{}", err.message);
    }

    #[test]
    fn a_list_of_allowed_tools_is_read_with_a_warning() {
        let doc = SkillDocument::parse(
            "---\nname: a\ndescription: d\nallowed-tools:\n  - Read\n  - Bash(git:*)\n---\n",
        )
        .unwrap();
        assert_eq!(doc.allowed_tools, ["Read", "Bash(git:*)"]);
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        assert_eq!(doc.warnings[0].line, 4);
        assert!(doc.warnings[0].message.contains("space-separated string"));
        let text =
            SkillDocument::parse("---\nname: a\ndescription: d\nallowed-tools: Read Grep\n---\n")
                .unwrap();
        assert_eq!(text.allowed_tools, ["Read", "Grep"]);
        assert!(text.warnings.is_empty(), "{:?}", text.warnings);
    }

    #[test]
    fn numeric_scalars_read_as_text() {
        let doc = SkillDocument::parse("---\nname: 42\ndescription: true\n---\n").unwrap();
        assert_eq!(
            (doc.name.as_str(), doc.description.as_str()),
            ("42", "true")
        );
    }
}
