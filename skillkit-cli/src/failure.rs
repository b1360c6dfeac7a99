//! [`Failure`]: why a command stopped, as one line saying what to do, and
//! the exit code that goes with it.

use std::fmt::Display;
use std::process::ExitCode;

use crate::exit;
use crate::output::err;

/// A command's failure: printed as `error: …` on stderr, then the exit code.
#[derive(Debug)]
pub struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// The work failed ([`exit::FAILED`]).
    pub fn failed(message: impl Display) -> Failure {
        Failure {
            code: exit::FAILED,
            message: message.to_string(),
        }
    }

    /// A usage or I/O error ([`exit::IO`]).
    pub fn io(message: impl Display) -> Failure {
        Failure {
            code: exit::IO,
            message: message.to_string(),
        }
    }

    /// A failure with an exit code of its own (one `--help` states).
    pub fn with_code(code: u8, message: impl Display) -> Failure {
        Failure {
            code,
            message: message.to_string(),
        }
    }

    /// What went wrong and what to do, in one line.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Prints the message and returns the exit code.
    pub fn report(self) -> ExitCode {
        err!("error: {}", self.message);
        ExitCode::from(self.code)
    }
}
