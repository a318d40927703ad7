"""Selectors that read requirement evidence: expected coverage, xQuAD, PM2, MMR, facility location.

Each maps a task's label-free inputs (:class:`~nclue.select.inputs.TaskVectors`) to k pool
positions in rank order (``docs/coverage.md#selectors``). ``P[d, r]`` is the calibrated
probability that pool document ``d`` covers requirement ``r`` (:mod:`nclue.select.coverage_evidence`),
``g(d) = Σ_r P[d, r]`` its expected number of covered requirements and ``rel(d) = g(d) / m``.
Every tie goes to the larger ``g`` where stated, then to the smaller ID
(:func:`nclue.select.tasks.id_key`). The trade-off weights are the published defaults, fixed
before any outcome was seen (``LAMBDA = 0.5``), not tuned.

* ``evidence`` — the k documents with the largest ``g`` (relevance only, no diversity; the
  ablation that separates better evidence from diversification).
* ``expected`` — expected-coverage maximisation: ``E[C(S)] = (1/m) Σ_r [1 − Π_{d∈S} (1 − P[d, r])]``
  (documents cover requirements independently), ties by expected DCG ``Σ_i g(d_(i))/log2(i+1)``
  of the set sorted by ``g``, then the smallest ID tuple. Exact over every k-subset of the
  documents that survive an exact dominance pruning (:func:`dominance_pruned`) with the labeled
  oracle's enumerator (:func:`nclue.select.oracle.best_subset`) when that is at most
  ``EXACT_MAX_SUBSETS`` subsets; otherwise lazy greedy (Minoux 1978), within ``1 − 1/e`` of the
  optimum because ``E[C]`` is monotone submodular. Ranking: ``g`` descending.
* ``xquad`` — xQuAD (Santos, Macdonald & Ounis, WWW 2010) with uniform requirement weights:
  greedily add ``argmax (1 − λ) rel(d) + λ (1/m) Σ_r P[d, r] Π_{e∈S} (1 − P[e, r])``; selection
  order is the ranking.
* ``pm2`` — PM2 (Dang & Croft, SIGIR 2012): quotas ``v_r = k/m``, seats ``s_r = 0``; each step
  takes the requirement ``r* = argmax v_r / (2 s_r + 1)`` (ties to the lower number) and the
  document maximising ``λ qt_{r*} P[d, r*] + (1 − λ) Σ_{r≠r*} qt_r P[d, r]`` with
  ``qt_r = v_r / (2 s_r + 1)``, then adds ``P[d, r] / Σ_r' P[d, r']`` to every seat.
* ``mmr`` — maximal marginal relevance (Carbonell & Goldstein, SIGIR 1998):
  ``argmax λ rel'(d) − (1 − λ) max_{e∈S} sim'(d, e)`` on commensurate scales: ``rel' = rel / max
  rel`` over the pool and ``sim'`` the document cosine min–max scaled over the pool's pairs, so
  both terms span [0, 1] (raw, a relevance near 0 met cosines near 0.45 and similarity decided).
* ``facility`` — facility location with the requirements as clients (Lin & Bilmes, ACL 2011
  form): ``F(S) = Σ_r max_{d∈S} P[d, r]``, greedy on the marginal gain; ties (and the zero gains
  once every requirement is served) to the larger ``g``.
* ``retriever`` — the pool in its retriever's score order (``pool_scores``), the k best: what
  the pool's retriever would have returned.
* ``typed`` — the pool in the order of the typed comparator, :data:`TYPED_SYSTEM` (``typed_scores``):
  SPEC's fixed historical comparator, the structure-typed retriever chosen on development labels.
* ``setcover`` (``coverage select`` only; it ignores k) — the smallest set of documents covering
  every requirement some pool document covers (``P ≥ 0.5``): exact by enumeration of sizes 1, 2,
  … (ties: larger ``Σ g``, then smaller IDs) while that is at most ``EXACT_MAX_SUBSETS`` subsets,
  else greedy set cover (Chvátal 1979: most newly covered requirements, ties larger ``g``), whose
  size is at most ``H(m) = 1 + 1/2 + … + 1/m ≤ 1 + ln m`` times the minimum.

Every selector picks among ``TaskVectors.candidates``; :mod:`nclue.select.redundancy` excludes
near-copies that add no coverage.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import combinations
from math import comb

import numpy as np

from nclue.errors import NclueError
from nclue.select.coverage_evidence import COVER_THRESHOLD
from nclue.select.inputs import TaskVectors, order
from nclue.select.objective import TIE_EPS
from nclue.select.oracle import best_subset, discounts

LAMBDA = 0.5
EXACT_MAX_SUBSETS = 200_000


def evidence_of(tv: TaskVectors, selector: str) -> np.ndarray:
    """``P`` as float64, or a one-line error saying how to supply it."""
    if tv.probs is None:
        raise NclueError(
            f"selector {selector!r} reads requirement evidence, which task {tv.task_id!r} lacks; "
            "freeze with evidence (the default) or use dense, coverage or gated"
        )
    probs = np.asarray(tv.probs, dtype=np.float64)
    if probs.shape != (len(tv.ids), tv.requirements.shape[0]):
        raise NclueError(f"task {tv.task_id!r}: evidence has shape {probs.shape}, expected (pool, requirements)")
    return np.clip(probs, 0.0, 1.0)


def pick_by(primary: np.ndarray, secondary: np.ndarray, keys: list, candidates: np.ndarray) -> int:
    """Position in ``candidates`` with the largest ``primary``; near-ties (``TIE_EPS``) to the
    largest ``secondary``, then to the smaller key."""
    tied = np.nonzero(primary >= primary.max() - TIE_EPS)[0]
    top = secondary[tied].max()
    tied = tied[secondary[tied] >= top - TIE_EPS]
    return int(min(tied, key=lambda j: keys[int(candidates[j])]))


def expected_coverage(probs: np.ndarray, subset: list[int] | np.ndarray) -> float:
    """``E[C(S)] = (1/m) Σ_r [1 − Π_{d∈S} (1 − P[d, r])]``."""
    miss = np.prod(1.0 - probs[np.asarray(subset, dtype=np.int64)], axis=0)
    return float((1.0 - miss).mean())


def select_evidence(tv: TaskVectors, k: int) -> list[int]:
    """The k documents with the largest expected number of covered requirements."""
    g = evidence_of(tv, "evidence").sum(axis=1)
    return order(g, tv.keys, np.nonzero(tv.candidates)[0])[:k]


def dominance_pruned(probs: np.ndarray, keys: list, k: int) -> list[int]:
    """Pool positions that can belong to the best expected-coverage subset, in key order.

    ``e`` dominates ``d`` when ``P[e] ≥ P[d]`` for every requirement and either some inequality
    is strict or ``e`` has the smaller ID. A document with at least k dominators is dropped:
    an optimal subset holding it leaves some dominator out, and the maximal such dominator is
    itself kept (its own dominators would all be in the subset, which has only k − 1 other
    members), so swapping it in raises expected coverage and expected DCG or keeps both and
    gives a smaller ID tuple. Exact, like the oracle's pruning; at least k documents remain.
    """
    n = probs.shape[0]
    order = np.array(sorted(range(n), key=lambda i: keys[i]), dtype=np.int64)
    ranked = probs[order]  # key order: a smaller index is a smaller ID
    geq = np.all(ranked[:, None, :] >= ranked[None, :, :], axis=2)  # geq[e, d]: P[e] >= P[d]
    strict = np.any(ranked[:, None, :] > ranked[None, :, :], axis=2)
    earlier = np.arange(n)[:, None] < np.arange(n)[None, :]
    dominates = geq & (strict | earlier)
    keep = dominates.sum(axis=0) < k
    return [int(i) for i in order[keep]]


def _expected_exact(
    probs: np.ndarray, g: np.ndarray, keys: list, k: int, prune: bool = True, kept: list[int] | None = None
) -> list[int]:
    if kept is None:
        kept = dominance_pruned(probs, keys, k) if prune else sorted(range(len(keys)), key=lambda i: keys[i])
    cand = np.array(kept, dtype=np.int64)
    keep, c_g, disc = 1.0 - probs[cand], g[cand], discounts(k)

    def score(combo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        expected = 1.0 - np.prod(keep[combo], axis=1).mean(axis=1)  # (s,): mean over r of 1 − Π(1 − P)
        # best_subset reads the tie-break only where the chunk's coverage is tied at its top
        top = expected >= expected.max() - TIE_EPS
        dcg = np.full(expected.shape, -np.inf)
        dcg[top] = -np.sort(-c_g[combo[top]], axis=1) @ disc
        return expected, dcg

    subset, _, _, _ = best_subset(len(cand), k, score)
    return [int(cand[p]) for p in subset]


def _expected_lazy(probs: np.ndarray, g: np.ndarray, keys: list, k: int) -> list[int]:
    """Lazy greedy: stale upper bounds of the marginal gain in a heap (valid by submodularity);
    an entry computed in the current round is the exact greedy choice."""
    m = probs.shape[1]
    miss = np.ones(m)
    heap = [(-float(probs[d].sum()) / m, -float(g[d]), keys[d], d, 0) for d in range(len(keys))]
    heapq.heapify(heap)
    chosen: list[int] = []
    while len(chosen) < k:
        _, neg_g, key, d, stamp = heapq.heappop(heap)
        if stamp == len(chosen):
            chosen.append(d)
            miss *= 1.0 - probs[d]
            continue
        gain = float((miss * probs[d]).sum()) / m
        heapq.heappush(heap, (-gain, neg_g, key, d, len(chosen)))
    return chosen


def select_expected(tv: TaskVectors, k: int) -> list[int]:
    """Expected-coverage maximisation (module docstring) over the candidates: exact when small,
    lazy greedy otherwise."""
    everything = evidence_of(tv, "expected")
    pos = np.nonzero(tv.candidates)[0]
    probs = everything[pos]
    g = probs.sum(axis=1)
    every_key = tv.keys
    keys = [every_key[p] for p in pos]
    kept = dominance_pruned(probs, keys, k)
    exact = comb(len(kept), k) <= EXACT_MAX_SUBSETS
    chosen = _expected_exact(probs, g, keys, k, kept=kept) if exact else _expected_lazy(probs, g, keys, k)
    return order(everything.sum(axis=1), every_key, [int(pos[c]) for c in chosen])


def select_xquad(tv: TaskVectors, k: int) -> list[int]:
    """xQuAD with uniform requirement weights and λ = :data:`LAMBDA`."""
    probs = evidence_of(tv, "xquad")
    m = probs.shape[1]
    rel = probs.mean(axis=1)
    miss = np.ones(m)
    free = tv.candidates.copy()
    keys, chosen = tv.keys, []
    for _ in range(k):
        cand = np.nonzero(free)[0]
        score = (1.0 - LAMBDA) * rel[cand] + LAMBDA * (probs[cand] * miss).sum(axis=1) / m
        d = int(cand[pick_by(score, rel[cand], keys, cand)])
        chosen.append(d)
        free[d] = False
        miss *= 1.0 - probs[d]
    return chosen


def select_pm2(tv: TaskVectors, k: int) -> list[int]:
    """PM2 with quotas ``k/m`` and λ = :data:`LAMBDA`."""
    probs = evidence_of(tv, "pm2")
    m = probs.shape[1]
    votes = np.full(m, k / m)
    seats = np.zeros(m)
    rel = probs.mean(axis=1)
    free = tv.candidates.copy()
    keys, chosen = tv.keys, []
    for _ in range(k):
        quotient = votes / (2.0 * seats + 1.0)
        r = int(np.argmax(quotient))
        cand = np.nonzero(free)[0]
        own = quotient[r] * probs[cand, r]
        score = LAMBDA * own + (1.0 - LAMBDA) * (probs[cand] @ quotient - own)
        d = int(cand[pick_by(score, rel[cand], keys, cand)])
        chosen.append(d)
        free[d] = False
        total = probs[d].sum()
        if total > 0:
            seats += probs[d] / total
    return chosen


def commensurate(rel: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MMR's two terms on one scale: relevance over its pool maximum, ``rel(d) / max_e rel(e)``, and
    document similarity min–max scaled over the pool's distinct pairs,
    ``(cos(d, e) − min) / (max − min)`` clipped to [0, 1] (both 0 when constant)."""
    top = rel.max() if rel.size else 0.0
    rel_n = rel / top if top > 0 else np.zeros_like(rel)
    d = docs.astype(np.float64)
    cos = d @ d.T
    off = cos[~np.eye(len(cos), dtype=bool)]
    low, high = (float(off.min()), float(off.max())) if off.size else (0.0, 0.0)
    sim_n = np.clip((cos - low) / (high - low), 0.0, 1.0) if high > low else np.zeros_like(cos)
    return rel_n, sim_n


