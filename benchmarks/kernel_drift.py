"""How far do the demo's numbers move on a machine with other floating-point kernels?

Neural scores depend on the CPU's kernels: the order in which a matrix product sums its terms
follows the vector width the library picks at run time (AVX-512 here, AVX2 on many machines),
so MiniLM's page vectors — and the pages a dense system ranks first — can differ in the last
bits, and a near-tie can flip. This script emulates an AVX2 machine on this one: it copies the
demo collection without its neural indexes, rebuilds them exactly as ``nclue demo`` does
(``nclue index --all --dense-max-chunks 1``) with PyTorch's and oneDNN's kernels capped at AVX2
(``ATEN_CPU_CAPABILITY=avx2``, ``DNNL_MAX_CPU_ISA=AVX2``), reruns the default matrix and scores
both run folders on the same release. Lexical systems read no float kernels and must not move.

Usage (after ``make demo``; about 10 minutes on 2 cores)::

    .venv/bin/python benchmarks/kernel_drift.py nclue-demo /tmp/kernel-drift

Printed: per system the n-Clue Score@10 of the demo and of the AVX2 rebuild and their
difference, the largest |Δ| among neural systems (dense, maxsim, rerank, struct, and fusions
with them) and whether every lexical system is identical.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

NEURAL = ("dense", "maxsim", "rerank", "struct")
KERNELS = {"ATEN_CPU_CAPABILITY": "avx2", "DNNL_MAX_CPU_ISA": "AVX2"}


def run_cli(*args: str, env: dict[str, str] | None = None) -> None:
    """Run the installed nclue CLI; stop on failure."""
    command = [str(Path(sys.executable).with_name("nclue")), *args]
    subprocess.run(command, check=True, env={**os.environ, **(env or {})})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("demo", type=Path, help="the folder `make demo` wrote (nclue-demo)")
    parser.add_argument("work", type=Path, help="a scratch folder for the rebuilt indexes and runs")
    args = parser.parse_args()
    import nclue

    coll, runs = args.work / "collection", args.work / "runs"
    if not coll.is_dir():
        shutil.copytree(
            args.demo / "collection",
            coll,
            ignore=lambda d, names: [n for n in names if n in ("dense", "tokens", "headings")],
        )
    run_cli("index", str(coll), "--all", "--dense-max-chunks", "1", env=KERNELS)
    run_cli("run", str(args.demo / "bench"), str(coll), "--matrix", "default", "-o", str(runs), env=KERNELS)
    bench = nclue.open_release(args.demo / "bench")
    names = sorted(p.stem for p in (args.demo / "runs").glob("*.jsonl"))
    here = nclue.evaluate(bench, sorted((args.demo / "runs").glob("*.jsonl")), ci="none")
    there = nclue.evaluate(bench, sorted(runs.glob("*.jsonl")), ci="none")
    rows, worst, lexical_same = [], 0.0, True
    for name in sorted(set(here.runs) & set(there.runs)):
        a, b = here[name].n_clue_score, there[name].n_clue_score
        neural = any(token in name for token in NEURAL)
        if neural:
            worst = max(worst, abs(b - a))
        else:
            lexical_same &= here[name].to_json() == there[name].to_json()
        rows.append((name, a, b, b - a, neural))
    print(f"{'system':60s} {'demo':>7s} {'avx2':>7s} {'Δ':>6s}")
    for name, a, b, d, neural in rows:
        print(f"{name:60s} {a:7.1f} {b:7.1f} {d:+6.1f}{'  (neural)' if neural else ''}")
    print(
        f"\n{len(names)} demo runs; largest |Δ n-Clue| among neural systems: {worst:.1f} points; "
        f"lexical systems identical in every metric: {lexical_same}"
    )


if __name__ == "__main__":
    main()
