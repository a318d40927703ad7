"""Evidence selectors against brute force, plain greedy references and hand-computed cases."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nclue.errors import NclueError
from nclue.select import diversify
from nclue.select.diversify import expected_coverage, select_expected
from nclue.select.inputs import TaskVectors
from nclue.select.selectors import SELECTORS, run_selector
from nclue.select.tasks import id_key


def task(probs: np.ndarray, ids: list[str] | None = None, docs: np.ndarray | None = None, scores=None) -> TaskVectors:
    n, m = probs.shape
    ids = ids or [str(i) for i in range(n)]
    vectors = docs if docs is not None else np.eye(n)
    return TaskVectors(
        "t", tuple(ids), np.zeros(vectors.shape[1]), np.zeros((m, vectors.shape[1])), vectors, probs, scores
    )


def brute_expected(probs: np.ndarray, ids: list[str], k: int) -> list[int]:
    """Every k-subset: max expected coverage, then expected DCG of the g-sorted set, then smallest ID tuple."""
    g = probs.sum(axis=1)
    best = None
    for subset in itertools.combinations(range(len(ids)), k):
        cover = expected_coverage(probs, list(subset))
        gains = sorted((g[i] for i in subset), reverse=True)
        dcg = sum(x / math.log2(r + 2) for r, x in enumerate(gains))
        tie = tuple(sorted(id_key(ids[i]) for i in subset))
        if (
            best is None
            or cover > best[0] + 1e-12
            or (abs(cover - best[0]) <= 1e-12 and dcg > best[1] + 1e-12)
            or (abs(cover - best[0]) <= 1e-12 and abs(dcg - best[1]) <= 1e-12 and tie < best[2])
        ):
            best = (cover, dcg, tie, subset)
    return sorted(best[3], key=lambda i: (-g[i], id_key(ids[i])))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 100_000), st.integers(5, 10), st.integers(1, 4))
def test_expected_exact_equals_brute_force(seed, n, m):
    rng = np.random.default_rng(seed)
    probs = np.round(rng.random((n, m)), 1)  # rounded: ties are common
    ids = [str(x) for x in rng.choice(500, size=n, replace=False)]
    assert select_expected(task(probs, ids), 5) == brute_expected(probs, ids, 5)


@pytest.mark.parametrize("seed", range(10))
def test_dominance_pruning_keeps_the_exact_optimum(seed):
    rng = np.random.default_rng(seed)
    n, m = 16, 3
    probs = np.round(rng.random((n, m)) ** 2, 1)  # many dominated documents and exact ties
    probs[3] = probs[7]  # identical evidence: the smaller ID must win
    keys = [id_key(str(x)) for x in rng.choice(500, size=n, replace=False)]
    g = probs.sum(axis=1)
    kept = diversify.dominance_pruned(probs, keys, 5)
    assert 5 <= len(kept) < n
    full = diversify._expected_exact(probs, g, keys, 5, prune=False)
    assert sorted(diversify._expected_exact(probs, g, keys, 5)) == sorted(full)


def plain_greedy(probs: np.ndarray, keys: list, k: int) -> list[int]:
    """Greedy on E[C] recomputing every gain each step; ties to larger g, then smaller key."""
    g = probs.sum(axis=1)
    chosen: list[int] = []
    for _ in range(k):
        base = expected_coverage(probs, chosen) if chosen else 0.0
        options = [
            (expected_coverage(probs, chosen + [d]) - base, g[d], d) for d in range(len(keys)) if d not in chosen
        ]
        chosen.append(min(options, key=lambda o: (-o[0], -o[1], keys[o[2]]))[2])
    return chosen


@pytest.mark.parametrize("seed", range(15))
def test_lazy_greedy_equals_plain_greedy_and_is_within_the_greedy_bound(seed):
    rng = np.random.default_rng(seed)
    n, m, k = 12, 3, 5
    probs = rng.random((n, m)) ** 3
    keys = [id_key(str(i)) for i in range(n)]
    lazy = diversify._expected_lazy(probs, probs.sum(axis=1), keys, k)
    assert lazy == plain_greedy(probs, keys, k)
    exact = diversify._expected_exact(probs, probs.sum(axis=1), keys, k)
    assert expected_coverage(probs, lazy) >= (1 - 1 / math.e) * expected_coverage(probs, exact) - 1e-12
    assert expected_coverage(probs, exact) >= expected_coverage(probs, lazy) - 1e-12


def test_expected_switches_to_lazy_greedy_on_large_pools(monkeypatch):
    t = np.random.default_rng(3).random(40)
    probs = 0.9 * np.stack([t, 1 - t], axis=1)  # no document dominates another: C(40, 5) = 658,008 subsets
    assert len(diversify.dominance_pruned(probs, [id_key(str(i)) for i in range(40)], 5)) == 40
    calls = []
    monkeypatch.setattr(diversify, "_expected_exact", lambda *a: calls.append(a) or [0, 1, 2, 3, 4])
    picked = select_expected(task(probs), 5)
    assert not calls and len(set(picked)) == 5
    keys = [id_key(str(i)) for i in range(40)]
    assert sorted(picked) == sorted(plain_greedy(probs, keys, 5))


def test_expected_prefers_complementary_documents_over_redundant_strong_ones():
    # two documents cover requirement 0 well; one covers requirement 1; k = 2
    probs = np.array([[0.95, 0.0], [0.9, 0.0], [0.0, 0.6], [0.1, 0.1]])
    assert run_selector("expected", task(probs), 2) == ["0", "2"]
    assert run_selector("evidence", task(probs), 2) == ["0", "1"]  # relevance only: the redundant pair


def test_xquad_hand_computed_second_step():
    # step 1 (S empty): score = rel = mean P  -> doc 0 (0.5) beats doc 1 (0.45), doc 2 (0.4)
    # step 2: doc 1: 0.5*0.45 + 0.5*(0.9*(1-0.9) + 0.0*(1-0.1))/2 = 0.2475
    #         doc 2: 0.5*0.40 + 0.5*(0.0*0.1 + 0.8*(1-0.1))/2      = 0.38
    probs = np.array([[0.9, 0.1], [0.9, 0.0], [0.0, 0.8]])
    assert run_selector("xquad", task(probs), 2) == ["0", "2"]


def test_pm2_serves_the_requirement_with_the_highest_quotient():
    # quotas k/m = 1 each; step 1 takes requirement 0 (ties to the lower number): doc 0
    # seats after doc 0: s = (1, 0); quotient (1/3, 1) -> step 2 serves requirement 1: doc 2
    probs = np.array([[1.0, 0.0], [0.9, 0.05], [0.0, 0.7], [0.3, 0.3]])
    assert run_selector("pm2", task(probs), 2) == ["0", "2"]


def test_mmr_trades_relevance_against_similarity_to_the_selection():
    docs = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    probs = np.array([[0.9], [0.85], [0.6]])
    # step 2: doc 1: 0.5*0.85 - 0.5*1 = -0.075 ; doc 2: 0.5*0.6 - 0.5*0 = 0.3
    assert run_selector("mmr", task(probs, docs=docs), 2) == ["0", "2"]


def test_facility_location_fills_with_relevance_once_saturated():
    probs = np.array([[0.9, 0.0], [0.0, 0.8], [0.9, 0.8], [0.2, 0.2], [0.5, 0.5]])
    # step 1: gain of doc 2 = 1.7 ; step 2: nothing adds (all gains 0) -> the largest g: doc 4 (1.0)
    assert run_selector("facility", task(probs), 2) == ["2", "4"]


def test_retriever_order_and_missing_inputs_are_explained():
    probs = np.zeros((3, 1))
    assert run_selector("retriever", task(probs, scores=np.array([0.2, 0.9, 0.9])), 2) == ["1", "2"]
    typed = dataclasses.replace(task(probs), typed_scores=np.array([0.5, 0.1, 0.5]))
    assert run_selector("typed", typed, 2) == ["0", "2"]  # score order, the tie to the smaller ID
    with pytest.raises(NclueError, match="'typed' needs the typed comparator's scores"):
        run_selector("typed", task(probs), 2)
    with pytest.raises(NclueError, match="pool_scores"):
        run_selector("retriever", task(probs), 2)
    bare = TaskVectors("t", ("a", "b", "c"), np.ones(2), np.ones((1, 2)), np.eye(3, 2))
    for name in diversify.EVIDENCE_SELECTORS:
        with pytest.raises(NclueError, match="requirement evidence"):
            run_selector(name, bare, 2)


def test_every_selector_returns_k_distinct_pool_positions():
    rng = np.random.default_rng(0)
    probs = rng.random((9, 3))
    docs = rng.normal(size=(9, 4))
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    tv = TaskVectors(
        "t", tuple(str(i) for i in range(9)), docs[0], docs[1:4], docs, probs, rng.random(9), typed_scores=rng.random(9)
    )
    for name in SELECTORS:
        picked = run_selector(name, tv, 5)
        assert len(set(picked)) == 5 and set(picked) <= set(tv.ids), name


def test_unknown_selector_is_one_line_with_a_suggestion():
    with pytest.raises(NclueError, match=r"unknown selector 'expectd' \(did you mean 'expected'\?\); choose from"):
        run_selector("expectd", task(np.zeros((3, 1))), 2)
