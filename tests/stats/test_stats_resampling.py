"""Bootstrap, randomization, Holm and max-|T|: hand cases, exact enumeration, determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nclue.stats import (
    bootstrap_ci,
    bootstrap_replicates,
    cluster_weights,
    holm,
    max_t,
    paired_randomization,
    sign_flips,
)
from nclue.stats.correlation import spearman_matrix


def test_cluster_weights_draw_every_cluster_count_with_replacement():
    w = cluster_weights(7, 500, seed=1)
    assert w.shape == (500, 7)
    assert (w.sum(axis=1) == 7).all()
    assert np.array_equal(w, cluster_weights(7, 500, seed=1))
    assert not np.array_equal(w, cluster_weights(7, 500, seed=2))
    assert abs(w.mean() - 1.0) < 0.05


def test_family_bootstrap_equals_explicit_resampling():
    rng = np.random.default_rng(0)
    values = rng.random((3, 12))
    families = np.array([0, 0, 0, 1, 2, 2, 3, 3, 3, 3, 4, 5])
    reps = bootstrap_replicates(values, families, n_replicates=50, seed=9)
    weights = cluster_weights(6, 50, seed=9)
    for b in range(50):
        chosen = np.concatenate([np.repeat(np.flatnonzero(families == f), int(weights[b, f])) for f in range(6)])
        assert np.allclose(reps[:, b], values[:, chosen].mean(axis=1))


def test_bootstrap_ci_properties():
    constant = np.full((1, 30), 0.4)
    assert np.allclose(bootstrap_ci(constant), 0.4)
    rng = np.random.default_rng(1)
    values = (rng.random(400) < 0.3).astype(float)
    duplicated = np.repeat(values[:100], 4)
    fam = np.repeat(np.arange(100), 4)
    q_lo, q_hi = bootstrap_ci(duplicated, None, 1000, 11)[0]
    f_lo, f_hi = bootstrap_ci(duplicated, fam, 1000, 11)[0]
    assert f_hi - f_lo > 1.5 * (q_hi - q_lo)  # exact duplicates are not independent evidence
    assert q_lo < duplicated.mean() < q_hi
    assert np.array_equal(bootstrap_ci(values, None, 200, 5), bootstrap_ci(values, None, 200, 5))


def test_sign_flips_are_fair_and_seeded():
    s = sign_flips(13, 4000, seed=4)
    assert s.shape == (4000, 13) and set(np.unique(s)) == {-1.0, 1.0}
    assert abs(s.mean()) < 0.02
    assert np.array_equal(s, sign_flips(13, 4000, seed=4))


def _exact_p(units: np.ndarray) -> float:
    obs = abs(units.sum())
    hits = sum(abs(np.dot(signs, units)) >= obs - 1e-12 for signs in itertools.product([-1, 1], repeat=len(units)))
    return hits / 2 ** len(units)


def test_randomization_p_matches_exact_enumeration():
    d = np.array([1, 1, 0, 1, -1, 1, 1, 0, 1, 1, 0, 1], dtype=float)
    p = paired_randomization(d, None, 20000, 11)[0]
    assert abs(p - _exact_p(d)) < 0.01
    fam = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5])
    units = np.bincount(fam, weights=d)
    p_fam = paired_randomization(d, fam, 20000, 11)[0]
    assert abs(p_fam - _exact_p(units)) < 0.01
    assert p_fam > p  # fewer, larger units: less evidence


def test_randomization_edge_cases_and_determinism():
    assert paired_randomization(np.zeros(50), None, 999, 1)[0] == 1.0
    assert paired_randomization(np.ones(200), None, 999, 1)[0] == pytest.approx(1 / 1000)
    d = np.random.default_rng(2).normal(0.1, 1, size=(3, 80))
    assert np.array_equal(paired_randomization(d, None, 2000, 7), paired_randomization(d, None, 2000, 7))
    singleton = paired_randomization(d, np.arange(80), 2000, 7)
    assert np.array_equal(singleton, paired_randomization(d, None, 2000, 7))


def test_holm_hand_case():
    assert np.allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    assert np.allclose(holm([0.5, 0.9]), [1.0, 1.0])
    assert holm([]).size == 0


def test_max_t_single_endpoint_equals_randomization_and_adjusts_upward():
    rng = np.random.default_rng(3)
    d = rng.normal(0.15, 1, size=(1, 60))
    fam = np.repeat(np.arange(20), 3)
    _, p = max_t(d, fam, 3000, 5)
    assert p[0] == pytest.approx(paired_randomization(d, fam, 3000, 5)[0])
    block = np.vstack([d, d * 10 + rng.normal(0, 0.5, size=60), rng.normal(0, 1, size=60), np.zeros(60)])
    t, adj = max_t(block, fam, 3000, 5)
    raw = paired_randomization(block, fam, 3000, 5)
    assert (adj >= raw - 1e-12).all()
    assert t[3] == 0.0 and adj[3] == 1.0
    assert np.array_equal(adj, max_t(block, fam, 3000, 5)[1])


def test_spearman_matrix_matches_scipy():
    from scipy.stats import spearmanr

    a, b = np.array([3.0, 1.0, 2.0, 5.0]), np.array([30.0, 20.0, 10.0, 50.0])
    m = spearman_matrix({"a": a, "b": b, "flat": np.ones(4)})
    assert m["a"]["b"] == pytest.approx(spearmanr(a, b).statistic)
    assert m["a"]["a"] == pytest.approx(1.0)
    assert np.isnan(m["a"]["flat"])
