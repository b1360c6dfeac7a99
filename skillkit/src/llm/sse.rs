//! Reading a vendor's server-sent events, for an adapter of your own
//! (`docs/llm-providers.md` walks through one): give the vendor's event type
//! [`FromSse`] and [`Streamable`](crate::llm::Streamable), and a [`Decoder`]
//! turns the response's bytes, split anywhere by the network, into universal
//! [`Event`](crate::llm::Event)s.

pub use crate::llm::decoder::{Decoder, FromSse};

/// One server-sent event: its `event:` name (empty when absent) and its
/// `data:` lines joined by `\n`.
///
/// ```
/// use skillkit::llm::sse::Frame;
/// // `event: message_delta` then `data: {"a":1}` and `data: {"b":2}`, then a blank line:
/// let frame = Frame { event: "message_delta", data: "{\"a\":1}\n{\"b\":2}" };
/// assert_eq!(frame.data.lines().count(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The `event:` field; empty when the event had none.
    pub event: &'a str,
    /// The `data:` fields, joined by `\n`.
    pub data: &'a str,
}

/// Splits a byte stream into [`Frame`]s, keeping incomplete lines between
/// calls to [`feed`](SseDecoder::feed).
///
/// Lines end with `\n`, `\r\n` or `\r`; a blank line ends an event; lines
/// starting with `:` are comments (keep-alives); `id` and `retry` fields are
/// read and ignored. Invalid UTF-8 is replaced, never a panic.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    /// Bytes of a line not yet terminated.
    partial: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting this one belongs to it.
    skip_lf: bool,
    /// Nothing read yet (a UTF-8 byte-order mark may start the stream).
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub(crate) fn new() -> Self {
        SseDecoder::default()
    }

    /// Reads `bytes`, calling `on_frame` for every event they complete.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], mut on_frame: impl FnMut(Frame<'_>)) {
        if !self.started && !bytes.is_empty() {
            self.started = true;
            self.partial.extend_from_slice(bytes);
            if self.partial.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.partial) {
                self.started = false;
                return;
            }
            let mut pending = std::mem::take(&mut self.partial);
            if pending.starts_with(b"\xEF\xBB\xBF") {
                pending.drain(..3);
            }
            self.feed(&pending, on_frame);
            return;
        }
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) {
            let line_end = end;
            let mut next = end + 1;
            if bytes[end] == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            if self.partial.is_empty() {
                self.line(&bytes[..line_end], &mut on_frame);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&bytes[..line_end]);
                self.line(&line, &mut on_frame);
                line.clear();
                self.partial = line;
            }
            bytes = &bytes[next..];
        }
        self.partial.extend_from_slice(bytes);
    }

    /// Ends the stream: an event whose last line was complete but whose blank
    /// line never came is still delivered; a half-written line is dropped.
    pub(crate) fn finish(&mut self, mut on_frame: impl FnMut(Frame<'_>)) {
        if !self.partial.is_empty() {
            tracing::debug!(
                bytes = self.partial.len(),
                "stream ended inside a line; dropping it"
            );
            self.partial.clear();
        }
        self.dispatch(&mut on_frame);
    }

    fn line(&mut self, line: &[u8], on_frame: &mut impl FnMut(Frame<'_>)) {
        if line.is_empty() {
            self.dispatch(on_frame);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                push_utf8(&mut self.data, value);
            }
            b"event" => {
                self.event.clear();
                push_utf8(&mut self.event, value);
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, on_frame: &mut impl FnMut(Frame<'_>)) {
        if self.has_data || !self.event.is_empty() {
            on_frame(Frame {
                event: &self.event,
                data: &self.data,
            });
        }
        self.event.clear();
        self.data.clear();
        self.has_data = false;
    }
}

fn push_utf8(target: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => target.push_str(text),
        Err(_) => target.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk, |f| out.push((f.event.to_owned(), f.data.to_owned())));
        }
        decoder.finish(|f| out.push((f.event.to_owned(), f.data.to_owned())));
        out
    }

    const STREAM: &[u8] = "\u{feff}event: a\r\ndata: h\u{e9}llo\r\n\r\n: keep-alive\n\nevent: b\rdata:x\rdata: y\r\rid: 3\nretry: 10\ndata: \u{1F600}\n\n".as_bytes();

    fn expected() -> Vec<(String, String)> {
        vec![
            ("a".into(), "h\u{e9}llo".into()),
            ("b".into(), "x\ny".into()),
            ("".into(), "\u{1F600}".into()),
        ]
    }

    #[test]
    fn line_endings_comments_bom_and_multiline_data() {
        assert_eq!(frames(&[STREAM]), expected());
    }

    #[test]
    fn every_split_point_gives_the_same_frames() {
        for at in 0..=STREAM.len() {
            let (a, b) = STREAM.split_at(at);
            assert_eq!(frames(&[a, b]), expected(), "split at byte {at}");
        }
        let bytes: Vec<&[u8]> = STREAM.chunks(1).collect();
        assert_eq!(frames(&bytes), expected());
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(
            frames(&[b"data: \xff\n\n"]),
            [("".to_owned(), "\u{fffd}".to_owned())]
        );
    }

    #[test]
    fn a_half_written_last_line_is_dropped() {
        assert_eq!(
            frames(&[b"data: a\n\ndata: {\"ty"]),
            [("".into(), "a".into())]
        );
    }
}
