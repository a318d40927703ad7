"""The labeled oracle equals brute-force enumeration, with and without pruning."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nclue.select.oracle import labeled_oracle
from nclue.select.tasks import id_key


def brute_force(grade, agreed, ids, k):
    best = None
    for subset in itertools.combinations(range(len(ids)), k):
        cover = int(agreed[list(subset)].any(axis=0).sum())
        gains = sorted((float(grade[i]) for i in subset), reverse=True)
        dcg = sum(g / math.log2(r + 2) for r, g in enumerate(gains))
        tie = tuple(sorted(id_key(ids[i]) for i in subset))
        key = (cover, dcg)
        if (
            best is None
            or key[0] > best[0][0]
            or (key[0] == best[0][0] and dcg > best[0][1] + 1e-12)
            or (key[0] == best[0][0] and abs(dcg - best[0][1]) <= 1e-12 and tie < best[1])
        ):
            best = (key, tie, subset)
    ranked = sorted(best[2], key=lambda i: (-float(grade[i]), id_key(ids[i])))
    return ranked, best[0]


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 100_000), st.integers(5, 11), st.integers(1, 4))
def test_oracle_equals_brute_force(seed, n, m):
    rng = np.random.default_rng(seed)
    grade = rng.integers(0, 7, size=n) / 2.0  # means of two 0-3 judges: ties are common
    agreed = rng.random((n, m)) < 0.3
    ids = [str(x) for x in rng.choice(200, size=n, replace=False)]
    expected, (cover, dcg) = brute_force(grade, agreed, ids, 5)
    for prune in (True, False):
        result = labeled_oracle(grade, agreed, ids, 5, prune=prune)
        assert result.positions == expected
        assert result.coverage == cover
        assert abs(result.dcg - dcg) < 1e-9
        assert result.total == math.comb(n, 5)


def test_pruning_enumerates_fewer_subsets_on_a_large_pool():
    rng = np.random.default_rng(1)
    n, m = 40, 2
    grade = rng.integers(0, 4, size=n).astype(float)
    agreed = rng.random((n, m)) < 0.3
    result = labeled_oracle(grade, agreed, [str(i) for i in range(n)], 5)
    assert result.enumerated <= math.comb(4 * 5, 5) < result.total


def test_combinations_array_matches_itertools():
    from nclue.select.oracle import combinations_array

    for m in range(9):
        for j in range(1, m + 1):
            expected = np.array(list(itertools.combinations(range(m), j)), dtype=np.int32)
            np.testing.assert_array_equal(combinations_array(m, j), expected)
    assert combinations_array(30, 5).shape == (142_506, 5)
