"""Aggregation kernels: SDR equals brute force; min/product/hmean/pooling on hand-computed cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from nclue.systems.aggregate import combine, distinct_assign, doc_topk, pool_max, pool_ptop


def brute_force(weights: np.ndarray) -> float:
    """Max over injective partial maps condition → page (None scores 0) of the summed weights."""
    n, m = weights.shape
    best = 0.0
    options = list(range(m)) + [None]
    for choice in itertools.product(options, repeat=n):
        used = [p for p in choice if p is not None]
        if len(used) != len(set(used)):
            continue
        best = max(best, sum(weights[c, p] for c, p in enumerate(choice) if p is not None))
    return best


def sdr_single_doc(weights: np.ndarray) -> tuple[float, np.ndarray]:
    """Run the production path (per-condition top-n pages, then assignment) on one document."""
    n, m = weights.shape
    page_doc = np.zeros(m, np.int32)
    rows = np.full((1, n, n), -1, np.int64)
    vals = np.zeros((1, n, n), np.float32)
    for c in range(n):
        docs, r, v = doc_topk(weights[c], page_doc, n)
        if len(docs):
            rows[0, c], vals[0, c] = r[0], v[0]
    total, assigned = distinct_assign(rows, vals)
    return float(total[0]), assigned[0]


SCORES = st.floats(min_value=0.0, max_value=4.0, allow_nan=False, width=32).map(
    lambda x: 0.0 if x < 0.8 else round(x, 2)
)


@st.composite
def matrices(draw, max_n: int = 3, max_m: int = 6) -> np.ndarray:  # noqa: ANN001
    n = draw(st.integers(2, max_n))
    m = draw(st.integers(1, max_m))
    return draw(arrays(np.float32, (n, m), elements=SCORES))


def _check(weights: np.ndarray) -> None:
    total, assigned = sdr_single_doc(weights)
    assert total == pytest.approx(brute_force(weights.astype(np.float64)), abs=1e-4)
    used = assigned[assigned >= 0]
    assert len(used) == len(set(used.tolist())), "conditions share a page"
    assert sum(float(weights[c, p]) for c, p in enumerate(assigned) if p >= 0) == pytest.approx(total, abs=1e-4)
    assert all(weights[c, p] > 0 for c, p in enumerate(assigned) if p >= 0)


@settings(max_examples=300, deadline=None)
@given(matrices(max_n=3))
def test_distinct_enumeration_equals_brute_force(weights: np.ndarray) -> None:
    _check(weights)


@settings(max_examples=80, deadline=None)
@given(matrices(max_n=5, max_m=6).filter(lambda w: w.shape[0] >= 4))
def test_distinct_hungarian_equals_brute_force(weights: np.ndarray) -> None:
    _check(weights)


def test_distinct_prefers_distinct_pages() -> None:
    # page 0 is best for both conditions; the assignment must split them.
    weights = np.array([[0.9, 0.5, 0.0], [1.0, 0.0, 0.2]], np.float32)
    total, assigned = sdr_single_doc(weights)
    assert total == pytest.approx(1.5)
    assert assigned.tolist() == [1, 0]
    # one page holds both conditions and nothing else: only one condition is assigned
    total, assigned = sdr_single_doc(np.array([[1.0], [1.0]], np.float32))
    assert total == pytest.approx(1.0) and sorted(assigned.tolist()) == [-1, 0]


def test_combine_hand_computed() -> None:
    per = np.array([[0.5, 1.0, 0.25], [0.2, 0.0, 1.0]], np.float32)
    assert combine(per, "min").tolist() == pytest.approx([0.25, 0.0])
    assert combine(per, "product").tolist() == pytest.approx([0.125, 0.0])
    assert combine(per, "hmean").tolist() == pytest.approx([3 / (2 + 1 + 4), 0.0])
    with pytest.raises(ValueError):
        combine(per, "mean")


def test_pooling_hand_computed() -> None:
    scores = np.array([1.0, 3.0, 2.0, 5.0, 0.0, 4.0, 1.0], np.float32)
    page_doc = np.array([0, 0, 0, 1, 2, 2, 2], np.int32)
    offsets = np.array([0, 3, 4, 7])
    assert pool_max(scores, offsets).tolist() == [3.0, 5.0, 4.0]
    assert pool_ptop(scores, page_doc, offsets, 2).tolist() == pytest.approx([2.5, 5.0, 2.5])
    assert pool_ptop(scores, page_doc, offsets, 3).tolist() == pytest.approx([2.0, 5.0, 5 / 3])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=6), st.data())
def test_doc_topk_matches_sorting(sizes: list[int], data) -> None:  # noqa: ANN001
    page_doc = np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)
    scores = data.draw(arrays(np.float32, len(page_doc), elements=SCORES))
    docs, rows, vals = doc_topk(scores, page_doc, 3)
    assert docs.tolist() == sorted({int(page_doc[i]) for i in np.flatnonzero(scores > 0)})
    for d, r, v in zip(docs, rows, vals):
        idx = np.flatnonzero((page_doc == d) & (scores > 0))
        expected = sorted(idx.tolist(), key=lambda i: (-scores[i], i))[:3]
        assert r[: len(expected)].tolist() == expected
        assert np.all(r[len(expected) :] == -1) and np.all(v[len(expected) :] == 0)
        assert v[: len(expected)].tolist() == pytest.approx(scores[expected].tolist())


@pytest.mark.parametrize("seed", range(40))
def test_pool_ptop_matches_a_per_document_sort(seed):
    """Brute force: sort each document's pages, add the best ``p`` in float64, divide by how many."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, int(rng.integers(1, 25)))
    offsets = np.r_[0, np.cumsum(sizes)]
    page_doc = np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)
    scores = (rng.integers(0, 4, offsets[-1]) / 3 if seed % 2 else rng.normal(size=offsets[-1])).astype(np.float32)
    for p in (1, 2, 3, 6):
        expected = []
        for d in range(len(sizes)):
            best = sorted((float(x) for x in scores[offsets[d] : offsets[d + 1]]), reverse=True)[:p]
            total = 0.0
            for value in best:
                total += value
            expected.append(np.float32(total / len(best)))
        assert pool_ptop(scores, page_doc, offsets, p).tolist() == expected


def test_pool_ptop_refuses_nan_scores():
    with pytest.raises(ValueError, match="NaN"):
        pool_ptop(np.array([np.nan, 1.0, 2.0], np.float32), np.zeros(3, np.int32), np.array([0, 3]), 2)
