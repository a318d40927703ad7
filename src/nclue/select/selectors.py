"""Label-free selectors of k documents from a task's pool (``docs/coverage.md``).

Every selector maps a task's label-free inputs (:class:`~nclue.select.inputs.TaskVectors`) to k
pool positions in rank order and never sees a label. Names round-trip to text (``dense``,
``coverage``, ``gated``, and those of :mod:`nclue.select.diversify`): they are the method names in
``rankings.jsonl``, the CLI and the result tables.

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

import numpy as np

from nclue.errors import NclueError
from nclue.select import diversify
from nclue.select.inputs import TaskVectors, order
from nclue.select.objective import greedy_coverage, normalised_cosines, pick, positive_gram
from nclue.select.redundancy import without_redundancy

GATE_FACTOR = 2


def select_dense(tv: TaskVectors, k: int) -> list[int]:
    """Question-cosine order, truncated at k."""
    cosine = tv.docs.astype(np.float64) @ tv.question.astype(np.float64)
    return order(cosine, tv.keys, np.nonzero(tv.candidates)[0])[:k]


def select_coverage(tv: TaskVectors, k: int) -> list[int]:
    """The seed's fixed coverage selector (greedy on ``F``)."""
    return greedy_coverage(normalised_cosines(tv.facets, tv.docs), positive_gram(tv.docs), tv.keys, k, tv.candidates)


def select_gated(tv: TaskVectors, k: int) -> list[int]:
    """Relevance-gated coverage (module docstring, steps 1–4)."""
    ncos = normalised_cosines(tv.facets, tv.docs)
    relevance = ncos.mean(axis=0)
    keys = tv.keys
    gate = np.array(order(relevance, keys, np.nonzero(tv.candidates)[0])[: GATE_FACTOR * k], dtype=np.int64)
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
    return order(relevance, keys, chosen)


SELECTORS: dict[str, Callable[[TaskVectors, int], list[int]]] = {
    "dense": select_dense,
    "coverage": select_coverage,
    "gated": select_gated,
    **diversify.SELECTORS,
}
"""Every selector by name: the coverage protocol's three, then those of :mod:`nclue.select.diversify`."""
VECTOR_ONLY_SELECTORS: tuple[str, ...] = ("dense", "coverage", "gated")
"""The selectors that read vectors only (no requirement evidence, no retrieval scores): the protocol's three."""
READS_VECTORS: frozenset[str] = frozenset({*VECTOR_ONLY_SELECTORS, "mmr"})
"""The selectors that read the question, requirement or document vectors."""


USER_SELECTORS: dict[str, Callable[[TaskVectors, int], list[int]]] = {
    **SELECTORS,
    diversify.SET_COVER: diversify.select_setcover,
}
"""What ``nclue coverage select`` offers: every k-selector and the set-cover mode."""


def check_selectors(names: list[str] | tuple[str, ...], known: dict = SELECTORS) -> None:
    """Refuse unknown selector names with one line listing every known one."""
    unknown = [n for n in names if n not in known]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], list(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        if unknown[0] in USER_SELECTORS:
            hint = " (the set-cover mode returns a variable number of documents; use it with `nclue coverage select`)"
        raise NclueError(f"unknown selector {unknown[0]!r}{hint}; choose from {', '.join(known)}")


def run_selector(name: str, tv: TaskVectors, k: int) -> list[str]:
    """Run the selector ``name`` on one task under the near-duplicate rule
    (:func:`nclue.select.redundancy.without_redundancy`); returns k document IDs in rank order."""
    check_selectors([name])
    if len(tv.ids) < k:
        raise NclueError(f"task {tv.task_id!r}: pool of {len(tv.ids)} documents is smaller than k={k}")
    return [tv.ids[p] for p in without_redundancy(SELECTORS[name], tv, k)]
