//! The fast path for the frontmatter nearly every skill has: `key: value`
//! lines, with at most one level of `key:` followed by indented `key: value`
//! lines or `- item` lines. Nine in ten files of the corpus are written this
//! way, and reading them line by line is several times cheaper than running
//! the YAML parser.
//!
//! A top-level value may also be a block scalar in its plainest forms (`|`,
//! `|-`, `>`, `>-`: no indentation indicator, no kept line breaks, no line of
//! spaces or trailing spaces, and for `>` no more-indented line), and a
//! single-quoted scalar may hold doubled quotes: one description in ten in
//! the corpus is written so, and each cost ten times the others in the full
//! parser.
//!
//! The fast path never decides anything on its own: it answers only when the
//! text stays inside a subset whose meaning is plain (no multi-line flow
//! scalars, no escapes, no comments after values, no flow style, anchors or
//! tags, nothing the YAML parser could reject), and its answer is then the
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
    let mut lines = Lines {
        raw: yaml.split('\n').peekable(),
    };
    let mut map = Map::new();
    while let Some(line) = lines.next() {
        let (key, value) = entry(line)?;
        if map.contains_key(key) {
            return None;
        }
        let value = match value {
            Some(header @ ("|" | "|-" | ">" | ">-")) => block_scalar(header, &mut lines)?,
            Some(text) => scalar(text)?,
            None => block(&mut lines)?,
        };
        map.insert(key.to_owned(), value);
    }
    (!map.is_empty()).then_some(map)
}

/// The lines of the text, each without its `\r`. Outside block scalars,
/// blank lines, trailing spaces and whole-line comments mean nothing, and
/// [`peek`](Lines::peek) and [`next`](Lines::next) skip them; inside one,
/// every character counts ([`raw_peek`](Lines::raw_peek)).
#[derive(Clone)]
struct Lines<'a> {
    raw: std::iter::Peekable<std::str::Split<'a, char>>,
}

