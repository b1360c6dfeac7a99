#!/usr/bin/env python3
"""Regenerates bench/README.md and bench/scale.png: SkillKit's figures beside
their floors and beside the Python peers, on the same inputs.

Run from the repository root, with the peers' venv (bench/peers/setup.sh):

    bench/peers/.venv/bin/python bench/report.py          # run everything, then write
    bench/peers/.venv/bin/python bench/report.py --no-run # write from the last results

Running means: `cargo bench -p skill-kit --bench scale` (catalogs of 100 to
100,000 skills made by bench/gen-catalog.py), `--bench catalog` (the corpus)
and `--bench llm_decode`; then the peers: bench/peers/discovery.py on the
corpus and on the generated 1,000 and 10,000 skill catalogs, and
bench/peers/anthropic_sdk_decode_bench.py. Results are kept in
target/bench-report.json; criterion's own are under target/criterion.
Everything in bench/README.md after the line `<!-- Hand-written below:
report.py keeps it as it is. -->` (figures of benches this script does not
run, and figures measured by hand since its last run) is kept as it is;
everything before that line is written anew, so nothing written by hand
belongs there.
"""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "target"
CRITERION = TARGET / "criterion"
RESULTS = TARGET / "bench-report.json"
SIZES = [100, 1000, 10000, 100000]
PEER_SIZES = {1000: 3, 10000: 1}
PYTHON = sys.executable
HAND_WRITTEN = "<!-- Hand-written below: report.py keeps it as it is. -->"


def sh(*args, **kw):
    print("+", " ".join(str(a) for a in args), file=sys.stderr)
    return subprocess.run([str(a) for a in args], cwd=ROOT, check=True, **kw)


def estimate(*parts):
    """Criterion's median estimate of one bench, in seconds."""
    path = CRITERION.joinpath(*parts, "new", "estimates.json")
    return json.loads(path.read_text())["median"]["point_estimate"] / 1e9


def run():
    sizes = ",".join(map(str, SIZES))
    sh("cargo", "bench", "-p", "skill-kit", "--bench", "scale", env={**os.environ, "SKILLKIT_BENCH_SIZES": sizes})
    sh("cargo", "bench", "-p", "skill-kit", "--bench", "catalog")
    sh("cargo", "bench", "-p", "skill-kit", "--bench", "llm_decode")
    peers = {"corpus": json.loads(sh(PYTHON, "bench/peers/discovery.py", "20", "--json",
                                     capture_output=True, text=True).stdout)}
    for n, runs in PEER_SIZES.items():
        out = sh(PYTHON, "bench/gen-catalog.py", n, capture_output=True, text=True).stdout.strip()
        peers[str(n)] = json.loads(sh(PYTHON, "bench/peers/discovery.py", runs, "--dir", out, "--json",
                                      capture_output=True, text=True).stdout)
    decode = json.loads(sh(PYTHON, "bench/peers/anthropic_sdk_decode_bench.py",
                           capture_output=True, text=True).stdout)
    RESULTS.write_text(json.dumps({"peers": peers, "decode": decode}, indent=2))


