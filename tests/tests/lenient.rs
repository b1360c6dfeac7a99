//! Skills written for Claude Code load as Claude Code loads them (the Agent
//! Skills client guide's lenient loading), each leniency a warning on load,
//! while strict validation still reports them as skills-ref does; and their
//! `${CLAUDE_SKILL_DIR}` / `${CLAUDE_SESSION_ID}` are substituted on
//! activation. Real files in temp dirs, through `Local` and a catalog.

use skillkit::parser::{Severity, validate};
use skillkit::{Catalog, Local};
use skillkit_tests::{corpus, write};

/// A kit with a skill without `name` and one whose description has an
/// unquoted `: `, as Claude Code's own skills are often written.
fn claude_code_kit(root: &std::path::Path) -> std::path::PathBuf {
    let kit = root.join("tools");
    write(
        kit.join("skills/deploy/SKILL.md"),
        "---\ndescription: Deploy the app.\ndisable-model-invocation: true\n---\n\
         Run ${CLAUDE_SKILL_DIR}/scripts/deploy.sh for session ${CLAUDE_SESSION_ID}.\n",
    );
    write(
        kit.join("skills/pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Use when: the user asks about PDFs\n---\nRead $ARGUMENTS.\n",
    );
    kit
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_skills_load_with_a_warning_each() {
    let dir = tempfile::tempdir().unwrap();
    let kit = claude_code_kit(dir.path());
    let catalog = Catalog::builder().provider(Local::new(&kit)).build();
    let snapshot = catalog.snapshot().await;
    let names: Vec<(String, String)> = snapshot
        .kits()
        .iter()
        .flat_map(|k| k.skills.iter())
        .map(|s| (s.name.to_string(), s.description.to_string()))
        .collect();
    assert_eq!(
        names,
        [
            ("tools:deploy".to_owned(), "Deploy the app.".to_owned()),
            (
                "tools:pdf".to_owned(),
                "Use when: the user asks about PDFs".to_owned()
            )
        ]
    );
    let warnings: Vec<String> = snapshot
        .diagnostics()
        .iter()
        .inspect(|d| assert_eq!(d.severity, Severity::Warning, "{d}"))
        .map(ToString::to_string)
        .collect();
    let deploy = kit.join("skills/deploy/SKILL.md");
    let pdf = kit.join("skills/pdf/SKILL.md");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings.contains(&format!(
            "{}:1:1: warning: missing field `name`: the skill takes its folder's name `deploy`; \
             add `name: deploy` to the frontmatter",
            deploy.display()
        )),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with(&format!(
            "{}:3:14: warning: the value of `description` contains `: ` without quotes",
            pdf.display()
        ))),
        "{warnings:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn activation_substitutes_claude_code_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let kit = claude_code_kit(dir.path());
    let catalog = Catalog::builder().provider(Local::new(&kit)).build();
    let snapshot = catalog.snapshot().await;
    let skill = snapshot.skill("tools:deploy").expect("deploy loads");
    let rendered = skill.render("", Some("sess-42")).unwrap();
    let skill_dir = kit.join("skills/deploy");
    assert_eq!(
        rendered,
        format!(
            "Run {}/scripts/deploy.sh for session sess-42.\n",
            skill_dir.display()
        )
    );
}

#[test]
fn validate_still_reports_what_loading_forgave() {
    let dir = tempfile::tempdir().unwrap();
    let kit = claude_code_kit(dir.path());
    let deploy = validate::skill_dir(&kit.join("skills/deploy"));
    assert!(
        deploy
            .iter()
            .any(|d| d.message == "Missing required field in frontmatter: name"),
        "{deploy:?}"
    );
    let pdf = validate::skill_dir(&kit.join("skills/pdf"));
    assert_eq!(pdf.len(), 1, "{pdf:?}");
    assert!(pdf[0].message.starts_with("invalid YAML"), "{pdf:?}");
    assert_eq!(pdf[0].line, 3);
}

/// Every corpus skill, rewritten once without its `name` line and once with
/// an unquoted `: ` in its description: each loads (named after its folder,
/// its description read as text) with a warning, and strict validation fails
/// each, as skills-ref does for a missing name and for YAML it cannot read.
#[tokio::test(flavor = "multi_thread")]
async fn every_corpus_skill_made_lenient_loads_and_stays_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let mut skill_dirs = Vec::new();
    for kit in ["github__awesome-copilot", "obra__superpowers"] {
        let layout = skillkit::parser::KitLayout::scan(&corpus().join(kit)).expect("scan");
        for skill in layout.skills {
            let text = std::fs::read_to_string(&skill).unwrap();
            let doc = skillkit::parser::SkillDocument::read(&skill).unwrap();
            let description = doc.description.trim();
            if description.contains('\n') {
                continue;
            }
            let (mut unnamed, mut coloned) = (String::new(), String::new());
            let (mut fences, mut skipping) = (0, false);
            for line in text.split_inclusive('\n') {
                let fence = line.trim_end() == "---";
                fences += usize::from(fence);
                let in_yaml = fences == 1 && !fence;
                let top = in_yaml && !line.trim().is_empty() && !line.starts_with([' ', '\t']);
                skipping &= !top;
                if !(top && line.starts_with("name:")) {
                    unnamed.push_str(line);
                }
                if top && line.starts_with("description:") {
                    coloned.push_str(&format!("description: Use when: {description}\n"));
                    skipping = true;
                } else if !(skipping && in_yaml) {
                    coloned.push_str(line);
                }
            }
            let folder = skill.parent().unwrap().file_name().unwrap();
            write(
                dir.path()
                    .join("unnamed")
                    .join(kit)
                    .join(folder)
                    .join("SKILL.md"),
                &unnamed,
            );
            write(
                dir.path()
                    .join("coloned")
                    .join(kit)
                    .join(folder)
                    .join("SKILL.md"),
                &coloned,
            );
            skill_dirs.push(std::path::Path::new(kit).join(folder));
        }
    }
    assert!(
        skill_dirs.len() > 400,
        "only {} rewritten",
        skill_dirs.len()
    );
    for variant in ["unnamed", "coloned"] {
        let root = dir.path().join(variant);
        let catalog = Catalog::builder().provider(Local::each(&root)).build();
        let snapshot = catalog.snapshot().await;
        let loaded: usize = snapshot.kits().iter().map(|k| k.skills.len()).sum();
        assert_eq!(
            loaded,
            skill_dirs.len(),
            "{variant}: {:?}",
            snapshot.diagnostics()
        );
        assert!(
            snapshot.diagnostics().iter().all(|d| !d.is_error()),
            "{variant}: {:?}",
            snapshot.diagnostics()
        );
        let lenient = if variant == "unnamed" {
            "missing field `name`"
        } else {
            "contains `: ` without quotes"
        };
        let warned = snapshot
            .diagnostics()
            .iter()
            .filter(|d| d.message.contains(lenient))
            .count();
        assert_eq!(warned, skill_dirs.len(), "{variant}");
        for skill_dir in &skill_dirs {
            assert!(
                !validate::skill_dir(&root.join(skill_dir)).is_empty(),
                "{variant}: {} passes strict validation",
                skill_dir.display()
            );
        }
    }
}
