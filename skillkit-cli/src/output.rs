//! Output that a closed pipe or a closed terminal cannot crash:
//! `skillkit list --json | head` ends quietly when `head` has read enough,
//! and `skillkit chat` ends quietly when its terminal goes away.

use std::fmt::Arguments;
use std::io::{ErrorKind, Write};

/// Writes `text` to standard output and flushes it. When the reader went
/// away (a closed pipe, a hung-up terminal), the process exits quietly with
/// success: nobody is left to read the rest. Any other write error exits with
/// the I/O error code.
pub fn write(text: Arguments<'_>, newline: bool) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_fmt(text)
        .and_then(|()| match newline {
            true => stdout.write_all(b"\n"),
            false => Ok(()),
        })
        .and_then(|()| stdout.flush());
    if let Err(error) = written {
        if gone(&error) {
            std::process::exit(0);
        }
        err!("error: cannot write to standard output: {error}");
        std::process::exit(i32::from(crate::failure::EXIT_IO));
    }
}

/// Whether a write failed because nobody reads any more.
fn gone(error: &std::io::Error) -> bool {
    // EIO: the terminal was closed (its pty master went away).
    error.kind() == ErrorKind::BrokenPipe || error.raw_os_error() == Some(5)
}

/// Writes a line to standard error; a closed stderr is ignored (there is
/// nowhere left to say anything).
pub fn error_line(text: Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_fmt(text)
        .and_then(|()| stderr.write_all(b"\n"));
}

/// Writes to standard error without a line end; errors ignored.
pub fn error_text(text: Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_fmt(text).and_then(|()| stderr.flush());
}

/// `println!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), true)
    };
}

/// `print!` through [`write`] (flushed).
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
