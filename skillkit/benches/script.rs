//! What `run_skill_script`'s runner adds over the interpreter's own start
//! (target: ≤ 5 ms): the same script run by its interpreter alone (a plain
//! process, output piped) and through [`run_script`] (path resolution,
//! interpreter choice, scrubbed environment, process group, the sandbox's
//! three layers put up in the child (namespaces with their mounts and a
//! second fork, Landlock, seccomp), output capture, group kill), in one run.
//!
//! Run with `cargo bench -p skill-kit --bench script`.

use std::process::Stdio;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use skillkit::script::{ScriptOptions, run_script};

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let skill = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        skill.path().join("SKILL.md"),
        "---\nname: s\ndescription: d\n---\n",
    )
    .unwrap();
    std::fs::write(skill.path().join("pass.py"), "pass\n").unwrap();
    std::fs::write(skill.path().join("true.sh"), "exit 0\n").unwrap();
    let options = ScriptOptions::new();
    println!("sandbox: {}", skillkit::script::Sandbox::current());
    let mut group = c.benchmark_group("script");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(8));
    for (interpreter, file) in [("sh", "true.sh"), ("python3", "pass.py")] {
        let path = skill.path().join(file);
        group.bench_function(format!("{interpreter} alone"), |b| {
            b.to_async(&runtime).iter(|| async {
                let out = tokio::process::Command::new(interpreter)
                    .arg(&path)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .output()
                    .await
                    .unwrap();
                assert!(out.status.success());
            })
        });
        group.bench_function(format!("{interpreter} through run_script"), |b| {
            b.to_async(&runtime).iter(|| async {
                let out = run_script(skill.path(), file, &[], "", work.path(), &options)
                    .await
                    .unwrap();
                assert!(out.success(), "{out}");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
