"""The scorecard: headline metrics per run with bootstrap intervals (JSON-ready, in pp).

JSON form (issue 3): ``{"runs": {NAME: {"n_clue_score", "gold_hit", "gold_ndcg",
"graded_ndcg", "miss", "subset_first", "gold_first", "ci": {metric: [lo, hi]}, ...}}}``;
every value is in percentage points. Page metrics appear for page-aware runs. With two
or more runs, ``spearman`` gives Spearman's ρ between the run orderings of the headline
metrics (``None`` where an ordering is constant).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from nclue.evaluate.benchmark import Benchmark
from nclue.evaluate.metrics import Scores, score_runs
from nclue.evaluate.runs import RunMatrix
from nclue.evaluate.summary import HEADLINE, metric_matrix, summarise, summarise_strata
from nclue.evaluate.views import json_safe
from nclue.stats import bootstrap_ci, spearman_matrix

CiKind = Literal["family", "query", "none"]


def scorecard(
    bench: Benchmark,
    scores: Scores,
    ci: CiKind = "family",
    n_boot: int = 1000,
    seed: int = 11,
    with_strata: bool = False,
) -> dict:
    """Summaries of every scored run, with percentile CIs of the headline metrics."""
    runs = summarise(scores)
    out_runs: dict[str, dict] = {}
    intervals = None
    if ci != "none" and scores.names:
        values = np.concatenate([metric_matrix(scores, m) for m in HEADLINE])
        clusters = bench.family if ci == "family" else None
        intervals = bootstrap_ci(values, clusters, n_boot, seed).reshape(len(HEADLINE), len(scores.names), 2) * 100.0
    for r, name in enumerate(scores.names):
        row = {m: v for m, v in runs[name].items() if v is not None}
        if intervals is not None:
            row["ci"] = {m: [float(intervals[j, r, 0]), float(intervals[j, r, 1])] for j, m in enumerate(HEADLINE)}
        out_runs[name] = row
    out: dict = {
        "k": scores.k,
        "queries": bench.n_queries,
        "families": bench.n_families,
        "ci": ci,
        "seed": seed,
        "runs": out_runs,
    }
    if len(scores.names) >= 2:
        out["spearman"] = spearman_matrix({m: metric_matrix(scores, m).mean(axis=1) for m in HEADLINE})
    if with_strata:
        out["strata"] = summarise_strata(scores, bench)
    return json_safe(out)


def evaluate(
    bench: Benchmark, runs: Sequence[RunMatrix], k: int = 10, ci: CiKind = "family", n_boot: int = 1000, seed: int = 11
) -> tuple[Scores, dict]:
    """Score ``runs`` and build their scorecard in one call."""
    scores = score_runs(bench, runs, k)
    return scores, scorecard(bench, scores, ci, n_boot, seed)
