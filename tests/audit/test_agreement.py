"""Agreement statistics against statsmodels and a direct Wilson formula, on seeded random data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from nclue.audit.agreement import (
    category_counts,
    cohen_kappa,
    confusion_matrix,
    pairwise_agreement,
    unanimous,
    wilson_interval,
)
from nclue.audit.agreement import (
    fleiss_kappa as our_fleiss,
)


def _wilson(s: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The textbook formula, written out independently of the array version."""
    p = s / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize("seed", range(20))
def test_cohen_kappa_equals_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    n = int(rng.integers(20, 400))
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, k, n))  # correlated raters
    table = confusion_matrix(a, b, k)
    assert cohen_kappa(table) == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
    assert cohen_kappa(table, "linear") == pytest.approx(cohens_kappa(table, wt="linear").kappa, abs=1e-12)
    assert cohen_kappa(table, "quadratic") == pytest.approx(cohens_kappa(table, wt="quadratic").kappa, abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_fleiss_kappa_equals_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    raters, items, k = int(rng.integers(2, 6)), int(rng.integers(10, 200)), int(rng.integers(2, 4))
    truth = rng.integers(0, k, items)
    ratings = np.where(rng.random((raters, items)) < 0.75, truth, rng.integers(0, k, (raters, items)))
    counts = category_counts(ratings, k)
    assert (counts.sum(axis=1) == raters).all()
    assert our_fleiss(counts) == pytest.approx(fleiss_kappa(counts, method="fleiss"), abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_wilson_equals_direct_formula_and_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 1000))
    s = int(rng.integers(0, n + 1))
    lo, hi = wilson_interval(s, n)
    assert (lo, hi) == pytest.approx(_wilson(s, n), abs=1e-12)
    assert (lo, hi) == pytest.approx(proportion_confint(s, n, alpha=0.05, method="wilson"), abs=1e-9)


def test_wilson_is_vectorised_and_matches_the_seed_example() -> None:
    """254/300 agreeing grades give [80.2, 88.3]% (the seed's initial-audit interval)."""
    out = wilson_interval(np.array([254, 661, 0]), np.array([300, 710, 0]))
    assert np.round(100 * out[0], 1).tolist() == [80.2, 88.3]
    assert np.round(100 * out[1], 1).tolist() == [91.0, 94.7]
    assert np.isnan(out[2]).all()


def test_hand_computed_cases() -> None:
    # perfect agreement: κ = 1; independent marginals: κ = 0
    assert cohen_kappa(np.array([[5, 0], [0, 5]])) == pytest.approx(1.0)
    assert cohen_kappa(np.array([[1, 1], [1, 1]])) == pytest.approx(0.0)
    # a single category for everyone: chance agreement is 1 and κ is undefined
    assert math.isnan(cohen_kappa(np.array([[4, 0], [0, 0]])))
    ratings = np.array([[1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1]])
    assert unanimous(ratings) == 2
    assert pairwise_agreement(ratings) == {(0, 1): (3, 4), (0, 2): (2, 4), (1, 2): (3, 4)}


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="categories"):
        confusion_matrix(np.array([0, 3]), np.array([0, 1]), 3)
    with pytest.raises(ValueError, match="same number"):
        our_fleiss(np.array([[2, 0], [1, 2]]))
