"""The coverage protocol's facet normaliser and coverage objective (``docs/coverage.md``), as array functions.

Facets are the question followed by the task's m requirements, each with weight 1/(m+1).
For facet vector f and pool document vector d (both L2-normalised):

* normalised cosine ``ncos(f, d) = max(0, f·d) / max_{d' in pool} max(0, f·d')`` — the maximum
  is over the **complete** task pool, never over a selection; an all-zero facet row stays 0;
* ``F(S) = [Σ_f max_{d∈S} ncos(f, d) − Σ_{{d,e}⊂S} max(0, d·e) / C(k,2)] / (m+1)`` with the
  max over the empty set equal to 0.
"""

from __future__ import annotations

from math import comb

import numpy as np

# Gains closer than this are an exact tie (float rounding of mathematically equal sums).
TIE_EPS = 1e-12


def normalised_cosines(facets: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """``(F, n)`` matrix of ``ncos(f, d)`` for facet rows ``facets`` and the complete pool ``docs``."""
    positive = np.maximum(facets.astype(np.float64) @ docs.astype(np.float64).T, 0.0)
    peak = positive.max(axis=1, keepdims=True)
    return np.divide(positive, peak, out=np.zeros_like(positive), where=peak > 0)


def positive_gram(docs: np.ndarray) -> np.ndarray:
    """``(n, n)`` matrix of ``max(0, d·e)`` between pool documents."""
    d = docs.astype(np.float64)
    return np.maximum(d @ d.T, 0.0)


def objective(ncos: np.ndarray, gram: np.ndarray, subset: list[int] | np.ndarray, k: int) -> float:
    """``F(S)`` for pool positions ``subset`` (see module docstring)."""
    members = np.asarray(subset, dtype=np.int64)
    n_facets = ncos.shape[0]
    if members.size == 0:
        return 0.0
    cover = ncos[:, members].max(axis=1).sum()
    block = gram[np.ix_(members, members)]
    pairs = np.triu(block, 1).sum()
    return float((cover - pairs / comb(k, 2)) / n_facets)


def pick(gains: np.ndarray, keys: list, candidates: np.ndarray) -> int:
    """Position in ``candidates`` with the largest gain; gains within :data:`TIE_EPS` of the
    best are ties, broken by the smaller key."""
    best = gains.max()
    tied = np.nonzero(gains >= best - TIE_EPS)[0]
    return int(min(tied, key=lambda j: keys[int(candidates[j])]))


def greedy_coverage(
    ncos: np.ndarray, gram: np.ndarray, keys: list, k: int, allowed: np.ndarray | None = None
) -> list[int]:
    """Greedy maximisation of ``F`` for exactly ``k`` steps over the ``allowed`` pool positions
    (default: all); returns pool positions in selection order.

    Each step adds the unselected document with the largest ``F(S ∪ {d}) − F(S)``, computed
    for all candidates at once: ``[Σ_f max(c_f, ncos_fd) − Σ_f c_f − Σ_{e∈S} gram_de / C(k,2)]
    / (m+1)`` where ``c_f`` is the current facet maximum. Ties go to the smaller ``keys`` entry.
    """
    n = ncos.shape[1]
    free = np.ones(n, dtype=bool) if allowed is None else np.array(allowed, dtype=bool)
    if k > int(free.sum()):
        raise ValueError(f"pool of {int(free.sum())} candidate documents is smaller than k={k}")
    n_facets = ncos.shape[0]
    pair_weight = 1.0 / comb(k, 2) if k > 1 else 0.0
    current = np.zeros(n_facets)
    penalty = np.zeros(n)
    chosen: list[int] = []
    for _ in range(k):
        candidates = np.nonzero(free)[0]
        cover_gain = np.maximum(ncos[:, candidates], current[:, None]).sum(axis=0) - current.sum()
        gains = (cover_gain - penalty[candidates] * pair_weight) / n_facets
        d = int(candidates[pick(gains, keys, candidates)])
        chosen.append(d)
        free[d] = False
        current = np.maximum(current, ncos[:, d])
        penalty += gram[d]
    return chosen
