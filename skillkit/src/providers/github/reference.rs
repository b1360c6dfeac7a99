//! [`Reference`]: what to import, written `owner/repo[/path][@ref]`.
//!
//! Every part is validated before it reaches a URL or a file name: owner and
//! repository in GitHub's charset, the path as plain folder names, the ref by
//! git's own rules (`git check-ref-format`) within a conservative charset.

use std::fmt;
use std::str::FromStr;

use super::error::GitHubError;

/// The longest owner name accepted (GitHub allows 39; Enterprise may allow more).
const MAX_OWNER: usize = 100;
/// The longest repository name GitHub allows.
const MAX_REPO: usize = 100;
/// The longest subpath accepted.
const MAX_PATH: usize = 1024;
/// The longest ref accepted.
const MAX_REF: usize = 255;

/// A validated import source: `owner/repo[/path][@ref]`.
///
/// Owner and repository are case-insensitive on GitHub, so they are kept in
/// lower case: `Obra/Superpowers` and `obra/superpowers` are the same source.
/// The path and the ref are kept as written. The canonical text (its
/// [`Display`](fmt::Display)) is also the name of the imported kit.
///
/// ```
/// use skillkit::providers::github::Reference;
///
/// let r: Reference = "Anthropics/skills/document-skills@v1.2".parse()?;
/// assert_eq!(r.owner(), "anthropics");
/// assert_eq!(r.repo(), "skills");
/// assert_eq!(r.path(), Some("document-skills"));
/// assert_eq!(r.git_ref(), Some("v1.2"));
/// assert_eq!(r.to_string(), "anthropics/skills/document-skills@v1.2");
///
/// let err = "../etc/passwd".parse::<Reference>().unwrap_err();
/// assert!(err.to_string().contains("owner/repo"));
/// # Ok::<(), skillkit::providers::github::GitHubError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    owner: String,
    repo: String,
    path: Option<String>,
    git_ref: Option<String>,
}

impl Reference {
    /// Parses and validates `owner/repo[/path][@ref]`.
    ///
    /// ```
    /// let r = skillkit::providers::github::Reference::parse("obra/superpowers")?;
    /// assert_eq!(r.git_ref(), None);
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn parse(input: &str) -> Result<Reference, GitHubError> {
        let invalid = |reason: String| GitHubError::InvalidSource {
            input: printable(input),
            reason,
        };
        let text = input.trim();
        if text.is_empty() {
            return Err(invalid("it is empty".into()));
        }
        if text.contains("://") || text.starts_with("github.com/") {
            return Err(invalid(
                "it is a URL; give only the part after the host (for \
                 `https://github.com/obra/superpowers` write `obra/superpowers`)"
                    .into(),
            ));
        }
        if let Some(c) = text.chars().find(|c| c.is_control()) {
            return Err(invalid(format!(
                "it contains the control character {:?}",
                c
            )));
        }
        let (location, git_ref) = match text.split_once('@') {
            Some((location, git_ref)) => (location, Some(git_ref)),
            None => (text, None),
        };
        let mut parts = location.splitn(3, '/');
        let owner = parts.next().unwrap_or_default();
        let Some(repo) = parts.next() else {
            return Err(invalid("it has no repository; write `owner/repo`".into()));
        };
        let path = parts.next();
        check_owner(owner).map_err(invalid)?;
        check_repo(repo).map_err(invalid)?;
        let path = match path {
            Some(path) => check_path(path).map_err(invalid)?,
            None => None,
        };
        let git_ref = match git_ref {
            Some(git_ref) => Some(check_ref(git_ref).map_err(invalid)?),
            None => None,
        };
        Ok(Reference {
            owner: owner.to_ascii_lowercase(),
            repo: repo.to_ascii_lowercase(),
            path,
            git_ref,
        })
    }

