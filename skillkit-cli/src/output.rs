//! Standard output that a closed pipe cannot crash: `skillkit list --json |
//! head` ends quietly when `head` has read enough.

use std::fmt::Arguments;
use std::io::{ErrorKind, Write};

/// Writes one line to standard output. When the reader went away (a closed
/// pipe), the process exits quietly with success: nobody is left to read the
/// rest. Any other write error exits with the I/O error code.
pub fn line(text: Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout
        .write_fmt(text)
        .and_then(|()| stdout.write_all(b"\n"))
    {
        if error.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to standard output: {error}");
        std::process::exit(i32::from(crate::EXIT_IO));
    }
}

/// `println!` through [`line`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}
pub(crate) use out;
