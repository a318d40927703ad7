"""The scorecard: headline metrics per run with bootstrap intervals, as a typed :class:`Scorecard`.

Every value is in percentage points. Page metrics appear for page-aware runs. With two or
more fair runs, ``spearman`` gives Spearman's ρ between the run orderings of the headline metrics
over the fair runs only (controls ``oracle.*`` / ``baseline.*`` score by construction and would
inflate it), ``None`` where an ordering is constant. Intervals are percentile bootstrap intervals
over exact gold families (``ci="family"``) or queries (``docs/statistics.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from nclue.scoring.benchmark import Benchmark
from nclue.scoring.metrics import Scores, score_runs
from nclue.scoring.results import HEADLINE, RunSummary, Scorecard
from nclue.scoring.runs import RunCoverage, RunMatrix, coverage_of
from nclue.scoring.standard import standard_measures
from nclue.scoring.summary import metric_matrix, summarise, summarise_strata
from nclue.stats import bootstrap_ci, spearman_matrix
from nclue.types import DEFAULT_SEED

CiKind = Literal["family", "query", "none"]
CI_KINDS: tuple[str, ...] = ("family", "query", "none")
DEFAULT_BOOTSTRAP = 1000
DEFAULT_K = 10
CONTROL_PREFIXES = ("oracle.", "baseline.")
"""Run names of the privileged controls and baselines (``docs/construction.md#controls``): never fair runs; the
report ranks the baselines as BL (``nclue.report.paper``)."""


def scorecard(
    bench: Benchmark,
    scores: Scores,
    ci: CiKind = "family",
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    with_strata: bool = False,
    unknown_qids: dict[str, int] | None = None,
    coverage: dict[str, RunCoverage] | None = None,
    measures: dict[str, dict[str, float]] | None = None,
) -> Scorecard:
    """Summaries of every scored run, with percentile CIs of the headline metrics."""
    runs = summarise(scores)
    intervals = None
    if ci != "none" and scores.names:
        values = np.concatenate([metric_matrix(scores, m) for m in HEADLINE])
        clusters = bench.family if ci == "family" else None
        intervals = bootstrap_ci(values, clusters, n_boot, seed).reshape(len(HEADLINE), len(scores.names), 2) * 100.0
    summaries = {}
    for r, name in enumerate(scores.names):
        cis = {}
        if intervals is not None:
            cis = {m: (float(intervals[j, r, 0]), float(intervals[j, r, 1])) for j, m in enumerate(HEADLINE)}
        summaries[name] = RunSummary(name=name, **runs[name], ci=cis)  # type: ignore[arg-type]
    fair = [r for r, name in enumerate(scores.names) if not name.startswith(CONTROL_PREFIXES)]
    spearman = None
    if len(fair) >= 2:
        spearman = spearman_matrix({m: metric_matrix(scores, m)[fair].mean(axis=1) for m in HEADLINE})
    return Scorecard(
        k=scores.k,
        queries=bench.n_queries,
        families=bench.n_families,
        ci_kind=ci,
        seed=seed,
        bootstrap=n_boot if ci != "none" else 0,
        runs=summaries,
        spearman=spearman,
        strata=summarise_strata(scores, bench) if with_strata else None,
        unknown_qids=unknown_qids or {},
        warnings=bench.warnings,
        coverage=coverage or {},
        measures=measures or {},
    )


def evaluate(
    bench: Benchmark,
    runs: Sequence[RunMatrix],
    k: int = DEFAULT_K,
    ci: CiKind = "family",
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    with_strata: bool = False,
    measures: Sequence[str] = (),
) -> tuple[Scores, Scorecard]:
    """Score ``runs`` and build their scorecard in one call; ``measures`` adds standard IR
    measures by their ir_measures names (:mod:`nclue.scoring.standard`)."""
    standard = standard_measures(bench, runs, measures)
    scores = score_runs(bench, runs, k)
    unknown = {r.name: len(r.unknown_qids) for r in runs if r.unknown_qids}
    coverage = {r.name: coverage_of(r, bench) for r in runs}
    return scores, scorecard(bench, scores, ci, n_boot, seed, with_strata, unknown, coverage, standard)