    /// The repository owner (user or organisation), in lower case.
    ///
    /// ```
    /// let r = skillkit::providers::github::Reference::parse("Obra/x")?;
    /// assert_eq!(r.owner(), "obra");
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The repository name, in lower case.
    ///
    /// ```
    /// let r = skillkit::providers::github::Reference::parse("obra/Superpowers")?;
    /// assert_eq!(r.repo(), "superpowers");
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn repo(&self) -> &str {
        &self.repo
    }

    /// The folder inside the repository that holds the kit, if not the root.
    ///
    /// ```
    /// let r = skillkit::providers::github::Reference::parse("o/r/a/b/")?;
    /// assert_eq!(r.path(), Some("a/b"));
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The branch, tag or commit asked for; `None` means the default branch.
    ///
    /// ```
    /// let r = skillkit::providers::github::Reference::parse("o/r@main")?;
    /// assert_eq!(r.git_ref(), Some("main"));
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn git_ref(&self) -> Option<&str> {
        self.git_ref.as_deref()
    }

    /// `owner/repo`, the part that `allowed_sources` patterns match.
    ///
    /// ```
    /// let r = skillkit::providers::github::Reference::parse("o/r/p@v1")?;
    /// assert_eq!(r.repository(), "o/r");
    /// # Ok::<(), skillkit::providers::github::GitHubError>(())
    /// ```
    pub fn repository(&self) -> String {
        format!("{}/{}", self.owner, self.repo)
    }

    /// The path's folder names (empty for the repository root).
    pub(crate) fn path_segments(&self) -> Vec<&str> {
        self.path
            .as_deref()
            .map_or_else(Vec::new, |p| p.split('/').collect())
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.repo)?;
        if let Some(path) = &self.path {
            write!(f, "/{path}")?;
        }
        if let Some(git_ref) = &self.git_ref {
            write!(f, "@{git_ref}")?;
        }
        Ok(())
    }
}

impl FromStr for Reference {
    type Err = GitHubError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Reference::parse(s)
    }
}

/// `text` with control characters escaped and cut to a readable length, for
/// error messages.
pub(crate) fn printable(text: &str) -> String {
    const MAX: usize = 200;
    let mut out: String = text
        .chars()
        .take(MAX)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().count() > MAX {
        out.push('…');
    }
    out
}

/// Owner names: ASCII letters, digits, `-` and `_` (Enterprise), not starting
/// with `-`.
pub(crate) fn check_owner(owner: &str) -> Result<(), String> {
    if owner.is_empty() {
        return Err("the owner is empty; write `owner/repo`".into());
    }
    if owner.len() > MAX_OWNER {
        return Err(format!("the owner is longer than {MAX_OWNER} characters"));
    }
    if owner.starts_with('-') {
        return Err(format!("the owner `{owner}` starts with `-`"));
    }
    if let Some(c) = owner
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(format!(
            "the owner `{}` contains {c:?}; owners use only letters, digits and `-`",
            printable(owner)
        ));
    }
    Ok(())
}

/// Repository names: ASCII letters, digits, `.`, `-`, `_`; never `.`, `..` or
/// anything containing `..`.
pub(crate) fn check_repo(repo: &str) -> Result<(), String> {
    if repo.is_empty() {
        return Err("the repository name is empty; write `owner/repo`".into());
    }
    if repo.len() > MAX_REPO {
        return Err(format!(
            "the repository name is longer than {MAX_REPO} characters"
        ));
    }
    if repo == "." || repo.contains("..") {
        return Err(format!(
            "the repository name `{repo}` contains `..` or is `.`"
        ));
    }
    if let Some(c) = repo
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
    {
        return Err(format!(
            "the repository name `{}` contains {c:?}; repository names use only letters, digits, `.`, `-` and `_`",
            printable(repo)
        ));
    }
    Ok(())
}