impl<'a> Lines<'a> {
    /// The next line that means something, without its trailing spaces.
    fn peek(&mut self) -> Option<&'a str> {
        loop {
            let line = self.raw_peek()?.trim_end_matches(' ');
            if !line.is_empty() && !line.starts_with('#') {
                return Some(line);
            }
            self.raw.next();
        }
    }

    fn next(&mut self) -> Option<&'a str> {
        let line = self.peek()?;
        self.raw.next();
        Some(line)
    }

    fn next_if(&mut self, wanted: impl FnOnce(&str) -> bool) -> Option<&'a str> {
        let line = self.peek()?;
        wanted(line).then(|| {
            self.raw.next();
            line
        })
    }

    /// The next line as written (without its `\r`).
    fn raw_peek(&mut self) -> Option<&'a str> {
        let line: &'a str = self.raw.peek()?;
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
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
fn block(lines: &mut Lines<'_>) -> Option<Value> {
    let Some(first) = lines.peek() else {
        return Some(Value::Null);
    };
    let indent = indentation(first);
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

/// The block scalar that follows a top-level `key: |` (or `|-`, `>`, `>-`):
/// its lines, indented as the first one is, kept one per line (`|`) or
/// folded into one (`>`: a line break between two lines is a space, one
/// before empty lines is dropped and each empty line is a line break), with
/// one final line break unless `-` strips it. `None` (the full parser
/// decides) for anything a plain reading could get wrong: no line in it, a
/// first line empty or not indented, a line of spaces anywhere in it or
/// after it, trailing spaces, and for `>` a line indented further (which
/// folding keeps apart).
fn block_scalar(header: &str, lines: &mut Lines<'_>) -> Option<Value> {
    let (literal, strip) = (header.starts_with('|'), header.ends_with('-'));
    let first = lines.raw_peek()?;
    let indent = indentation(first);
    if indent == 0 || indent == first.len() {
        return None;
    }
    let mut text = String::new();
    // Empty lines since the last line of text: inside the scalar when
    // another line of it follows, else after it (and chomped).
    let mut empty = 0;
    while let Some(line) = lines.raw_peek() {
        if line.is_empty() {
            empty += 1;
            lines.raw.next();
            continue;
        }
        let spaces = indentation(line);
        if spaces == line.len() {
            // Spaces alone may be content (beyond the indentation).
            return None;
        }
        if spaces < indent {
            break;
        }
        let content = &line[indent..];
        if content.ends_with(' ') || (!literal && content.starts_with(' ')) {
            return None;
        }
        if !text.is_empty() {
            let breaks = if literal { empty + 1 } else { empty };
            match breaks {
                0 => text.push(' '),
                n => text.extend(std::iter::repeat_n('\n', n)),
            }
        }
        empty = 0;
        text.push_str(content);
        lines.raw.next();
    }
    // The full parser ends a clipped scalar with a line break even at the
    // end of the text.
    if !strip {
        text.push('\n');
    }
    Some(Value::String(text))
}

/// The spaces `line` starts with.
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
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
    match bytes.first()? {
        b'"' => double_quoted(text),
        b'\'' => single_quoted(text),
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

/// A double-quoted scalar on one line without escapes or quotes inside.
fn double_quoted(text: &str) -> Option<Value> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let plain = !inner.contains(['"', '\\']);
    plain.then(|| Value::String(inner.to_owned()))
}

/// A single-quoted scalar on one line, its doubled quotes (`''`) read as
/// one; `None` when a quote inside stands alone.
fn single_quoted(text: &str) -> Option<Value> {
    let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut value = String::with_capacity(inner.len());
    let mut parts = inner.split('\'');
    value.push_str(parts.next()?);
    // Between two parts was a quote: each doubled quote leaves an empty
    // part after its first half.
    while let Some(part) = parts.next() {
        if !part.is_empty() {
            return None;
        }
        value.push('\'');
        value.push_str(parts.next()?);
    }
    Some(Value::String(value))
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
    fn plain_block_scalars_and_doubled_quotes_take_the_fast_path() {
        let cases = [
            ("d: >\n  one\n  two\n", "one two\n"),
            ("d: >-\n  one\n  two\nname: x\n", "one two"),
            ("d: |\n  one\n    two: #3\n", "one\n  two: #3\n"),
            ("d: |-\n  one\n  two\n", "one\ntwo"),
            // At the end of the text too, as the full parser reads it.
            ("d: >\n  one\n  two", "one two\n"),
            (
                "d: |\r\n   a 'b' \"c\" - [d]\r\n\r\n# comment\r\nx: y\r\n",
                "a 'b' \"c\" - [d]\n",
            ),
            // Empty lines: kept in `|`, each a line break in `>`; after the
            // scalar, chomped.
            ("d: |\n  a\n\n  b\n\n\nx: 1\n", "a\n\nb\n"),
            ("d: >\n  a\n  b\n\n  c\n\n\n  - d\n", "a b\nc\n\n- d\n"),
            ("d: >-\n  a\n\n", "a"),
            ("d: 'it''s ''quoted'''\n", "it's 'quoted'"),
            ("d: ''''\n", "'"),
        ];
        for (yaml, text) in cases {
            let value = fast(yaml).unwrap_or_else(|| panic!("{yaml:?} took the full parser"));
            assert_eq!(value["d"], json!(text), "{yaml:?}");
        }
    }

    /// Texts made of lines block scalars and quotes make hard (blank,
    /// more and less indented, comments, trailing spaces, CRLF), in every
    /// order a small generator reaches: whenever the fast path answers, the
    /// full parser agrees (`fast` checks it).
    #[test]
    fn generated_block_scalars_agree_with_the_full_parser() {
        const LINES: &[&str] = &[
            "d: |",
            "d: |-",
            "d: >",
            "d: >-",
            "e: >",
            "x: 1",
            "x: 'a''b'",
            "x: ''''",
            "x: 'a'b'",
            "  a",
            "  b: c",
            "   more",
            "    deeper",
            " one",
            "",
            "  ",
            "     ",
            "# c",
            "  # c",
            "  trailing ",
            "  - i",
            "- i",
            "m:",
            "  k: v",
            "  'q'",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut random = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut answered = 0;
        for _ in 0..20_000 {
            let count = 1 + random(6);
            let mut yaml = String::new();
            for i in 0..count {
                yaml.push_str(LINES[random(LINES.len())]);
                if i + 1 < count || random(4) > 0 {
                    yaml.push_str(if random(5) == 0 { "\r\n" } else { "\n" });
                }
            }
            answered += usize::from(fast(&yaml).is_some());
        }
        // The generator reaches texts the fast path reads, not only ones
        // it leaves to the full parser.
        assert!(answered > 1_000, "{answered}");
    }

    #[test]
    fn anything_else_goes_to_the_full_parser() {
        for yaml in [
            "",
            "# only a comment\n",
            "description: a\n  continued\n",
            "description: \"multi\n  line\"\n",
            "description: \"esc\\\"aped\"\n",
            "description: 'it' s'\n",
            "description: 'it'''s'\n",
            // Block scalars beyond the plainest forms.
            "d: >+\n  kept\n",
            "d: |2\n  indented\n",
            "d: > # comment\n  a\n",
            "d: >\n",
            "d: >\nnext: 1\n",
            "d: |\n\n  after a blank line\n",
            "d: >\n  a\n   more indented\n",
            "d: |\n  trailing \n",
            "m:\n  d: |\n    nested\n",
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
            fast_count >= 425,
            "only {fast_count} of 431 took the fast path"
        );
    }
}
