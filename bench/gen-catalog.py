#!/usr/bin/env python3
"""Generates a catalog of N skills from the corpus, for the scale benches.

    bench/gen-catalog.py N [OUT]

OUT (default target/bench-catalogs/N) gets kits of at most 1,000 skills
(`kit-0000/`, `kit-0001/`, ...), each skill a copy of a corpus SKILL.md, taken
in turn, in `<kit>/<name>/SKILL.md` with its `name:` rewritten to the folder
name, so every skill loads and every name is unique. Nothing generated is
committed. Running it again on a complete OUT does nothing (a `.complete`
marker is written last), so benches can call it every run.
"""

import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
KIT_SIZE = 1000
NAME = re.compile(r"^name:.*$", re.MULTILINE)


def corpus_files():
    """The corpus files whose frontmatter has a `name:` line, sorted by path."""
    files = []
    for path in sorted(CORPUS.rglob("SKILL.md")):
        text = path.read_text(encoding="utf-8", errors="strict")
        if not text.startswith("---"):
            continue
        end = text.find("\n---", 3)
        if end < 0 or not NAME.search(text[:end]):
            continue
        files.append((text[:end], text[end:]))
    return files


def generate(n, out):
    marker = out / ".complete"
    if marker.exists() and marker.read_text() == str(n):
        return
    if out.exists():
        shutil.rmtree(out)
    files = corpus_files()
    for i in range(n):
        head, rest = files[i % len(files)]
        kit = out / f"kit-{i // KIT_SIZE:04}"
        name = f"skill-{i:06}"
        head = NAME.sub(f"name: {name}", head, count=1)
        target = kit / name / "SKILL.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(head + rest, encoding="utf-8")
    marker.write_text(str(n))


def main():
    if len(sys.argv) not in (2, 3) or not sys.argv[1].isdigit():
        sys.exit("usage: bench/gen-catalog.py N [OUT]")
    n = int(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) == 3 else ROOT / "target" / "bench-catalogs" / str(n)
    generate(n, out)
    print(out)


if __name__ == "__main__":
    os.umask(0o022)
    main()
