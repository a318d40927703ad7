"""Paired randomization (sign-flip) tests at query or family level.

Under H0 (no difference) each unit's paired difference is symmetric about 0, so its
sign is exchangeable. With unit sums ``s_u`` (the query difference, or the family's
summed differences for the family test), the statistic is ``|Σ_u ε_u s_u|`` (equivalent
to the mean difference, since the query count is fixed) and the two-sided p-value is
``(1 + #{draws with |T*| ≥ |T_obs|}) / (draws + 1)`` (Phipson & Smyth 2010's +1
correction). ``T*`` ties with ``T_obs`` within 1e-9 relative count as extreme.
"""

from __future__ import annotations

import numpy as np

from nclue.stats.bootstrap import cluster_sums
from nclue.stats.budget import require
from nclue.types import DEFAULT_SEED

TIE_TOL = 1e-9


def sign_flips(n_units: int, n_draws: int = 10000, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``(n_draws, n_units)`` float matrix of independent fair ±1 signs (seeded)."""
    require(
        8.0 * n_draws * n_units,
        f"{n_draws:,} sign-flip draws over {n_units:,} units",
        "ask for fewer draws (10,000 is the usual number)",
    )
    rng = np.random.default_rng(seed)
    n_bytes = (n_units + 7) // 8
    bits = np.unpackbits(rng.integers(0, 256, size=(n_draws, n_bytes), dtype=np.uint8), axis=1)[:, :n_units]
    return bits.astype(np.float64) * 2.0 - 1.0


def unit_sums(diffs: np.ndarray, clusters: np.ndarray | None) -> np.ndarray:
    """``(M, U)`` per-unit sums of ``diffs (M, Q)``: queries, or clusters when given."""
    diffs = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    if clusters is None:
        return diffs
    _, ids = np.unique(np.asarray(clusters), return_inverse=True)
    return cluster_sums(diffs, ids)[0]


def paired_randomization(
    diffs: np.ndarray, clusters: np.ndarray | None = None, n_draws: int = 10000, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """Two-sided p-values ``(M,)`` for ``mean(diffs[m]) == 0``, one per row of ``diffs (M, Q)``.

    ``clusters`` flips whole families (the family-level test); ``None`` flips queries.
    All rows use the same sign draws.
    """
    sums = unit_sums(diffs, clusters)
    signs = sign_flips(sums.shape[1], n_draws, seed)
    observed = np.abs(sums.sum(axis=1))
    null = np.abs(signs @ sums.T)
    tol = TIE_TOL * np.maximum(np.abs(sums).sum(axis=1), 1.0)
    extreme = (null >= (observed - tol)[None, :]).sum(axis=0)
    return (1.0 + extreme) / (n_draws + 1.0)
