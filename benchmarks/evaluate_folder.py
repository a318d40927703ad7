"""Evaluating a folder of runs: ``nclue evaluate`` and ``nclue reproduce --verify``, run cache off and warm,
against ir_measures reading the same runs.

Whole commands, timed from outside (start-up included), alternated so that drift in the machine's
speed hits every variant alike; the median of ``--repeats`` is reported.

* ``nclue evaluate BENCH RUNS/*.jsonl`` — every n-Clue metric, its family bootstrap and the
  rank agreement, for each JSONL run of the folder;
* ``nclue reproduce BENCH RUNS REPORT --verify`` — every report table recomputed and compared;
* the peer: ir_measures 0.4 (``ir_measures.calc_aggregate``, nDCG@10 only) over the folder's
  TREC runs and the release's BEIR qrels — the same files read, one standard measure computed.

Each nclue command runs with ``NCLUE_RUN_CACHE=off`` (every run parsed) and with a warm cache in a
private ``NCLUE_CACHE`` (filled once before timing). Output of every variant must be the same.

Run: ``.venv/bin/python benchmarks/evaluate_folder.py nclue-demo`` (after ``make demo``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PEER = """
import sys, glob, ir_measures
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
for path in sorted(glob.glob(sys.argv[2] + "/*.trec")):
    ir_measures.calc_aggregate([ir_measures.nDCG @ 10], qrels, ir_measures.read_trec_run(path))
"""


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds of one run of ``argv`` and its standard output (raises when it fails)."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} … failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return seconds, done.stdout


def trec_qrels(bench: Path, out: Path) -> Path:
    """The release's BEIR qrels (``qrels/test.tsv``) as a TREC qrels file for the peer."""
    lines = (bench / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    out.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in (line.split("\t") for line in lines)), encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("demo", type=Path, help="a `make demo` output folder (bench/, runs/, report/)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    bench, runs, report = args.demo / "bench", args.demo / "runs", args.demo / "report"
    nclue = [sys.executable, "-c", "from nclue.cli import main; main()"]
    jsonl = sorted(str(p) for p in runs.glob("*.jsonl"))
    with tempfile.TemporaryDirectory(prefix="nclue-evalbench-") as tmp:
        qrels = trec_qrels(bench, Path(tmp) / "qrels.trec")
        cold = {**os.environ, "NCLUE_RUN_CACHE": "off"}
        warm = {**os.environ, "NCLUE_CACHE": tmp}
        warm.pop("NCLUE_RUN_CACHE", None)
        variants = {
            "evaluate, cache off": ([*nclue, "evaluate", str(bench), *jsonl], cold),
            "evaluate, cache warm": ([*nclue, "evaluate", str(bench), *jsonl], warm),
            "reproduce --verify, cache off": (
                [*nclue, "reproduce", str(bench), str(runs), str(report), "--verify"],
                cold,
            ),
            "reproduce --verify, cache warm": (
                [*nclue, "reproduce", str(bench), str(runs), str(report), "--verify"],
                warm,
            ),
            "ir_measures nDCG@10 (peer)": ([sys.executable, "-c", PEER, str(qrels), str(runs)], dict(os.environ)),
        }
        outputs: dict[str, set[str]] = {}
        for argv, env in variants.values():  # fills the warm cache; the first run of each is not timed
            timed(argv, env)
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.repeats):
            for name, (argv, env) in variants.items():
                took, out = timed(argv, env)
                seconds[name].append(took)
                outputs.setdefault(name.split(",")[0], set()).add(out)
    for command, seen in outputs.items():
        if len(seen) != 1:
            raise SystemExit(f"{command}: output differs between cache off and warm")
    peer = statistics.median(seconds["ir_measures nDCG@10 (peer)"])
    print(
        f"{len(jsonl)} JSONL runs ({sum(Path(p).stat().st_size for p in jsonl) / 1e6:.0f} MB), median of {args.repeats}"
    )
    print("| command | wall s (median) | min–max | ÷ ir_measures |")
    print("|---|---:|---:|---:|")
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {min(values):.2f}–{max(values):.2f} | {median / peer:.2f} |")


if __name__ == "__main__":
    main()
