"""MaxSim from the stored token index against exact recomputation, on the development benchmark.

Run: ``.venv/bin/python benchmarks/maxsim.py [COLLECTION] [BENCH] [--exact-queries 100] [--reference RUN]``
(defaults: ``nclue-demo/collection`` and ``nclue-demo/bench``, built by ``make demo``; the
collection needs its dense and token indexes, ``nclue index COLLECTION --all``).

In one process, on the same dense index and candidate pools (the 20 best dense pages per text):

* **stored** — ``maxsim.joint(ptop3)`` scoring from the compressed token index
  (:mod:`nclue.index.tokens`), over every query of the benchmark;
* **exact (peer)** — the same system with every pooled page's token vectors recomputed by the
  index's encoder (what ``maxsim`` did before the token index), over the first
  ``--exact-queries`` queries (0 = all; a full exact run costs minutes).

Reported: wall seconds and seconds per query of each (ratio = exact ÷ stored per query), the
stored run's n-Clue Score and Gold Hit over all queries, and on the exactly-scored queries the
mean top-10 overlap |top10(stored) ∩ top10(exact)| / max(|top10(stored)|, |top10(exact)|)
(a MaxSim ranking holds only the documents of its 20-page pool, often fewer than 10) and both n-Clue Scores. With
``--reference`` (an earlier exact run file, e.g. ``nclue-demo/runs/maxsim.joint_ptop3-*.trec``
made before the token index existed) the top-10 overlap and n-Clue Score against it are
reported too. Also the token index's size in total and per page. ``--fill-to 300`` also times
up to 300 distinct query texts on a benchmark with fewer queries (at most twice its queries): after
its queries, the first ones again in another wording (``--fill-form``, default ``natural``: "Find the document that discusses ..."),
in the same process, so the conditions recur as they do across a benchmark's queries. The load average is printed
before and after: read the ratio, not the seconds, on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SYSTEM = "maxsim.joint(ptop3)"


def overlap(a, b, qids) -> float:  # noqa: ANN001
    """Mean top-10 overlap of two runs' rankings over ``qids``."""
    values = []
    for q in qids:
        x = {d.doc_id for d in a.rankings.get(q, [])[:10]}
        y = {d.doc_id for d in b.rankings.get(q, [])[:10]}
        values.append(len(x & y) / max(len(x), len(y)) if (x or y) else 1.0)
    return sum(values) / len(values)


