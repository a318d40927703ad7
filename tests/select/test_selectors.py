"""Dense, coverage and gated selectors on hand-made and random instances."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.select.objective import normalised_cosines
from nclue.select.selectors import TaskVectors, run_selector, select_coverage, select_dense, select_gated


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def random_task(seed: int, n: int = 14, m: int = 3, dim: int = 8) -> TaskVectors:
    rng = np.random.default_rng(seed)
    ids = tuple(str(i) for i in rng.choice(1000, size=n, replace=False))
    return TaskVectors(
        "t", ids, unit(rng.normal(size=dim)), unit(rng.normal(size=(m, dim))), unit(rng.normal(size=(n, dim)))
    )


def test_dense_is_question_cosine_order_with_numeric_id_ties():
    q = np.array([1.0, 0.0])
    docs = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.6, 0.8], [0.8, 0.6], [0.8, 0.6]])
    tv = TaskVectors("t", ("7", "10", "9", "3", "12", "2"), q, np.array([[0.0, 1.0]]), docs)
    assert run_selector("dense", tv, 5) == ["9", "10", "2", "12", "3"]


@pytest.mark.parametrize("seed", range(20))
def test_gated_selects_inside_the_gate_and_ranks_by_relevance(seed):
    tv = random_task(seed)
    relevance = normalised_cosines(tv.facets, tv.docs).mean(axis=0)
    gate = set(np.argsort(-relevance, kind="stable")[:10].tolist())
    picked = select_gated(tv, 5)
    assert len(set(picked)) == 5 and set(picked) <= gate
    assert all(relevance[a] >= relevance[b] for a, b in zip(picked, picked[1:]))


def test_gated_prefers_a_relevant_document_covering_a_missing_requirement():
    # requirement 1 along x, requirement 2 along y; question in between.
    q = unit(np.array([1.0, 1.0, 0.0]))
    reqs = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    docs = unit(
        np.array(
            [
                [1.0, 0.05, 0.2],
                [1.0, 0.1, 0.2],
                [1.0, 0.0, 0.25],
                [1.0, 0.02, 0.2],
                [1.0, 0.04, 0.2],  # all requirement 1
                [0.3, 1.0, 0.2],  # the only requirement-2 document, still related to the question
                [0.0, 0.0, 1.0],  # irrelevant
            ]
        )
    )
    tv = TaskVectors("t", tuple(str(i) for i in range(7)), q, reqs, docs)
    assert "5" in run_selector("gated", tv, 5)
    assert "6" not in run_selector("gated", tv, 5)


def test_coverage_and_dense_are_deterministic_and_distinct():
    tv = random_task(4)
    assert select_coverage(tv, 5) == select_coverage(tv, 5)
    assert len(set(select_dense(tv, 5))) == 5


def test_unknown_selector_and_small_pool_are_refused():
    tv = random_task(1, n=4)
    with pytest.raises(NclueError, match="unknown selector"):
        run_selector("greedy", tv, 3)
    with pytest.raises(NclueError, match="smaller than k=5"):
        run_selector("dense", tv, 5)
