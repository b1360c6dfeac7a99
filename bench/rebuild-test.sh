#!/usr/bin/env bash
# Rebuild test for `#[derive(Kit)]`.
#
# Builds a throw-away crate that embeds `skills/` with exactly
# `#[derive(Kit)] #[kit(path = "skills")]`, then checks that the binary shows:
#   1. the skill as written;
#   2. the new text after a SKILL.md is edited (the derive's `include_bytes!`);
#   3. a NEW skill folder after it is added (the `build.rs` helper
#      `skillkit_parser::build::track("skills")`);
#   4. no trace of that folder after it is removed;
#   5. a skill folder moved in with old timestamps.
#
# Run from anywhere: `bash bench/rebuild-test.sh`. It reuses the workspace's
# target directory (or $CARGO_TARGET_DIR), so dependencies already built by
# `cargo build` / `cargo test` are not built again.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
crate="$work/rebuild-probe"
mkdir -p "$crate/src" "$crate/skills/hello"

cat > "$crate/Cargo.toml" <<TOML
[package]
name = "rebuild-probe"
version = "0.0.0"
edition = "2024"
publish = false

# The catalog alone: the derive needs no HTTP stack, TLS or database.
[dependencies]
skill-kit = { path = "$repo/skillkit", default-features = false } # the library is named skillkit

[build-dependencies]
skillkit-parser = { path = "$repo/skillkit-parser" }

[workspace]

# The workspace's own profile, so the dependencies are built as its builds
# build them (no debug info) and can be shared with them.
[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false
TOML
cp "$repo/Cargo.lock" "$crate/Cargo.lock"

cat > "$crate/build.rs" <<'RS'
fn main() {
    skillkit_parser::build::track("skills");
}
RS

cat > "$crate/src/main.rs" <<'RS'
use skillkit::{Kit, ToolExecution, ToolOutcome};

#[derive(Kit)]
#[kit(path = "skills")]
struct Probe;

impl skillkit::EmbeddedKit for Probe {
    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok(execution.arguments())
    }
}

fn main() {
    for skill in &Probe::embedded_kit().skills {
        let body = skill.body.as_text().expect("an embedded body is in memory");
        println!("{} | {}", skill.name, body.trim());
    }
}
RS

write_skill() { # dir name body
    mkdir -p "$crate/skills/$1"
    printf -- '---\nname: %s\ndescription: The %s skill.\n---\n%s\n' "$1" "$1" "$2" > "$crate/skills/$1/SKILL.md"
}

failures=0
check() { # step expected-output
    local out
    out="$(cargo run --quiet --manifest-path "$crate/Cargo.toml")"
    if [[ "$out" == "$2" ]]; then
        echo "ok   $1"
    else
        echo "FAIL $1"
        echo "  expected: $(printf '%q' "$2")"
        echo "  got:      $(printf '%q' "$out")"
        failures=$((failures + 1))
    fi
}

write_skill hello "Hello, world."
check "first build shows the skill" "probe:hello | Hello, world."

write_skill hello "Hello, edited world."
check "an edited SKILL.md is rebuilt" "probe:hello | Hello, edited world."

write_skill goodbye "Goodbye."
check "a new skill folder is picked up" "probe:goodbye | Goodbye.
probe:hello | Hello, edited world."

rm -r "$crate/skills/goodbye"
check "a removed skill folder is dropped" "probe:hello | Hello, edited world."

# A folder moved in with old timestamps (as `mv` or `cp -p` leave them): only
# the mtime of `skills/` itself changes.
mkdir -p "$work/elsewhere/old"
printf -- '---\nname: old\ndescription: An old skill.\n---\nOld.\n' > "$work/elsewhere/old/SKILL.md"
touch -d '2001-01-01' "$work/elsewhere/old/SKILL.md" "$work/elsewhere/old"
mv "$work/elsewhere/old" "$crate/skills/old"
check "a skill folder moved in with old timestamps is picked up" "probe:hello | Hello, edited world.
probe:old | Old."

if ((failures > 0)); then
    echo "rebuild test: $failures step(s) failed"
    exit 1
fi
echo "rebuild test: all steps passed"
