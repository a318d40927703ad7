"""Benchmark: ``struct.cover`` (or any ``--system``, e.g. ``dense.joint(ptop3)``) queries/s on a collection with its structure and dense indexes, vs ``bm25.cover``.

Every three-condition query of a release is ranked (depth 100) by ``struct.cover`` and by the
peer ``bm25.cover`` on the same collection in the same run, twice: **cold** — the text caches
(the dense backbone's encodings, ``struct``'s per-condition evidence) are emptied before every
query, so each condition is encoded by MiniLM and scored against every page and heading again;
and **warm** — the release's queries in order with the caches on, as ``nclue run`` sees them
(conditions recur across queries); and **hot** — the same queries again (every condition's
evidence cached: the ranking cost alone); and **batched** — caches emptied once, then batches of
32 queries handed to the system's ``prefetch`` before they are ranked, as ``nclue run`` does (each
batch's conditions are encoded in one call and scored in one matrix product). Reported: queries/s
(wall), p50/p95 latency (per query; per batch for ``batched``), and the ratio to the peer. Goal (issue 18): ≥ 100 queries/s on the 14.5k-page development collection.

Usage: .venv/bin/python benchmarks/structure_speed.py RELEASE COLLECTION [--system struct.cover] [--limit 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from nclue.release import Release
from nclue.systems.backbone import Request
from nclue.systems.registry import Workspace
from nclue.systems.run import BATCH_QUERIES


def timed(system, requests: list[Request], before=lambda: None) -> list[float]:  # noqa: ANN001
    """Per-query wall seconds."""
    out = []
    for request in requests:
        before()
        start = time.perf_counter()
        system.search(request, 100)
        out.append(time.perf_counter() - start)
    return out


def timed_batches(system, requests: list[Request]) -> list[float]:  # noqa: ANN001
    """Wall seconds per batch of ``BATCH_QUERIES`` queries: ``prefetch`` the batch, then rank each query."""
    out = []
    for start in range(0, len(requests), BATCH_QUERIES):
        batch = requests[start : start + BATCH_QUERIES]
        began = time.perf_counter()
        system.prefetch(batch)
        for request in batch:
            system.search(request, 100)
        out.append(time.perf_counter() - began)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", type=Path)
    parser.add_argument("collection", type=Path)
    parser.add_argument("--system", default="struct.cover")
    parser.add_argument("--peer", default="bm25.cover")
    parser.add_argument("--limit", type=int, default=300)
    args = parser.parse_args()
    release = Release.open(args.release, with_qrels=False)
    requests = [Request(q.conditions, q.text("clean_v2"), q.qid) for q in release.queries if len(q.conditions) == 3][
        : args.limit
    ]
    workspace = Workspace(args.collection)
    start = time.perf_counter()
    system = workspace.system(args.system)
    peer = workspace.system(args.peer)
    system.search(requests[0], 100)
    peer.search(requests[0], 100)
    load = time.perf_counter() - start
    dense = workspace.backbone("dense")
    backbone = workspace.backbone(args.system.split(".")[0])

    def clear() -> None:
        dense.clear_cache()
        if backbone is not dense:
            backbone.clear_cache()

    print(f"{len(requests)} three-condition queries, {workspace.pages.n_pages} pages; load + warm-up {load:.1f} s")
    print(f"load average {os.getloadavg()[0]:.1f}")
    baseline = timed(peer, requests)
    peer_qps = len(requests) / sum(baseline)
    print(f"{args.peer}: {peer_qps:.0f} q/s, p50 {1000 * statistics.median(baseline):.1f} ms")
    for label, before in (("cold", clear), ("warm", lambda: None), ("hot", lambda: None)):
        if label == "warm":
            clear()
        contender = timed(system, requests, before=before)
        qps = len(requests) / sum(contender)
        q = statistics.quantiles(contender, n=20)
        print(
            f"{args.system} {label}: {qps:.0f} q/s, p50 {1000 * statistics.median(contender):.1f} ms, "
            f"p95 {1000 * q[18]:.1f} ms; ratio to {args.peer} {qps / peer_qps:.2f}"
        )
    if not hasattr(system, "prefetch"):  # joint systems score one text per query: no batch path
        return
    clear()
    batches = timed_batches(system, requests)
    qps = len(requests) / sum(batches)
    print(
        f"{args.system} batched ({BATCH_QUERIES} queries per prefetch): {qps:.0f} q/s, "
        f"p50 {1000 * statistics.median(batches):.0f} ms per batch; ratio to {args.peer} {qps / peer_qps:.2f}"
    )


if __name__ == "__main__":
    main()
