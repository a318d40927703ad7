"""Rank agreement between metric orderings of runs (Spearman's ρ).

ρ is Pearson's correlation of the two vectors' ranks, ties given their average rank
(Spearman 1904; ``scipy.stats.spearmanr`` without NaN handling). It is computed here with NumPy
rather than by ``scipy.stats``: importing ``scipy.stats`` costs about 0.5 s, a third of a warm
``nclue evaluate``, for a few dozen numbers. ``tests/stats/test_correlation.py`` checks the
values against SciPy.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks of ``x``, tied values sharing the mean of their ranks (``rankdata(method='average')``)."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], len(x)]
    mean_rank = (starts + ends + 1) / 2.0  # ranks starts+1 … ends, averaged
    ranks = np.empty(len(x))
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ of two equal-length vectors; NaN when either is constant, shorter than 2 or holds
    a NaN (SciPy's default ``nan_policy='propagate'``)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.isnan(x).any() or np.isnan(y).any() or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    rx, ry = average_ranks(x), average_ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    return float(np.clip((rx @ ry) / np.sqrt((rx @ rx) * (ry @ ry)), -1.0, 1.0))


def spearman_matrix(values: Mapping[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """``{metric_a: {metric_b: ρ}}`` for per-run metric vectors (each of length n_runs).

    ρ is NaN when a vector is constant (no ordering); needs at least two runs.
    """
    names = list(values)
    return {a: {b: spearman(values[a], values[b]) for b in names} for a in names}
