#!/usr/bin/env bash
# Build time added by `#[derive(Kit)]` over 100 skills, compared with the same
# derive over an empty kit (a kit with an AGENT.md and no skills).
#
# Generates two throw-away crates that differ only in their kit, then measures
# with hyperfine a debug `cargo build` of each after touching its main.rs (so
# only the crate itself is rebuilt: the proc macro reads and parses the kit,
# rustc compiles the embedded data, the binary is linked). Prints the median,
# mean, minimum and CPU time of both and their differences, and fails when the
# difference of the medians exceeds the budget (0.5 s, or $BUDGET_SECONDS).
# On a shared machine the wall-clock figures are noisy; the CPU difference
# (user + system) is the steadier one.
#
# Needs hyperfine (`apt-get install -y hyperfine`). Run from anywhere:
# `bash bench/derive-build-time.sh`. It reuses the workspace's target directory
# (or $CARGO_TARGET_DIR) for the dependencies. KEEP_WORK=1 keeps the generated
# crates; RUNS sets the number of timed builds (20).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
# Without incremental compilation the whole crate is compiled again each time,
# so nothing of the embedded data is reused between runs (the worst case).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
budget="${BUDGET_SECONDS:-0.5}"
runs="${RUNS:-20}"
command -v hyperfine >/dev/null || { echo "hyperfine is missing: apt-get install -y hyperfine" >&2; exit 2; }
work="$(mktemp -d)"
[[ -n "${KEEP_WORK:-}" ]] && echo "work dir: $work" || trap 'rm -rf "$work"' EXIT

make_crate() { # name skill-count
    local crate="$work/$1"
    mkdir -p "$crate/src" "$crate/kit"
    cat > "$crate/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
skill-kit = { path = "$repo/skillkit" } # the library is named skillkit

[workspace]
TOML
    cp "$repo/Cargo.lock" "$crate/Cargo.lock"
    cat > "$crate/src/main.rs" <<'RS'
use skillkit::{Kit, ToolExecution, ToolOutcome};

#[derive(Kit)]
#[kit(path = "kit", name = "bench")]
struct Bench;

impl skillkit::EmbeddedKit for Bench {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(execution.arguments())
    }
}

fn main() {
    println!("{} skills", Bench::embedded_kit().skills.len());
}
RS
    printf -- '---\ndescription: Runs the benchmark skills.\n---\nYou run benchmarks.\n' > "$crate/kit/AGENT.md"
    local i j name
    for ((i = 0; i < $2; i++)); do
        name="$(printf 'skill-%03d' "$i")"
        mkdir -p "$crate/kit/skills/$name"
        {
            printf -- '---\nname: %s\ndescription: Benchmark skill %d, which does task %d and reports the result.\n' "$name" "$i" "$i"
            printf 'license: MIT\nallowed-tools: Read Grep\nmetadata:\n  index: %d\n  group: bench\n  tags:\n    - a\n    - b\n---\n# Task %d\n\n' "$i" "$i"
            for ((j = 0; j < 20; j++)); do
                printf 'Step %d: do part %d of task %d with $ARGUMENTS, then check the result carefully.\n' "$j" "$j" "$i"
            done
        } > "$crate/kit/skills/$name/SKILL.md"
    done
    cargo build --quiet --manifest-path "$crate/Cargo.toml"
}

make_crate empty_kit 0
make_crate hundred_skills 100
echo "kit sizes: $(du -sh "$work/empty_kit/kit" | cut -f1) (empty), $(du -sh "$work/hundred_skills/kit" | cut -f1) (100 skills)"

hyperfine --warmup 1 --runs "$runs" --export-json "$work/times.json" \
    --command-name "empty kit" \
    --prepare "touch $work/empty_kit/src/main.rs" \
    "cargo build --quiet --manifest-path $work/empty_kit/Cargo.toml" \
    --command-name "100 skills" \
    --prepare "touch $work/hundred_skills/src/main.rs" \
    "cargo build --quiet --manifest-path $work/hundred_skills/Cargo.toml"

python3 - "$work/times.json" "$budget" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
empty, hundred = results["empty kit"], results["100 skills"]
budget = float(sys.argv[2])
cpu = lambda r: r["user"] + r["system"]
for name, r in (("empty kit", empty), ("100 skills", hundred)):
    print(f"{name:>10}: median {r['median']:.3f} s, mean {r['mean']:.3f} s ± {r['stddev']:.3f}, "
          f"min {r['min']:.3f} s, cpu {cpu(r):.3f} s")
added = hundred["median"] - empty["median"]
print(f"added by 100 skills: median {added:.3f} s, min {hundred['min'] - empty['min']:.3f} s, "
      f"cpu {cpu(hundred) - cpu(empty):.3f} s (budget {budget} s on the median)")
sys.exit(0 if added <= budget else 1)
PY
