#!/usr/bin/env python3
"""Skill discovery on the corpus: SkillKit (Rust) beside its Python peers.

Each tool discovers the skills of tests/fixtures/corpus cold, timed in-process
(median of RUNS):
  * skills-ref 0.1.1: a loop of read_properties(dir) over every skill directory;
  * Python skillkit: SkillManager(...).discover() over both kits' skills/ folders;
  * SkillKit: the corpus_discovery example (a fresh Catalog + Local each run).

Run from the repository root:
  bench/peers/setup.sh            # once: a venv with the peers
  bench/peers/.venv/bin/python bench/peers/discovery.py
"""

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 20


def median_ms(fn, runs=RUNS):
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), result


def skills_ref():
    from skills_ref import read_properties

    dirs = [CORPUS / d for d in json.loads((CORPUS / "skills-ref-verdicts.json").read_text())]

    def run():
        found = 0
        for d in dirs:
            try:
                read_properties(d)
                found += 1
            except Exception:  # skills-ref raises on the invalid ones
                pass
        return found

    return median_ms(run)


def python_skillkit():
    import logging

    from skillkit import SkillManager

    logging.disable(logging.CRITICAL)
    kits = [CORPUS / "github__awesome-copilot" / "skills", CORPUS / "obra__superpowers" / "skills"]

    def run():
        manager = SkillManager(
            project_skill_dir=kits[0],
            anthropic_config_dir="",
            additional_search_paths=kits[1:],
        )
        manager.discover()
        return len(manager.list_skills())

    return median_ms(run)


def rust_skillkit():
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "skillkit-examples", "--example", "corpus_discovery"],
        cwd=ROOT,
        check=True,
    )
    out = subprocess.run(
        [str(ROOT / "target" / "release" / "examples" / "corpus_discovery"), str(CORPUS), str(max(RUNS, 50))],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    report = json.loads(out)
    return report["median_ms"], report["skills"]


def main():
    ours_ms, ours_found = rust_skillkit()
    ref_ms, ref_found = skills_ref()
    py_ms, py_found = python_skillkit()
    rows = [
        ("SkillKit (Rust)", ours_ms, ours_found, 1.0),
        ("skills-ref 0.1.1 read_properties loop", ref_ms, ref_found, ref_ms / ours_ms),
        ("Python skillkit SkillManager.discover()", py_ms, py_found, py_ms / ours_ms),
    ]
    print(f"{'tool':<42} {'median ms':>10} {'skills':>7} {'x slower than SkillKit':>24}")
    for name, ms, found, ratio in rows:
        print(f"{name:<42} {ms:>10.2f} {found:>7} {ratio:>24.1f}")


if __name__ == "__main__":
    main()
