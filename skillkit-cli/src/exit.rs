//! The exit codes every command shares (`--help` states them): 0 success,
//! [`FAILED`] when the work failed, [`IO`] on a usage or I/O error.

/// Exit code: the work failed (an invalid skill for `validate`, an unknown
/// skill, a model or GitHub error).
pub const FAILED: u8 = 1;

/// Exit code: a usage or I/O error.
pub const IO: u8 = 2;
