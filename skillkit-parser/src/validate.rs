//! Strict validation: the Agent Skills rules, with the same valid/invalid verdict
//! as the reference validator `skills-ref` 0.1.1.
//!
//! Loading is lenient; validation reports every problem of a file, not only the
//! first. Where our reading differs from `skills-ref`'s, the verdict still agrees:
//!
//! * `skills-ref` reads YAML with strictyaml, which refuses flow style (`[a, b]`,
//!   `{k: v}`), anchors, aliases and tags. Our YAML parser accepts them, so we look
//!   for them ourselves and report each with its line, saying to use block style.
//! * strictyaml reads every scalar as text; so do we (`name: 42` is the name "42").
//! * `skills-ref` cuts frontmatter at the first `---` anywhere in the text; we cut
//!   at the next line that is exactly `---`, so `description: a --- b` is fine here.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::frontmatter::{self, as_text, key_line};
use crate::{Diagnostic, SKILL_FILE, name};

/// The frontmatter fields the Agent Skills standard allows.
pub const ALLOWED_FIELDS: [&str; 6] = [
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

/// The longest description the standard allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The longest compatibility note the standard allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// The skill file in `dir`: `SKILL.md`, or `skill.md` as the reference validator
/// also accepts. Whatever has the name counts (reading it then says when it is
/// a directory, a FIFO or a link to nothing rather than a file).
///
/// ```
/// assert_eq!(skillkit_parser::validate::find_skill_file("/nowhere".as_ref()), None);
/// ```
pub fn find_skill_file(dir: &Path) -> Option<PathBuf> {
    [SKILL_FILE, "skill.md"]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|path| path.symlink_metadata().is_ok())
}

/// Every problem of the skill directory `dir` (empty when it is valid). Each
/// diagnostic names the skill file (or the directory) and, where it can, the line.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let skill = dir.path().join("pdf-reader");
/// std::fs::create_dir(&skill).unwrap();
/// std::fs::write(skill.join("SKILL.md"), "---\nname: pdf-reader\ndescription: Reads PDFs.\n---\n").unwrap();
/// assert!(skillkit_parser::validate::skill_dir(&skill).is_empty());
/// ```
pub fn skill_dir(dir: &Path) -> Vec<Diagnostic> {
    if !dir.exists() {
        return vec![Diagnostic::error(0, 0, "path does not exist").with_path(dir)];
    }
    if !dir.is_dir() {
        return vec![Diagnostic::error(0, 0, "not a directory").with_path(dir)];
    }
    let Some(file) = find_skill_file(dir) else {
        return vec![
            Diagnostic::error(0, 0, "missing required file SKILL.md: create it with `name` and `description` frontmatter")
                .with_path(dir),
        ];
    };
    let dir_name = dir.file_name().and_then(|n| n.to_str());
    let problems = match crate::read_file(&file) {
        Ok(bytes) => match frontmatter::decode(&bytes) {
            Ok(text) => skill_text(text, dir_name),
            Err(d) => vec![d],
        },
        Err(d) => vec![d],
    };
    problems.into_iter().map(|d| d.with_path(&file)).collect()
}

/// Every problem of the text of a `SKILL.md` whose directory is named
/// `dir_name` (when given).
///
/// ```
/// use skillkit_parser::validate::skill_text;
/// let problems = skill_text("---\nname: Bad--Name\ndescription: d\nauthor: me\n---\n", Some("bad-name"));
/// // Unknown field, uppercase, double hyphen, directory mismatch: all reported.
/// assert_eq!(problems.len(), 4);
/// ```
pub fn skill_text(text: &str, dir_name: Option<&str>) -> Vec<Diagnostic> {
    let split = match frontmatter::split(text) {
        Ok(split) => split,
        Err(d) => return vec![d],
    };
    let mut problems = crate::yaml::strictyaml_problems(split.yaml, split.yaml_line);
    match frontmatter::parse_mapping(split.yaml, split.yaml_line) {
        Ok(map) => problems.extend(field_problems(&map, split.yaml, split.yaml_line, dir_name)),
        Err(d) => problems.push(d),
    }
    problems
}

