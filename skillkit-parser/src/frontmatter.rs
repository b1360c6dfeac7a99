//! Frontmatter: the YAML block between a first line `---` and the next line `---`.
//!
//! A UTF-8 byte-order mark and CRLF line endings are accepted. Every failure is a
//! [`Diagnostic`] with the line it concerns; nothing here panics, whatever the input.

use serde_json::{Map, Value};

use crate::Diagnostic;

mod lenient;

/// A document cut into its YAML frontmatter and its markdown body.
///
/// ```
/// let doc = skillkit_parser::frontmatter::split("---\nname: a\n---\nHello\n").unwrap();
/// assert_eq!(doc.yaml, "name: a\n");
/// assert_eq!(doc.yaml_line, 2);
/// assert_eq!(doc.body, "Hello\n");
/// assert_eq!(doc.body_line, 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML text, without the delimiter lines.
    pub yaml: &'a str,
    /// The 1-based line of the file where `yaml` starts.
    pub yaml_line: usize,
    /// Everything after the closing delimiter line.
    pub body: &'a str,
    /// The 1-based line of the file where `body` starts.
    pub body_line: usize,
}

/// Strips a leading UTF-8 byte-order mark.
///
/// ```
/// assert_eq!(skillkit_parser::frontmatter::strip_bom("\u{feff}abc"), "abc");
/// ```
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Decodes file bytes as UTF-8, naming the line of the first invalid byte.
///
/// ```
/// assert_eq!(skillkit_parser::frontmatter::decode(b"ok").unwrap(), "ok");
/// let err = skillkit_parser::frontmatter::decode(b"a\nb\xff").unwrap_err();
/// assert_eq!(err.line, 2);
/// ```
pub fn decode(bytes: &[u8]) -> Result<&str, Diagnostic> {
    std::str::from_utf8(bytes).map_err(|e| {
        let valid = &bytes[..e.valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = valid.len() - valid.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
        Diagnostic::error(
            line,
            column,
            format!(
                "the file is not valid UTF-8 (invalid byte at offset {}); save it as UTF-8",
                e.valid_up_to()
            ),
        )
    })
}

fn is_delimiter(line: &[u8]) -> bool {
    let mut line = line;
    while let [rest @ .., b'\n' | b'\r' | b' ' | b'\t'] = line {
        line = rest;
    }
    line == b"---"
}

const MISSING: &str = "missing frontmatter: the file must start with a line `---`, then YAML fields \
                       (`name: ...`, `description: ...`), then a closing line `---`";

const NOT_CLOSED: &str = "frontmatter is not closed: add a line `---` after the YAML fields";

/// Where a document's parts are, as byte offsets into the document (a leading
/// byte-order mark included in the count).
///
/// ```
/// let bounds = skillkit_parser::frontmatter::bounds(b"---\nname: a\n---\nHello").unwrap().unwrap();
/// assert_eq!(bounds.yaml, 4..12);
/// assert_eq!(bounds.body_start, 16);
/// assert_eq!(bounds.body_line, 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    /// The YAML between the delimiter lines.
    pub yaml: std::ops::Range<usize>,
    /// Where the body starts (just after the closing delimiter line).
    pub body_start: usize,
    /// The 1-based line where the body starts.
    pub body_line: usize,
}

/// Finds the frontmatter of `bytes`, which may be only the beginning of a
/// document: `Ok(None)` means the closing line is not in these bytes (yet).
/// A first line that is not `---` is an error.
///
/// ```
/// use skillkit_parser::frontmatter::bounds;
/// assert!(bounds(b"---\nname: a\n").unwrap().is_none());
/// assert!(bounds(b"# Title\n").is_err());
/// ```
pub fn bounds(bytes: &[u8]) -> Result<Option<Bounds>, Diagnostic> {
    let bom = if bytes.starts_with("\u{feff}".as_bytes()) {
        3
    } else {
        0
    };
    let text = &bytes[bom..];
    if text.is_empty() {
        return Ok(None);
    }
    // The end of the line starting at `start`, its line break included.
    let line_end = |start: usize| newline(&text[start..]).map_or(text.len(), |i| start + i + 1);
    let first_end = line_end(0);
    let (first, complete) = (&text[..first_end], text[first_end - 1] == b'\n');
    if !is_delimiter(first) || (!complete && first.len() <= 3) {
        return match complete || !b"---".starts_with(first) {
            true => Err(Diagnostic::error(1, 1, MISSING)),
            // Only the start of a first line `---` yet.
            false => Ok(None),
        };
    }
    let mut start = first_end;
    for line_no in 2.. {
        if start == text.len() {
            break;
        }
        let end = line_end(start);
        if is_delimiter(&text[start..end]) {
            return Ok(Some(Bounds {
                yaml: bom + first_end..bom + start,
                body_start: bom + end,
                body_line: line_no + 1,
            }));
        }
        start = end;
    }
    Ok(None)
}

