"""The near-duplicate rule every selector obeys: a near-copy gets a slot only when it adds coverage.

``docs/coverage.md#near-duplicates``. ``groups[d]`` is the near-duplicate group of pool document
``d`` (:mod:`nclue.index.duplicates`: single linkage over word-shingle resemblance ≥ 0.10).
Walking a selector's ranking from the top, a document is **redundant** when a member of its
group ranks above it and it covers no requirement that every document above it leaves uncovered
(``P[d, r] ≥`` :data:`~nclue.select.coverage_evidence.COVER_THRESHOLD` while ``P[e, r] <`` it for every
``e`` above; without evidence a near-copy never adds coverage).

:func:`without_redundancy` runs a selector, excludes the first redundant document from the
candidates (``TaskVectors.allowed``; every normaliser still reads the complete pool) and runs the
selector again, until its ranking has no redundant document — or until excluding one more would
leave fewer than k candidates, when the ranking stands (the pool has fewer than k groups that add
anything). With every document alone in its group the selector's ranking is unchanged, so the protocol's
study methods are reproduced exactly on pools without near-duplicates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from nclue.select.coverage_evidence import COVER_THRESHOLD
from nclue.select.inputs import TaskVectors


def first_redundant(ranking: list[int], groups: np.ndarray, probs: np.ndarray | None) -> int | None:
    """Pool position of the first redundant document of ``ranking`` (module docstring), or ``None``."""
    seen: set[int] = set()
    covered = None if probs is None else np.zeros(probs.shape[1], dtype=bool)
    for d in ranking:
        group = int(groups[d])
        covers = None if probs is None else probs[d] >= COVER_THRESHOLD
        if group in seen and (covers is None or not np.any(covers & ~covered)):
            return d
        seen.add(group)
        if covers is not None:
            covered |= covers
    return None


def select_distinct(
    select: Callable[[TaskVectors, int], list[int]], tv: TaskVectors, k: int
) -> tuple[list[int], list[int]]:
    """``select(tv, k)`` with redundant near-copies excluded one at a time (module docstring);
    returns the ranking and the excluded pool positions in exclusion order."""
    ranking = select(tv, k)
    if tv.groups is None or np.unique(tv.groups).size == len(tv.ids):
        return ranking, []
    groups = np.asarray(tv.groups)
    probs = None if tv.probs is None else np.asarray(tv.probs, dtype=np.float64)
    allowed = tv.candidates.copy()
    excluded: list[int] = []
    while (bad := first_redundant(ranking, groups, probs)) is not None and allowed.sum() > k:
        allowed[bad] = False
        excluded.append(bad)
        ranking = select(dataclasses.replace(tv, allowed=allowed.copy()), k)
    return ranking, excluded


def without_redundancy(select: Callable[[TaskVectors, int], list[int]], tv: TaskVectors, k: int) -> list[int]:
    """The ranking of :func:`select_distinct`."""
    return select_distinct(select, tv, k)[0]


def redundant_slots(ranking: list[int], groups: np.ndarray, probs: np.ndarray | None) -> int:
    """How many documents of ``ranking`` are redundant near-copies (the measure the rule drives to 0)."""
    count, rest = 0, list(ranking)
    while (bad := first_redundant(rest, groups, probs)) is not None:
        count += 1
        rest.remove(bad)
    return count
