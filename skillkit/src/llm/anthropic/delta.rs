//! Reading `content_block_delta` events, nearly every event of a stream.
//!
//! The API writes them compactly and always the same way:
//! `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}`.
//! Deserializing that through serde's derived code costs several times the
//! SSE framing around it (field-name matching on two nested objects, a
//! buffered tag, one `String` per absent field); this reads the compact form
//! directly and gives anything else, byte for byte, to serde.

use crate::llm::anthropic::wire::{ContentBlockDelta, Delta};

impl ContentBlockDelta {
    /// The delta in `data`: the compact form read directly, any other form
    /// (spaces, other key orders, extra fields, unknown delta types) by serde.
    #[inline]
    pub(crate) fn from_json(data: &str) -> serde_json::Result<Self> {
        match compact(data) {
            Some(delta) => Ok(delta),
            None => serde_json::from_str(data),
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Text,
    Json,
    Thinking,
    Signature,
}

/// Each delta type and what follows `"type":"` up to its value's opening quote.
const KINDS: [(Kind, &str); 4] = [
    (Kind::Text, r#"text_delta","text":"#),
    (Kind::Json, r#"input_json_delta","partial_json":"#),
    (Kind::Thinking, r#"thinking_delta","thinking":"#),
    (Kind::Signature, r#"signature_delta","signature":"#),
];

/// The delta when `data` is in the compact form, else `None`.
#[inline]
fn compact(data: &str) -> Option<ContentBlockDelta> {
    let rest = data.strip_prefix(r#"{"type":"content_block_delta","index":"#)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    // JSON numbers have no leading zero; long ones go to serde.
    if digits == 0 || digits > 9 || (digits > 1 && rest.starts_with('0')) {
        return None;
    }
    let index = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(r#","delta":{"type":""#)?;
    // Text first: it is most deltas.
    let (kind, rest) = KINDS
        .iter()
        .find_map(|&(kind, head)| Some((kind, rest.strip_prefix(head)?)))?;
    let (value, rest) = string(rest)?;
    if rest != "}}" {
        return None;
    }
    let delta = match kind {
        Kind::Text => Delta::TextDelta {
            text: value.read()?,
        },
        Kind::Json => Delta::InputJsonDelta {
            partial_json: value.read()?,
        },
        // Not kept, but checked as serde would.
        Kind::Thinking => value.check().then_some(Delta::ThinkingDelta)?,
        Kind::Signature => value.check().then_some(Delta::SignatureDelta)?,
    };
    Some(ContentBlockDelta { index, delta })
}

/// A JSON string as written, quotes included.
struct Written<'a> {
    quoted: &'a str,
    /// Whether it holds a backslash escape.
    escaped: bool,
}

impl Written<'_> {
    /// The string's value; `None` for an invalid escape.
    fn read(&self) -> Option<String> {
        let inner = &self.quoted[1..self.quoted.len() - 1];
        match self.escaped {
            false => Some(inner.to_owned()),
            // `\u` escapes (and invalid ones) are serde's to read and check.
            true => unescape(inner).or_else(|| serde_json::from_str(self.quoted).ok()),
        }
    }

    /// Whether the string is valid, without keeping its value.
    fn check(&self) -> bool {
        !self.escaped || serde_json::from_str::<serde::de::IgnoredAny>(self.quoted).is_ok()
    }
}

/// The JSON string that `s` starts with, and what follows it. `None` when `s`
/// does not start with a string (or holds a raw control character).
fn string(s: &str) -> Option<(Written<'_>, &str)> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    // One pass: the closing quote, whether there are escapes, and no raw
    // control character (JSON requires them escaped). Strings here are short.
    let mut escaped = false;
    let mut at = 1;
    let end = loop {
        match *bytes.get(at)? {
            b'"' => break at,
            b'\\' => {
                // A backslash and the character it escapes.
                escaped = true;
                at += 2;
            }
            0..=0x1f => return None,
            _ => at += 1,
        }
    };
    let written = Written {
        quoted: &s[..=end],
        escaped,
    };
    Some((written, &s[end + 1..]))
}

/// `inner` with its one-character escapes (`\"`, `\\`, `\n`, …) resolved;
/// `None` when it holds a `\u` escape or an invalid one.
fn unescape(inner: &str) -> Option<String> {
    let mut value = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(at) = memchr::memchr(b'\\', rest.as_bytes()) {
        value.push_str(&rest[..at]);
        value.push(match rest.as_bytes().get(at + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            _ => return None,
        });
        // The escaped character is ASCII: `at + 2` is a character boundary.
        rest = &rest[at + 2..];
    }
    value.push_str(rest);
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde(data: &str) -> Option<ContentBlockDelta> {
        serde_json::from_str(data).ok()
    }

    fn text(index: usize, text: &str) -> ContentBlockDelta {
        ContentBlockDelta {
            index,
            delta: Delta::TextDelta { text: text.into() },
        }
    }

    #[test]
    fn the_compact_form_reads_as_serde_reads_it() {
        let cases = [
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"na\u00efve \ud83d\ude00 \"q\" a\\b\n"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"\\\\n \\\" \/\b\f\n\r\t é\\"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm 😀"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\"hmm\" \u00e9"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#,
        ];
        for data in cases {
            let fast = compact(data);
            assert!(fast.is_some(), "not read directly: {data}");
            assert_eq!(fast, serde(data), "{data}");
        }
    }

    #[test]
    fn other_forms_go_to_serde_with_the_same_result() {
        let cases = [
            // Spaces, another key order, an extra field, an unknown delta type.
            r#"{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}"#,
            r#"{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi","extra":1}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#,
            r#"{"type":"content_block_delta","index":00,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_delta","index":99999999999,"delta":{"type":"text_delta","text":"Hi"}}"#,
        ];
        for data in cases {
            assert_eq!(compact(data), None, "read directly: {data}");
            let read = ContentBlockDelta::from_json(data).ok();
            assert_eq!(read, serde(data), "{data}");
        }
        assert_eq!(
            ContentBlockDelta::from_json(cases[0]).unwrap(),
            text(0, "Hi")
        );
    }

    #[test]
    fn invalid_json_is_an_error_as_with_serde() {
        let cases = [
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\u{1}b\"}}",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\xb"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a\xb"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ab"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ab"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ab"}}}"#,
        ];
        for data in cases {
            assert_eq!(compact(data), None, "read directly: {data}");
            assert!(ContentBlockDelta::from_json(data).is_err(), "{data}");
        }
    }

    #[test]
    fn every_delta_of_the_fixtures_reads_as_serde_reads_it() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/llm/anthropic"
        );
        let mut read = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let body = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for line in body.lines() {
                let Some(data) = line.strip_prefix("data: ") else {
                    continue;
                };
                if !data.contains("\"content_block_delta\"") {
                    continue;
                }
                let expected = serde(data);
                assert_eq!(ContentBlockDelta::from_json(data).ok(), expected, "{data}");
                if let Some(fast) = compact(data) {
                    assert_eq!(Some(fast), expected, "{data}");
                    read += 1;
                }
            }
        }
        assert!(read > 6000, "only {read} deltas read directly");
    }
}
