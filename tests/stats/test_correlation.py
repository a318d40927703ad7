"""Spearman's ρ against a hand-computed case and against SciPy (the peer it replaces)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import rankdata, spearmanr

from nclue.stats.correlation import average_ranks, spearman, spearman_matrix


def test_hand_computed_ranks_and_rho():
    # x = [10, 20, 20, 40]: ranks 1, 2.5, 2.5, 4. y = [1, 3, 2, 4]: ranks 1, 3, 2, 4.
    assert average_ranks(np.array([10, 20, 20, 40])).tolist() == [1.0, 2.5, 2.5, 4.0]
    # centred ranks: x (-1.5, 0, 0, 1.5), y (-1.5, 0.5, -0.5, 1.5); ρ = 4.5 / sqrt(4.5 * 5)
    assert spearman([10, 20, 20, 40], [1, 3, 2, 4]) == pytest.approx(4.5 / math.sqrt(4.5 * 5))
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


@pytest.mark.parametrize("seed", range(20))
def test_agrees_with_scipy_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    x = rng.integers(0, 6, n).astype(float) if seed % 2 else rng.normal(size=n)
    y = x * rng.choice([-1, 1]) + rng.integers(0, 4, n)
    assert average_ranks(x).tolist() == rankdata(x).tolist()
    if np.ptp(x) and np.ptp(y):
        assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)


def test_constant_or_short_vectors_are_nan():
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1], [2]))
    matrix = spearman_matrix({"a": np.array([1.0, 2.0, 3.0]), "b": np.array([2.0, 2.0, 2.0])})
    assert matrix["a"]["a"] == pytest.approx(1.0) and math.isnan(matrix["a"]["b"])


def test_nan_propagates_as_in_scipy():
    assert math.isnan(spearman([1, float("nan"), 3, 2], [1, 2, 3, 4]))
    assert math.isnan(spearmanr([1, float("nan"), 3, 2], [1, 2, 3, 4]).statistic)
    assert math.isnan(spearman([float("nan")] * 3, [1, 2, 3]))
