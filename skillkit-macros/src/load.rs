//! Reading a kit at build time, with THE shared parser and kit-layout rules
//! (`skillkit_parser`), so an embedded kit loads exactly as `Local` loads it,
//! except that every problem is an error rather than a skipped file.

use std::path::{Path, PathBuf};

use skillkit_parser::{AgentDocument, Diagnostic, KitLayout, Severity, SkillDocument, kit};

/// A kit read and parsed at build time. Paths in it and in its diagnostics are
/// relative to `CARGO_MANIFEST_DIR`, as the user wrote them.
pub(crate) struct LoadedKit {
    /// The kit name.
    pub(crate) name: String,
    /// The kit directory as written in `path = "…"`.
    pub(crate) source: String,
    /// Every file of the kit (absolute), for `include_bytes!`: its
    /// documents and every file of each skill's folder.
    pub(crate) files: Vec<PathBuf>,
    /// Each skill's aggregate digest (v1) over its folder's files, by full
    /// name; none for a folder with a link or an unreadable entry.
    pub(crate) digests: Vec<(String, String)>,
    /// The skills, sorted by full name.
    pub(crate) skills: Vec<LoadedSkill>,
    /// The root agent (`AGENT.md`).
    pub(crate) agent: Option<AgentDocument>,
    /// The sub-agents, named `<kit>:<agent>`, sorted by name.
    pub(crate) agents: Vec<AgentDocument>,
    /// Problems that did not stop a file from loading.
    pub(crate) warnings: Vec<Diagnostic>,
}

/// One parsed `SKILL.md`.
pub(crate) struct LoadedSkill {
    /// `<kit>:<skill>`.
    pub(crate) name: String,
    pub(crate) doc: SkillDocument,
}

/// A file's parsed document with its full name and where it came from.
struct Parsed<T> {
    member: kit::Member,
    doc: T,
}

