"""Document macro, one-query-per-document bootstrap and connected components against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from nclue.stats import (
    component_bootstrap_ci,
    component_summary,
    connected_components,
    document_macro,
    one_query_per_doc_ci,
    one_query_per_doc_replicates,
)


def _incidence(members: list[list[int]], n_queries: int) -> sp.csr_matrix:
    rows = [d for d, qs in enumerate(members) for _ in qs]
    cols = [q for qs in members for q in qs]
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(members), n_queries))


def _random_case(seed: int) -> tuple[np.ndarray, list[list[int]]]:
    rng = np.random.default_rng(seed)
    n_queries, n_docs = int(rng.integers(3, 9)), int(rng.integers(2, 7))
    members = [
        sorted(rng.choice(n_queries, size=int(rng.integers(0, 4)), replace=False).tolist()) for _ in range(n_docs)
    ]
    return rng.integers(-1, 2, size=n_queries).astype(float), members


def test_document_macro_by_hand() -> None:
    # doc 0 holds queries 0, 1 (mean 0.5); doc 1 holds query 2 (mean -1); doc 2 holds nothing
    diff = np.array([1.0, 0.0, -1.0, 1.0])
    inc = _incidence([[0, 1], [2], []], 4)
    assert document_macro(diff, inc) == pytest.approx((0.5 - 1.0) / 2)
    assert np.isnan(document_macro(diff, _incidence([[], []], 4)))


@pytest.mark.parametrize("seed", range(5))
def test_one_query_per_doc_is_the_stated_draw(seed: int) -> None:
    diff, members = _random_case(seed)
    members = [m for m in members if m] or [[0]]
    inc = _incidence(members, len(diff))
    reps = one_query_per_doc_replicates(diff, inc, n_replicates=50, seed=seed)
    # the same draws, written as a plain loop over replicates and documents
    rng = np.random.default_rng(seed)
    docs = rng.integers(0, len(members), size=(50, len(members)))
    u = rng.random((50, len(members)))
    expected = [
        np.mean([diff[members[d][int(u[b, j] * len(members[d]))]] for j, d in enumerate(docs[b])]) for b in range(50)
    ]
    assert reps == pytest.approx(np.array(expected))


def test_one_query_per_doc_distribution_matches_enumeration() -> None:
    diff = np.array([1.0, 0.0, -1.0, 1.0, 0.0])
    members = [[0, 1], [2], [1, 3, 4]]
    inc = _incidence(members, len(diff))
    exact: dict[float, float] = {}
    for docs in itertools.product(range(3), repeat=3):
        for choice in itertools.product(*(members[d] for d in docs)):
            p = (1 / 27) * np.prod([1 / len(members[d]) for d in docs])
            value = round(float(np.mean(diff[list(choice)])), 9)
            exact[value] = exact.get(value, 0.0) + p
    values = np.array(sorted(exact))
    cdf = np.cumsum([exact[v] for v in values])
    reps = np.round(one_query_per_doc_replicates(diff, inc, n_replicates=40_000, seed=3), 9)
    empirical = np.array([(reps <= v).mean() for v in values])
    assert np.abs(empirical - cdf).max() < 0.01
    assert reps.mean() == pytest.approx(document_macro(diff, inc), abs=0.01)
    lo, hi = one_query_per_doc_ci(diff, inc, n_replicates=2000, seed=3)
    assert values[np.searchsorted(cdf, 0.025)] == pytest.approx(lo) and values[
        np.searchsorted(cdf, 0.975)
    ] == pytest.approx(hi)


def _bfs_components(members: list[list[int]], n_queries: int) -> list[set[int]]:
    neighbours: dict[int, set[int]] = {q: set() for q in range(n_queries)}
    for qs in members:
        for a in qs:
            neighbours[a] |= set(qs)
    seen, out = set(), []
    for start in range(n_queries):
        if start in seen:
            continue
        stack, comp = [start], set()
        while stack:
            q = stack.pop()
            if q not in comp:
                comp.add(q)
                stack.extend(neighbours[q] - comp)
        seen |= comp
        out.append(comp)
    return out


@pytest.mark.parametrize("seed", range(8))
def test_components_match_breadth_first_search(seed: int) -> None:
    diff, members = _random_case(seed)
    labels = connected_components(_incidence(members, len(diff)))
    found = {frozenset(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels)}
    expected = {frozenset(c) for c in _bfs_components(members, len(diff))}
    assert found == expected
    assert component_summary(_incidence(members, len(diff))) == (len(expected), max(len(c) for c in expected))


def test_component_bootstrap_matches_enumeration() -> None:
    # three components: {0, 1} (share doc 0), {2}, {3, 4} (share doc 2)
    diff = np.array([1.0, 1.0, -1.0, 0.0, 1.0])
    inc = _incidence([[0, 1], [2], [3, 4]], 5)
    comps = [[0, 1], [2], [3, 4]]
    sums = [diff[c].sum() for c in comps]
    sizes = [len(c) for c in comps]
    exact: dict[float, float] = {}
    for draw in itertools.product(range(3), repeat=3):
        value = round(sum(sums[c] for c in draw) / sum(sizes[c] for c in draw), 9)
        exact[value] = exact.get(value, 0.0) + 1 / 27
    values = np.array(sorted(exact))
    cdf = np.cumsum([exact[v] for v in values])
    lo, hi = component_bootstrap_ci(diff, inc, n_replicates=20_000, seed=5)
    assert values[np.searchsorted(cdf, 0.025)] == pytest.approx(lo) and values[
        np.searchsorted(cdf, 0.975)
    ] == pytest.approx(hi)
