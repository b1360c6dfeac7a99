#!/usr/bin/env python3
"""Skill discovery on the corpus: SkillKit (Rust) beside its Python peers.

Each tool discovers the skills of tests/fixtures/corpus cold, timed in-process
(median of RUNS):
  * skills-ref 0.1.1: a loop of read_properties(dir) over every skill directory;
  * Python skillkit: SkillManager(...).discover() over both kits' skills/ folders;
  * SkillKit: the corpus_discovery example (a fresh Catalog + Local each run).

Run from the repository root:
  bench/peers/setup.sh            # once: a venv with the peers
  bench/peers/.venv/bin/python bench/peers/discovery.py [RUNS] [--dir DIR] [--json]

--dir DIR measures a directory of kits instead (a catalog made by
bench/gen-catalog.py: DIR/<kit>/<skill>/SKILL.md); --json prints one JSON
object for bench/report.py.
"""

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
ARGS = sys.argv[1:]
JSON = "--json" in ARGS
DIR = Path(ARGS[ARGS.index("--dir") + 1]).resolve() if "--dir" in ARGS else None
POSITIONAL = [a for i, a in enumerate(ARGS) if not a.startswith("--") and (i == 0 or ARGS[i - 1] != "--dir")]
RUNS = int(POSITIONAL[0]) if POSITIONAL else 20
SOURCE = DIR or CORPUS


def median_ms(fn, runs=RUNS):
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), result


def skills_ref():
    from skills_ref import read_properties

    if DIR is None:
        dirs = [CORPUS / d for d in json.loads((CORPUS / "skills-ref-verdicts.json").read_text())]
    else:
        dirs = sorted(p.parent for p in DIR.glob("*/*/SKILL.md"))

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
    if DIR is None:
        kits = [CORPUS / "github__awesome-copilot" / "skills", CORPUS / "obra__superpowers" / "skills"]
    else:
        kits = sorted(p for p in DIR.iterdir() if p.is_dir())

    # One manager over the first folder and up to five more (its limit: the
    # priorities of additional paths count down from 5); as many managers as
    # the folders need.
    groups = [kits[i : i + 6] for i in range(0, len(kits), 6)]

    def run():
        found = 0
        for group in groups:
            manager = SkillManager(
                project_skill_dir=group[0],
                anthropic_config_dir="",
                additional_search_paths=group[1:],
            )
            manager.discover()
            found += len(manager.list_skills())
        return found

    return median_ms(run)


def rust_skillkit():
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "skillkit-examples", "--example", "corpus_discovery"],
        cwd=ROOT,
        check=True,
    )
    out = subprocess.run(
        [str(ROOT / "target" / "release" / "examples" / "corpus_discovery"), str(SOURCE), str(max(RUNS, 50) if DIR is None else max(RUNS, 5))],
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
    if JSON:
        print(json.dumps({"source": str(SOURCE.relative_to(ROOT)) if SOURCE.is_relative_to(ROOT) else str(SOURCE),
                          "rows": [{"tool": n, "median_ms": round(ms, 3), "skills": f, "ratio": round(r, 2)}
                                   for n, ms, f, r in rows]}))
        return
    print(f"{'tool':<42} {'median ms':>10} {'skills':>7} {'x slower than SkillKit':>24}")
    for name, ms, found, ratio in rows:
        print(f"{name:<42} {ms:>10.2f} {found:>7} {ratio:>24.1f}")


if __name__ == "__main__":
    main()
