//! Activation's own work: `Skill::render` (template tokens substituted, the
//! arguments split) over the bodies of the 431 real skills of the corpus,
//! held in memory so only the substitution is measured, and over one body
//! dense with tokens (`$ARGUMENTS`, `$N`, `${SKILL_DIR}`, `${CLAUDE_SKILL_DIR}`,
//! `${CLAUDE_SESSION_ID}`, `$5` in prose).
//!
//! Run: `cargo bench -p skillkit --bench render`.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use skillkit::Skill;
use skillkit::parser::SkillDocument;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus")
}

/// Every corpus skill, its body in memory.
fn corpus_skills() -> Vec<Skill> {
    let mut skills = Vec::new();
    let mut dirs = vec![corpus()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).expect("read corpus") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.ends_with("SKILL.md") {
                let doc = SkillDocument::read(&path).expect("corpus skill");
                skills.push(
                    Skill::new(format!("k:{}", doc.name), doc.description)
                        .with_body(doc.body)
                        .with_location(&path),
                );
            }
        }
    }
    skills
}

fn bench(c: &mut Criterion) {
    let skills = corpus_skills();
    assert_eq!(skills.len(), 431, "the corpus must load fully");
    let mut group = c.benchmark_group("render");
    group.bench_function("corpus_431", |b| {
        b.iter(|| {
            for skill in &skills {
                black_box(skill.render(black_box("src/main.rs 'two words'"), Some("sess-1")))
                    .expect("in memory");
            }
        })
    });
    let dense = "Read $ARGUMENTS[0] then $1. Run ${SKILL_DIR}/scripts/a.py and \
                 ${CLAUDE_SKILL_DIR}/scripts/b.py into /tmp/${CLAUDE_SESSION_ID}; \
                 it costs $5. All: $ARGUMENTS. Session $SESSION_ID.\n"
        .repeat(40);
    let skill = Skill::new("k:dense", "d")
        .with_body(dense)
        .with_location("/k/dense/SKILL.md");
    group.bench_function("dense_tokens", |b| {
        b.iter(|| black_box(skill.render(black_box("x y"), Some("sess-1"))).expect("in memory"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
