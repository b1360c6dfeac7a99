//! The `<available_skills>` block agents put in a system prompt.

use std::fmt::Write;

use crate::skill::Skill;

/// The `<available_skills>` XML block listing each skill's name, description and
/// location (the format the Agent Skills reference tooling emits), with text
/// escaped for XML.
///
/// ```
/// let mut skill = skillkit::Skill::new("pdf:reader", "Reads <PDF> files & more.");
/// skill.location = Some("/skills/pdf/reader/SKILL.md".into());
/// let block = skillkit::prompt::available_skills([&skill]);
/// assert_eq!(block, "<available_skills>\n<skill>\n<name>\npdf:reader\n</name>\n<description>\n\
///     Reads &lt;PDF&gt; files &amp; more.\n</description>\n<location>\n/skills/pdf/reader/SKILL.md\n\
///     </location>\n</skill>\n</available_skills>");
/// ```
pub fn available_skills<'a>(skills: impl IntoIterator<Item = &'a Skill>) -> String {
    let mut out = String::from("<available_skills>\n");
    for skill in skills {
        out.push_str("<skill>\n");
        tag(&mut out, "name", &skill.name);
        tag(&mut out, "description", &skill.description);
        if let Some(location) = &skill.location {
            tag(&mut out, "location", &location.display().to_string());
        }
        out.push_str("</skill>\n");
    }
    out.push_str("</available_skills>");
    out
}

fn tag(out: &mut String, name: &str, text: &str) {
    let _ = write!(out, "<{name}>\n{}\n</{name}>\n", escape(text));
}

/// Escapes `&`, `<`, `>`, `"` and `'` for XML text.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}
