//! Diagnostics: what went wrong in which file, where, and what to do about it.

use std::fmt;
use std::path::{Path, PathBuf};

/// How serious a [`Diagnostic`] is.
///
/// ```
/// use skillkit_parser::Severity;
/// assert_eq!(Severity::Warning.to_string(), "warning");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The file (or field) was not loaded.
    Error,
    /// The file loaded, but something in it should be fixed.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// A problem found in a SKILL.md, AGENT.md or kit directory.
///
/// It names the file, the 1-based line and column, and says what to fix.
/// `Display` renders it as `path:line:column: severity: message`, the form
/// compilers use and editors and terminals turn into links.
///
/// ```
/// use skillkit_parser::{Diagnostic, Severity};
/// let d = Diagnostic::error(3, 1, "missing `description`").with_path("skills/read/SKILL.md");
/// assert_eq!(d.to_string(), "skills/read/SKILL.md:3:1: error: missing `description`");
/// assert_eq!(d.severity, Severity::Error);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file the problem is in, when known.
    pub path: Option<PathBuf>,
    /// 1-based line (0 when the problem concerns the whole file or directory).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// What is wrong and what to do about it.
    pub message: String,
    /// Whether the file was skipped ([`Severity::Error`]) or loaded anyway.
    pub severity: Severity,
}

impl Diagnostic {
    /// An error at `line`:`column`.
    ///
    /// ```
    /// let d = skillkit_parser::Diagnostic::error(1, 1, "bad");
    /// assert_eq!(d.to_string(), "1:1: error: bad");
    /// ```
    pub fn error(line: usize, column: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            path: None,
            line,
            column,
            message: message.into(),
            severity: Severity::Error,
        }
    }

    /// A warning at `line`:`column`.
    ///
    /// ```
    /// let d = skillkit_parser::Diagnostic::warning(2, 1, "odd name");
    /// assert_eq!(d.severity, skillkit_parser::Severity::Warning);
    /// ```
    pub fn warning(line: usize, column: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(line, column, message)
        }
    }

    /// The same diagnostic, naming `path` as the file.
    ///
    /// ```
    /// let d = skillkit_parser::Diagnostic::error(1, 1, "bad").with_path("a/SKILL.md");
    /// assert_eq!(d.path.as_deref(), Some(std::path::Path::new("a/SKILL.md")));
    /// ```
    pub fn with_path(mut self, path: impl AsRef<Path>) -> Self {
        self.path = Some(path.as_ref().to_path_buf());
        self
    }

    /// Whether this diagnostic meant the file was skipped.
    ///
    /// ```
    /// assert!(skillkit_parser::Diagnostic::error(1, 1, "x").is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}:", path.display())?;
        }
        if self.line > 0 {
            write!(f, "{}:", self.line)?;
            if self.column > 0 {
                write!(f, "{}:", self.column)?;
            }
        }
        if self.path.is_some() || self.line > 0 {
            f.write_str(" ")?;
        }
        write!(f, "{}: {}", self.severity, self.message)
    }
}

impl std::error::Error for Diagnostic {}
