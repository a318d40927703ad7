"""Reciprocal-rank fusion: hand-computed case and agreement with ranx's ``rrf``."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.systems.fusion import rrf_fuse


def test_rrf_hand_computed() -> None:
    fused = rrf_fuse([["a", "b", "c"], ["b", "d"]], k=60)
    scores = dict(fused)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["d"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63)
    # a and b... order: b (two lists), then a and d... a (1/61) before d (1/62), c last
    assert [d for d, _ in fused] == ["b", "a", "d", "c"]


def test_rrf_ties_keep_first_appearance() -> None:
    fused = rrf_fuse([["x", "y"], ["y", "x"]], k=60)
    assert [d for d, _ in fused] == ["x", "y"]


def test_rrf_equals_ranx() -> None:
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(200)]
    runs = []
    for _ in range(3):
        run = {}
        for q in range(20):
            picked = rng.choice(len(docs), size=100, replace=False)
            scores = np.sort(rng.random(100))[::-1] + 1.0
            run[f"q{q}"] = {docs[i]: float(s) for i, s in zip(picked, scores)}
        runs.append(run)
    fused_ranx = ranx.fuse([ranx.Run(r) for r in runs], method="rrf", norm=None, params={"k": 60}).to_dict()
    for q in runs[0]:
        ours = rrf_fuse([sorted(r[q], key=lambda d: -r[q][d]) for r in runs], k=60)
        theirs = fused_ranx[q]
        assert {d for d, _ in ours} == set(theirs)
        for d, s in ours:
            assert s == pytest.approx(theirs[d], rel=1e-9)
        ours_order = [d for d, _ in ours]
        theirs_order = sorted(theirs, key=lambda d: (-theirs[d], ours_order.index(d)))
        assert ours_order == theirs_order
