"""Adversarial promotion bound for an n-Clue Score contrast (``docs/statistics.md#adversarial-promotion-bound``, the seed's Table S1h).

Question: how low can ``variant − base`` go if up to ``k`` currently judged subsets per
query (ones in either system's top-k) were really gold? The bound is exact and has a
closed form, because a query's n-Clue success depends only on the *first judged*
document of the top-k (success ⇔ it is gold):

* promotion only turns subsets into golds, so success can only switch on;
* base success can be forced on by promoting the base's first judged document when it is
  a subset (one promotion); the variant's success is forced on only by promoting the
  variant's first judged subset — which the adversary avoids, unless it is the *same*
  document as the base's first judged subset (then both switch together).

Per query: ``min Δ = v_min − b_max`` where ``b_max = 1`` if the base's first judged doc
exists (gold, or promotable subset), ``v_min = 1`` iff the variant's first judged doc is
gold, except that a shared first-judged subset gives ``Δ = 0``. Any budget ``k ≥ 1``
reaches the bound (so the seed's columns ≤1, ≤2, ≤3 coincide); ``k = 0`` is the
observed contrast. Tests check this against brute-force enumeration of promotion sets.
"""

from __future__ import annotations

import numpy as np


def promotion_bound(
    base_success: np.ndarray,
    base_first: np.ndarray,
    variant_success: np.ndarray,
    variant_first: np.ndarray,
    k: int = 1,
) -> float:
    """Minimum of ``mean(variant success − base success)`` (0..1) over promotions of ≤ ``k`` subsets per query.

    ``*_success`` are per-query n-Clue successes (bool), ``*_first`` the doc index of the
    first judged top-k document (-1 when none), as in :class:`nclue.scoring.metrics.Scores`.
    """
    b_gold = np.asarray(base_success, dtype=bool)
    v_gold = np.asarray(variant_success, dtype=bool)
    if k <= 0:
        return float(v_gold.mean() - b_gold.mean())
    b_sub = (base_first >= 0) & ~b_gold
    v_sub = (variant_first >= 0) & ~v_gold
    shared = b_sub & v_sub & (base_first == variant_first)
    delta = v_gold.astype(np.float64) - (b_gold | b_sub).astype(np.float64)
    delta[shared] = 0.0
    return float(delta.mean())