def machine():
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = next((l.split()[1] for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")), "0")
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    return (f"{os.cpu_count()} cores ({cpu}), {int(mem) // (1 << 20)} GiB RAM, Linux {platform.release()}, "
            f"{rustc}, Python {platform.python_version()}; files in the page cache (every query reads "
            f"what the OS already holds, as a CLI run after the first does)")


def fmt(seconds):
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def scale_rows():
    rows = []
    for n in SIZES:
        group = f"scale_{n}"
        try:
            row = {
                "n": n,
                "floor_read": estimate(group, "floor_walk_read_every_file"),
                "cold": estimate(group, "cold_query"),
                "floor_stat": estimate(group, "floor_walk_stat_every_file"),
                "warm": estimate(group, "warm_query"),
                "proc_floor": estimate(f"first_query_{n}", "fresh_process", "floor"),
                "proc_query": estimate(f"first_query_{n}", "fresh_process", "query"),
            }
        except FileNotFoundError:
            continue
        rows.append(row)
    return rows


def plot(rows):
    try:
        import matplotlib
    except ImportError:
        sh(PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "matplotlib")
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r["n"] for r in rows]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    ax.plot(n, [r["cold"] * 1e3 for r in rows], "o-", color="tab:blue", label="cold query (new Catalog + Local)")
    ax.plot(n, [r["floor_read"] * 1e3 for r in rows], "o--", color="tab:blue", alpha=0.5,
            label="floor: walk + read every file")
    ax.plot(n, [r["warm"] * 1e3 for r in rows], "s-", color="tab:green", label="warm query (nothing changed)")
    ax.plot(n, [r["floor_stat"] * 1e3 for r in rows], "s--", color="tab:green", alpha=0.5,
            label="floor: walk + stat every file")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("skills in the catalog")
    ax.set_ylabel("time per query (ms, median)")
    ax.set_title("SkillKit catalog queries against their floors")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(ROOT / "bench" / "scale.png")




def write(rows):
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    rss = json.loads((CRITERION / "scale-rss.json").read_text()) if (CRITERION / "scale-rss.json").exists() else []
    out = ["# Benchmarks", "",
           "Regenerated by `bench/peers/.venv/bin/python bench/report.py` (see its docstring); "
           "every ratio below comes from figures measured side by side in one run.", "",
           f"**Machine:** {machine()}.", "",
           "## Catalog queries at scale", "",
           "Catalogs generated from the 431 corpus skills by `bench/gen-catalog.py N` (kits of 1,000). "
           "Rerun: `cargo bench -p skill-kit --bench scale` (`SKILLKIT_BENCH_SIZES=1000,10000` picks sizes). "
           "Floors are a plain single-threaded walk; SkillKit's loader reads files on its own pool.", "",
           "| skills | cold query | floor: walk + read | cold / floor | warm query | floor: walk + stat "
           "| warm / floor | first query, fresh process | fresh process: walk + read | first / floor |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['n']:,} | {fmt(r['cold'])} | {fmt(r['floor_read'])} | **{r['cold'] / r['floor_read']:.2f}×** "
                   f"| {fmt(r['warm'])} | {fmt(r['floor_stat'])} | **{r['warm'] / r['floor_stat']:.2f}×** "
                   f"| {fmt(r['proc_query'])} | {fmt(r['proc_floor'])} | **{r['proc_query'] / r['proc_floor']:.2f}×** |")
    out += ["", "![cold and warm query time against the number of skills, with the floors](scale.png)", ""]
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        grow = b["n"] / a["n"]
        out.append(f"From {a['n']:,} to {b['n']:,} skills ({grow:,.0f}×): cold query ×{b['cold'] / a['cold']:,.0f}, "
                   f"warm query ×{b['warm'] / a['warm']:,.0f} (both linear in the number of files: every file is "
                   f"checked on every query, which is what keeps the catalog fresh).")
        out.append("")
    if rss:
        out += ["## Resident memory after a query", "",
                "A query keeps each skill's parsed frontmatter and path, and the stamps that keep the catalog "
                "fresh (one per file and per folder), not its body (the body is read when the skill is "
                "activated). Measured by the same bench (`rss/<n>` lines; the process's VmRSS before and after "
                "one query, catalog kept alive).", "",
                "| skills | resident after the query | per skill | mean frontmatter | mean file "
                "| per skill / frontmatter | per skill / file |",
                "|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rss:
            out.append(f"| {r['skills']:,} | {r['rss_bytes'] / (1 << 20):.1f} MiB | {r['per_skill']:,} B "
                       f"| {r['frontmatter']:,} B | {r['file']:,} B "
                       f"| **{r['per_skill'] / r['frontmatter']:.1f}×** | {r['per_skill'] / r['file']:.2f}× |")
        if len(rss) >= 2:
            a, b = rss[0], rss[-1]
            slope = (b["rss_bytes"] - a["rss_bytes"]) / (b["skills"] - a["skills"])
            out += ["", f"Each skill past the first {a['skills']:,} (the fixed cost of the process and its threads "
                    f"left out): ({b['rss_bytes'] / (1 << 20):.1f} − {a['rss_bytes'] / (1 << 20):.1f} MiB) / "
                    f"{b['skills'] - a['skills']:,} = **{slope:,.0f} B per skill, "
                    f"{slope / b['frontmatter']:.1f}× its frontmatter**."]
        out.append("")
    peers = results.get("peers", {})
    if peers:
        out += ["## Beside the peers, on the same inputs", "",
                "Skill discovery, cold, each tool in its own process, median of several runs "
                "(`bench/peers/.venv/bin/python bench/peers/discovery.py [RUNS] [--dir DIR]`).", "",
                "| input | tool | median | skills found | × SkillKit's time |", "|---|---|---:|---:|---:|"]
        for key, report in peers.items():
            label = "corpus (431 real skills)" if key == "corpus" else f"generated, {int(key):,} skills"
            for row in report["rows"]:
                out.append(f"| {label} | {row['tool']} | {fmt(row['median_ms'] / 1e3)} | {row['skills']:,} "
                           f"| {row['ratio']:.1f}× |")
        out.append("")
    decode = results.get("decode")
    if decode and "rust_mean_mb_s" in decode:
        out += ["Streaming decode of a long Anthropic answer (SSE → final message, in process, no network): "
                f"SkillKit {decode['rust_mean_mb_s']} MB/s (`cargo bench -p skill-kit --bench llm_decode`) vs. "
                f"{decode['sdk']} {decode['python_best_mb_s']} MB/s best "
                f"(`bench/peers/.venv/bin/python bench/peers/anthropic_sdk_decode_bench.py`): "
                f"**{decode['ratio_rust_over_python_best']}×**.", ""]
    try:
        corpus = [(n, estimate("corpus_431", n)) for n in
                  ["cold_catalog_query", "floor_walk_read_every_file", "warm_catalog_query", "floor_walk_stat_every_file"]]
        out += ["## The corpus itself", "", "`cargo bench -p skill-kit --bench catalog` (431 real skills, two kits):", "",
                "| bench | median |", "|---|---:|"] + [f"| {n} | {fmt(t)} |" for n, t in corpus] + [""]
    except FileNotFoundError:
        pass
    # Hand-written sections (figures of benches this script does not run)
    # follow the marker, and are kept as they are.
    page = ROOT / "bench" / "README.md"
    kept = page.read_text().partition(HAND_WRITTEN)[2] if page.exists() else ""
    if kept:
        out += [HAND_WRITTEN + kept.rstrip("\n")]
    page.write_text("\n".join(out) + "\n" if kept else "\n".join(out))


def main():
    if "--no-run" not in sys.argv:
        run()
    rows = scale_rows()
    if rows:
        plot(rows)
    write(rows)
    print(ROOT / "bench" / "README.md")


if __name__ == "__main__":
    main()