fn field_problems(
    map: &Map<String, Value>,
    yaml: &str,
    yaml_line: usize,
    dir_name: Option<&str>,
) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    let line = |key: &str| key_line(yaml, yaml_line, key, 1);
    let mut unexpected: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !ALLOWED_FIELDS.contains(k))
        .collect();
    if !unexpected.is_empty() {
        unexpected.sort_unstable();
        problems.push(Diagnostic::error(
            line(unexpected[0]),
            1,
            format!(
                "Unexpected fields in frontmatter: {}. Only {:?} are allowed; move other keys under `metadata:`",
                unexpected.join(", "),
                ALLOWED_FIELDS
            ),
        ));
    }
    match map.get("name") {
        None => problems.push(Diagnostic::error(
            1,
            1,
            "Missing required field in frontmatter: name",
        )),
        Some(value) => {
            let at = line("name");
            match as_text(value) {
                Some(name) => problems.extend(
                    name::problems(&name, dir_name)
                        .into_iter()
                        .map(|p| Diagnostic::error(at, 1, p)),
                ),
                None => problems.push(Diagnostic::error(
                    at,
                    1,
                    "Field 'name' must be a non-empty string",
                )),
            }
        }
    }
    match map.get("description") {
        None => problems.push(Diagnostic::error(
            1,
            1,
            "Missing required field in frontmatter: description",
        )),
        Some(value) => {
            let at = line("description");
            match as_text(value) {
                Some(text) if !text.trim().is_empty() => {
                    let chars = text.chars().count();
                    if chars > MAX_DESCRIPTION_CHARS {
                        problems.push(Diagnostic::error(
                            at,
                            1,
                            format!("Description exceeds {MAX_DESCRIPTION_CHARS} character limit ({chars} chars); shorten it"),
                        ));
                    }
                }
                _ => problems.push(Diagnostic::error(
                    at,
                    1,
                    "Field 'description' must be a non-empty string",
                )),
            }
        }
    }
    if let Some(value) = map.get("compatibility") {
        let at = line("compatibility");
        match as_text(value) {
            Some(text) => {
                let chars = text.chars().count();
                if chars > MAX_COMPATIBILITY_CHARS {
                    problems.push(Diagnostic::error(
                        at,
                        1,
                        format!("Compatibility exceeds {MAX_COMPATIBILITY_CHARS} character limit ({chars} chars); shorten it"),
                    ));
                }
            }
            None => problems.push(Diagnostic::error(
                at,
                1,
                "Field 'compatibility' must be a string",
            )),
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_style_is_reported_with_its_line() {
        let problems = skill_text(
            "---\nname: a\ndescription: d\nallowed-tools: ['x', 'y']\n---\n",
            Some("a"),
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!((problems[0].line, problems[0].column), (4, 16));
    }

    #[test]
    fn block_scalars_and_quotes_are_not_flow() {
        let text = "---\nname: a\ndescription: |\n  [not flow]\n  {nor this}\nmetadata:\n  k: \"[quoted]\"\n---\n";
        assert!(skill_text(text, Some("a")).is_empty());
    }

    #[test]
    fn nested_flow_in_lists_is_found() {
        let text = "---\nname: a\ndescription: d\nmetadata:\n  list:\n    - {k: v}\n---\n";
        assert_eq!(skill_text(text, Some("a")).len(), 1);
    }

    #[test]
    fn long_description_and_compatibility() {
        let text = format!(
            "---\nname: a\ndescription: {}\ncompatibility: {}\n---\n",
            "x".repeat(1025),
            "y".repeat(501)
        );
        assert_eq!(skill_text(&text, None).len(), 2);
    }

    #[test]
    fn missing_fields_are_all_reported() {
        let problems = skill_text("---\nlicense: MIT\n---\n", None);
        assert_eq!(problems.len(), 2);
    }
}