/// Reads the kit at `source` (relative to `manifest_dir`) as kit `kit`. On
/// failure, every problem found, each naming the file, line and column.
pub(crate) fn load(
    manifest_dir: &Path,
    source: &str,
    kit: &str,
) -> Result<LoadedKit, Vec<Diagnostic>> {
    let root = manifest_dir.join(source);
    let fail = |message: String| vec![Diagnostic::error(0, 0, message)];
    if !root.exists() {
        return Err(fail(format!(
            "kit directory `{source}` not found: `path` is relative to the folder of Cargo.toml"
        )));
    }
    if !root.is_dir() {
        return Err(fail(format!(
            "`{source}` is a file, not a kit directory: point `path` at the folder that holds the skills"
        )));
    }
    let layout = KitLayout::scan(&root)
        .map_err(|e| fail(format!("cannot read kit directory `{source}`: {e}")))?;
    if layout.is_empty() {
        return Err(fail(format!(
            "`{source}` is not a kit: it holds no SKILL.md, AGENT.md or agents/*.md; put each skill in \
             `{source}/<skill>/SKILL.md` or `{source}/skills/<skill>/SKILL.md`"
        )));
    }
    let relative = |path: &Path| {
        path.strip_prefix(manifest_dir)
            .unwrap_or(path)
            .to_path_buf()
    };
    let mut errors = Vec::new();
    let mut warnings: Vec<Diagnostic> = layout
        .diagnostics
        .iter()
        .map(|d| with_relative_path(d.clone(), &relative))
        .collect();

    let mut skills = Vec::new();
    let mut digests = Vec::new();
    let mut files: Vec<PathBuf> = layout.files().map(Path::to_path_buf).collect();
    for path in &layout.skills {
        let shown = relative(path);
        let parsed = read(path, &shown).and_then(|bytes| {
            let doc = SkillDocument::parse_file(&shown, &bytes)?;
            let origin = kit::Declared::new(&doc.name).at(&shown, doc.name_line);
            let member = kit::qualify(kit, &origin)?;
            Ok(Parsed { member, doc })
        });
        match parsed {
            Ok(skill) => {
                warnings.extend(skill.doc.warnings.iter().cloned());
                if let Some(folder) = path.parent()
                    && let Some((digest, walked)) = crate::digest::folder(folder)
                {
                    digests.push((skill.member.name.clone(), digest));
                    files.extend(walked);
                }
                skills.push(skill);
            }
            Err(diagnostic) => errors.push(diagnostic),
        }
    }

    let agent = layout.agent.as_ref().and_then(|path| {
        let shown = relative(path);
        match read(path, &shown).and_then(|bytes| AgentDocument::parse_file(&shown, kit, &bytes)) {
            Ok(doc) => Some(doc),
            Err(diagnostic) => {
                errors.push(diagnostic);
                None
            }
        }
    });

    let mut agents = Vec::new();
    for path in &layout.agents {
        let shown = relative(path);
        let parsed = read(path, &shown).and_then(|bytes| {
            let mut doc = AgentDocument::parse_file(&shown, kit, &bytes)?;
            let origin = kit::Declared::new(&doc.name).at(&shown, doc.name_line);
            let member = kit::qualify(kit, &origin)?;
            doc.name.clone_from(&member.name);
            Ok(Parsed { member, doc })
        });
        match parsed {
            Ok(agent) => agents.push(agent),
            Err(diagnostic) => errors.push(diagnostic),
        }
    }

    let skills = unique(skills, "skill", &mut errors);
    let agents = unique(agents, "agent", &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    warnings.extend(agent.iter().flat_map(|a| a.warnings.iter().cloned()));
    warnings.extend(agents.iter().flat_map(|a| a.doc.warnings.iter().cloned()));
    Ok(LoadedKit {
        name: kit.to_owned(),
        source: source.to_owned(),
        files: {
            files.sort();
            files.dedup();
            files
        },
        digests,
        skills: skills
            .into_iter()
            .map(|s| LoadedSkill {
                name: s.member.name,
                doc: s.doc,
            })
            .collect(),
        agent,
        agents: agents.into_iter().map(|a| a.doc).collect(),
        warnings,
    })
}

fn read(path: &Path, shown: &Path) -> Result<Vec<u8>, Diagnostic> {
    skillkit_parser::read_file(path).map_err(|d| d.with_path(shown))
}

fn with_relative_path(mut d: Diagnostic, relative: &impl Fn(&Path) -> PathBuf) -> Diagnostic {
    d.path = d.path.as_deref().map(relative);
    d
}

/// The documents sorted by name; every file whose name an earlier file (by
/// path) already has is an error naming both (the parser crate's kit rule).
fn unique<T>(
    mut parsed: Vec<Parsed<T>>,
    what: &str,
    errors: &mut Vec<Diagnostic>,
) -> Vec<Parsed<T>> {
    parsed.sort_by(|a, b| a.member.path.cmp(&b.member.path));
    errors.extend(kit::dedup(&mut parsed, what, Severity::Error, |p| {
        p.member.declared()
    }));
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn every_broken_file_is_reported_with_a_relative_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "kit/skills/a/SKILL.md",
            "---\nname:\ndescription: d\n---\n",
        );
        write(root, "kit/skills/b/SKILL.md", "---\nname: b\n---\n");
        write(
            root,
            "kit/skills/c/SKILL.md",
            "---\nname: c\ndescription: d\n---\n",
        );
        let errors = load(root, "kit", "k").err().unwrap();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!(
            errors[0].path.as_deref(),
            Some(Path::new("kit/skills/a/SKILL.md"))
        );
        assert!(errors[0].message.starts_with("field `name` is empty"));
        assert_eq!(
            errors[1].path.as_deref(),
            Some(Path::new("kit/skills/b/SKILL.md"))
        );
        assert!(
            errors[1]
                .message
                .starts_with("missing required field `description`")
        );
    }

    #[test]
    fn duplicates_name_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "kit/a/SKILL.md",
            "---\ndescription: d\nname: same\n---\n",
        );
        write(
            root,
            "kit/b/SKILL.md",
            "---\nname: k:same\ndescription: d\n---\n",
        );
        let errors = load(root, "kit", "k").err().unwrap();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].path.as_deref(), Some(Path::new("kit/b/SKILL.md")));
        assert_eq!((errors[0].line, errors[0].column), (2, 1));
        assert_eq!(
            errors[0].message,
            "duplicate skill name `k:same`: `kit/a/SKILL.md` has it too; rename one of them"
        );
    }

    /// A FIFO named `SKILL.md` is a compile error saying what it is, not a
    /// build that never ends (the load runs on a thread of its own, so a
    /// read that blocks fails this test instead of hanging it).
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        write(
            &root,
            "kit/a/SKILL.md",
            "---\nname: a\ndescription: d\n---\n",
        );
        std::fs::create_dir_all(root.join("kit/b")).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(root.join("kit/b/SKILL.md"))
            .status()
            .unwrap();
        assert!(status.success());
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(load(&root, "kit", "k").err().unwrap());
        });
        let errors = receive
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the load blocked on a FIFO");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].path.as_deref(), Some(Path::new("kit/b/SKILL.md")));
        assert!(
            errors[0]
                .message
                .starts_with("is a FIFO (named pipe), not a file"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn sub_agents_are_qualified_and_the_root_agent_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "kit/AGENT.md", "---\ndescription: d\n---\nRoot.");
        write(root, "kit/agents/sum.md", "---\ndescription: d\n---\nSum.");
        let kit = load(root, "kit", "k").ok().unwrap();
        assert_eq!(kit.agent.unwrap().name, "k");
        assert_eq!(kit.agents[0].name, "k:sum");
        assert!(kit.skills.is_empty());
    }
}
