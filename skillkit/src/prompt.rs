//! The `<available_skills>` block agents put in a system prompt, and how a
//! description is shown in it and in every other listing.

use std::borrow::Cow;
use std::fmt::Write;

use crate::skill::Skill;

/// The `<available_skills>` XML block listing each skill's name, description and
/// location (the format the Agent Skills reference tooling emits), with text
/// escaped for XML. It lists what it is given: a model should be given only
/// the skills it may invoke (those whose
/// [`model_invocable`](crate::Skill::model_invocable) is true), as the agent
/// and `skillkit to-prompt` do.
///
/// ```
/// let skill = skillkit::Skill::new("pdf:reader", "Reads <PDF> files & more.")
///     .with_location("/skills/pdf/reader/SKILL.md");
/// let block = skillkit::prompt::available_skills([&skill]);
/// assert_eq!(block, "<available_skills>\n<skill>\n<name>\npdf:reader\n</name>\n<description>\n\
///     Reads &lt;PDF&gt; files &amp; more.\n</description>\n<location>\n/skills/pdf/reader/SKILL.md\n\
///     </location>\n</skill>\n</available_skills>");
/// ```
pub fn available_skills<'a>(skills: impl IntoIterator<Item = &'a Skill>) -> String {
    let mut out = String::from(OPEN);
    for skill in skills {
        skill_entry(&mut out, skill);
    }
    out.push_str(CLOSE);
    out
}

/// The most characters of a description a listing or a prompt shows: the
/// Agent Skills limit on a description. A description from any source (a
/// file, a database, a server) may be longer; it is shown cut, saying so.
pub const MAX_DESCRIPTION_SHOWN: usize = skillkit_parser::validate::MAX_DESCRIPTION_CHARS;

/// `description` as a listing or a prompt shows it: whole when it has at
/// most [`MAX_DESCRIPTION_SHOWN`] characters; else its first ones and a
/// marker saying how many were left out.
///
/// ```
/// use skillkit::prompt::shown_description;
/// assert_eq!(shown_description("Reads PDFs."), "Reads PDFs.");
/// let long = "x".repeat(5000);
/// let shown = shown_description(&long);
/// assert!(shown.starts_with(&"x".repeat(1024)));
/// assert!(shown.ends_with("[description cut: 3976 more characters]"));
/// ```
pub fn shown_description(description: &str) -> Cow<'_, str> {
    match cut_at(description, MAX_DESCRIPTION_SHOWN) {
        None => Cow::Borrowed(description),
        Some((kept, left)) => {
            Cow::Owned(format!("{kept}… [description cut: {left} more characters]"))
        }
    }
}

/// `text` past its first `max` characters: those, and how many more there
/// are; `None` when it has no more than `max`.
pub(crate) fn cut_at(text: &str, max: usize) -> Option<(&str, usize)> {
    if text.len() <= max {
        return None;
    }
    let (at, _) = text.char_indices().nth(max)?;
    Some((&text[..at], text[at..].chars().count()))
}

/// What opens an `<available_skills>` block.
pub(crate) const OPEN: &str = "<available_skills>\n";
/// What closes it.
pub(crate) const CLOSE: &str = "</available_skills>";

/// Appends `skill`'s `<skill>` element of an `<available_skills>` block.
pub(crate) fn skill_entry(out: &mut String, skill: &Skill) {
    out.push_str("<skill>\n");
    tag(out, "name", &skill.name);
    tag(out, "description", &shown_description(&skill.description));
    if let Some(location) = &skill.location {
        tag(out, "location", &location.display().to_string());
    }
    out.push_str("</skill>\n");
}

fn tag(out: &mut String, name: &str, text: &str) {
    let _ = writeln!(out, "<{name}>");
    escape_into(out, text);
    let _ = writeln!(out, "\n</{name}>");
}

/// Appends `text` with `&`, `<`, `>`, `"` and `'` escaped for XML; runs of
/// other bytes are copied whole.
fn escape_into(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
        out.push_str(&rest[..at]);
        out.push_str(match rest.as_bytes()[at] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => "&#x27;",
        });
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}
