"""Array kernels: page→document pooling, per-document top pages, condition aggregation, SDR.

Everything here is arrays in, arrays out, with no Python loop per document.

* :func:`pool_max`, :func:`pool_ptop` — document score from page scores: the best page, or
  the mean of the document's top ``min(p, n_pages)`` pages (``ptop{p}``).
* :func:`doc_topk` — for one score vector, each document's ``k`` best positive pages.
* :func:`combine` — ``min``, ``product`` or harmonic mean ``n / Σ 1/s_i`` (0 when any
  ``s_i`` is 0) of per-condition document scores.
* :func:`distinct_assign` — SDR: the injective assignment of conditions to distinct pages
  of a document maximising the sum of page scores. Only each condition's top-``n`` pages
  can matter (if condition ``c`` sat on a page outside its top ``n``, one of those ``n``
  pages is free — the other ``n − 1`` conditions hold at most ``n − 1`` pages — and at
  least as good), so for ``n ≤ 3`` we enumerate the ``n^n`` choices of one top-``n`` slot
  per condition over a ``(documents × choices)`` array and keep the best valid one; for
  larger ``n`` we solve each document's ``n × n²`` assignment problem with SciPy's
  Hungarian solver (``scipy.optimize.linear_sum_assignment``).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

AGGREGATES = ("min", "product", "hmean", "distinct")
ENUMERATE_MAX_N = 3


def pool_max(scores: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """Best page score per document (every document has at least one page row)."""
    return (
        np.maximum.reduceat(scores, doc_offsets[:-1]) if len(scores) else np.zeros(len(doc_offsets) - 1, scores.dtype)
    )


def pool_ptop(scores: np.ndarray, page_doc: np.ndarray, doc_offsets: np.ndarray, p: int) -> np.ndarray:
    """Mean of each document's top ``min(p, n_pages)`` page scores.

    ``p`` passes of a per-document maximum (``np.maximum.reduceat``), each removing one page that
    held it, instead of sorting every page row per query: p is small (3 by default) and a sort of
    14,517 rows was most of a warm ``dense.joint(ptop3)`` query. The sum runs best page first in
    float64, the order a descending sort would add them.
    """
    sizes = np.diff(doc_offsets)
    if not len(scores):
        return np.zeros(len(sizes), dtype=np.float32)
    left = np.asarray(scores, dtype=np.float64).copy()
    if np.isnan(left).any():
        raise ValueError("pool_ptop: page scores contain NaN; a backbone's page scores must be numbers")
    starts = doc_offsets[:-1]
    rows = np.arange(len(left))
    sums = np.zeros(len(sizes))
    for i in range(min(p, int(sizes.max()))):
        has = sizes > i
        best = np.maximum.reduceat(left, starts)
        sums[has] += best[has]
        at_best = np.where(left == best[page_doc], rows, len(left))
        taken = np.minimum.reduceat(at_best, starts)[has]
        left[taken] = -np.inf
    return (sums / np.minimum(sizes, p)).astype(np.float32)


def doc_topk(scores: np.ndarray, page_doc: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each document's ``k`` best pages among those with a positive score.

    Returns ``(docs, rows, values)``: the documents having a positive page (ascending),
    ``(len(docs), k)`` page rows (``-1`` where the document has fewer positive pages) and
    their scores (0 there). Ties go to the earlier page row.
    """
    nz = np.flatnonzero(scores > 0)
    docs_of = page_doc[nz]
    if not len(nz):
        return docs_of, np.full((0, k), -1, np.int64), np.zeros((0, k), np.float32)
    change = np.empty(len(nz), dtype=bool)
    change[0] = True
    np.not_equal(docs_of[1:], docs_of[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    n_seg = len(starts)
    seg = np.cumsum(change) - 1
    vals = scores[nz].astype(np.float32, copy=True)
    rows = np.full((n_seg, k), -1, np.int64)
    out = np.zeros((n_seg, k), np.float32)
    for j in range(k):
        best = np.maximum.reduceat(vals, starts)
        live = best > 0
        hit = np.flatnonzero((vals == best[seg]) & live[seg])
        if not len(hit):
            break
        seg_hit = seg[hit]
        keep = np.empty(len(hit), dtype=bool)
        keep[0] = True
        np.not_equal(seg_hit[1:], seg_hit[:-1], out=keep[1:])
        first = hit[keep]
        s = seg[first]
        rows[s, j] = nz[first]
        out[s, j] = vals[first]
        vals[first] = 0.0
    return docs_of[starts], rows, out


def combine(per_condition: np.ndarray, how: str) -> np.ndarray:
    """Aggregate ``(docs, n)`` per-condition scores with ``min``, ``product`` or ``hmean``."""
    if how == "min":
        return per_condition.min(axis=1)
    if how == "product":
        return per_condition.prod(axis=1)
    if how == "hmean":
        n = per_condition.shape[1]
        positive = np.all(per_condition > 0, axis=1)
        safe = np.where(per_condition > 0, per_condition, 1.0)
        return np.where(positive, n / (1.0 / safe).sum(axis=1), 0.0).astype(per_condition.dtype)
    raise ValueError(f"unknown aggregate {how!r}; expected min, product or hmean")


@lru_cache(maxsize=8)
def _choices(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    combos = np.array(list(itertools.product(range(n), repeat=n)), dtype=np.int64)
    pairs = np.array(list(itertools.combinations(range(n), 2)), dtype=np.int64).reshape(-1, 2)
    return combos, pairs[:, 0], pairs[:, 1]


def distinct_assign(rows: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best injective assignment of conditions to distinct pages, per document.

    ``rows`` / ``values``: ``(docs, n, k)`` with each condition's top-``k`` pages of the
    document (``k >= n`` or all its positive pages; row ``-1`` / value 0 = none). Returns
    ``(total, assigned)``: the maximum sum of assigned values and the ``(docs, n)`` page
    row assigned to each condition (``-1`` when the condition gets no positive page).
    """
    n_docs, n, k = rows.shape
    if n_docs == 0:
        return np.zeros(0, np.float32), np.full((0, n), -1, np.int64)
    if n <= ENUMERATE_MAX_N:
        combos, left, right = _choices(n)
        combos = combos[np.all(combos < k, axis=1)] if k < n else combos
        cond = np.arange(n)
        picked_rows = rows[:, cond[None, :], combos]  # (docs, choices, n)
        picked_vals = values[:, cond[None, :], combos]
        clash = (picked_rows[:, :, left] == picked_rows[:, :, right]) & (picked_rows[:, :, left] >= 0)
        totals = np.where(clash.any(axis=2), -1.0, picked_vals.sum(axis=2, dtype=np.float64))
        best = totals.argmax(axis=1)
        take = np.arange(n_docs)
        assigned = picked_rows[take, best]
        assigned = np.where(picked_vals[take, best] > 0, assigned, -1)
        return totals[take, best].astype(np.float32), assigned
    return _hungarian(rows, values)


def _hungarian(rows: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy.optimize import linear_sum_assignment

    n_docs, n, _ = rows.shape
    total = np.zeros(n_docs, np.float32)
    assigned = np.full((n_docs, n), -1, np.int64)
    for d in range(n_docs):
        pages = np.unique(rows[d][rows[d] >= 0])
        if not len(pages):
            continue
        weight = np.zeros((n, len(pages)), np.float64)
        c_idx, s_idx = np.nonzero(rows[d] >= 0)
        weight[c_idx, np.searchsorted(pages, rows[d][c_idx, s_idx])] = values[d][c_idx, s_idx]
        r, c = linear_sum_assignment(weight, maximize=True)
        total[d] = weight[r, c].sum()
        good = weight[r, c] > 0
        assigned[d, r[good]] = pages[c[good]]
    return total, assigned
