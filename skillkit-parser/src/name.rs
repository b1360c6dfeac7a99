//! Skill names: the Agent Skills charset and SkillKit's `<kit>:<skill>` rule.
//!
//! One rule for every provider: a skill's fully qualified name is `<kit>:<skill>`.
//! The frontmatter name is the bare part; a frontmatter name that already carries
//! the kit's own prefix (`files:read` in kit `files`) is accepted as it is, and a
//! prefix naming another kit is refused.

use unicode_normalization::UnicodeNormalization;

/// The longest bare skill name the Agent Skills standard allows, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// The separator between the kit and the skill in a full name.
pub const SEPARATOR: char = ':';

/// Splits a full name into `(kit, skill)`; a bare name has no kit.
///
/// ```
/// use skillkit_parser::name::split;
/// assert_eq!(split("files:read"), (Some("files"), "read"));
/// assert_eq!(split("read"), (None, "read"));
/// ```
pub fn split(name: &str) -> (Option<&str>, &str) {
    match name.split_once(SEPARATOR) {
        Some((kit, skill)) => (Some(kit), skill),
        None => (None, name),
    }
}

/// The fully qualified name of frontmatter name `name` inside kit `kit`.
///
/// A name is read as a `name:` line of a file is: the whitespace around it
/// and around each of its parts (a space, a newline, a tab) is not part of
/// it, so every provider stores and serves ` read\n` as `read`. An empty
/// name is refused, as a file's empty `name:` is.
///
/// ```
/// use skillkit_parser::name::qualify;
/// assert_eq!(qualify("files", "read").unwrap(), "files:read");
/// assert_eq!(qualify("files", "files:read").unwrap(), "files:read");
/// assert_eq!(qualify("files", " files : read\n").unwrap(), "files:read");
/// assert!(qualify("files", "net:fetch").unwrap_err().contains("`net`"));
/// assert!(qualify("files", " \t").unwrap_err().contains("empty"));
/// ```
pub fn qualify(kit: &str, name: &str) -> Result<String, String> {
    let (prefix, bare) = split(name.trim());
    let bare = bare.trim();
    match prefix.map(str::trim) {
        _ if bare.is_empty() => Err(
            "the skill name is empty; name the skill (lowercase letters, digits and hyphens, \
             as in `my-skill`)"
                .to_owned(),
        ),
        Some(prefix) if prefix != kit => Err(format!(
            "skill name `{}` names kit `{prefix}`, but the file is in kit `{kit}`; \
             write the bare name `{bare}` (SkillKit adds `{kit}:`)",
            name.trim()
        )),
        _ => {
            // Exactly as long as needed: a catalog keeps every name.
            let mut full = String::with_capacity(kit.len() + SEPARATOR.len_utf8() + bare.len());
            full.push_str(kit);
            full.push(SEPARATOR);
            full.push_str(bare);
            Ok(full)
        }
    }
}

/// Every way `name` breaks the Agent Skills naming rules (empty when it follows
/// them): lowercase letters and digits (Unicode letters allowed, as in the
/// reference validator) and single inner hyphens, at most 64 characters after
/// NFKC normalisation. `dir_name`, when given, must equal the name.
///
/// ```
/// use skillkit_parser::name::problems;
/// assert!(problems("pdf-reader", Some("pdf-reader")).is_empty());
/// assert_eq!(problems("PDF--Reader", None).len(), 2);
/// assert!(problems("a", Some("b"))[0].contains("must match"));
/// ```
pub fn problems(name: &str, dir_name: Option<&str>) -> Vec<String> {
    let mut problems = Vec::new();
    let name = nfkc(name.trim());
    if name.is_empty() {
        problems.push("Field 'name' must be a non-empty string".to_owned());
        return problems;
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        problems.push(format!(
            "Skill name '{name}' exceeds {MAX_NAME_CHARS} character limit ({chars} chars); shorten it"
        ));
    }
    if name
        .chars()
        .any(|c| c.to_lowercase().ne(std::iter::once(c)))
    {
        problems.push(format!("Skill name '{name}' must be lowercase"));
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("Skill name cannot start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        problems.push("Skill name cannot contain consecutive hyphens".to_owned());
    }
    if !name.chars().all(|c| c.is_alphanumeric() || c == '-') {
        problems.push(format!(
            "Skill name '{name}' contains invalid characters. Only letters, digits, and hyphens are allowed."
        ));
    }
    if let Some(dir_name) = dir_name {
        let dir_name = nfkc(dir_name);
        if dir_name != name {
            problems.push(format!(
                "Directory name '{dir_name}' must match skill name '{name}'; rename one of them"
            ));
        }
    }
    problems
}

/// NFKC normalisation, free for ASCII text (which it leaves unchanged).
fn nfkc(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(text.nfkc().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unicode_letters_are_allowed() {
        assert!(problems("données", None).is_empty());
        assert!(!problems("Données", None).is_empty());
    }

    #[test]
    fn length_counts_characters_after_nfkc() {
        assert!(problems(&"a".repeat(64), None).is_empty());
        assert_eq!(problems(&"a".repeat(65), None).len(), 1);
    }

    #[test]
    fn empty_prefix_parts_are_refused() {
        assert!(qualify("files", "files:").is_err());
        assert!(qualify("files", ":read").is_err());
    }
}
