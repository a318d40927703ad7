"""Agreement statistics as array functions (``docs/audit.md#agreement``).

* **Wilson score interval** (Wilson, *JASA* 22, 1927) for ``s`` successes in ``n`` trials at
  ``z = Φ⁻¹(0.975)``: centre ``(p̂ + z²/2n) / (1 + z²/n)``, half-width
  ``z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n)``.
* **Cohen's κ** (Cohen 1960; weighted: Cohen 1968) from a ``k × k`` confusion table ``O`` with
  ``N`` items, chance table ``E = r cᵀ / N`` (row and column totals) and disagreement weights
  ``w_ij`` — ``[i ≠ j]`` (unweighted), ``|i − j| / (k − 1)`` (linear) or ``((i − j)/(k − 1))²``
  (quadratic): ``κ = 1 − Σ w·O / Σ w·E``. Undefined (NaN) when ``Σ w·E = 0``.
* **Fleiss' κ** (Fleiss 1971) from an ``N × k`` table of how many of ``m`` raters put item ``i``
  in category ``j``: ``P_i = (Σ_j n_ij² − m) / (m(m − 1))``, ``P̄ = mean P_i``,
  ``p_j = Σ_i n_ij / (N m)``, ``P_e = Σ_j p_j²``, ``κ = (P̄ − P_e) / (1 − P_e)``.

The tests check each against statsmodels (``cohens_kappa`` with ``wt=None``/``"linear"``,
``fleiss_kappa``) and a direct Wilson formula on seeded random tables; statsmodels is a test
dependency only, and the formulas are a few NumPy lines each.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

Z95 = 1.959963984540054
"""The standard normal 0.975 quantile (two-sided 95%)."""

WEIGHTS = ("none", "linear", "quadratic")


def wilson_interval(successes: np.ndarray | int, n: np.ndarray | int, z: float = Z95) -> np.ndarray:
    """Wilson score interval(s) on the 0..1 scale: shape ``(..., 2)``; NaN where ``n = 0``."""
    s = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = s / m
        denom = 1.0 + z * z / m
        centre = (p + z * z / (2.0 * m)) / denom
        half = z * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m)) / denom
    out = np.stack([centre - half, centre + half], axis=-1)
    out[m == 0] = np.nan
    return out


def confusion_matrix(a: np.ndarray, b: np.ndarray, n_categories: int) -> np.ndarray:
    """``k × k`` counts: rows are rater ``a``'s categories, columns rater ``b``'s (integers ``0..k−1``)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if a.shape != b.shape:
        raise ValueError(f"raters rated different numbers of items ({a.size} vs {b.size})")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_categories):
        raise ValueError(f"categories must lie in 0..{n_categories - 1}")
    return np.bincount(a * n_categories + b, minlength=n_categories * n_categories).reshape(n_categories, n_categories)


def disagreement_weights(k: int, weights: str = "none") -> np.ndarray:
    """The ``k × k`` disagreement weights of Cohen's κ (0 on the diagonal)."""
    i, j = np.indices((k, k))
    if weights == "none":
        return (i != j).astype(np.float64)
    scale = max(k - 1, 1)
    if weights == "linear":
        return np.abs(i - j) / scale
    if weights == "quadratic":
        return ((i - j) / scale) ** 2
    raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")


def cohen_kappa(table: np.ndarray, weights: str = "none") -> float:
    """Cohen's κ of a square confusion table, unweighted or with linear/quadratic weights."""
    table = np.asarray(table, dtype=np.float64)
    total = table.sum()
    if total == 0:
        return float("nan")
    w = disagreement_weights(table.shape[0], weights)
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / total
    chance = float((w * expected).sum())
    if chance == 0:
        return float("nan")
    return 1.0 - float((w * table).sum()) / chance


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' κ of an ``items × categories`` count table with the same number of raters per item."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] == 0:
        return float("nan")
    raters = counts.sum(axis=1)
    if not np.allclose(raters, raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (at least 2) of ratings for every item")
    m = raters[0]
    p_item = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    p_cat = counts.sum(axis=0) / counts.sum()
    p_e = float((p_cat**2).sum())
    if p_e == 1.0:
        return float("nan")
    return (float(p_item.mean()) - p_e) / (1.0 - p_e)


def category_counts(ratings: np.ndarray, n_categories: int) -> np.ndarray:
    """``items × categories`` counts from a ``raters × items`` matrix of integer categories."""
    ratings = np.asarray(ratings, dtype=np.int64)
    out = np.zeros((ratings.shape[1], n_categories), dtype=np.int64)
    for row in ratings:
        out[np.arange(ratings.shape[1]), row] += 1
    return out


def pairwise_agreement(ratings: np.ndarray) -> dict[tuple[int, int], tuple[int, int]]:
    """``{(r, s): (agreeing items, items)}`` for every pair of raters of a ``raters × items`` matrix."""
    ratings = np.asarray(ratings)
    return {
        (r, s): (int((ratings[r] == ratings[s]).sum()), int(ratings.shape[1]))
        for r, s in combinations(range(ratings.shape[0]), 2)
    }


def unanimous(ratings: np.ndarray) -> int:
    """Number of items (columns) on which every rater gives the same category."""
    ratings = np.asarray(ratings)
    if ratings.size == 0:
        return 0
    return int((ratings == ratings[0]).all(axis=0).sum())
