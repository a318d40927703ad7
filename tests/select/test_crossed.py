"""Intervals that respect shared requirements: coverage of the true mean when tasks share
requirements (simulated with requirement effects), against the task-only bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.select.results import BootstrapPlan, crossed_intervals, paired_intervals, requirement_incidence


def test_incidence_compares_requirements_case_folded():
    incidence, distinct = requirement_incidence([["Line numbers", "footnotes"], ["line  numbers"], ["Footnotes "]])
    assert distinct == 2
    assert incidence.toarray().tolist() == [[1, 1, 0], [1, 0, 1]]


def simulate(rng: np.random.Generator, tasks: int = 60, requirements: int = 6) -> tuple[np.ndarray, list[list[str]]]:
    """Per-task differences driven by the requirement each task writes (effect sd 1, noise sd 0.3):
    the mean's real uncertainty comes from six requirement draws, not from sixty tasks."""
    written = [[f"r{rng.integers(requirements)}"] for _ in range(tasks)]
    effect = rng.normal(0.0, 1.0, size=requirements)
    diffs = np.array([effect[int(w[0][1:])] for w in written]) + rng.normal(0.0, 0.3, size=tasks)
    return diffs, written


def test_crossed_intervals_cover_the_true_mean_where_the_task_bootstrap_does_not():
    rng = np.random.default_rng(11)
    hits = {"crossed": 0, "task": 0}
    runs = 60
    for _ in range(runs):
        diffs, written = simulate(rng)
        incidence, _ = requirement_incidence(written)
        crossed = crossed_intervals(diffs[None, :], incidence, BootstrapPlan(2000, int(rng.integers(1 << 30))))[0]
        task = paired_intervals(diffs[None, :], BootstrapPlan(2000, int(rng.integers(1 << 30))))[0]
        hits["crossed"] += crossed.low <= 0.0 <= crossed.high  # the true mean of the effects is 0
        hits["task"] += task.low <= 0.0 <= task.high
    assert hits["task"] / runs < 0.6  # sixty "independent" tasks: far too narrow
    assert hits["crossed"] / runs >= 0.85


def test_point_estimate_is_the_plain_mean_and_constant_differences_have_no_width():
    incidence, _ = requirement_incidence([["a"], ["a", "b"], ["c"]])
    (iv,) = crossed_intervals(np.array([[0.25, 0.25, 0.25]]), incidence, BootstrapPlan(draws=500))
    assert iv.estimate == pytest.approx(0.25) and iv.low == pytest.approx(0.25) and iv.high == pytest.approx(0.25)
