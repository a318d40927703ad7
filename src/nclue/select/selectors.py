"""Label-free selectors of k documents from a task's pool (R03).

Every selector maps a task's vectors to k pool positions in rank order and never sees a
label. Names round-trip to text (``dense``, ``coverage``, ``gated``): they are the method
names in ``rankings.jsonl``, the CLI and the result tables.

* ``dense``: pool sorted by question cosine ``q·d``, descending; ties to the smaller ID.
* ``coverage``: the seed's fixed objective ``F`` (:mod:`nclue.select.objective`), greedy for
  exactly k steps, ties to the smaller ID, selection order is the ranking.
* ``gated`` (this project's selector, fixed in ``docs/coverage.md`` before any judged outcome
  was seen): relevance-gated coverage. With the same normalised cosines ``N[f, d]``
  (facet 0 = question, 1..m = requirements):

  1. relevance ``s(d) = mean_f N[f, d]`` over all m+1 facets (the seed's equal weights);
  2. gate: the ``2k`` pool documents with the largest ``s`` (ties to the smaller ID);
  3. greedy over the gate for exactly k steps with additive relevance and max-coverage gain
     ``g(d | S) = s(d) + (1/m) Σ_r max(0, N[r, d] − max_{e∈S} N[r, e])`` — no pair penalty;
  4. ranking: the selected documents sorted by ``s`` descending (ties to the smaller ID).

  Rationale: the seed's question facet saturates after the first pick, so relevance stops
  counting, and its pair penalty rewards dissimilar, irrelevant documents. Here relevance
  is summed over the selection, coverage only adds a bonus for requirements not yet
  covered, and the gate keeps diversity among relevant documents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nclue.errors import NclueError
from nclue.select.objective import greedy_coverage, normalised_cosines, pick, positive_gram
from nclue.select.tasks import id_key

GATE_FACTOR = 2


@dataclass(frozen=True)
class TaskVectors:
    """Label-free inputs of one task: pool IDs (pool order) and L2-normalised vectors."""

    task_id: str
    ids: tuple[str, ...]
    question: np.ndarray
    requirements: np.ndarray
    docs: np.ndarray

    @property
    def facets(self) -> np.ndarray:
        """``(m+1, dim)``: the question followed by the requirements."""
        return np.vstack([self.question[None, :], self.requirements])

    @property
    def keys(self) -> list[tuple[int, int, str]]:
        """Tie keys of the pool documents (:func:`nclue.select.tasks.id_key`)."""
        return [id_key(i) for i in self.ids]


def _order(scores: np.ndarray, keys: list, positions: list[int] | np.ndarray) -> list[int]:
    """``positions`` sorted by score descending, exact ties to the smaller key."""
    return sorted((int(p) for p in positions), key=lambda p: (-float(scores[p]), keys[p]))


def select_dense(tv: TaskVectors, k: int) -> list[int]:
    """Question-cosine order, truncated at k."""
    cosine = tv.docs.astype(np.float64) @ tv.question.astype(np.float64)
    return _order(cosine, tv.keys, range(len(tv.ids)))[:k]


def select_coverage(tv: TaskVectors, k: int) -> list[int]:
    """The seed's fixed coverage selector (greedy on ``F``)."""
    return greedy_coverage(normalised_cosines(tv.facets, tv.docs), positive_gram(tv.docs), tv.keys, k)


def select_gated(tv: TaskVectors, k: int) -> list[int]:
    """Relevance-gated coverage (module docstring, steps 1–4)."""
    ncos = normalised_cosines(tv.facets, tv.docs)
    relevance = ncos.mean(axis=0)
    keys = tv.keys
    gate = np.array(_order(relevance, keys, range(len(tv.ids)))[: GATE_FACTOR * k], dtype=np.int64)
    req = ncos[1:]
    m = req.shape[0]
    current = np.zeros(m)
    free = np.ones(gate.size, dtype=bool)
    chosen: list[int] = []
    for _ in range(k):
        candidates = gate[free]
        bonus = np.maximum(req[:, candidates] - current[:, None], 0.0).sum(axis=0) / m
        j = pick(relevance[candidates] + bonus, keys, candidates)
        d = int(candidates[j])
        chosen.append(d)
        free[np.nonzero(gate == d)[0][0]] = False
        current = np.maximum(current, req[:, d])
    return _order(relevance, keys, chosen)


SELECTORS: dict[str, Callable[[TaskVectors, int], list[int]]] = {
    "dense": select_dense,
    "coverage": select_coverage,
    "gated": select_gated,
}


def run_selector(name: str, tv: TaskVectors, k: int) -> list[str]:
    """Run the selector ``name`` on one task; returns k document IDs in rank order."""
    selector = SELECTORS.get(name)
    if selector is None:
        raise NclueError(f"unknown selector {name!r}; choose from {', '.join(SELECTORS)}")
    if len(tv.ids) < k:
        raise NclueError(f"task {tv.task_id!r}: pool of {len(tv.ids)} documents is smaller than k={k}")
    return [tv.ids[p] for p in selector(tv, k)]
