//! The 431 real skills of the corpus: strict validation agrees with the
//! reference validator `skills-ref` 0.1.1 on every one, and all of them load.

use std::collections::BTreeMap;

use skillkit::parser::validate;
use skillkit::{Catalog, Local};
use skillkit_tests::corpus;

fn verdicts() -> BTreeMap<String, Vec<String>> {
    let text =
        std::fs::read_to_string(corpus().join("skills-ref-verdicts.json")).expect("verdicts file");
    serde_json::from_str(&text).expect("verdicts JSON")
}

#[test]
fn validation_verdict_matches_skills_ref_on_every_corpus_skill() {
    let verdicts = verdicts();
    assert_eq!(verdicts.len(), 431);
    let mut mismatches = Vec::new();
    let mut invalid = 0;
    for (dir, expected) in &verdicts {
        let problems = validate::skill_dir(&corpus().join(dir));
        if !problems.is_empty() {
            invalid += 1;
        }
        if problems.is_empty() != expected.is_empty() {
            mismatches.push(format!("{dir}: skills-ref {expected:?}, ours {problems:?}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert_eq!(invalid, 30);
}

#[test]
fn the_same_problem_as_skills_ref_is_named() {
    // Where skills-ref names a field or a directory, so do we.
    for (dir, expected) in verdicts() {
        let Some(first) = expected.first() else {
            continue;
        };
        let ours: Vec<String> = validate::skill_dir(&corpus().join(&dir))
            .into_iter()
            .map(|d| d.message)
            .collect();
        let key = if first.starts_with("Unexpected fields") {
            first.split(". Only").next().unwrap_or(first).to_owned()
        } else if first.starts_with("Directory name") {
            first.clone()
        } else {
            "strictyaml".to_owned()
        };
        assert!(
            ours.iter().any(|m| m.contains(&key)),
            "{dir}: skills-ref says {first:?}, ours {ours:?}"
        );
    }
}

#[test]
fn every_corpus_skill_is_in_the_verdicts() {
    let layout_count: usize = ["github__awesome-copilot", "obra__superpowers"]
        .iter()
        .map(|kit| {
            skillkit::parser::KitLayout::scan(&corpus().join(kit))
                .expect("scan")
                .skills
                .len()
        })
        .sum();
    assert_eq!(layout_count, verdicts().len());
}

#[tokio::test(flavor = "multi_thread")]
async fn all_431_skills_load_leniently() {
    let catalog = Catalog::builder().provider(Local::each(corpus())).build();
    let snapshot = catalog.snapshot().await;
    let counts: Vec<(String, usize)> = snapshot
        .kits()
        .iter()
        .map(|kit| (kit.name.to_string(), kit.skills.len()))
        .collect();
    assert_eq!(
        counts,
        [
            ("github__awesome-copilot".to_owned(), 417),
            ("obra__superpowers".to_owned(), 14)
        ]
    );
    // Claude Code keys load unchanged into `extra`.
    let skill = snapshot
        .skill("github__awesome-copilot:acquire-codebase-knowledge")
        .expect("skill");
    assert!(skill.extra().contains_key("argument-hint"));
    // Warnings only (name/directory mismatches), no skipped file.
    assert!(
        snapshot.diagnostics().iter().all(|d| !d.is_error()),
        "{:?}",
        snapshot.diagnostics()
    );
}

#[test]
fn the_head_of_a_body_is_the_start_of_the_body_on_every_corpus_skill() {
    use skillkit::parser::skill::{read_body, read_body_head};
    let mut checked = 0;
    for dir in verdicts().keys() {
        let path = corpus().join(dir).join("SKILL.md");
        let Ok(full) = read_body(&path) else {
            assert!(read_body_head(&path, 2048).is_err(), "{dir}");
            continue;
        };
        assert_eq!(read_body_head(&path, usize::MAX).unwrap(), full, "{dir}");
        for limit in [0, 1, 7, 100, 2048, 5000] {
            let head = read_body_head(&path, limit).unwrap();
            // No more than asked (CRLF folding only shortens it), and the
            // start of the body (a CR cut from its LF aside).
            assert!(head.len() <= limit, "{dir} at {limit}");
            assert!(
                full.starts_with(head.trim_end_matches('\r')),
                "{dir} at {limit}"
            );
            let crlf = std::fs::read(&path).unwrap().contains(&b'\r');
            if full.len() <= limit && !crlf {
                assert_eq!(head, full, "{dir} at {limit}");
            }
        }
        checked += 1;
    }
    assert!(checked > 400, "{checked}");
}