def n_clue(bench: str, run, qids) -> tuple[float, float]:  # noqa: ANN001
    """``(n-Clue Score, Gold Hit)`` of ``run`` restricted to ``qids`` (other queries count as misses
    unless every query is kept)."""
    from nclue.api import evaluate
    from nclue.types import Run

    kept = Run(run.name, {q: run.rankings[q] for q in qids if q in run.rankings}, run.page_aware)
    card = evaluate(bench, [kept], ci="none")
    summary = card.runs[run.name]
    share = len(qids) / card.queries
    return summary.n_clue_score / share, summary.gold_hit / share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", nargs="?", default="nclue-demo/collection")
    parser.add_argument("bench", nargs="?", default="nclue-demo/bench")
    parser.add_argument("--exact-queries", type=int, default=100)
    parser.add_argument("--reference", default=None, help="an exact maxsim run file to compare with")
    parser.add_argument(
        "--fill-to",
        type=int,
        default=0,
        help="also time the stored path on up to N distinct query texts (at most twice the benchmark's queries): "
        "its queries, then the first ones again in the --fill-form wording, in one process as nclue run would (0 = off)",
    )
    parser.add_argument("--fill-form", default="natural", help="the second wording for --fill-to (default natural)")
    args = parser.parse_args()

    from nclue.index.tokens import size_report
    from nclue.release import Release
    from nclue.systems.late_interaction import MaxSimBackbone
    from nclue.systems.operations import JointSystem
    from nclue.systems.registry import Workspace
    from nclue.systems.run import map_documents, run_system
    from nclue.types import Run

    print(f"load average at the start {os.getloadavg()}", flush=True)
    release = Release.open(args.bench, with_qrels=False)
    queries = release.queries
    workspace = Workspace(args.collection)
    mapping = map_documents(release, workspace)
    stored_backbone = workspace.backbone("maxsim")
    if stored_backbone.tokens is None:
        raise SystemExit(f"{args.collection}: no token index; build it with `nclue index {args.collection} --all`")
    exact_backbone = MaxSimBackbone(stored_backbone.dense, tokens=None, name="maxsim")
    stored_backbone.dense.encode([queries[0].text("clean_v2")])  # load the query encoder outside the timings

    started = time.perf_counter()
    stored, _ = run_system(workspace.system(SYSTEM), queries, "clean_v2", mapping, SYSTEM)
    stored_seconds = time.perf_counter() - started
    filled_seconds = 0.0
    extra = queries[: max(0, args.fill_to - len(queries))]
    if extra:
        started = time.perf_counter()
        run_system(workspace.system(SYSTEM), extra, args.fill_form, mapping, SYSTEM)
        filled_seconds = stored_seconds + time.perf_counter() - started
    n_exact = len(queries) if args.exact_queries <= 0 else min(args.exact_queries, len(queries))
    subset = queries[:n_exact]
    started = time.perf_counter()
    exact, _ = run_system(JointSystem(SYSTEM, exact_backbone, 3), subset, "clean_v2", mapping, SYSTEM)
    exact_seconds = time.perf_counter() - started
    print(f"load average at the end {os.getloadavg()}", flush=True)

    all_qids = [q.qid for q in queries]
    exact_qids = [q.qid for q in subset]
    stored_all = n_clue(args.bench, stored, all_qids)
    stored_sub = n_clue(args.bench, stored, exact_qids)
    exact_sub = n_clue(args.bench, exact, exact_qids)
    per_stored = stored_seconds / len(queries)
    per_exact = exact_seconds / n_exact
    size = size_report(stored_backbone.tokens, workspace.pages.n_pages)
    manifest = stored_backbone.tokens.manifest
    print(
        f"\ncollection {args.collection}: {workspace.pages.n_pages} pages; benchmark {args.bench}: {len(queries)} queries"
    )
    print(
        f"token index: {manifest['codec']['name']}, {manifest['n_tokens']:,} tokens, {size['bytes'] / 2**20:.0f} MiB "
        f"({size['bytes_per_page'] / 1024:.1f} KiB per page, {size['tokens_per_page']:.0f} tokens per page, "
        f"{size['bytes_per_token']:.0f} B per token)"
    )
    print("\n| path | queries | wall s | s / query | × exact | n-Clue | Gold Hit |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| stored token index | {len(queries)} | {stored_seconds:.1f} | {per_stored:.4f} | "
        f"{per_exact / per_stored:.1f} | {stored_all[0]:.1f} | {stored_all[1]:.1f} |"
    )
    print(
        f"| exact recomputation (peer) | {n_exact} | {exact_seconds:.1f} | {per_exact:.4f} | 1.0 | "
        f"{exact_sub[0]:.1f} | {exact_sub[1]:.1f} |"
    )
    if extra:
        texts = len(queries) + len(extra)
        print(
            f"| stored, {len(queries)} queries + {len(extra)} in the {args.fill_form} wording | {texts} | "
            f"{filled_seconds:.1f} | {filled_seconds / texts:.4f} | — | — | — |"
        )
    print(
        f"\non the {n_exact} exactly scored queries: top-10 overlap stored vs exact "
        f"{overlap(stored, exact, exact_qids):.3f}; n-Clue stored {stored_sub[0]:.1f} vs exact {exact_sub[0]:.1f}"
    )
    if args.reference:
        reference = Run.read(args.reference, name=SYSTEM)
        ref_all = n_clue(args.bench, reference, all_qids)
        print(
            f"against {args.reference} (all {len(queries)} queries): top-10 overlap "
            f"{overlap(stored, reference, all_qids):.3f}; n-Clue stored {stored_all[0]:.1f} vs reference {ref_all[0]:.1f}"
        )


if __name__ == "__main__":
    main()