/// The index of the first `\n` in `bytes`, a word at a time. Not the
/// `memchr` crate: its first call in a process detects the CPU's features,
/// about ten `CPUID`s, each a trap to the hypervisor on a virtual machine
/// (30 µs together, measured), and this is the first search of a load, on
/// every thread that reads files. Frontmatter lines are short.
fn newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    const NEWLINES: u64 = u64::from_le_bytes([b'\n'; 8]);
    let (words, rest) = bytes.as_chunks::<8>();
    for (i, word) in words.iter().enumerate() {
        let word = u64::from_le_bytes(*word) ^ NEWLINES;
        // A byte of `word` is zero where `bytes` holds a `\n`; the lowest
        // high bit set here marks the first such byte.
        let found = word.wrapping_sub(ONES) & !word & HIGHS;
        if found != 0 {
            return Some(i * 8 + (found.trailing_zeros() / 8) as usize);
        }
    }
    let done = words.len() * 8;
    rest.iter().position(|&b| b == b'\n').map(|i| done + i)
}

/// Cuts `text` into frontmatter and body.
///
/// ```
/// use skillkit_parser::frontmatter::split;
/// // CRLF and a byte-order mark are fine.
/// let doc = split("\u{feff}---\r\nname: a\r\n---\r\nbody").unwrap();
/// assert_eq!(doc.yaml, "name: a\r\n");
/// assert_eq!(doc.body, "body");
/// // A missing closing line is a diagnostic on line 1.
/// assert_eq!(split("---\nname: a\n").unwrap_err().line, 1);
/// ```
pub fn split(text: &str) -> Result<Split<'_>, Diagnostic> {
    match bounds(text.as_bytes())? {
        // The delimiters are ASCII lines, so every offset is a char boundary.
        Some(found) => Ok(Split {
            yaml: &text[found.yaml],
            yaml_line: 2,
            body: &text[found.body_start..],
            body_line: found.body_line,
        }),
        None => {
            let first = strip_bom(text).split_inclusive('\n').next().unwrap_or("");
            let message = if is_delimiter(first.as_bytes()) {
                NOT_CLOSED
            } else {
                MISSING
            };
            Err(Diagnostic::error(1, 1, message))
        }
    }
}

/// Parses frontmatter YAML into a map with string keys.
///
/// `yaml_line` is the file line where the YAML starts, so positions in
/// diagnostics are file positions. Empty YAML is an empty map; anything but a
/// mapping is a diagnostic. Alias bombs and deep nesting are refused by the YAML
/// parser's budget, not followed. Booleans are YAML 1.2's (`true`/`false`
/// only: `yes`, `on`, `y` stay text), numbers with leading zeros or underscores
/// stay text, and duplicate keys are an error (see the `yaml` module).
///
/// ```
/// use skillkit_parser::frontmatter::parse_mapping;
/// let map = parse_mapping("name: a\ncount: 3\n", 2).unwrap();
/// assert_eq!(map["count"], 3);
/// assert!(parse_mapping("- a\n- b\n", 2).unwrap_err().message.contains("mapping"));
/// ```
pub fn parse_mapping(yaml: &str, yaml_line: usize) -> Result<Map<String, Value>, Diagnostic> {
    if let Some(map) = crate::yaml::parse_plain_mapping(yaml) {
        return Ok(map);
    }
    let value = crate::yaml::parse(yaml, yaml_line).map_err(|mut d| {
        d.message = format!(
            "invalid YAML in frontmatter: {}; fix the YAML (quote values that contain `: ` or start with a special character)",
            d.message
        );
        d
    })?;
    match value {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(map),
        other => Err(Diagnostic::error(
            yaml_line,
            1,
            format!(
                "frontmatter must be a YAML mapping of `key: value` lines, found {}",
                kind_of(&other)
            ),
        )),
    }
}

