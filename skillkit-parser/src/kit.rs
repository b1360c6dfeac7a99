//! The rule that turns parsed files into a kit, for every provider and the
//! derive alike: each name is qualified in its kit (a prefix naming another
//! kit is refused at the line of its `name:` key), and of two members with the
//! same full name the first (by file path) is kept and the other reported,
//! naming both files.
//!
//! It is two steps because a provider that caches parsed files qualifies a
//! file once, when it reads it ([`qualify`]), and forms the kit from its
//! cached members on every query ([`dedup`]).
//!
//! ```
//! use skillkit_parser::{Severity, kit};
//!
//! let a = kit::Declared::new("read").at("k/a/SKILL.md", 2);
//! let b = kit::Declared::new("k:read").at("k/b/SKILL.md", 3);
//! let mut members = vec![kit::qualify("k", &a)?, kit::qualify("k", &b)?];
//! let dropped = kit::dedup(&mut members, "skill", Severity::Warning, |m: &kit::Member| m.declared());
//! assert_eq!(members.len(), 1);
//! assert_eq!(dropped[0].to_string(),
//!     "k/b/SKILL.md:3:1: warning: duplicate skill name `k:read`: `k/a/SKILL.md` has it too; rename one of them");
//! # Ok::<(), skillkit_parser::Diagnostic>(())
//! ```

use std::path::{Path, PathBuf};

use crate::{Diagnostic, Severity, name};

/// Where a member's name is written: the name as written, its file (none for
/// skills made in memory) and the line of its `name:` key (0 when unknown).
///
/// ```
/// let declared = skillkit_parser::kit::Declared::new("read").at("k/read/SKILL.md", 2);
/// assert_eq!(declared.line, 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared<'a> {
    /// The name as written (bare, or with the kit's prefix).
    pub name: &'a str,
    /// The file it is written in.
    pub path: Option<&'a Path>,
    /// The 1-based line of its `name:` key; 0 when there is no file.
    pub line: usize,
}

impl<'a> Declared<'a> {
    /// A name with no file (a skill put in memory, a database row).
    ///
    /// ```
    /// let declared = skillkit_parser::kit::Declared::new("read");
    /// assert!(declared.path.is_none());
    /// ```
    pub fn new(name: &'a str) -> Self {
        Declared {
            name,
            path: None,
            line: 0,
        }
    }

    /// The same name, written at `line` of `path`.
    ///
    /// ```
    /// let declared = skillkit_parser::kit::Declared::new("a").at("k/a/SKILL.md", 2);
    /// assert_eq!(declared.path, Some(std::path::Path::new("k/a/SKILL.md")));
    /// ```
    pub fn at(self, path: &'a (impl AsRef<Path> + ?Sized), line: usize) -> Self {
        Declared {
            path: Some(path.as_ref()),
            line,
            ..self
        }
    }

    fn diagnostic(&self, severity: Severity, message: String) -> Diagnostic {
        let d = Diagnostic {
            severity,
            ..Diagnostic::error(self.line, usize::from(self.line > 0), message)
        };
        match self.path {
            Some(path) => d.with_path(path),
            None => d,
        }
    }
}

/// A member of a kit: its full name and where it was written, as
/// [`qualify`] returns it.
///
/// ```
/// let member = skillkit_parser::kit::qualify("k", &skillkit_parser::kit::Declared::new("a")).unwrap();
/// assert_eq!(member.name, "k:a");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The full name, `<kit>:<name>`.
    pub name: String,
    /// The file it came from.
    pub path: Option<PathBuf>,
    /// The line of its `name:` key (0 when unknown).
    pub line: usize,
}

impl Member {
    /// The member as a [`Declared`] name (with its full name), for [`dedup`].
    ///
    /// ```
    /// let member = skillkit_parser::kit::qualify("k", &skillkit_parser::kit::Declared::new("a")).unwrap();
    /// assert_eq!(member.declared().name, "k:a");
    /// ```
    pub fn declared(&self) -> Declared<'_> {
        Declared {
            name: &self.name,
            path: self.path.as_deref(),
            line: self.line,
        }
    }
}

