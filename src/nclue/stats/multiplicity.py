"""Multiplicity control: Holm's step-down correction and blockwise max-|T| sign flips.

* Holm (1979): sort p ascending; ``p_adj(i) = max_{j≤i} min(1, (m − j + 1) p(j))``.
* Single-step max-|T| (Westfall & Young 1993): within a block of tried endpoints
  ``j = 1..m`` (e.g. min / product / hmean / distinct variants against one base), the
  same family sign flips are applied to every endpoint, preserving their correlation.
  Each endpoint's statistic is standardised by its exact randomization standard
  deviation, ``T_j = Σ_f ε_f s_fj / sqrt(Σ_f s_fj²)``, so endpoints on different scales
  compete fairly; ``p_j = (1 + #{max_j |T*_j| ≥ |T_j|}) / (draws + 1)``. The block's
  p-value is the smallest adjusted p (that of the best-looking endpoint), so selecting
  the displayed endpoint after the fact is paid for.
"""

from __future__ import annotations

import numpy as np

from nclue.stats.randomization import TIE_TOL, sign_flips, unit_sums
from nclue.types import DEFAULT_SEED


def holm(pvalues: np.ndarray | list[float]) -> np.ndarray:
    """Holm-adjusted p-values, in the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def max_t(
    diffs: np.ndarray, clusters: np.ndarray | None = None, n_draws: int = 10000, seed: int = DEFAULT_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Max-|T| adjusted p-values for every endpoint row of ``diffs (m, Q)``.

    Returns ``(t_observed, p_adjusted)``, both of length ``m``. Rows that are identically
    zero have ``T = 0`` (p = 1).
    """
    sums = unit_sums(diffs, clusters)
    scale = np.sqrt((sums**2).sum(axis=1))
    safe = np.where(scale > 0, scale, 1.0)
    t_obs = np.where(scale > 0, sums.sum(axis=1) / safe, 0.0)
    signs = sign_flips(sums.shape[1], n_draws, seed)
    null_max = np.abs(signs @ (sums / safe[:, None]).T).max(axis=1)
    extreme = (null_max[:, None] >= np.abs(t_obs)[None, :] - TIE_TOL).sum(axis=0)
    return t_obs, (1.0 + extreme) / (n_draws + 1.0)
