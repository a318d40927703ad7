"""Metrics on hand-computed cases, bootstrap determinism, and table rendering."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.select.metrics import alpha_ndcg_at_k, ndcg_at_k, score_task, subtopic_recall, summarise
from nclue.select.results import PROTOCOL, BootstrapPlan, case_table, paired_intervals, results_table
from nclue.tables import Table, render


def test_seed_oracle_case_redundancy_and_coverage():
    # the seed's oracle case: agreed sets [4], [1,4], [1,2,4], [3,4], [4]; grades 3,3,3,2.5,2
    agreed = np.zeros((5, 4), dtype=bool)
    for i, reqs in enumerate([[4], [1, 4], [1, 2, 4], [3, 4], [4]]):
        agreed[i, [r - 1 for r in reqs]] = True
    grade = np.array([3, 3, 3, 2.5, 2])
    docs = np.eye(5)
    s = score_task(grade, agreed, docs, [0, 1, 2, 3, 4], 5)
    assert s.coverage == 1.0
    assert math.isclose(s.redundancy, 5 / 9)
    assert s.no_obligation == 0
    assert s.pair_cosine == 0.0
    assert s.ndcg == 1.0


def test_ndcg_uses_the_complete_pool_as_ideal():
    grade = np.array([0, 1, 3, 2, 0, 0, 2])
    disc = 1 / np.log2(np.arange(2, 7))
    got = ndcg_at_k(grade, [1, 0, 4, 5, 6], 5)
    expected = (1 * disc[0] + 2 * disc[4]) / (3 * disc[0] + 2 * disc[1] + 2 * disc[2] + 1 * disc[3])
    assert math.isclose(got, expected)
    assert ndcg_at_k(np.zeros(6), [0, 1, 2, 3, 4], 5) == 0.0


def test_lost_gained_and_zero_assignment_redundancy():
    agreed = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]], dtype=bool)
    grade = np.ones(6)
    docs = np.eye(6)
    ref = score_task(grade, agreed, docs, [0, 1, 2, 4, 5], 5).covered
    s = score_task(grade, agreed, docs, [3, 2, 4, 5, 0], 5, ref)
    assert (s.lost, s.gained) == (1, 1)
    empty = score_task(grade, agreed, docs, [2, 4, 5], 3)
    assert empty.redundancy == 0.0 and empty.no_obligation == 3 and empty.coverage == 0.0
    summary = summarise([s, s])
    assert summary["lost"] == 2 and summary["tasks"] == 2


def test_bootstrap_equals_a_direct_resampling_of_tasks():
    """The protocol's paired task bootstrap (10,000 draws, seed 129300), written out directly:
    draw task indices, average, take percentiles."""
    a = np.array([1.0, 0.5, 0.2, 0.9, 0.3, 0.4, 0.8, 0.1])
    b = np.array([0.2, 0.7, 0.1, 0.4, 0.3, 0.9, 0.1, 0.0])
    constant, shifted = paired_intervals(np.stack([np.full(8, 0.1), a - b]))
    assert (constant.estimate, constant.low, constant.high) == pytest.approx((0.1, 0.1, 0.1))
    idx = np.random.default_rng(129_300).integers(0, 8, size=(10_000, 8))
    means = (a - b)[idx].mean(axis=1)
    assert shifted.estimate == pytest.approx(float((a - b).mean()))
    assert shifted.low == pytest.approx(float(np.percentile(means, 2.5)), abs=1e-12)
    assert shifted.high == pytest.approx(float(np.percentile(means, 97.5)), abs=1e-12)
    assert paired_intervals((a - b)[None, :]) == [shifted]
    assert (PROTOCOL.draws, PROTOCOL.seed, PROTOCOL.level) == (10_000, 129_300, 0.95)


def test_another_bootstrap_plan_draws_its_own_interval():
    """A 90% plan with 2,000 draws from seed 5 is the same direct resampling with those values."""
    d = np.array([0.8, -0.2, 0.1, 0.5, 0.0, -0.5, 0.7, 0.1])
    (iv,) = paired_intervals(d[None, :], BootstrapPlan(draws=2000, seed=5, level=0.9))
    means = d[np.random.default_rng(5).integers(0, 8, size=(2000, 8))].mean(axis=1)
    assert (iv.low, iv.high) == pytest.approx(tuple(np.percentile(means, [5.0, 95.0])), abs=1e-12)
    assert iv != paired_intervals(d[None, :])[0]
    for bad, field in (
        ({"level": 1.0}, "level"),
        ({"draws": 0}, "draws"),
        ({"draws": True}, "draws"),
        ({"draws": 1e4}, "draws"),
        ({"seed": "5"}, "seed"),
        ({"level": "0.9"}, "level"),
    ):
        with pytest.raises(NclueError, match=f"BootstrapPlan: {field}"):
            BootstrapPlan(**bad)


def test_tables_render_markdown_and_latex():
    md = render(
        case_table(["3", "7"], {"3": "a_b", "7": "c"}, {"3": 2.5, "7": 0.0}, {"3": [1, 2], "7": [2]}), "markdown"
    )
    assert "| 1 / 3 | a_b | 2.5 | 1, 2 | 1, 2 |" in md
    assert "| 2 / 7 | c | 0 | 2 | None |" in md
    tex = render(Table(("A", "B"), (("x_1", "50%"),)), "latex")
    assert r"x\_1 & 50\% \\" in tex and r"\toprule" in tex
    summary = {
        "ndcg": 0.5,
        "coverage": 0.25,
        "alpha_ndcg": 0.375,
        "subtopic_recall": 0.5,
        "redundancy": 0.0,
        "pair_cosine": 0.1,
        "no_obligation": 2.0,
        "lost": 1,
        "gained": 3,
    }
    assert "| Dense | 0.5000 | 0.2500 | 0.3750 | 0.5000 | 0.0000 | 0.1000 | 2.0000 | 1 / 3 |" in render(
        results_table({"dense": summary}), "markdown"
    )


def test_case_table_shortens_path_like_id_titles():
    md = render(case_table(["pkg/doc/guide"], {"pkg/doc/guide": "pkg/doc/guide"}, {"pkg/doc/guide": 2}, {}), "markdown")
    assert "| 1 / pkg/doc/guide | guide | 2 | None | None |" in md


def test_alpha_ndcg_hand_computed_with_a_greedy_ideal():
    # subtopics: d0 {0}, d1 {0}, d2 {1}, d3 {0, 1}; alpha = 0.5, k = 3
    agreed = np.array([[1, 0], [1, 0], [0, 1], [1, 1]], dtype=bool)
    l3 = math.log2(3)
    # ranking d0, d1, d2: gains 1, 0.5 (subtopic 0 seen once), 1
    dcg = 1 + 0.5 / l3 + 1 / 2
    # greedy ideal: d3 (2), then d0 (0.5; ties to the first), then d2 (0.5)
    idcg = 2 + 0.5 / l3 + 0.5 / 2
    assert math.isclose(alpha_ndcg_at_k(agreed, [0, 1, 2], 3), dcg / idcg)
    assert math.isclose(alpha_ndcg_at_k(agreed, [3, 0, 2], 3), 1.0)
    assert alpha_ndcg_at_k(np.zeros((4, 2), dtype=bool), [0, 1, 2], 3) == 0.0


def test_alpha_zero_reduces_to_ndcg_of_subtopic_counts():
    rng = np.random.default_rng(5)
    agreed = rng.random((8, 3)) < 0.4
    counts = agreed.sum(axis=1).astype(float)
    ranking = [4, 1, 6, 0, 2]
    # with alpha = 0 every subtopic counts every time, and greedy on counts is the exact ideal
    assert math.isclose(alpha_ndcg_at_k(agreed, ranking, 5, alpha=0.0), ndcg_at_k(counts, ranking, 5))


def test_subtopic_recall_counts_only_attainable_requirements():
    agreed = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0]], dtype=bool)  # requirement 3 is unattainable
    assert subtopic_recall(agreed, [0, 2]) == 0.5
    assert subtopic_recall(agreed, [0, 1]) == 1.0
    assert score_task(np.ones(3), agreed, np.eye(3), [0, 1], 2).coverage == pytest.approx(2 / 3)
    assert subtopic_recall(np.zeros((3, 2), dtype=bool), [0, 1]) == 1.0