/// The full name of the member declared as `declared` in kit `kit`: a bare name
/// gets the kit's prefix, the kit's own prefix is kept, and a prefix naming
/// another kit is an error at the line of the `name:` key.
///
/// ```
/// use skillkit_parser::kit::{Declared, qualify};
/// assert_eq!(qualify("files", &Declared::new("read")).unwrap().name, "files:read");
/// let err = qualify("files", &Declared::new("net:get").at("files/get/SKILL.md", 3)).unwrap_err();
/// assert!(err.to_string().starts_with("files/get/SKILL.md:3:1: error: skill name `net:get` names kit `net`"));
/// ```
pub fn qualify(kit: &str, declared: &Declared<'_>) -> Result<Member, Diagnostic> {
    match name::qualify(kit, declared.name) {
        Ok(name) => Ok(Member {
            name,
            path: declared.path.map(Path::to_path_buf),
            line: declared.line,
        }),
        Err(message) => Err(declared.diagnostic(Severity::Error, message)),
    }
}

/// Sorts `members` by full name and keeps, of each name, the first in the
/// order given (by file path, as every layout lists them). Each member dropped
/// is returned as a diagnostic of `severity` at its own `name:` line, naming
/// the file that kept the name. `what` is `"skill"` or `"agent"`.
///
/// ```
/// use skillkit_parser::{Severity, kit::{Declared, dedup}};
/// let mut names = vec!["k:b", "k:a", "k:b"];
/// let dropped = dedup(&mut names, "skill", Severity::Error, |n: &&str| Declared::new(n));
/// assert_eq!(names, ["k:a", "k:b"]);
/// assert!(dropped[0].is_error());
/// ```
pub fn dedup<T>(
    members: &mut Vec<T>,
    what: &str,
    severity: Severity,
    origin: impl Fn(&T) -> Declared<'_>,
) -> Vec<Diagnostic> {
    // A stable sort keeps the given order among equal names.
    members.sort_by(|a, b| origin(a).name.cmp(origin(b).name));
    let mut dropped = Vec::new();
    members.dedup_by(|later, kept| {
        let (later, kept) = (origin(later), origin(kept));
        let same = later.name == kept.name;
        if same {
            let place = kept.path.map_or_else(
                || "another entry".to_owned(),
                |p| format!("`{}`", p.display()),
            );
            dropped.push(later.diagnostic(
                severity,
                format!(
                    "duplicate {what} name `{}`: {place} has it too; rename one of them",
                    later.name
                ),
            ));
        }
        same
    });
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_a_name_is_kept_and_the_order_given_decides() {
        let files = ["k/a/SKILL.md", "k/b/SKILL.md", "k/c/SKILL.md"];
        let mut members: Vec<Member> = files
            .iter()
            .zip(["x", "k:x", "y"])
            .map(|(path, name)| qualify("k", &Declared::new(name).at(path, 2)).unwrap())
            .collect();
        let dropped = dedup(&mut members, "skill", Severity::Warning, Member::declared);
        let kept: Vec<_> = members.iter().map(|m| (m.name.as_str(), m.line)).collect();
        assert_eq!(kept, [("k:x", 2), ("k:y", 2)]);
        assert_eq!(members[0].path.as_deref(), Some(Path::new(files[0])));
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].path.as_deref(), Some(Path::new(files[1])));
        assert_eq!((dropped[0].line, dropped[0].column), (2, 1));
        assert!(!dropped[0].is_error());
    }

    #[test]
    fn a_foreign_prefix_is_refused_at_the_name_line() {
        let err = qualify("k", &Declared::new("other:x").at("k/x/SKILL.md", 4)).unwrap_err();
        assert_eq!((err.line, err.column), (4, 1));
        assert!(err.message.contains("write the bare name `x`"), "{err}");
    }

    #[test]
    fn names_without_a_file_have_no_position() {
        let err = qualify("k", &Declared::new("other:x")).unwrap_err();
        assert_eq!((err.line, err.column, err.path.as_deref()), (0, 0, None));
        let mut names = vec!["k:a", "k:a"];
        let dropped = dedup(&mut names, "agent", Severity::Warning, |n: &&str| {
            Declared::new(n)
        });
        assert_eq!(
            dropped[0].to_string(),
            "warning: duplicate agent name `k:a`: another entry has it too; rename one of them"
        );
    }
}
