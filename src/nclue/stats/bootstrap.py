"""Cluster (exact-family) and query bootstrap percentile intervals.

A replicate draws ``C`` clusters with replacement from the ``C`` clusters; its estimate
is the mean over the drawn clusters' queries,
``θ* = Σ_c w_c S_c / Σ_c w_c n_c`` with ``w_c`` the draw count of cluster ``c``,
``S_c`` its sum of per-query values and ``n_c`` its size. The query bootstrap is the
special case of one query per cluster. The interval is the percentile interval
(``numpy.quantile``, linear interpolation) of the replicates (Efron & Tibshirani 1993,
§13.3; cluster resampling: Davison & Hinkley 1997, §3.8).
"""

from __future__ import annotations

import numpy as np

from nclue.stats.budget import require
from nclue.types import DEFAULT_SEED

BLOCK_CELLS = 1 << 22
"""Draw counts held at once (32 MiB of float64 weights)."""


def cluster_weights(n_clusters: int, n_replicates: int = 1000, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``(n_replicates, n_clusters)`` draw counts: ``n_clusters`` draws with replacement per row."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(n_replicates, n_clusters))
    flat = draws + (np.arange(n_replicates)[:, None] * n_clusters)
    return (
        np.bincount(flat.ravel(), minlength=n_replicates * n_clusters)
        .reshape(n_replicates, n_clusters)
        .astype(np.float64)
    )


def cluster_sums(
    values: np.ndarray, clusters: np.ndarray, n_clusters: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums ``(M, C)`` of ``values (M, Q)`` and cluster sizes ``(C,)``."""
    clusters = np.asarray(clusters)
    c = int(clusters.max()) + 1 if n_clusters is None else n_clusters
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    sums = np.zeros((values.shape[0], c))
    for start in range(0, values.shape[0], 64):
        block = values[start : start + 64]
        idx = clusters[None, :] + c * np.arange(block.shape[0])[:, None]
        sums[start : start + 64] = np.bincount(
            idx.ravel(), weights=block.ravel(), minlength=block.shape[0] * c
        ).reshape(-1, c)
    return sums, np.bincount(clusters, minlength=c).astype(np.float64)


def bootstrap_replicates(
    values: np.ndarray, clusters: np.ndarray | None = None, n_replicates: int = 1000, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """``(M, n_replicates)`` bootstrap means of each row of ``values (M, Q)``.

    ``clusters`` (length Q, ids 0..C-1) selects the family bootstrap; ``None`` resamples
    queries. All rows share the same draws (paired across metrics and runs).
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    q = values.shape[1]
    clusters = np.arange(q) if clusters is None else np.asarray(clusters)
    _, ids = np.unique(clusters, return_inverse=True)
    sums, sizes = cluster_sums(values, ids)
    require(
        8.0 * values.shape[0] * n_replicates,
        f"{n_replicates:,} bootstrap replicates of {values.shape[0]} rows",
        "ask for fewer replicates (1,000 is the usual number)",
    )
    # replicates are drawn block by block (bounded memory); the stream of draws, hence every
    # replicate, is the same as one draw of the whole (n_replicates, n_clusters) matrix
    rng = np.random.default_rng(seed)
    out = np.empty((values.shape[0], n_replicates))
    block = max(1, BLOCK_CELLS // max(sizes.size, 1))
    for start in range(0, n_replicates, block):
        rows = min(block, n_replicates - start)
        draws = rng.integers(0, sizes.size, size=(rows, sizes.size))
        flat = draws + (np.arange(rows)[:, None] * sizes.size)
        weights = np.bincount(flat.ravel(), minlength=rows * sizes.size).reshape(rows, sizes.size).astype(np.float64)
        out[:, start : start + rows] = (sums @ weights.T) / (weights @ sizes)[None, :]
    return out


def bootstrap_ci(
    values: np.ndarray,
    clusters: np.ndarray | None = None,
    n_replicates: int = 1000,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> np.ndarray:
    """Percentile interval ``(M, 2)`` of the mean of each row of ``values (M, Q)``."""
    reps = bootstrap_replicates(values, clusters, n_replicates, seed)
    alpha = (1.0 - level) / 2.0
    return np.quantile(reps, [alpha, 1.0 - alpha], axis=1).T
