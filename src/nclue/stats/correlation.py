"""Rank agreement between metric orderings of runs (Spearman's ρ, via SciPy)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def spearman_matrix(values: Mapping[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """``{metric_a: {metric_b: ρ}}`` for per-run metric vectors (each of length n_runs).

    ρ is NaN when a vector is constant (no ordering); needs at least two runs.
    ``scipy.stats`` is imported here, not at module level: it costs ~0.6 s and every
    ``nclue`` command would otherwise pay it at start-up.
    """
    from scipy.stats import spearmanr

    names = list(values)
    out: dict[str, dict[str, float]] = {a: {} for a in names}
    for a in names:
        for b in names:
            x, y = np.asarray(values[a], dtype=float), np.asarray(values[b], dtype=float)
            if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
                out[a][b] = float("nan")
            else:
                out[a][b] = float(spearmanr(x, y).statistic)
    return out
