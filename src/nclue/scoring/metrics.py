"""The n-Clue metrics of ``docs/metrics.md``, vectorised over runs and queries.

Every run is encoded once as an ``(n_runs, n_queries, k)`` int8 label matrix
(0 = unjudged/absent, 1 = partial, 2 = gold) and an int16 grade matrix; each metric is
then a reduction along the rank axis. With ``first`` = the first judged (gold or
partial) document in the top-k:

* n-Clue success  ⇔ ``label[first] == gold`` (a gold exists and no subset precedes it);
* Gold Hit        ⇔ any gold in the top-k;
* outcome         = miss (0, no gold), subset-first (1), gold-first (2) — M/P/G;
* Gold-NDCG       = Σ_i [gold_i] / log2(i+1) over ranks i = 1..k, divided by the same
  sum over ``min(#gold, k)`` ideal ranks;
* graded NDCG     = Σ_i grade_i / log2(i+1) over the ideal (grades sorted descending)
  top-k — trec_eval's ``ndcg_cut`` with linear gain;
* Gold+Support    (page-aware runs): some top-k gold whose three highest-scoring
  distinct surfaced pages meet the stored support ``P(d, c)`` of every condition;
  page coverage (per condition / all conditions) is conditional on a top-k gold.

A query the run does not answer is all-zero: a miss with NDCG 0. Per-query arrays keep
every benchmark query, so means use the benchmark's query count as denominator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nclue.scoring.benchmark import GOLD, Benchmark
from nclue.scoring.runs import PAD, RunMatrix

MISS, SUBSET_FIRST, GOLD_FIRST = 0, 1, 2
OUTCOME_NAMES = ("miss", "subset_first", "gold_first")


@dataclass(frozen=True)
class Scores:
    """Per-query outcomes of several runs, each array shaped ``(n_runs, n_queries)``.

    ``gold_support``, ``coverage_condition`` and ``coverage_all`` are NaN for runs that
    are not page-aware (or qrels without pages); the coverage arrays are also NaN on
    queries without a top-k gold (they are conditional on one). ``first_judged`` is the
    doc index of the first judged top-k document (-1 when none), used by the promotion
    bound.
    """

    names: tuple[str, ...]
    k: int
    outcome: np.ndarray
    gold_ndcg: np.ndarray
    graded_ndcg: np.ndarray
    gold_support: np.ndarray
    coverage_condition: np.ndarray
    coverage_all: np.ndarray
    first_judged: np.ndarray

    @property
    def n_clue(self) -> np.ndarray:
        """1.0 where the first top-k gold precedes every judged subset."""
        return (self.outcome == GOLD_FIRST).astype(np.float64)

    @property
    def gold_hit(self) -> np.ndarray:
        """1.0 where any gold is in the top-k."""
        return (self.outcome != MISS).astype(np.float64)

    def index(self, name: str) -> int:
        """Row of run ``name``."""
        return self.names.index(name)


def encode_labels(bench: Benchmark, runs: Sequence[RunMatrix], k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-k membership rows ``(R, Q, k)`` (-1 unjudged), labels (int8) and grades (int16)."""
    nq = bench.n_queries
    top = np.full((len(runs), nq, k), PAD, dtype=np.int32)
    for r, run in enumerate(runs):
        width = min(k, run.docs.shape[1])
        top[r, :, :width] = run.docs[:, :width]
    qidx = np.broadcast_to(np.arange(nq, dtype=np.int64)[None, :, None], top.shape)
    rows = bench.lookup(qidx, top)
    judged = rows >= 0
    safe = np.where(judged, rows, 0)
    labels = np.where(judged, bench.j_label[safe] if len(bench.j_label) else 0, 0).astype(np.int8)
    grades = np.where(judged, bench.j_grade[safe] if len(bench.j_grade) else 0, 0).astype(np.int16)
    return rows, labels, grades


def discounts(k: int) -> np.ndarray:
    """``1 / log2(rank + 1)`` for ranks 1..k."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def score_runs(bench: Benchmark, runs: Sequence[RunMatrix], k: int = 10) -> Scores:
    """Score every run on every benchmark query at cutoff ``k`` (``docs/metrics.md``)."""
    if k < 1:
        raise ValueError("k must be >= 1")
    rows, labels, grades = encode_labels(bench, runs, k)
    gold = labels == GOLD
    judged = labels > 0
    first_pos = judged.argmax(axis=2)
    any_judged = judged.any(axis=2)
    first_label = np.take_along_axis(labels, first_pos[..., None], axis=2)[..., 0]
    has_gold = gold.any(axis=2)
    outcome = np.where(first_label == GOLD, GOLD_FIRST, np.where(has_gold, SUBSET_FIRST, MISS)).astype(np.int8)
    first_rows = np.take_along_axis(rows, first_pos[..., None], axis=2)[..., 0]
    first_judged = np.where(any_judged, bench.j_doc[np.maximum(first_rows, 0)] if len(bench.j_doc) else -1, -1)

    disc = discounts(k)
    cum = np.concatenate([[0.0], np.cumsum(disc)])
    ideal_gold = cum[np.minimum(bench.n_gold, k)]
    ideal_graded = bench.ideal_grades(k).astype(np.float64) @ disc
    gold_ndcg = _safe_div(gold.astype(np.float64) @ disc, ideal_gold)
    graded_ndcg = _safe_div(grades.astype(np.float64) @ disc, ideal_graded)

    support, cov_c, cov_a = _support_metrics(bench, runs, rows, gold, k)
    return Scores(
        names=tuple(r.name for r in runs),
        k=k,
        outcome=outcome,
        gold_ndcg=gold_ndcg,
        graded_ndcg=graded_ndcg,
        gold_support=support,
        coverage_condition=cov_c,
        coverage_all=cov_a,
        first_judged=first_judged.astype(np.int32),
    )


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    den = np.broadcast_to(den, num.shape)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _support_metrics(
    bench: Benchmark, runs: Sequence[RunMatrix], rows: np.ndarray, gold: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gold+Support success and conditional page coverage (loops over top-k golds only)."""
    shape = (len(runs), bench.n_queries)
    success = np.full(shape, np.nan)
    cov_c = np.full(shape, np.nan)
    cov_a = np.full(shape, np.nan)
    has_pages = any(s is not None for s in bench.support)
    for r, run in enumerate(runs):
        if run.pages is None or not has_pages:
            continue
        success[r] = 0.0
        width = min(k, run.pages.shape[1])
        for q in np.flatnonzero(gold[r].any(axis=1)):
            n = int(bench.n[q])
            covered_any = np.zeros(n, dtype=bool)
            full = False
            for pos in np.flatnonzero(gold[r, q, :width]):
                stored = bench.support[rows[r, q, pos]]
                if stored is None:
                    continue
                surfaced = {int(p) for p in run.pages[q, pos] if p > 0}
                hit = np.array([bool(surfaced & s) for s in stored])
                covered_any |= hit
                full |= bool(hit.all())
            success[r, q] = float(full)
            cov_c[r, q] = covered_any.mean()
            cov_a[r, q] = float(full)
    return success, cov_c, cov_a
