//! `allowed_sources`: which repositories may be imported.

use super::error::GitHubError;
use super::reference::{Reference, check_owner, check_repo};

/// One `allowed_sources` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// `*`: any repository.
    Any,
    /// `owner/*`: any repository of the owner.
    Owner(String),
    /// `owner/repo`: that repository (any path and ref in it).
    Repo(String, String),
}

/// The `allowed_sources` patterns, matched case-insensitively against a
/// reference's `owner/repo`. Empty allows nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct AllowList {
    patterns: Vec<Pattern>,
    /// The patterns as written, for messages.
    written: Vec<String>,
}

impl AllowList {
    /// Parses the patterns; the first invalid one is an error naming it.
    pub(crate) fn parse<I, S>(patterns: I) -> Result<AllowList, GitHubError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list = AllowList::default();
        for written in patterns {
            let written = written.as_ref().trim();
            list.patterns.push(parse_pattern(written)?);
            list.written.push(written.to_owned());
        }
        Ok(list)
    }

    /// Whether `reference` may be imported.
    pub(crate) fn allows(&self, reference: &Reference) -> bool {
        self.patterns.iter().any(|pattern| match pattern {
            Pattern::Any => true,
            Pattern::Owner(owner) => owner == reference.owner(),
            Pattern::Repo(owner, repo) => owner == reference.owner() && repo == reference.repo(),
        })
    }

    /// `Ok` when `reference` is allowed, else the error naming the patterns.
    pub(crate) fn check(&self, reference: &Reference) -> Result<(), GitHubError> {
        if self.allows(reference) {
            return Ok(());
        }
        Err(GitHubError::NotAllowed {
            reference: reference.to_string(),
            allowed: self.written.clone(),
        })
    }

    /// The patterns as written.
    pub(crate) fn patterns(&self) -> &[String] {
        &self.written
    }
}

fn parse_pattern(written: &str) -> Result<Pattern, GitHubError> {
    let invalid = |reason: String| GitHubError::InvalidPattern {
        pattern: super::reference::printable(written),
        reason,
    };
    if written == "*" {
        return Ok(Pattern::Any);
    }
    let Some((owner, repo)) = written.split_once('/') else {
        return Err(invalid("it has no `/`".into()));
    };
    check_owner(owner).map_err(invalid)?;
    let owner = owner.to_ascii_lowercase();
    if repo == "*" {
        return Ok(Pattern::Owner(owner));
    }
    check_repo(repo).map_err(invalid)?;
    Ok(Pattern::Repo(owner, repo.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(patterns: &[&str], source: &str) -> bool {
        AllowList::parse(patterns)
            .unwrap()
            .allows(&Reference::parse(source).unwrap())
    }

    #[test]
    fn patterns_match_case_insensitively() {
        assert!(allows(&["*"], "any/thing"));
        assert!(allows(&["Obra/*"], "obra/superpowers/skills@v1"));
        assert!(allows(&["obra/superpowers"], "OBRA/SuperPowers"));
        assert!(!allows(&["obra/superpowers"], "obra/other"));
        assert!(!allows(&["obra/*"], "obrax/superpowers"));
        assert!(!allows(&[], "obra/superpowers"));
    }

    #[test]
    fn bad_patterns_are_refused() {
        for pattern in [
            "", "obra", "obra/", "*/x", "ob ra/*", "obra/..", "obra/x/y", "o/r*",
        ] {
            assert!(AllowList::parse([pattern]).is_err(), "accepted {pattern:?}");
        }
    }

    #[test]
    fn refusal_names_the_patterns() {
        let list = AllowList::parse(["obra/*", "anthropics/skills"]).unwrap();
        let err = list
            .check(&Reference::parse("evil/repo").unwrap())
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`evil/repo`") && text.contains("`obra/*`, `anthropics/skills`"));
    }
}
