"""Promotion bounds against brute force; shared-document checks against direct loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from nclue.stats import crossed_bootstrap, crossed_weights, leave_one_doc_out, promotion_bound, remove_top_degree


def _success(labels: list[int]) -> bool:
    judged = [lab for lab in labels if lab]
    return bool(judged) and judged[0] == 2


def _first(ranking: list[int], labels: dict[int, int]) -> int:
    return next((d for d in ranking if labels.get(d, 0)), -1)


def _brute(base: list[list[int]], var: list[list[int]], labels: list[dict[int, int]], k: int) -> float:
    total = 0
    for b, v, lab in zip(base, var, labels):
        candidates = sorted({d for d in b + v if lab.get(d) == 1})
        best = None
        for size in range(0, k + 1):
            for promoted in itertools.combinations(candidates, size):
                new = {d: (2 if d in promoted else g) for d, g in lab.items()}
                delta = int(_success([new.get(d, 0) for d in v])) - int(_success([new.get(d, 0) for d in b]))
                best = delta if best is None else min(best, delta)
        total += best
    return total / len(base)


@pytest.mark.parametrize("seed", range(6))
def test_promotion_bound_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    base, var, labels = [], [], []
    for _ in range(40):
        lab = {d: int(rng.choice([0, 1, 1, 2])) for d in range(12)}
        labels.append(lab)
        base.append(rng.choice(12, size=int(rng.integers(0, 6)), replace=False).tolist())
        var.append(rng.choice(12, size=int(rng.integers(0, 6)), replace=False).tolist())
    arrays = [np.array([_success([lab.get(d, 0) for d in r]) for r, lab in zip(runs, labels)]) for runs in (base, var)]
    firsts = [np.array([_first(r, lab) for r, lab in zip(runs, labels)]) for runs in (base, var)]
    for k in (0, 1, 2, 3):
        got = promotion_bound(arrays[0], firsts[0], arrays[1], firsts[1], k)
        assert got == pytest.approx(_brute(base, var, labels, k)), k


def _incidence(members: list[list[int]], n_docs: int) -> sp.csr_matrix:
    rows = [d for ds in members for d in ds]
    cols = [q for q, ds in enumerate(members) for _ in ds]
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_docs, len(members)))


def test_leave_one_doc_out_and_remove_top_degree_match_loops():
    rng = np.random.default_rng(4)
    members = [rng.choice(15, size=int(rng.integers(1, 4)), replace=False).tolist() for _ in range(50)]
    diff = rng.choice([-1.0, 0.0, 1.0], size=50)
    inc = _incidence(members, 16)  # doc 15 belongs to no query
    expected = []
    for d in range(15):
        keep = [q for q, ds in enumerate(members) if d not in ds]
        if keep:
            expected.append(diff[keep].mean())
    lo, hi = leave_one_doc_out(diff, inc)
    assert lo == pytest.approx(min(expected)) and hi == pytest.approx(max(expected))
    doc_ids = [f"d{i:02d}" for i in range(16)]
    degree = {d: sum(d in ds for ds in members) for d in range(16)}
    top = sorted((d for d in degree if degree[d]), key=lambda d: (-degree[d], doc_ids[d]))[:3]
    keep = [q for q, ds in enumerate(members) if not set(ds) & set(top)]
    value, n = remove_top_degree(diff, inc, doc_ids, 3)
    assert n == len(keep) and value == pytest.approx(diff[keep].mean())


def test_crossed_weights_follow_the_spec_formula():
    members = [[0, 2], [1], [], [2]]
    inc = _incidence(members, 4)  # doc 3 belongs to no query: it gets no weight draw
    rng = np.random.default_rng(8)
    w_query = rng.poisson(1.0, size=(4, 50))
    u_doc = rng.poisson(1.0, size=(3, 50))  # docs 0, 1, 2
    product = crossed_weights(inc, "product", 50, 8)
    membership = crossed_weights(inc, "membership", 50, 8)
    for q, docs in enumerate(members):
        expected_p = w_query[q] * (np.prod(u_doc[docs], axis=0) if docs else 1)
        expected_m = w_query[q] * (np.sum(u_doc[docs], axis=0) if docs else 1)
        assert np.allclose(product[q], expected_p) and np.allclose(membership[q], expected_m)


def test_crossed_bootstrap_product_and_membership():
    rng = np.random.default_rng(5)
    diff = rng.choice([-1.0, 0.0, 1.0], size=60)
    single = _incidence([[q % 20] for q in range(60)], 20)
    (prod,) = crossed_bootstrap(diff, single, "product", 300, 3)
    (memb,) = crossed_bootstrap(diff, single, "membership", 300, 3)
    assert (prod.lo, prod.hi) == pytest.approx((memb.lo, memb.hi))  # one document per query: the rules coincide
    assert prod.lo <= diff.mean() <= prod.hi
    assert [prod] == crossed_bootstrap(diff, single, "product", 300, 3)
    stacked = crossed_bootstrap(np.vstack([diff, -diff]), single, "product", 300, 3)
    assert stacked[0] == prod and stacked[1].lo == pytest.approx(-prod.hi)
    many = _incidence([list(range(40)) for _ in range(60)], 40)
    (degenerate,) = crossed_bootstrap(diff, many, "product", 300, 3)
    assert degenerate.valid_replicates < 5  # a product of 40 Poisson(1) weights is almost surely 0
    assert crossed_bootstrap(diff, many, "membership", 300, 3)[0].valid_replicates == 300
    (no_docs,) = crossed_bootstrap(diff, _incidence([[] for _ in range(60)], 3), "product", 200, 3)
    assert no_docs.valid_replicates == 200  # queries without memberships keep their query weight
