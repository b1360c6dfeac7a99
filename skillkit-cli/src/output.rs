//! Everything the command prints goes through here, so two promises hold for
//! all of it:
//!
//! * **Inert**: text from a skill, a provider or a model can hold escape
//!   sequences that retitle the window, clear the screen or write the
//!   clipboard (OSC 52). [`inert`] makes every control character visible in
//!   Rust's escape form (`\u{1b}` for ESC), as `cargo` shows them, and the
//!   writers below apply it to every line they print, so no command can
//!   forget it. `--json` output goes through [`json`], which escapes the
//!   same characters as JSON does (`\u001b`), so the value is unchanged.
//! * **Quiet on a closed reader**: `skillkit validate --json | head -1` does
//!   not crash when `head` has read enough; the rest of the output is
//!   dropped, the command finishes, and its exit code is still its verdict.

use std::borrow::Cow;
use std::fmt::{Arguments, Write as _};
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

/// Set when standard output's reader went away.
static GONE: AtomicBool = AtomicBool::new(false);

/// Whether `c` acts on a terminal instead of being shown: the C0 controls
/// (line ends and tabs are decided by [`inert`]), DEL, the C1 controls
/// (`U+009B` is a CSI for many terminals) and the bidirectional embeddings,
/// overrides and isolates (`U+202A`–`U+202E`, `U+2066`–`U+2069`), which
/// reorder what is shown ("Trojan Source").
fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` made safe for a terminal: every control character written in
/// Rust's escape form (`\u{1b}` for ESC, `\u{7}` for BEL, `\u{202e}` for a
/// right-to-left override), except line ends (`\n`, and `\r` right before
/// one) and tabs, which print as they are. Each character is decided alone,
/// so text printed in pieces (a model's streamed deltas) is as inert as text
/// printed at once, wherever an escape sequence is cut.
///
/// ```text
/// inert("\x1b]0;PWNED\x07 hi\n") == r"\u{1b}]0;PWNED\u{7} hi" + "\n"
/// ```
pub fn inert(text: &str) -> Cow<'_, str> {
    let shown = |(i, c): (usize, char)| {
        !is_control(c) || c == '\n' || c == '\t' || (c == '\r' && text[i + 1..].starts_with('\n'))
    };
    if text.char_indices().all(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        match shown((i, c)) {
            true => out.push(c),
            false => {
                let _ = write!(out, "{}", c.escape_unicode());
            }
        }
    }
    Cow::Owned(out)
}

/// `value` as JSON (indented when `pretty`), with every control character
/// escaped as `\uXXXX`: serde_json escapes C0 itself; DEL, C1 and the bidi
/// controls, which JSON allows raw, are escaped too, so the bytes of the
/// output are inert on a terminal and the value is the same.
pub fn json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Result<String, serde_json::Error> {
    let mut bytes = Vec::new();
    match pretty {
        true => value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut bytes,
            Escaping(serde_json::ser::PrettyFormatter::new()),
        ))?,
        false => value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut bytes,
            Escaping(serde_json::ser::CompactFormatter),
        ))?,
    }
    // The serializer writes only UTF-8.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A JSON formatter escaping, in strings, what [`is_control`] names.
struct Escaping<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_control(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// `text` formatted and made [`inert`].
fn render(text: Arguments<'_>) -> String {
    let formatted = match text.as_str() {
        Some(plain) => Cow::Borrowed(plain),
        None => Cow::Owned(text.to_string()),
    };
    inert(&formatted).into_owned()
}

/// Writes `text`, made [`inert`], to standard output and flushes it. When
/// the reader went away (a closed pipe, a hung-up terminal), this and every
/// later write is dropped and the command goes on to its own end and exit
/// code ([`reader_gone`] lets a long one stop early). Any other write error
/// exits with the I/O error code.
pub fn write(text: Arguments<'_>, newline: bool) {
    if reader_gone() {
        return;
    }
    let text = render(text);
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(text.as_bytes())
        .and_then(|()| match newline {
            true => stdout.write_all(b"\n"),
            false => Ok(()),
        })
        .and_then(|()| stdout.flush());
    if let Err(error) = written {
        if gone(&error) {
            GONE.store(true, Ordering::Relaxed);
            return;
        }
        drop(stdout);
        err!("error: cannot write to standard output: {error}");
        std::process::exit(i32::from(crate::exit::IO));
    }
}

/// Whether standard output's reader went away: nobody reads what is printed.
pub fn reader_gone() -> bool {
    GONE.load(Ordering::Relaxed)
}

/// Whether a write failed because nobody reads any more.
fn gone(error: &std::io::Error) -> bool {
    // EIO: the terminal was closed (its pty master went away).
    error.kind() == ErrorKind::BrokenPipe || error.raw_os_error() == Some(5)
}

/// Writes a line, made [`inert`], to standard error; a closed stderr is
/// ignored (there is nowhere left to say anything).
pub fn error_line(text: Arguments<'_>) {
    let text = render(text);
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.write_all(b"\n"));
}

/// Writes to standard error, made [`inert`], without a line end; errors
/// ignored.
pub fn error_text(text: Arguments<'_>) {
    let text = render(text);
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush());
}

/// `println!` through [`write()`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), true)
    };
}

/// `print!` through [`write()`] (flushed).
macro_rules! out_text {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), false)
    };
}

/// `eprintln!` that cannot panic.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::output::error_line(format_args!($($arg)*))
    };
}

pub(crate) use {err, out, out_text};

/// Writes `bytes` to `file` whole: a temporary file beside it, synced, then
/// renamed over it (and the folder synced), so a crash or a full disk leaves
/// the old file or the new one, never half of one. A file that exists keeps
/// its permissions; a new one is the user's alone (as a saved conversation
/// should be). For the files the commands change: a saved conversation, a
/// skill's new description.
pub fn write_whole(file: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let folder = match file.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => std::path::Path::new("."),
    };
    std::fs::create_dir_all(folder)?;
    let mut staged = tempfile::Builder::new()
        .prefix(".skillkit-")
        .tempfile_in(folder)?;
    staged.write_all(bytes)?;
    if let Ok(meta) = std::fs::metadata(file) {
        staged.as_file().set_permissions(meta.permissions())?;
    }
    staged.as_file().sync_all()?;
    staged.persist(file).map_err(|e| e.error)?;
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(folder) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(
            inert("\x1b]0;PWNED\x07 \x1b[2J\n\tok"),
            "\\u{1b}]0;PWNED\\u{7} \\u{1b}[2J\n\tok"
        );
        assert_eq!(inert("a\u{9b}b\u{202e}c\x7f"), "a\\u{9b}b\\u{202e}c\\u{7f}");
        assert_eq!(inert("crlf\r\nlone\rcr\r"), "crlf\r\nlone\\u{d}cr\\u{d}");
        assert!(matches!(inert("plain, é ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_sequence_cut_in_two_is_still_shown() {
        let pieces = ["say \x1b", "]52;c;aGk=\x07"];
        let joined: String = pieces.iter().map(|p| inert(p)).collect();
        assert_eq!(joined, "say \\u{1b}]52;c;aGk=\\u{7}");
    }

    #[test]
    fn json_escapes_what_json_allows_raw() {
        let text = json(
            &serde_json::json!({"d": "\x1b[2J \u{9b} \u{202e} é"}),
            false,
        )
        .unwrap();
        assert_eq!(text, r#"{"d":"\u001b[2J \u009b \u202e é"}"#);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["d"], "\x1b[2J \u{9b} \u{202e} é");
    }
}
