//! The fast path for the frontmatter nearly every skill has: `key: value`
//! lines, with at most one level of `key:` followed by indented `key: value`
//! lines or `- item` lines. Nine in ten files of the corpus are written this
//! way, and reading them line by line is several times cheaper than running
//! the YAML parser.
//!
//! The fast path never decides anything on its own: it answers only when the
//! text stays inside a subset whose meaning is plain (no multi-line scalars, no
//! escapes, no comments after values, no flow style, anchors, tags or block
//! scalars, nothing the YAML parser could reject), and its answer is then the
//! one [`super::parse`] gives, scalars resolved by the same function. Anything
//! else returns `None` and goes to the full parser, which also writes every
//! error message. A test compares both on the corpus and a fuzz target
//! (`fuzz/fuzz_targets/yaml_fast_path.rs`) on arbitrary text.

use serde_json::{Map, Value};

/// The mapping `yaml` holds, when it is written in the plain subset; `None`
/// when the full parser must decide.
pub(super) fn parse(yaml: &str) -> Option<Map<String, Value>> {
    if !plain_text(yaml) {
        return None;
    }
    // Outside multi-line scalars (which the subset has not), blank lines,
    // trailing spaces and whole-line comments mean nothing.
    let mut lines = yaml
        .split('\n')
        .map(|line| {
            line.strip_suffix('\r')
                .unwrap_or(line)
                .trim_end_matches(' ')
        })
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .peekable();
    let mut map = Map::new();
    while let Some(line) = lines.next() {
        let (key, value) = entry(line)?;
        if map.contains_key(key) {
            return None;
        }
        let value = match value {
            Some(text) => scalar(text)?,
            None => block(&mut lines)?,
        };
        map.insert(key.to_owned(), value);
    }
    (!map.is_empty()).then_some(map)
}

/// Whether every character is one the subset allows: printable, no tab, no
/// carriage return but in a CRLF pair, no character some YAML readers take
/// for a line break or a byte-order mark.
fn plain_text(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        // Printable ASCII and line feeds: nearly every byte of a frontmatter.
        at += bytes[at..]
            .iter()
            .take_while(|&&b| (b' '..=b'~').contains(&b) || b == b'\n')
            .count();
        let Some(&byte) = bytes.get(at) else {
            return true;
        };
        if byte == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
            at += 2;
            continue;
        }
        if byte < 0x80 {
            return false;
        }
        // Non-ASCII: `at` is on a character boundary, every step above being
        // whole characters.
        let Some(c) = text[at..].chars().next() else {
            return false;
        };
        if ('\u{80}'..='\u{9f}').contains(&c)
            || matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            )
        {
            return false;
        }
        at += c.len_utf8();
    }
    true
}

/// A `key:` or `key: value` line (trailing spaces already removed): the key
/// and, when the line has one, the value.
fn entry(line: &str) -> Option<(&str, Option<&str>)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    if !is_key(key) {
        return None;
    }
    let rest = &line[colon + 1..];
    if rest.is_empty() {
        return Some((key, None));
    }
    let value = rest.strip_prefix(' ')?.trim_start_matches(' ');
    Some((key, Some(value)))
}

/// A key the subset accepts: ASCII letters, digits, `_` and `-`, not starting
/// with `-`, short enough for any YAML reader's implicit keys.
fn is_key(key: &str) -> bool {
    let bytes = key.as_bytes();
    (1..=128).contains(&bytes.len())
        && bytes[0] != b'-'
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

/// The value of a `key:` line with nothing after the colon: the indented
/// `key: value` lines or the `- item` lines that follow, or null.
fn block<'a>(lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>) -> Option<Value> {
    let Some(first) = lines.peek() else {
        return Some(Value::Null);
    };
    let indent = first.len() - first.trim_start_matches(' ').len();
    let is_item = |line: &str| line[indent..].starts_with("- ");
    if is_item(first) {
        let mut items = Vec::new();
        while let Some(line) = lines.next_if(|line| at(line, indent) && is_item(line)) {
            items.push(scalar(line[indent + 2..].trim_start_matches(' '))?);
        }
        return Some(Value::Array(items));
    }
    if indent == 0 {
        return Some(Value::Null);
    }
    let mut map = Map::new();
    while let Some(line) = lines.next_if(|line| at(line, indent)) {
        let (key, Some(text)) = entry(&line[indent..])? else {
            return None;
        };
        if map.contains_key(key) {
            return None;
        }
        map.insert(key.to_owned(), scalar(text)?);
    }
    Some(Value::Object(map))
}

