"""The label-free inputs every selector reads, for one task (``docs/coverage.md#selectors``).

A :class:`TaskVectors` holds the pool's document IDs (pool order), the L2-normalised vectors of
the question, of each written requirement and of each pool document, and — for the selectors
that use requirement evidence — ``probs[d, r]``, the calibrated probability that pool document
``d`` covers requirement ``r`` (:mod:`nclue.select.coverage_evidence`), and ``pool_scores[d]``, the
pool's retrieval score when the pool came from a retriever; ``typed_scores[d]``, the typed
comparator's score (:data:`nclue.select.diversify.TYPED_SYSTEM`); ``groups[d]``, the near-duplicate
group of each pool document (:mod:`nclue.index.duplicates`; ``None`` = every document alone), and
``allowed``, the candidates a selector may pick (``None`` = the whole pool;
:mod:`nclue.select.redundancy` narrows it). None of these is a label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from nclue.select.tasks import id_key


@dataclass(frozen=True)
class TaskVectors:
    """Label-free inputs of one task: pool IDs (pool order), vectors, and optional evidence."""

    task_id: str
    ids: tuple[str, ...]
    question: np.ndarray
    requirements: np.ndarray
    docs: np.ndarray
    probs: np.ndarray | None = None
    pool_scores: np.ndarray | None = None
    groups: np.ndarray | None = None
    typed_scores: np.ndarray | None = None
    allowed: np.ndarray | None = None

    @property
    def facets(self) -> np.ndarray:
        """``(m+1, dim)``: the question followed by the requirements."""
        return np.vstack([self.question[None, :], self.requirements])

    @property
    def candidates(self) -> np.ndarray:
        """Boolean mask of the pool positions a selector may pick (normalisers still read the whole pool)."""
        return np.ones(len(self.ids), dtype=bool) if self.allowed is None else np.asarray(self.allowed, dtype=bool)

    @cached_property
    def keys(self) -> list[tuple[int, int, str]]:
        """Tie keys of the pool documents (:func:`nclue.select.tasks.id_key`)."""
        return [id_key(i) for i in self.ids]


def order(scores: np.ndarray, keys: Sequence, positions: Sequence[int] | np.ndarray) -> list[int]:
    """``positions`` sorted by score descending, exact ties to the smaller key."""
    return sorted((int(p) for p in positions), key=lambda p: (-float(scores[p]), keys[p]))