def select_mmr(tv: TaskVectors, k: int) -> list[int]:
    """MMR on commensurate scales (:func:`commensurate`), λ = :data:`LAMBDA`."""
    probs = evidence_of(tv, "mmr")
    rel, sim = commensurate(probs.mean(axis=1), tv.docs)
    closest = np.zeros(len(tv.ids))
    free = tv.candidates.copy()
    keys, chosen = tv.keys, []
    for _ in range(k):
        cand = np.nonzero(free)[0]
        score = LAMBDA * rel[cand] - (1.0 - LAMBDA) * closest[cand]
        d = int(cand[pick_by(score, rel[cand], keys, cand)])
        chosen.append(d)
        free[d] = False
        closest = np.maximum(closest, sim[d])
    return chosen


def select_facility(tv: TaskVectors, k: int) -> list[int]:
    """Facility location over the requirements, greedy; zero-gain ties to the larger ``g``."""
    probs = evidence_of(tv, "facility")
    g = probs.sum(axis=1)
    served = np.zeros(probs.shape[1])
    free = tv.candidates.copy()
    keys, chosen = tv.keys, []
    for _ in range(k):
        cand = np.nonzero(free)[0]
        gain = np.maximum(probs[cand], served).sum(axis=1) - served.sum()
        d = int(cand[pick_by(gain, g[cand], keys, cand)])
        chosen.append(d)
        free[d] = False
        served = np.maximum(served, probs[d])
    return chosen


