"""Objective, normaliser and greedy against brute-force references."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nclue.select.objective import greedy_coverage, normalised_cosines, objective, positive_gram
from nclue.select.tasks import id_key


def unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    x = rng.normal(size=shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def reference_F(facets, docs, subset, k):
    """Pure-Python F(S): normaliser over the complete pool, seed formula term by term."""
    total = 0.0
    for f in facets:
        pos = [max(0.0, float(np.dot(f, d))) for d in docs]
        peak = max(pos)
        norm = [p / peak if peak > 0 else 0.0 for p in pos]
        total += max((norm[i] for i in subset), default=0.0)
    pairs = sum(max(0.0, float(np.dot(docs[a], docs[b]))) for a, b in itertools.combinations(subset, 2))
    return (total - pairs / comb(k, 2)) / len(facets)


def reference_greedy(facets, docs, ids, k):
    chosen: list[int] = []
    for _ in range(k):
        base = reference_F(facets, docs, chosen, k)
        gains = {d: reference_F(facets, docs, chosen + [d], k) - base for d in range(len(docs)) if d not in chosen}
        best = max(gains.values())
        chosen.append(min((d for d, g in gains.items() if g >= best - 1e-12), key=lambda d: id_key(ids[d])))
    return chosen


instances = st.tuples(st.integers(0, 10_000), st.integers(5, 9), st.integers(1, 4), st.integers(3, 6))


@settings(max_examples=60, deadline=None)
@given(instances)
def test_greedy_and_objective_equal_brute_force(params):
    seed, n, m, dim = params
    rng = np.random.default_rng(seed)
    facets, docs = unit(rng, (m + 1, dim)), unit(rng, (n, dim))
    ids = [str(i) for i in rng.permutation(n) + 1]
    k = 5
    ncos, gram = normalised_cosines(facets, docs), positive_gram(docs)
    for r in range(0, k + 1):
        for subset in itertools.islice(itertools.combinations(range(n), r), 20):
            assert abs(objective(ncos, gram, list(subset), k) - reference_F(facets, docs, list(subset), k)) < 1e-9
    assert greedy_coverage(ncos, gram, [id_key(i) for i in ids], k) == reference_greedy(facets, docs, ids, k)


def test_normaliser_uses_the_complete_pool_not_the_selection():
    rng = np.random.default_rng(3)
    facets, docs = unit(rng, (3, 5)), unit(rng, (8, 5))
    ncos = normalised_cosines(facets, docs)
    raw = np.maximum(facets @ docs.T, 0)
    np.testing.assert_allclose(ncos, raw / raw.max(axis=1, keepdims=True))
    # a selection that excludes a facet's best document scores it below 1 on that facet
    for f in range(3):
        best = int(np.argmax(raw[f]))
        others = [d for d in range(8) if d != best]
        assert ncos[f, others].max() < 1.0
        assert ncos[f, best] == 1.0
    # adding a document to the pool rescales every other document's normalised cosine
    bigger = np.vstack([docs, facets[0][None, :]])
    assert normalised_cosines(facets, bigger)[0, :8].max() < 1.0


def test_all_zero_facet_stays_zero():
    facets = np.array([[1.0, 0.0], [-1.0, 0.0]])
    docs = np.array([[1.0, 0.0], [0.0, 1.0]])
    ncos = normalised_cosines(facets, docs)
    assert ncos[1].tolist() == [0.0, 0.0]


def test_exact_ties_go_to_the_smaller_id_numerically():
    docs = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.6, 0.8]])
    facets = np.array([[0.6, 0.8], [1.0, 0.0]])
    ids = ["10", "9", "2", "11", "5"]
    order = greedy_coverage(normalised_cosines(facets, docs), positive_gram(docs), [id_key(i) for i in ids], 5)
    picked = [ids[p] for p in order]
    # documents 0 and 1 are identical: "9" must precede "10"
    assert picked.index("9") < picked.index("10")
    assert picked.index("2") < picked.index("11")
