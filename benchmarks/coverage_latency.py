"""Single-query latency of ``nclue coverage select`` on a real collection (default: the development one).

Run: ``.venv/bin/python benchmarks/coverage_latency.py [COLLECTION] [--bench BENCH] [--queries 200]
[--near-duplicates 0.10]`` (``--near-duplicates 2`` turns the near-copy rule off, for its cost)

In one process, on the same collection and the same queries (the benchmark's first ``--queries``
queries: requirements = the conditions, question = the natural rendering):

1. **Warm** — a :class:`nclue.select.single.CoverageSelector` opened once (page store, lexical
   and dense indexes, encoder) answers every query with the default selector (``expected``,
   pool ``bm25.decompose(distinct)`` at depth 30, k = 5); p50 / p95 / max wall time per query,
   over all queries (requirement page logits and vectors are cached by text, as in a service,
   and conditions recur across queries) and over the queries whose every requirement is new
   (nothing cached). Peer: the pool system's own ``search`` at depth 30 on the same query,
   alone — the ratio ``select / search`` is the cost of reading every page of 30 documents for
   evidence, encoding the requirements and selecting. Then per selector, on 50 queries whose
   evidence is cached by then (selection cost alone).
2. **Cold** — the command line, ``nclue coverage select COLL ... --format json`` as a fresh
   process (Python start, imports, opening the indexes, loading the encoder), 5 runs, median;
   peer: ``nclue --version`` (interpreter start and the CLI import alone).

The collection is only read. Prints the tables ``benchmarks/RESULTS.md`` records.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_COLLECTION = Path("nclue-demo/collection")  # built by `make demo`
DEFAULT_BENCH = Path("nclue-demo/bench")
SELECTORS = ("expected", "xquad", "pm2", "facility", "evidence", "mmr", "dense", "gated", "coverage", "retriever")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", nargs="?", type=Path, default=DEFAULT_COLLECTION)
    parser.add_argument("--bench", type=Path, default=DEFAULT_BENCH)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument(
        "--near-duplicates", type=float, default=0.10, help="near-copy resemblance (above 1: the rule off)"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from nclue.release import Release
    from nclue.select.single import CoverageSelector
    from nclue.systems.backbone import Request

    queries = Release.open(args.bench, with_qrels=False).queries[: args.queries]
    start = time.perf_counter()
    selector = CoverageSelector(args.collection, near_duplicates=args.near_duplicates)
    selector.select(queries[0].text("natural"), list(queries[0].conditions))  # load indexes and encoder
    opened = time.perf_counter() - start
    pool = selector.workspace.system("bm25.decompose(distinct)")

    total, search, fresh = [], [], []
    seen: set[str] = set(queries[0].conditions)
    for q in queries[1:]:
        request = Request(q.conditions, q.text("natural"))
        t0 = time.perf_counter()
        pool.search(request, 30)
        t1 = time.perf_counter()
        selector.select(q.text("natural"), list(q.conditions))
        t2 = time.perf_counter()
        search.append(t1 - t0)
        total.append(t2 - t1)
        if not seen & set(q.conditions):
            fresh.append(t2 - t1)
        seen.update(q.conditions)
    print(f"collection {args.collection}: {selector.workspace.pages.n_pages:,} pages; {len(queries)} queries")
    print(f"open + first query (indexes, encoder): {opened:.2f} s")
    print("| warm, per query | p50 | p95 | max |")
    print("|---|---:|---:|---:|")
    rows = (
        (f"coverage select (expected), all {len(total)} queries", total),
        (f"coverage select (expected), {len(fresh)} queries with only new requirements", fresh),
        ("peer: pool search alone", search),
    )
    for name, values in rows:
        print(
            f"| {name} | {1e3 * percentile(values, 0.5):.1f} ms | {1e3 * percentile(values, 0.95):.1f} ms "
            f"| {1e3 * max(values):.1f} ms |"
        )
    print(f"ratio select / search (medians): {statistics.median(total) / statistics.median(search):.1f}x")

    print("| selector (evidence cached) | median per query |")
    print("|---|---:|")
    subset = queries[:50]
    for name in SELECTORS:
        times = []
        for q in subset:
            t0 = time.perf_counter()
            selector.select(q.text("natural"), list(q.conditions), selector=name)
            times.append(time.perf_counter() - t0)
        print(f"| {name} | {1e3 * statistics.median(times):.1f} ms |")

    q = queries[0]
    command = [sys.executable, "-c", "from nclue.cli import main; main()"]
    select_args = ["coverage", "select", str(args.collection), "--query", q.text("natural")]
    for condition in q.conditions:
        select_args += ["--require", condition]
    cold, bare = [], []
    for _ in range(args.cold_runs):
        t0 = time.perf_counter()
        subprocess.run([*command, *select_args, "--format", "json"], check=True, capture_output=True)
        t1 = time.perf_counter()
        subprocess.run([*command, "--version"], check=True, capture_output=True)
        t2 = time.perf_counter()
        cold.append(t1 - t0)
        bare.append(t2 - t1)
    print("| cold command (fresh process) | median | min |")
    print("|---|---:|---:|")
    print(f"| nclue coverage select ... --format json | {statistics.median(cold):.2f} s | {min(cold):.2f} s |")
    print(f"| peer: nclue --version | {statistics.median(bare):.2f} s | {min(bare):.2f} s |")


if __name__ == "__main__":
    main()