/// A subpath: plain folder names separated by `/`. Leading and trailing
/// slashes are dropped; `None` when nothing is left.
fn check_path(path: &str) -> Result<Option<String>, String> {
    let path = path.trim_matches('/');
    if path.is_empty() {
        return Ok(None);
    }
    if path.len() > MAX_PATH {
        return Err(format!("the path is longer than {MAX_PATH} characters"));
    }
    for segment in path.split('/') {
        if segment.is_empty() {
            return Err("the path contains an empty folder name (`//`)".into());
        }
        if segment == "." || segment == ".." {
            return Err(format!(
                "the path contains `{segment}`; give a plain folder path"
            ));
        }
        if let Some(c) = segment.chars().find(|c| matches!(c, '\\' | ':')) {
            return Err(format!("the path contains {c:?}"));
        }
    }
    Ok(Some(path.to_owned()))
}

/// A ref: `git check-ref-format` rules, within letters, digits and `._/+-`.
fn check_ref(git_ref: &str) -> Result<String, String> {
    let bad = |why: &str| Err(format!("the ref `{}` {why}", printable(git_ref)));
    if git_ref.is_empty() {
        return Err(
            "the ref after `@` is empty (name a branch, tag or commit, or drop the `@`)".into(),
        );
    }
    if git_ref.len() > MAX_REF {
        return bad(&format!("is longer than {MAX_REF} characters"));
    }
    if let Some(c) = git_ref
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '+' | '-')))
    {
        return bad(&format!(
            "contains {c:?}; refs here use only letters, digits and `._/+-`"
        ));
    }
    if git_ref.contains("..") || git_ref.contains("//") {
        return bad("contains `..` or `//`");
    }
    if git_ref.starts_with(['/', '-']) || git_ref.ends_with(['/', '.']) {
        return bad("starts with `/` or `-`, or ends with `/` or `.`");
    }
    if git_ref
        .split('/')
        .any(|part| part.starts_with('.') || part.ends_with(".lock"))
    {
        return bad("has a part starting with `.` or ending with `.lock`");
    }
    Ok(git_ref.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(input: &str) -> Reference {
        Reference::parse(input).unwrap()
    }

    fn err(input: &str) -> String {
        Reference::parse(input).unwrap_err().to_string()
    }

    #[test]
    fn all_parts_parse() {
        let r = ok(" Obra/SuperPowers/skills/x@feature/new-1.2 ");
        assert_eq!(
            (r.owner(), r.repo(), r.path(), r.git_ref()),
            (
                "obra",
                "superpowers",
                Some("skills/x"),
                Some("feature/new-1.2")
            )
        );
        assert_eq!(r.to_string(), "obra/superpowers/skills/x@feature/new-1.2");
        assert_eq!(r.path_segments(), ["skills", "x"]);
        assert_eq!(ok("a/b/").path(), None);
        assert_eq!(ok("a/.github").repo(), ".github");
    }

    #[test]
    fn traversal_and_junk_are_refused() {
        for input in [
            "",
            "obra",
            "/repo",
            "obra/",
            "../x",
            "obra/..",
            "obra/.",
            "ob..ra/x",
            "a/b..c",
            "a/b/../c",
            "a/b/./c",
            "a/b/c//d",
            "a/b@",
            "a/b@..",
            "a/b@x..y",
            "a/b@-x",
            "a/b@x.lock",
            "a/b@x y",
            "a/b@x:y",
            "a/b@a@b",
            "a\u{0}/b",
            "a/b\n/c",
            "a/b/c\u{7}",
            "-a/b",
            "a b/c",
            "a/b c",
            "a/b/c:d",
            "a/b/c\\d",
            "https://github.com/a/b",
            "github.com/a/b",
        ] {
            assert!(Reference::parse(input).is_err(), "accepted {input:?}");
        }
    }

    #[test]
    fn messages_say_what_to_write() {
        assert!(err("obra").contains("owner/repo"));
        assert!(err("obra/..").contains("`..`"));
        assert!(err("https://github.com/obra/superpowers").contains("write `obra/superpowers`"));
        assert!(err("a\u{1b}/b").contains("\\u{1b}"));
    }
}