def score_order(tv: TaskVectors, scores: np.ndarray | None, k: int, missing: str) -> list[int]:
    """The k candidates with the largest ``scores`` (ties to the smaller ID), or ``missing`` as the error."""
    if scores is None:
        raise NclueError(missing)
    return order(np.asarray(scores, dtype=np.float64), tv.keys, np.nonzero(tv.candidates)[0])[:k]


def select_retriever(tv: TaskVectors, k: int) -> list[int]:
    """The pool's retriever order (``pool_scores`` descending, ties to the smaller ID)."""
    return score_order(
        tv,
        tv.pool_scores,
        k,
        f"selector 'retriever' needs the pool's retrieval scores, which task {tv.task_id!r} lacks "
        "(tasks.jsonl field 'pool_scores', written by `nclue coverage adapt --pool SYSTEM`)",
    )


TYPED_SYSTEM = "struct.decompose(hmean)"
"""The typed comparator's system: structure-typed page evidence (a section heading, not a mention),
the setting chosen on the development reader labels (``docs/structure.md``) and fixed since — a
historical comparator in the protocol's sense, never tuned on a coverage outcome."""


def select_typed(tv: TaskVectors, k: int) -> list[int]:
    """The pool in the typed comparator's score order (``typed_scores`` descending, ties to the smaller ID)."""
    return score_order(
        tv,
        tv.typed_scores,
        k,
        f"selector 'typed' needs the typed comparator's scores, which task {tv.task_id!r} lacks "
        "(tasks.jsonl field 'typed_scores', written by `nclue coverage adapt` on a collection with a structure index)",
    )