/// Whether `line` is indented by exactly `indent` spaces.
fn at(line: &str, indent: usize) -> bool {
    line.len() > indent
        && line.as_bytes()[..indent].iter().all(|&b| b == b' ')
        && line.as_bytes()[indent] != b' '
}

/// A one-line scalar: double-quoted without escapes, single-quoted without
/// doubled quotes, or plain (resolved as the full parser resolves it).
fn scalar(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let quoted = |quote: u8, escape: u8| {
        let inner = bytes.strip_prefix(&[quote])?.strip_suffix(&[quote])?;
        let plain = !inner.iter().any(|&b| b == quote || b == escape);
        // The quotes are ASCII, so the inner bytes are whole characters.
        plain.then(|| Value::String(text[1..text.len() - 1].to_owned()))
    };
    match bytes.first()? {
        b'"' => quoted(b'"', b'\\'),
        b'\'' => quoted(b'\'', b'\''),
        b'-' | b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!'
        | b'|' | b'>' | b'%' | b'@' | b'`' | b' ' => None,
        // `: ` would start a mapping, ` #` a comment, a final `:` a mapping.
        _ if bytes.ends_with(b":")
            || bytes.windows(2).any(|pair| pair == b": " || pair == b" #") =>
        {
            None
        }
        _ => Some(super::resolve(text)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The fast path's answer, checked against the full parser's.
    fn fast(yaml: &str) -> Option<Value> {
        super::super::check_fast_path(yaml);
        parse(yaml).map(Value::Object)
    }

    #[test]
    fn plain_lines_take_the_fast_path() {
        assert_eq!(
            fast(
                "name: pdf\ndescription: \"Read PDFs: text, tables.\"\nversion: 1.5\nlicense: 'MIT'\n"
            ),
            Some(
                json!({"name": "pdf", "description": "Read PDFs: text, tables.", "version": 1.5, "license": "MIT"})
            )
        );
        assert_eq!(
            fast(
                "name: a\r\n\r\n# a comment\r\nmetadata:\r\n  author: me\r\n  tags: x, y\r\nallowed-tools:\r\n- Read\r\n- Bash(git:*)\r\nempty:\r\n"
            ),
            Some(
                json!({"name": "a", "metadata": {"author": "me", "tags": "x, y"}, "allowed-tools": ["Read", "Bash(git:*)"], "empty": null})
            )
        );
        assert_eq!(
            fast("tools:\n    - a\n    - 'b c'\nx: http://e.com/a#b [c] {d}\n"),
            Some(json!({"tools": ["a", "b c"], "x": "http://e.com/a#b [c] {d}"}))
        );
    }

    #[test]
    fn anything_else_goes_to_the_full_parser() {
        for yaml in [
            "",
            "# only a comment\n",
            "description: >\n  folded\n",
            "description: a\n  continued\n",
            "description: \"multi\n  line\"\n",
            "description: \"esc\\\"aped\"\n",
            "description: 'it''s'\n",
            "description: a # comment\n",
            "description: a: b\n",
            "description: a:\n",
            "tags: [a, b]\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: 1\na: 2\n",
            "a:\tb\n",
            "a: b\rc: d\n",
            "a: \u{85}\n",
            "a: \u{2028}\n",
            "a: \u{feff}\n",
            "\"quoted key\": 1\n",
            "-a: 1\n",
            " a: 1\n",
            "- a\n",
            "a:\n  b:\n    c: 1\n",
            "a:\n  b: 1\n   c: 2\n",
            "a:\n  - x\n  y: 1\n",
            "a:\n  - x\n    y\n",
            "a:\n  b: 1\n  b: 2\n",
            "a:\n-\n",
            "a:b\n",
            "...\n",
        ] {
            assert_eq!(parse(yaml), None, "{yaml:?}");
        }
    }

    /// Every corpus frontmatter the fast path reads, it reads as the full
    /// parser does; and it reads most of them.
    #[test]
    fn corpus_agrees_with_the_full_parser() {
        let corpus =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus");
        let mut files = Vec::new();
        let mut dirs = vec![corpus];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.ends_with("SKILL.md") {
                    files.push(path);
                }
            }
        }
        assert_eq!(files.len(), 431);
        let mut fast_count = 0;
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            let Ok(split) = crate::frontmatter::split(&text) else {
                continue;
            };
            if fast(split.yaml).is_some() {
                fast_count += 1;
            }
        }
        assert!(
            fast_count >= 380,
            "only {fast_count} of 431 took the fast path"
        );
    }
}
