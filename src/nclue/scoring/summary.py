"""Aggregate per-query scores into run-level numbers (percentage points) and strata.

Every mean divides by the number of benchmark queries in the selection (the denominator
rule of ``docs/metrics.md``); only the page-coverage numbers are conditional (on a top-k gold) and
average over the queries where they are defined.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from nclue.scoring.benchmark import Benchmark
from nclue.scoring.metrics import GOLD_FIRST, MISS, OUTCOME_NAMES, SUBSET_FIRST, Scores
from nclue.scoring.results import HEADLINE, PAGE_METRICS, SHARES


def metric_matrix(scores: Scores, metric: str) -> np.ndarray:
    """``(n_runs, n_queries)`` per-query values of ``metric`` (0..1 scale)."""
    match metric:
        case "n_clue_score" | "gold_first":
            return scores.n_clue
        case "gold_hit":
            return scores.gold_hit
        case "gold_ndcg":
            return scores.gold_ndcg
        case "graded_ndcg":
            return scores.graded_ndcg
        case "miss":
            return (scores.outcome == MISS).astype(np.float64)
        case "subset_first":
            return (scores.outcome == SUBSET_FIRST).astype(np.float64)
        case "gold_support":
            return scores.gold_support
        case "page_coverage_condition":
            return scores.coverage_condition
        case "page_coverage_all":
            return scores.coverage_all
    raise KeyError(f"unknown metric {metric!r}")


def summarise(
    scores: Scores, mask: np.ndarray | None = None, metrics: Iterable[str] | None = None
) -> dict[str, dict[str, float | None]]:
    """``{run: {metric: value in percentage points}}`` over the queries in ``mask``.

    Page metrics are ``None`` for runs that are not page-aware (or with no defined query).
    """
    names = tuple(metrics) if metrics is not None else HEADLINE + SHARES + PAGE_METRICS
    sel = np.ones(scores.outcome.shape[1], dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    out: dict[str, dict[str, float | None]] = {}
    for r, run in enumerate(scores.names):
        row: dict[str, float | None] = {}
        for m in names:
            values = metric_matrix(scores, m)[r, sel]
            if m in PAGE_METRICS:
                values = values[~np.isnan(values)]
            row[m] = float(100.0 * values.mean()) if values.size else None
        out[run] = row
    return out


def strata(bench: Benchmark) -> dict[str, dict[str, np.ndarray]]:
    """Task-factor strata (``docs/metrics.md#task-factor-strata``): by ``n``, by ``L_min`` (≤30, 31–100, >100) and by ``|D+|``.

    ``L_min`` queries whose gold page counts are unknown (no corpus.jsonl) fall in ``unknown``.
    Empty strata are omitted.
    """
    out: dict[str, dict[str, np.ndarray]] = {"n": {}, "L_min": {}, "|D+|": {}}
    for n in np.unique(bench.n):
        out["n"][f"n={int(n)}"] = bench.n == n
    lmin = bench.l_min
    known = ~np.isnan(lmin)
    with np.errstate(invalid="ignore"):
        out["L_min"] = {
            "<=30": known & (lmin <= 30),
            "31-100": known & (lmin > 30) & (lmin <= 100),
            ">100": known & (lmin > 100),
            "unknown": ~known,
        }
    dp = bench.d_plus
    out["|D+|"] = {"<=25": dp <= 25, "26-50": (dp > 25) & (dp <= 50), ">50": dp > 50}
    return {factor: {name: m for name, m in cells.items() if m.any()} for factor, cells in out.items()}


def summarise_strata(scores: Scores, bench: Benchmark, metrics: Iterable[str] = ("n_clue_score", "gold_hit")) -> dict:
    """``{factor: {stratum: {"queries": count, "runs": summarise(...)}}}`` in percentage points."""
    metrics = tuple(metrics)
    return {
        factor: {
            name: {"queries": int(mask.sum()), "runs": summarise(scores, mask, metrics)} for name, mask in cells.items()
        }
        for factor, cells in strata(bench).items()
    }


def per_query_rows(scores: Scores, bench: Benchmark) -> list[dict]:
    """One row per (run, query): outcome name and per-query metrics in percentage points."""
    rows = []
    for r, run in enumerate(scores.names):
        for q, qid in enumerate(bench.qids):
            row = {
                "run": run,
                "qid": qid,
                "outcome": OUTCOME_NAMES[int(scores.outcome[r, q])],
                "n_clue_score": 100.0 * float(scores.outcome[r, q] == GOLD_FIRST),
                "gold_hit": 100.0 * float(scores.outcome[r, q] != MISS),
                "gold_ndcg": 100.0 * float(scores.gold_ndcg[r, q]),
                "graded_ndcg": 100.0 * float(scores.graded_ndcg[r, q]),
            }
            if not np.isnan(scores.gold_support[r, q]):
                row["gold_support"] = 100.0 * float(scores.gold_support[r, q])
            rows.append(row)
    return rows
