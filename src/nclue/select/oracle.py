"""The labeled oracle (``docs/coverage.md``): the k-subset of a pool with the most agreed coverage.

Among all k-subsets of the pool, maximise the number of distinct agreed requirements
covered; break ties by label nDCG (mean grades ordered descending, discount
``1/log2(rank+1)``); break remaining ties by the lexicographically smallest ID tuple
(IDs sorted by :func:`nclue.select.tasks.id_key`). The chosen documents are ranked by mean
grade descending, ties to the smaller ID. It reads labels, so it is a diagnostic ceiling,
never a baseline.

Enumeration is exact and vectorised (:func:`best_subset`): subsets are generated in chunks (one
per first element) as ``(s, k)`` index arrays (:func:`combinations_array`); coverage is the
popcount of the OR of per-document requirement bitmasks, DCG is the sorted gain matrix times the
discount vector.

Pruning (``prune=True``, exact): documents with the same agreed-requirement set are
interchangeable for coverage, and DCG of the grade-sorted set is increasing in each grade,
so an optimal subset never needs a document ranked below the k-th of its requirement set by
(grade desc, ID asc). Keeping only those k per set leaves at most ``k·2^m`` candidates and
the same optimum and tie-break (swapping a pruned document for a kept one of equal grade
and smaller ID yields a lexicographically smaller ID tuple).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from math import comb

import numpy as np

from nclue.errors import NclueError
from nclue.select.objective import TIE_EPS
from nclue.select.tasks import id_key


def discounts(k: int) -> np.ndarray:
    """``1 / log2(rank + 1)`` for ranks 1..k."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


@dataclass(frozen=True)
class OracleResult:
    """Chosen pool positions in rank order, the subsets enumerated and the full ``C(n, k)``."""

    positions: list[int]
    coverage: int
    dcg: float
    enumerated: int
    total: int


def requirement_masks(agreed: np.ndarray) -> np.ndarray:
    """int64 bitmask per document: bit ``r`` set when requirement ``r+1`` is agreed."""
    m = agreed.shape[1]
    if m > 62:
        raise NclueError(f"{m} requirements: the oracle supports at most 62 per task")
    weights = np.left_shift(np.int64(1), np.arange(m, dtype=np.int64))
    return (agreed.astype(np.int64) * weights).sum(axis=1) if m else np.zeros(agreed.shape[0], np.int64)


def _candidates(grade: np.ndarray, masks: np.ndarray, keys: list, k: int) -> list[int]:
    groups: dict[int, list[int]] = {}
    for i, mask in enumerate(masks.tolist()):
        groups.setdefault(mask, []).append(i)
    kept: list[int] = []
    for members in groups.values():
        members.sort(key=lambda i: (-float(grade[i]), keys[i]))
        kept.extend(members[:k])
    return sorted(kept, key=lambda i: keys[i])


@lru_cache(maxsize=256)
def combinations_array(m: int, j: int) -> np.ndarray:
    """All j-subsets of ``range(m)`` as a ``(C(m, j), j)`` int32 array in lexicographic order.

    Built without a Python loop per subset: the subsets starting with ``f`` are ``f`` followed by
    ``f + 1 +`` the (j−1)-subsets of ``range(m − f − 1)``, so each table is a concatenation of
    shifted smaller tables (memoised). Written here because ``itertools.combinations`` yields
    Python tuples one at a time, the bottleneck of the enumeration.
    """
    if j == 0:
        return np.zeros((1, 0), dtype=np.int32)
    blocks = []
    for first in range(m - j + 1):
        rest = combinations_array(m - first - 1, j - 1) + np.int32(first + 1)
        blocks.append(np.hstack([np.full((rest.shape[0], 1), first, dtype=np.int32), rest]))
    return np.vstack(blocks) if blocks else np.zeros((0, j), dtype=np.int32)


def subset_chunks(n: int, k: int):
    """Lexicographic k-subsets of ``range(n)`` in chunks: one ``(s, k)`` int32 array per first element."""
    for first in range(n - k + 1):
        rest = combinations_array(n - first - 1, k - 1) + np.int32(first + 1)
        yield np.hstack([np.full((rest.shape[0], 1), first, dtype=np.int32), rest])


ChunkScore = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def best_subset(n: int, k: int, score: ChunkScore) -> tuple[tuple[int, ...], float, float, int]:
    """Exhaustive lexicographic maximum of ``(primary, secondary)`` over every k-subset of ``range(n)``.

    ``score(combo)`` maps an ``(s, k)`` chunk of subsets to two length-``s`` arrays. Values within
    :data:`~nclue.select.objective.TIE_EPS` are ties; remaining ties go to the lexicographically
    smallest subset (the first enumerated), so callers list positions in tie order (smaller ID
    first). Returns ``(subset, primary, secondary, enumerated)``. Shared by the labeled oracle
    (agreed coverage, label DCG) and the expected-coverage selector (expected coverage, expected
    DCG; :mod:`nclue.select.diversify`).
    """
    best: tuple[float, float, tuple[int, ...]] | None = None
    enumerated = 0
    for combo in subset_chunks(n, k):
        enumerated += combo.shape[0]
        primary, secondary = score(combo)
        top = float(primary.max())
        if best is not None and top < best[0] - TIE_EPS:
            continue
        at_top = primary >= top - TIE_EPS
        top2 = float(secondary[at_top].max())
        if best is not None and top <= best[0] + TIE_EPS and top2 <= best[1] + TIE_EPS:
            continue  # no better than the (lexicographically earlier) best so far
        tied = np.nonzero(at_top & (secondary >= top2 - TIE_EPS))[0]
        best = (top, top2, tuple(int(p) for p in combo[tied[0]]))
    assert best is not None
    return best[2], best[0], best[1], enumerated


def labeled_oracle(
    grade: np.ndarray, agreed: np.ndarray, ids: tuple[str, ...] | list[str], k: int, prune: bool = True
) -> OracleResult:
    """Exhaustive oracle over the pool (see module docstring); ``grade`` and ``agreed`` are
    aligned with ``ids``."""
    n = len(ids)
    if n < k:
        raise NclueError(f"pool of {n} documents is smaller than k={k}; the oracle needs at least k")
    keys = [id_key(i) for i in ids]
    masks = requirement_masks(agreed)
    cand = _candidates(grade, masks, keys, k) if prune else sorted(range(n), key=lambda i: keys[i])
    cand_arr = np.array(cand, dtype=np.int64)
    c_masks, c_grade = masks[cand_arr], grade[cand_arr].astype(np.float64)
    disc = discounts(k)

    def score(combo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cover = np.bitwise_count(np.bitwise_or.reduce(c_masks[combo], axis=1)).astype(np.float64)
        return cover, -np.sort(-c_grade[combo], axis=1) @ disc

    # candidates are in ID order, so the lexicographically smallest row is the smallest ID tuple
    subset, cover, dcg, enumerated = best_subset(len(cand), k, score)
    chosen = [int(cand_arr[p]) for p in subset]
    ranked = sorted(chosen, key=lambda i: (-float(grade[i]), keys[i]))
    return OracleResult(ranked, int(cover), dcg, enumerated, comb(n, k))
