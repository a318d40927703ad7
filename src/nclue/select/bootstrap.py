"""Paired task bootstrap for R03 contrasts (10,000 draws, seed 129300).

For a contrast ``a − b`` with per-task differences ``δ_t = x_a(t) − x_b(t)`` over T tasks,
each draw resamples T task indices with replacement and records the mean of ``δ`` over
the draw; the interval is the 2.5th and 97.5th percentile (NumPy linear interpolation)
of the draw means. One index matrix is drawn per task list and shared by every contrast
and metric, so all intervals of a split come from the same resamples (fully paired).
Percentile intervals describe this task set; they are not confirmatory tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DRAWS = 10_000
SEED = 129_300


@dataclass(frozen=True)
class Interval:
    """Observed mean difference and its percentile bootstrap interval."""

    estimate: float
    low: float
    high: float


def draw_indices(n_tasks: int, draws: int = DRAWS, seed: int = SEED) -> np.ndarray:
    """``(draws, n_tasks)`` task indices sampled with replacement by ``default_rng(seed)``."""
    return np.random.default_rng(seed).integers(0, n_tasks, size=(draws, n_tasks))


def paired_interval(a: np.ndarray, b: np.ndarray, indices: np.ndarray, level: float = 0.95) -> Interval:
    """Bootstrap interval of ``mean(a − b)`` over the resamples ``indices``."""
    delta = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    means = delta[indices].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Interval(float(delta.mean()), float(low), float(high))
