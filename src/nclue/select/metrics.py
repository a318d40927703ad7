"""Per-task coverage metrics of a k-document selection, and their task averages.

For a ranking ``d_1..d_k`` of pool documents with mean grades ``g`` and agreed requirement
sets ``A_d`` (one task, m requirements):

* ``ndcg``: ``Σ_i g(d_i)/log2(i+1)`` divided by the same sum over the pool's k largest
  grades (linear gain; 0 when the pool has no positive grade);
* ``coverage``: ``|∪ A_d| / m`` (every written requirement is in the denominator);
* ``redundancy``: ``(Σ|A_d| − |∪ A_d|) / Σ|A_d|``, repeated agreed document–obligation
  assignments over all assignments, 0 when there are none;
* ``pair_cosine``: mean of ``max(0, d·e)`` over the C(k,2) selected pairs;
* ``no_obligation``: number of selected documents with ``A_d = ∅``;
* ``lost`` / ``gained`` against a reference ranking (dense): ``|U_ref \\ U|`` and
  ``|U \\ U_ref|`` for the covered sets ``U``, summed over tasks in tables;
* ``alpha_ndcg``: α-nDCG@k (Clarke et al., SIGIR 2008) with the requirements as subtopics and
  ``J(d, r) = 1`` when ``r`` is agreed for ``d``: gain at rank ``i`` is
  ``Σ_r J(d_i, r) (1 − α)^{c_r}`` with ``c_r`` the number of earlier documents covering ``r``,
  discount ``1/log2(i+1)``, α = 0.5; the ideal ranking is built greedily over the complete pool
  (as ``ndeval`` does; the exact ideal is NP-hard), and a pool without agreed requirements
  scores 0;
* ``subtopic_recall``: S-recall@k (Zhai, Cohen & Lafferty, SIGIR 2003) over the *attainable*
  requirements — ``|∪ A_d| / |{r : some pool document has r agreed}|`` (1 when none is
  attainable: nothing attainable is missed). With all m requirements as denominator it would
  equal ``coverage``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nclue.select.oracle import discounts

ALPHA = 0.5
METRICS: tuple[str, ...] = (
    "ndcg",
    "coverage",
    "redundancy",
    "pair_cosine",
    "no_obligation",
    "alpha_ndcg",
    "subtopic_recall",
)
SUMMED: tuple[str, ...] = ("lost", "gained")


@dataclass(frozen=True)
class TaskScore:
    """All metrics of one method on one task."""

    ndcg: float
    coverage: float
    redundancy: float
    pair_cosine: float
    no_obligation: int
    covered: frozenset[int]
    lost: int = 0
    gained: int = 0
    alpha_ndcg: float = 0.0
    subtopic_recall: float = 0.0


def ndcg_at_k(grade: np.ndarray, positions: list[int], k: int) -> float:
    """Linear-gain nDCG@k of ``positions`` with the ideal taken over the complete pool."""
    disc = discounts(k)
    gains = grade[np.asarray(positions[:k], dtype=np.int64)].astype(np.float64)
    ideal = np.sort(grade.astype(np.float64))[::-1][:k]
    idcg = float(ideal @ disc[: ideal.size])
    return float(gains @ disc[: gains.size]) / idcg if idcg > 0 else 0.0


def _alpha_gains(judged: np.ndarray, alpha: float) -> np.ndarray:
    """Per-rank α-gains of the rows of ``judged`` (ranking order): ``Σ_r J (1 − α)^{c_r}``."""
    seen = np.zeros(judged.shape[1])
    gains = np.zeros(judged.shape[0])
    for i, row in enumerate(judged.astype(np.float64)):
        gains[i] = float((row * (1.0 - alpha) ** seen).sum())
        seen += row
    return gains


def alpha_ndcg_at_k(agreed: np.ndarray, positions: list[int], k: int, alpha: float = ALPHA) -> float:
    """α-nDCG@k of ``positions`` with a greedy ideal over the complete pool (module docstring)."""
    disc = discounts(k)
    got = _alpha_gains(agreed[np.asarray(positions[:k], dtype=np.int64)], alpha) @ disc[: min(k, len(positions))]
    judged = agreed.astype(np.float64)
    seen = np.zeros(judged.shape[1])
    free = np.ones(judged.shape[0], dtype=bool)
    ideal = 0.0
    for i in range(min(k, judged.shape[0])):
        gain = judged @ ((1.0 - alpha) ** seen)
        gain[~free] = -1.0
        best = int(np.argmax(gain))
        ideal += max(gain[best], 0.0) * disc[i]
        free[best] = False
        seen += judged[best]
    return float(got) / ideal if ideal > 0 else 0.0


def subtopic_recall(agreed: np.ndarray, positions: list[int]) -> float:
    """S-recall over the requirements some pool document has agreed (1 when none has)."""
    attainable = agreed.any(axis=0)
    if not attainable.any():
        return 1.0
    covered = agreed[np.asarray(positions, dtype=np.int64)].any(axis=0)
    return float((covered & attainable).sum() / attainable.sum())


def mean_positive_pair_cosine(docs: np.ndarray, positions: list[int]) -> float:
    """Mean of ``max(0, d·e)`` over all unordered pairs of the selection (0 for < 2 docs)."""
    sel = docs[np.asarray(positions, dtype=np.int64)].astype(np.float64)
    if sel.shape[0] < 2:
        return 0.0
    gram = np.maximum(sel @ sel.T, 0.0)
    upper = np.triu_indices(sel.shape[0], 1)
    return float(gram[upper].mean())


def score_task(
    grade: np.ndarray,
    agreed: np.ndarray,
    docs: np.ndarray,
    positions: list[int],
    k: int,
    reference: frozenset[int] | None = None,
) -> TaskScore:
    """Score one ranking (pool positions) of one task; ``reference`` is dense's covered set."""
    sel = agreed[np.asarray(positions, dtype=np.int64)]
    m = agreed.shape[1]
    covered = frozenset(int(r) for r in np.nonzero(sel.any(axis=0))[0])
    assignments = int(sel.sum())
    redundancy = (assignments - len(covered)) / assignments if assignments else 0.0
    ref = covered if reference is None else reference
    return TaskScore(
        ndcg=ndcg_at_k(grade, positions, k),
        coverage=len(covered) / m,
        redundancy=redundancy,
        pair_cosine=mean_positive_pair_cosine(docs, positions),
        no_obligation=int((~sel.any(axis=1)).sum()),
        covered=covered,
        lost=len(ref - covered),
        gained=len(covered - ref),
        alpha_ndcg=alpha_ndcg_at_k(agreed, positions, k),
        subtopic_recall=subtopic_recall(agreed, positions),
    )


def summarise(scores: list[TaskScore]) -> dict[str, float]:
    """Task means of :data:`METRICS` and sums of :data:`SUMMED` (plus ``tasks``)."""
    out: dict[str, float] = {name: float(np.mean([getattr(s, name) for s in scores])) for name in METRICS}
    out.update({name: int(sum(getattr(s, name) for s in scores)) for name in SUMMED})
    out["tasks"] = len(scores)
    return out
