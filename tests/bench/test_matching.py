"""Hall matching, clue counts and labels equal brute force on random inventories."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nclue.bench.compose import evaluate
from nclue.bench.inventory import Condition, Inventory
from nclue.bench.matching import clue_count, distinct_assignment, label, single_page_solvable
from nclue.bench.validate import brute_force_label

page_sets = st.lists(st.sets(st.integers(1, 6), max_size=4), min_size=1, max_size=5)


def brute_assignment_exists(sets: list[set[int]]) -> bool:
    pages = sorted(set().union(*sets))
    return all(sets) and any(
        all(p[i] in sets[i] for i in range(len(sets))) for p in itertools.permutations(pages, len(sets))
    )


@settings(max_examples=400, deadline=None)
@given(page_sets)
def test_assignment_matches_brute_force(sets: list[set[int]]) -> None:
    witness = distinct_assignment(sets)
    assert (witness is not None) == brute_assignment_exists(sets)
    if witness is not None:
        assert len(set(witness)) == len(sets)
        assert all(p in s for p, s in zip(witness, sets))


@settings(max_examples=400, deadline=None)
@given(page_sets)
def test_label_and_grade_match_brute_force(sets: list[set[int]]) -> None:
    assert label(sets) == brute_force_label([sorted(s) for s in sets])
    assert clue_count(sets) == sum(1 for s in sets if s)
    assert single_page_solvable(sets) == (all(sets) and bool(set.intersection(*sets)))


def test_hand_cases() -> None:
    assert label([{1}, {2}]) == "gold"
    assert label([{1}, {1}]) == "partial"  # J061: one page holds both
    assert label([{1, 2}, {1, 2}]) == "partial"  # distinct pages exist, but page 1 holds both
    assert label([{1, 2}, {2, 3}, {1, 3}]) == "gold"  # pairwise overlaps, no common page
    assert label([{1}, {1}, {2}]) == "partial"  # Hall fails: two conditions only on page 1
    assert label([{1}, set()]) == "partial"
    assert label([set(), set()]) is None


inventories = st.lists(
    st.dictionaries(st.integers(0, 5), st.sets(st.integers(1, 5), min_size=1, max_size=3), max_size=6),
    min_size=3,
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(inventories, st.integers(2, 3))
def test_compose_evaluate_matches_brute_force(pages: list[dict[int, set[int]]], n: int) -> None:
    inv = Inventory(
        doc_ids=[f"d{i}" for i in range(6)],
        n_pages=np.full(6, 5),
        conditions=[Condition(name=f"c{i}", aliases=(f"c{i}",), key=(f"c{i}",), heading_df=1) for i in range(3)],
        pages=[{d: tuple(sorted(p)) for d, p in m.items()} for m in pages],
    )
    conds = tuple(range(n))
    item = evaluate(inv, conds, max_golds=10)
    union = sorted(set().union(*(inv.pages[c].keys() for c in conds)))
    expected = {d: brute_force_label([list(inv.pages[c].get(d, ())) for c in conds]) for d in union}
    any_single = any(single_page_solvable([inv.pages[c].get(d, ()) for c in conds]) for d in union)
    full_not_gold = any(sum(1 for c in conds if d in inv.pages[c]) == n and expected[d] != "gold" for d in union)
    golds = [d for d, v in expected.items() if v == "gold"]
    valid = bool(golds) and len(golds) < len(union) and not any_single and not full_not_gold
    assert (item is not None) == valid
    if item is not None:
        assert item.labels == expected
        assert sum(len(set(s)) > 0 for s in item.docs[golds[0]]) == n
