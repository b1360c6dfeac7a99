//! The fallback the Agent Skills client guide asks for, as Claude Code applies
//! it: skills written for other clients often carry a plain value containing
//! `: ` (`description: Use when: the user asks about PDFs`), which YAML
//! refuses. When the YAML does not parse, each top-level `key: value` line
//! whose unquoted value contains `: ` is read with that value in double quotes,
//! and each such line is a warning saying to quote it.
//!
//! Only loading takes this path; strict validation reports the YAML error, as
//! the reference validator does.

use crate::Diagnostic;

/// `yaml` (starting at file line `yaml_line`) with every top-level plain value
/// that contains `: ` put in double quotes, and a warning for each; `None` when
/// no line is written so.
pub(super) fn quote_colon_values(
    yaml: &str,
    yaml_line: usize,
) -> Option<(String, Vec<Diagnostic>)> {
    let mut out = String::with_capacity(yaml.len() + 16);
    let mut warnings = Vec::new();
    for (line_no, line) in (yaml_line..).zip(yaml.split_inclusive('\n')) {
        let content = line.trim_end_matches(['\n', '\r']);
        match colon_value(content) {
            Some((key, at, value)) => {
                out.push_str(key);
                out.push_str(": \"");
                for c in value.chars() {
                    if matches!(c, '"' | '\\') {
                        out.push('\\');
                    }
                    out.push(c);
                }
                out.push('"');
                out.push_str(&line[content.len()..]);
                warnings.push(Diagnostic::warning(
                    line_no,
                    at + 1,
                    format!(
                        "the value of `{key}` contains `: ` without quotes, which YAML does not \
                         allow; it was read as text: put it in double quotes, as \
                         `{key}: \"...\"`"
                    ),
                ));
            }
            None => out.push_str(line),
        }
    }
    (!warnings.is_empty()).then_some((out, warnings))
}

/// A top-level `key: value` line whose value is plain (unquoted, not a block
/// scalar, not flow style) and contains `: `: the key, the value's byte offset
/// in the line, and the value without trailing spaces.
fn colon_value(line: &str) -> Option<(&str, usize, &str)> {
    let (key, rest) = line.split_once(':')?;
    let simple_key = !key.is_empty()
        && !key.starts_with('-')
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
    if !simple_key || !rest.starts_with([' ', '\t']) {
        return None;
    }
    let padded = rest.trim_start_matches([' ', '\t']);
    let at = key.len() + 1 + (rest.len() - padded.len());
    let value = padded.trim_end_matches([' ', '\t']);
    let plain = !value.starts_with([
        '"', '\'', '[', '{', '|', '>', '&', '*', '!', '%', '@', '`', '#',
    ]);
    (plain && value.contains(": ")).then_some((key, at, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colon_values_are_quoted_and_escaped() {
        let (yaml, warnings) = quote_colon_values(
            "name: a\r\ndescription: Use when: the \"user\" asks \\ here  \r\nx: 'q: r'\n",
            2,
        )
        .unwrap();
        assert_eq!(
            yaml,
            "name: a\r\ndescription: \"Use when: the \\\"user\\\" asks \\\\ here\"\r\nx: 'q: r'\n"
        );
        assert_eq!(warnings.len(), 1);
        assert_eq!((warnings[0].line, warnings[0].column), (3, 14));
    }

    #[test]
    fn other_lines_are_left_alone() {
        for yaml in [
            "name: a\n",
            "  nested: a: b\n",
            "- item: a: b\n",
            "description: |\n  a: b\n",
            "description: \"a: b\"\n",
            "key with space: a: b\n",
            "url: http://x\n",
        ] {
            assert!(quote_colon_values(yaml, 2).is_none(), "{yaml:?}");
        }
    }
}
