//! `skillkit verify` against `sha256sum` over the same files, both run as
//! processes: a project of 400 skills, each a `SKILL.md` and four files
//! beside it (2,000 files, 8 MB), all pinned (target: ≤ 1.5× `sha256sum`,
//! fast enough for a pre-commit hook); and the same project with every
//! skill signed (an Ed25519 `SKILL.sig`) and its signer pinned, against
//! `sha256sum` over those files.
//!
//! Run with `cargo bench -p skillkit-cli --bench verify`.

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use skillkit::lockfile::Lockfile;

const SKILLS: usize = 400;
const BESIDE: usize = 4;

/// The project, its files (for `sha256sum`); each skill signed and its
/// signer pinned when `signed`.
fn project(root: &Path, signed: bool) -> Vec<PathBuf> {
    use skillkit::lockfile::ssh_key::{PrivateKey, private::Ed25519Keypair};
    let key = PrivateKey::from(Ed25519Keypair::from_seed(&[9; 32]));
    let mut files = Vec::new();
    let mut lock = Lockfile::new();
    for n in 0..SKILLS {
        let dir = root.join(format!(".agents/skills/skill-{n}"));
        std::fs::create_dir_all(dir.join("references")).expect("folder");
        let skill = dir.join("SKILL.md");
        std::fs::write(
            &skill,
            format!(
                "---\nname: skill-{n}\ndescription: Does task {n}.\n---\n{}",
                "Do the task step by step. ".repeat(150)
            ),
        )
        .expect("write");
        files.push(skill);
        for f in 0..BESIDE {
            let file = dir.join(format!("references/part-{f}.md"));
            std::fs::write(&file, format!("{n} {f} ").repeat(700)).expect("write");
            files.push(file);
        }
        let signer = signed.then(|| {
            files.push(dir.join("SKILL.sig"));
            skillkit::lockfile::sign(&dir, &key).expect("sign")
        });
        lock.pin(
            &format!("skill-{n}"),
            "bench/skills",
            None,
            None,
            root,
            &format!(".agents/skills/skill-{n}"),
        )
        .expect("pin")
        .signer = signer;
    }
    lock.write(&root.join("skillkit.lock.json")).expect("lock");
    files
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("verify");
    group.sample_size(20);
    for (signed, name) in [(false, ""), (true, "_signed")] {
        let dir = tempfile::tempdir().expect("temp dir");
        let files = project(dir.path(), signed);
        group.bench_function(format!("skillkit{name}"), |b| {
            b.iter(|| {
                let status = Command::new(env!("CARGO_BIN_EXE_skillkit"))
                    .arg("verify")
                    .current_dir(dir.path())
                    .stdout(std::process::Stdio::null())
                    .status()
                    .expect("skillkit verify");
                assert!(status.success());
            })
        });
        group.bench_function(format!("sha256sum{name}"), |b| {
            b.iter(|| {
                let status = Command::new("sha256sum")
                    .args(&files)
                    .stdout(std::process::Stdio::null())
                    .status()
                    .expect("sha256sum");
                assert!(status.success());
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