/// Parses frontmatter YAML as [`parse_mapping`] does, but leniently, as the
/// Agent Skills client guide asks and Claude Code does when loading: YAML that
/// does not parse because a top-level value contains `: ` without quotes
/// (`description: Use when: …`) is read with that value as text, and each such
/// line is a warning saying to quote it. Any other problem is
/// [`parse_mapping`]'s diagnostic. Loading uses this; strict validation
/// ([`crate::validate`]) does not.
///
/// ```
/// use skillkit_parser::frontmatter::{parse_mapping, parse_mapping_lenient};
/// let yaml = "name: pdf\ndescription: Use when: the user asks about PDFs\n";
/// assert!(parse_mapping(yaml, 2).is_err());
/// let (map, warnings) = parse_mapping_lenient(yaml, 2).unwrap();
/// assert_eq!(map["description"], "Use when: the user asks about PDFs");
/// assert_eq!(warnings[0].line, 3);
/// ```
pub fn parse_mapping_lenient(
    yaml: &str,
    yaml_line: usize,
) -> Result<(Map<String, Value>, Vec<Diagnostic>), Diagnostic> {
    let strict = match parse_mapping(yaml, yaml_line) {
        Ok(map) => return Ok((map, Vec::new())),
        Err(d) => d,
    };
    lenient::quote_colon_values(yaml, yaml_line)
        .and_then(|(quoted, warnings)| {
            parse_mapping(&quoted, yaml_line)
                .ok()
                .map(|map| (map, warnings))
        })
        .ok_or(strict)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a plain string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Reads a frontmatter value as text the way strictyaml does: strings as they
/// are, numbers and booleans as their text. Lists and maps are not text.
///
/// ```
/// use serde_json::json;
/// use skillkit_parser::frontmatter::as_text;
/// assert_eq!(as_text(&json!("a")).as_deref(), Some("a"));
/// assert_eq!(as_text(&json!(12)).as_deref(), Some("12"));
/// assert_eq!(as_text(&json!(["a"])), None);
/// ```
pub fn as_text(value: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match value {
        Value::String(s) => Some(std::borrow::Cow::Borrowed(s)),
        Value::Number(n) => Some(std::borrow::Cow::Owned(n.to_string())),
        Value::Bool(b) => Some(std::borrow::Cow::Owned(b.to_string())),
        Value::Null => Some(std::borrow::Cow::Borrowed("")),
        _ => None,
    }
}

/// The 1-based file line of top-level key `key` in `yaml`, for pointing a
/// diagnostic at the field it concerns (`fallback` when not found).
///
/// ```
/// use skillkit_parser::frontmatter::key_line;
/// assert_eq!(key_line("name: a\ndescription: b\n", 2, "description", 1), 3);
/// assert_eq!(key_line("name: a\n", 2, "model", 1), 1);
/// ```
pub fn key_line(yaml: &str, yaml_line: usize, key: &str, fallback: usize) -> usize {
    yaml.lines()
        .position(|line| {
            let line = line.strip_prefix(key).or_else(|| {
                line.strip_prefix(['"', '\''])
                    .and_then(|l| l.strip_prefix(key))
                    .and_then(|l| l.strip_prefix(['"', '\'']))
            });
            line.is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(fallback, |i| yaml_line + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newline_finds_the_first_line_break_wherever_it_is() {
        // Every length up to three words and every place of the first
        // `\n`, after bytes one off `\n` either way (0x0b, 0x09) and 0x8a
        // (its high bit set), which a word-at-a-time search could mistake.
        for len in 0..24 {
            for fill in [b'a', 0x09, 0x0b, 0x8a, 0x00, 0xff] {
                let none = vec![fill; len];
                assert_eq!(newline(&none), None, "{len} {fill}");
                for at in 0..len {
                    let mut bytes = none.clone();
                    bytes[at] = b'\n';
                    if at + 1 < len {
                        bytes[len - 1] = b'\n';
                    }
                    assert_eq!(newline(&bytes), Some(at), "{len} {fill} {at}");
                }
            }
        }
    }

    /// `bounds` as it was first written, line by line: the reference the
    /// faster one is held to.
    fn reference_bounds(bytes: &[u8]) -> Result<Option<Bounds>, Diagnostic> {
        let bom = if bytes.starts_with("\u{feff}".as_bytes()) {
            3
        } else {
            0
        };
        let mut lines = bytes[bom..]
            .split_inclusive(|&b| b == b'\n')
            .map(|line| (line, line.ends_with(b"\n")));
        match lines.next() {
            Some((first, complete)) if is_delimiter(first) && (complete || first.len() > 3) => {
                let yaml_start = bom + first.len();
                let mut offset = yaml_start;
                for (line_no, (line, _)) in (2..).zip(lines) {
                    if is_delimiter(line) {
                        return Ok(Some(Bounds {
                            yaml: yaml_start..offset,
                            body_start: offset + line.len(),
                            body_line: line_no + 1,
                        }));
                    }
                    offset += line.len();
                }
                Ok(None)
            }
            Some((first, false)) if b"---".starts_with(first) => Ok(None),
            None => Ok(None),
            Some(_) => Err(Diagnostic::error(1, 1, MISSING)),
        }
    }

    #[test]
    fn bounds_agree_with_the_line_by_line_reference() {
        const PIECES: &[&str] = &[
            "---", "--- ", "---\t", "---\r", "----", "--", "-", "", "name: a", " ---", "\u{feff}",
            "a---", "body",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut random = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut found = 0;
        for _ in 0..50_000 {
            let mut text = String::new();
            for _ in 0..random(6) {
                text.push_str(PIECES[random(PIECES.len())]);
                text.push_str(["\n", "\r\n", ""][random(3)]);
            }
            let (fast, slow) = (bounds(text.as_bytes()), reference_bounds(text.as_bytes()));
            match (&fast, &slow) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text:?}"),
                (Err(a), Err(b)) => assert_eq!(a.message, b.message, "{text:?}"),
                _ => panic!("{text:?}: {fast:?} against {slow:?}"),
            }
            found += usize::from(matches!(fast, Ok(Some(_))));
        }
        assert!(found > 1_000, "{found}");
    }

    #[test]
    fn lone_delimiter_is_unclosed() {
        assert!(split("---").unwrap_err().message.contains("not closed"));
        assert!(split("---\n").unwrap_err().message.contains("not closed"));
    }

    #[test]
    fn empty_file_has_no_frontmatter() {
        assert!(
            split("")
                .unwrap_err()
                .message
                .contains("missing frontmatter")
        );
    }

    #[test]
    fn delimiter_with_trailing_spaces_is_accepted() {
        let doc = split("--- \nname: a\n---  \r\nbody").unwrap();
        assert_eq!(doc.yaml, "name: a\n");
        assert_eq!(doc.body, "body");
    }

    #[test]
    fn dashes_inside_yaml_values_do_not_close() {
        let doc = split("---\ndescription: a --- b\n---\nx").unwrap();
        assert_eq!(doc.yaml, "description: a --- b\n");
    }

    #[test]
    fn yaml_error_positions_are_file_positions() {
        let err = parse_mapping("name: a\n  bad: indent\n", 2).unwrap_err();
        assert_eq!((err.line, err.column), (3, 6));
        assert!(!err.message.contains(" at line "), "{}", err.message);
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut yaml = String::from("a: &a [x,x,x,x,x,x,x,x,x]\n");
        for (prev, cur) in ('a'..'i').zip('b'..'j') {
            yaml.push_str(&format!("{cur}: &{cur} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
        }
        assert!(parse_mapping(&yaml, 2).is_err());
    }

    #[test]
    fn non_string_keys_become_text() {
        let map = parse_mapping("1: x\ntrue: y\n", 2).unwrap();
        assert_eq!(map["1"], "x");
        assert_eq!(map["true"], "y");
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        assert!(
            parse_mapping("x: 1\nx: 2\n", 2)
                .unwrap_err()
                .message
                .contains("duplicate")
        );
    }
}
