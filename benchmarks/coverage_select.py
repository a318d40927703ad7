"""Throughput of R03 coverage selection: labeled-oracle enumeration and greedy selection.

Pools of 10, 15, 20, 25 and 30 documents (m = 4 requirements, k = 5, 384-dim random unit
vectors, mean grades in halves 0..3, agreed marks with probability 0.3; seed 129300).

* oracle — nclue's vectorised enumeration of every 5-subset (``prune=False``: all C(n,5)
  subsets, e.g. 142,506 at n = 30) and with exact pruning (``prune=True``), against the
  peer: a pure-Python ``itertools.combinations`` loop computing coverage and DCG per subset;
* greedy — nclue's vectorised greedy on F against the peer: a Python loop recomputing
  F(S ∪ {d}) − F(S) from the normalised cosine matrix for every candidate.

Run: ``.venv/bin/python benchmarks/coverage_select.py``. Prints one line per pool size with times
(best of 3) and the speed ratios peer / nclue.
"""

from __future__ import annotations

import itertools
import math
import time
from math import comb

import numpy as np

from nclue.select.objective import greedy_coverage, normalised_cosines, positive_gram
from nclue.select.oracle import labeled_oracle
from nclue.select.tasks import id_key

K, M, DIM, SEED = 5, 4, 384, 129_300


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def python_oracle(grade: np.ndarray, agreed: np.ndarray, k: int) -> tuple[int, float]:
    masks = [int(sum(1 << r for r in np.nonzero(row)[0])) for row in agreed]
    g = grade.tolist()
    disc = [1 / math.log2(r + 2) for r in range(k)]
    best = (-1, -1.0)
    for subset in itertools.combinations(range(len(g)), k):
        mask = 0
        for i in subset:
            mask |= masks[i]
        gains = sorted((g[i] for i in subset), reverse=True)
        key = (bin(mask).count("1"), sum(x * d for x, d in zip(gains, disc)))
        if key > best:
            best = key
    return best


def python_greedy(ncos: np.ndarray, gram: np.ndarray, keys: list, k: int) -> list[int]:
    rows, g = ncos.tolist(), gram.tolist()
    n, f = len(rows[0]), len(rows)

    def F(S: list[int]) -> float:
        cover = sum(max((rows[a][d] for d in S), default=0.0) for a in range(f))
        pairs = sum(g[a][b] for a, b in itertools.combinations(S, 2))
        return (cover - pairs / comb(k, 2)) / f

    chosen: list[int] = []
    for _ in range(k):
        base = F(chosen)
        gains = {d: F(chosen + [d]) - base for d in range(n) if d not in chosen}
        top = max(gains.values())
        chosen.append(min((d for d, v in gains.items() if v >= top - 1e-12), key=lambda d: keys[d]))
    return chosen


def main() -> None:
    rng = np.random.default_rng(SEED)
    print(f"R03 selection throughput (k={K}, m={M}, dim={DIM}); times are best of 3 runs")
    print(
        f"{'n':>3} {'C(n,5)':>8} | {'oracle py':>10} {'vectorised':>10} {'pruned':>8} {'ratio':>7} {'ratio(pr)':>9}"
        f" | {'greedy py':>9} {'nclue':>8} {'ratio':>6}"
    )
    for n in (10, 15, 20, 25, 30):
        grade = rng.integers(0, 7, size=n) / 2.0
        agreed = rng.random((n, M)) < 0.3
        ids = [str(i) for i in range(n)]
        t_py = best_of(lambda: python_oracle(grade, agreed, K), repeat=1 if n >= 25 else 3)
        t_vec = best_of(lambda: labeled_oracle(grade, agreed, ids, K, prune=False))
        t_pr = best_of(lambda: labeled_oracle(grade, agreed, ids, K, prune=True))
        full = labeled_oracle(grade, agreed, ids, K, prune=False)
        assert (full.coverage, round(full.dcg, 9)) == (lambda b: (b[0], round(b[1], 9)))(
            python_oracle(grade, agreed, K)
        )
        facets = rng.normal(size=(M + 1, DIM))
        facets /= np.linalg.norm(facets, axis=1, keepdims=True)
        docs = rng.normal(size=(n, DIM))
        docs /= np.linalg.norm(docs, axis=1, keepdims=True)
        keys = [id_key(i) for i in ids]
        ncos, gram = normalised_cosines(facets, docs), positive_gram(docs)
        assert greedy_coverage(ncos, gram, keys, K) == python_greedy(ncos, gram, keys, K)
        g_py = best_of(lambda: python_greedy(ncos, gram, keys, K))
        g_np = best_of(lambda: greedy_coverage(ncos, gram, keys, K))
        print(
            f"{n:>3} {comb(n, K):>8,} | {t_py:>9.4f}s {t_vec:>9.4f}s {t_pr:>7.4f}s {t_py / t_vec:>6.1f}x {t_py / t_pr:>8.1f}x"
            f" | {g_py * 1e3:>7.2f}ms {g_np * 1e3:>6.3f}ms {g_py / g_np:>5.1f}x"
        )


if __name__ == "__main__":
    main()