def harmonic(m: int) -> float:
    """``H(m) = Σ_{i≤m} 1/i``: the greedy set cover's approximation factor (Chvátal 1979)."""
    return float(sum(1.0 / i for i in range(1, m + 1)))


def _cover_masks(probs: np.ndarray) -> np.ndarray:
    """Per document, the bitmask of the requirements it covers (``P ≥`` the verdict threshold,
    :data:`nclue.select.coverage_evidence.COVER_THRESHOLD`)."""
    bits = (probs >= COVER_THRESHOLD).astype(np.int64)
    return bits @ (1 << np.arange(probs.shape[1], dtype=np.int64))


def _greedy_cover(masks: np.ndarray, g: np.ndarray, keys: list, target: int, cand: np.ndarray) -> list[int]:
    chosen: list[int] = []
    have = 0
    while have != target:
        new = np.array([bin(int(masks[d]) & ~have).count("1") for d in cand], dtype=np.float64)
        j = pick_by(new, g[cand], keys, cand)
        chosen.append(int(cand[j]))
        have |= int(masks[cand[j]])
        cand = np.delete(cand, j)
    return chosen


def select_setcover(tv: TaskVectors, k: int = 0) -> list[int]:
    """The smallest covering set (module docstring); ``k`` is ignored. With nothing coverable, the
    single document with the largest ``g``."""
    probs = evidence_of(tv, "setcover")
    g = probs.sum(axis=1)
    keys = tv.keys
    masks = _cover_masks(probs)
    cand = np.array(sorted(np.nonzero(tv.candidates & (masks > 0))[0], key=lambda p: keys[p]), dtype=np.int64)
    target = int(np.bitwise_or.reduce(masks[cand])) if cand.size else 0
    if target == 0:
        return order(g, keys, np.nonzero(tv.candidates)[0])[:1]
    for size in range(1, cand.size + 1):
        if comb(cand.size, size) > EXACT_MAX_SUBSETS:
            return order(g, keys, _greedy_cover(masks, g, keys, target, cand))
        best: tuple[float, tuple] | None = None
        for combo in combinations(range(cand.size), size):
            members = cand[list(combo)]
            if int(np.bitwise_or.reduce(masks[members])) != target:
                continue
            mass = float(g[members].sum())
            if best is None or mass > best[0] + TIE_EPS:
                best = (mass, tuple(int(d) for d in members))
        if best is not None:
            return order(g, keys, best[1])
    return order(g, keys, cand)


SELECTORS: dict[str, Callable[[TaskVectors, int], list[int]]] = {
    "evidence": select_evidence,
    "expected": select_expected,
    "xquad": select_xquad,
    "pm2": select_pm2,
    "mmr": select_mmr,
    "facility": select_facility,
    "retriever": select_retriever,
    "typed": select_typed,
}
EVIDENCE_SELECTORS: tuple[str, ...] = ("evidence", "expected", "xquad", "pm2", "mmr", "facility")
"""The selectors that read ``probs``."""
SET_COVER = "setcover"
"""The set-cover mode of ``nclue coverage select`` (:func:`select_setcover`): not a k-selector, so not frozen."""
