"""Clue counts, distinct-page assignment (Hall matching) and the gold/partial label (``docs/labels.md#gold``).

For a query with conditions ``c_1..c_n`` and a document with evidence page sets
``P_i = P(d, c_i)``:

* clue count ``g = |{i : P_i ≠ ∅}|``;
* a *distinct-page assignment* is an injective map ``i ↦ p_i ∈ P_i``; by Hall's theorem it
  exists iff every sub-family of ``k`` sets has at least ``k`` pages in its union. We find
  one with Kuhn's augmenting-path algorithm (O(n·E)); for n ≤ 8 conditions this is
  faster and simpler than pulling in a graph library, and it returns a witness;
* *single-page solvable* (the J061 case): ``⋂_i P_i ≠ ∅``;
* ``gold`` iff ``g = n``, an assignment exists and the document is not single-page
  solvable; otherwise ``partial`` (``g ≥ 1``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def distinct_assignment(page_sets: Sequence[Collection[int]]) -> tuple[int, ...] | None:
    """An injective condition→page assignment (pages in condition order), or ``None``.

    Deterministic: conditions are matched in order, candidate pages in ascending order.
    """
    sets = [sorted(set(p)) for p in page_sets]
    if any(not s for s in sets):
        return None
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for page in sets[i]:
            if page in seen:
                continue
            seen.add(page)
            if page not in owner or augment(owner[page], seen):
                owner[page] = i
                return True
        return False

    for i in range(len(sets)):
        if not augment(i, set()):
            return None
    pages = [0] * len(sets)
    for page, i in owner.items():
        pages[i] = page
    return tuple(pages)


def clue_count(page_sets: Sequence[Collection[int]]) -> int:
    """Number of conditions with a non-empty page set."""
    return sum(1 for p in page_sets if p)


def single_page_solvable(page_sets: Sequence[Collection[int]]) -> bool:
    """True iff one page holds every condition (all sets non-empty and their intersection non-empty)."""
    if not page_sets or any(not p for p in page_sets):
        return False
    common = set(page_sets[0])
    for p in page_sets[1:]:
        common &= set(p)
    return bool(common)


def label(page_sets: Sequence[Collection[int]]) -> str | None:
    """``"gold"``, ``"partial"`` or ``None`` (grade 0) for one document (n = ``len(page_sets)``)."""
    grade = clue_count(page_sets)
    if grade == 0:
        return None
    if grade == len(page_sets) and not single_page_solvable(page_sets) and distinct_assignment(page_sets) is not None:
        return "gold"
    return "partial"
