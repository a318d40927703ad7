"""Compose rare conjunctive queries from the inventory and select them (``docs/construction.md#composition``).

**Candidate generation** (seeded). Repeatedly draw a document that establishes at least
two conditions, draw ``n`` ∈ {2, 3} (probability ``p_three`` for 3), and draw ``n`` of
its conditions without replacement with weight ``1/df(c)`` (rare conditions are
preferred). Conditions of one query share no content word, compared on the first five
letters (``font encoding`` never meets ``encoding``, nor ``modifier`` ``modification``). Every distinct condition set is evaluated once.
There are ``n_queries × attempts_per_query`` draws, but a small inventory has few distinct
condition sets: after :data:`STALL` draws without a new one, generation checks whether every
set a draw can produce has been drawn and stops if so: the remaining draws could add nothing,
so the candidates are exactly those of all the draws, and once every set is drawn a larger
``n_queries`` costs no more time.

**Validity** (all must hold): ≥ 1 gold; ≥ 1 natural subset (a ``partial``);
at most ``max_golds`` golds (a *rare* conjunction); no document of the union is
single-page solvable (``single_page="partial"``: such a document is kept as a partial, the
supplement's J061 decision); every other document with ``g = n`` has a distinct-page assignment
(so that ``g = n`` ⇔ gold for every kept query). With ``label_unit="document"`` (SourceShift's
document-level labels) gold is ``g = n`` and the two page rules do not apply.

**Quality / diversity selection.** Candidates are ordered by quality
``q = −log(#gold) + mean_i log t(c_i)``, where the topicality ``t(c)`` is the share of the
documents mentioning ``c`` that establish it (fewer golds first, and conditions that
documents discuss rather than mention in passing; rarity is already bounded by the
inventory's ``max_df``), ties
broken by a seeded random key, and accepted greedily while no condition exceeds
``max_condition_reuse`` queries and no gold document exceeds ``max_gold_reuse`` queries.
An optional *gate* (embedding or LLM judge) is consulted lazily on each candidate about
to be accepted; a rejected candidate is dropped whole (seed: a mismatch removes the
complete item).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from nclue.bench.construction_params import LABEL_UNITS, SINGLE_PAGE, ComposeParams
from nclue.bench.inventory import Inventory
from nclue.bench.matching import distinct_assignment, label, single_page_solvable
from nclue.errors import NclueError
from nclue.progress import Advance


@dataclass
class Item:
    """A candidate query: condition indices, per-document evidence, labels and quality."""

    conditions: tuple[int, ...]
    docs: dict[int, tuple[tuple[int, ...], ...]]
    labels: dict[int, str]
    quality: float
    tiebreak: float = 0.0
    golds: tuple[int, ...] = field(default=())
    assignments: dict[int, tuple[int, ...]] = field(default_factory=dict)


def contested_pairs(inventory: Inventory, conditions: tuple[int, ...], union: set[int]) -> int:
    """(document, condition) pairs of the union whose absence label is contested (a mention, no establishment)."""
    if not inventory.mentions:
        return 0
    return sum(len(union & inventory.mentions[c]) for c in conditions)


def evaluate(
    inventory: Inventory,
    conditions: tuple[int, ...],
    max_golds: int,
    max_contested: int | None = None,
    single_page: str = "drop",
    docs: Collection[int] | None = None,
    label_unit: str = "page",
) -> Item | None:
    """Build the item for a condition set, or ``None`` if it violates a validity rule.

    ``single_page="partial"`` keeps a document whose conditions all meet on one page as a partial
    (the supplement's J061 decision) instead of dropping the candidate; ``docs`` restricts the
    judged documents (a reader-judged pool: the documents whose every condition was read);
    ``label_unit="document"`` labels at document level (:func:`document_labels`).
    """
    if single_page not in SINGLE_PAGE:
        raise NclueError(f"single_page {single_page!r}: choose one of {', '.join(SINGLE_PAGE)}")
    if label_unit not in LABEL_UNITS:
        raise NclueError(f"labels {label_unit!r}: choose one of {', '.join(LABEL_UNITS)}")
    union: set[int] = set()
    for c in conditions:
        union.update(inventory.pages[c])
    if docs is not None:
        union &= set(docs)
    if max_contested is not None and contested_pairs(inventory, conditions, union) > max_contested:
        return None
    if label_unit == "document":
        return document_labels(inventory, conditions, union, max_golds)
    docs: dict[int, tuple[tuple[int, ...], ...]] = {}
    labels: dict[int, str] = {}
    assignments: dict[int, tuple[int, ...]] = {}
    n = len(conditions)
    for d in sorted(union):
        sets = tuple(inventory.pages[c].get(d, ()) for c in conditions)
        one_page = single_page_solvable(sets)
        if one_page and single_page == "drop":
            return None
        lab = label(sets)
        if lab is None:
            continue
        if sum(1 for s in sets if s) == n and lab != "gold" and not one_page:
            return None
        docs[d] = sets
        labels[d] = lab
        if lab == "gold":
            witness = distinct_assignment(sets)
            assert witness is not None
            assignments[d] = witness
    return _item(inventory, conditions, docs, labels, assignments, max_golds)


def _item(
    inventory: Inventory,
    conditions: tuple[int, ...],
    docs: dict[int, tuple[tuple[int, ...], ...]],
    labels: dict[int, str],
    assignments: dict[int, tuple[int, ...]],
    max_golds: int,
) -> Item | None:
    """The item, or ``None`` without a gold, without a partial or with more than ``max_golds`` golds."""
    golds = tuple(d for d, lab in labels.items() if lab == "gold")
    if not golds or len(golds) == len(labels) or len(golds) > max_golds:
        return None
    topicality = [
        len(inventory.pages[c]) / max(1, inventory.conditions[c].mention_df, len(inventory.pages[c]))
        for c in conditions
    ]
    quality = -math.log(len(golds)) + sum(math.log(t) for t in topicality) / len(conditions)
    return Item(conditions=conditions, docs=docs, labels=labels, quality=quality, golds=golds, assignments=assignments)


def document_labels(inventory: Inventory, conditions: tuple[int, ...], union: set[int], max_golds: int) -> Item | None:
    """Document-level labels (SourceShift's): ``gold`` iff every condition is established somewhere in
    the document (``g = n``), whatever the pages; ``partial`` for ``1 ≤ g < n``. No page rule applies:
    neither the distinct-page assignment nor the single-page drop."""
    n = len(conditions)
    docs: dict[int, tuple[tuple[int, ...], ...]] = {}
    labels: dict[int, str] = {}
    for d in sorted(union):
        sets = tuple(inventory.pages[c].get(d, ()) for c in conditions)
        grade = sum(1 for s in sets if s)
        if grade:
            docs[d] = sets
            labels[d] = "gold" if grade == n else "partial"
    return _item(inventory, conditions, docs, labels, {}, max_golds)


def _stems(inventory: Inventory, c: int) -> set[str]:
    return {w[:5] for w in inventory.conditions[c].key if w != "of"}


def _share_word(inventory: Inventory, chosen: list[int], c: int) -> bool:
    """True if ``c`` shares a word (compared on its first five letters) with a chosen condition."""
    stems = _stems(inventory, c)
    return any(stems & _stems(inventory, o) for o in chosen)


STALL = 1000
"""Draws without a new condition set after which :func:`generate` checks whether all were drawn; later
checks wait at least a tenth of the sets seen, so checking costs a small share of drawing."""


def _drawable(inventory: Inventory, own: list[int], p_three: float) -> Iterator[tuple[int, ...]]:
    """Every condition set (sorted) a draw from a document establishing ``own`` (sorted) can produce.

    A draw keeps conditions sharing no word, so it yields such pairs and, when three are asked
    for (``len(own) >= 3`` and ``p_three > 0``), such triples; when three are always asked for,
    a pair only if no third condition fits beside it.
    """

    def apart(a: int, b: int) -> bool:
        return not _share_word(inventory, [a], b)

    pairs_asked = len(own) < 3 or not p_three >= 1
    for a, b in combinations(own, 2):
        if apart(a, b) and (pairs_asked or not any(apart(a, c) and apart(b, c) for c in own if c not in (a, b))):
            yield (a, b)
    if len(own) >= 3 and not p_three <= 0:
        for a, b, c in combinations(own, 3):
            if apart(a, b) and apart(a, c) and apart(b, c):
                yield (a, b, c)


def _exhausted(inventory: Inventory, by_doc: dict[int, list[int]], p_three: float, seen: set[tuple[int, ...]]) -> bool:
    """Whether every condition set a draw can produce is in ``seen`` (stops at the first one missing)."""
    return all(key in seen for own in by_doc.values() for key in _drawable(inventory, own, p_three))


def generate(inventory: Inventory, params: ComposeParams, tick: Advance = lambda n: None) -> list[Item]:
    """Seeded candidate pool (see module docstring), sorted by condition tuple."""
    rng = np.random.default_rng(params.seed)
    by_doc: dict[int, list[int]] = {}
    for c, pages in enumerate(inventory.pages):
        for d in pages:
            by_doc.setdefault(d, []).append(c)
    docs = sorted(d for d, cs in by_doc.items() if len(cs) >= 2)
    if not docs:
        return []
    df = np.array([len(p) for p in inventory.pages], dtype=float)
    seen: set[tuple[int, ...]] = set()
    items: list[Item] = []
    attempts = params.n_queries * params.attempts_per_query
    step = max(1, attempts // 100)
    quiet_from, patience = 0, STALL
    for attempt in range(attempts):
        if attempt - quiet_from >= patience:
            if _exhausted(inventory, by_doc, params.p_three, seen):
                tick(len(range(-(-attempt // step) * step, attempts, step)))
                break
            quiet_from, patience = attempt, max(STALL, len(seen) // 10)
        if attempt % step == 0:
            tick(1)
        d = docs[int(rng.integers(len(docs)))]
        own = by_doc[d]
        n = 3 if rng.random() < params.p_three and len(own) >= 3 else 2
        weights = 1.0 / df[own]
        order = rng.choice(len(own), size=len(own), replace=False, p=weights / weights.sum())
        chosen: list[int] = []
        for j in order.tolist():
            c = own[j]
            if not _share_word(inventory, chosen, c):
                chosen.append(c)
            if len(chosen) == n:
                break
        if len(chosen) < 2:
            continue
        key = tuple(sorted(chosen))
        if key in seen:
            continue
        seen.add(key)
        quiet_from = attempt
        item = evaluate(
            inventory, key, params.max_golds, params.max_contested, params.single_page, label_unit=params.labels
        )
        if item is not None:
            items.append(item)
    items.sort(key=lambda it: it.conditions)
    return items


def select(
    items: list[Item],
    params: ComposeParams,
    gate: Callable[[Item], bool] | None = None,
    tick: Advance = lambda n: None,
) -> tuple[list[Item], Counter[str]]:
    """Greedy seeded quality/diversity selection; returns the selected items and drop reasons."""
    rng = np.random.default_rng(params.seed + 1)
    keys = rng.random(len(items))
    for item, key in zip(items, keys.tolist()):
        item.tiebreak = key
    ranked = sorted(items, key=lambda it: (-round(it.quality, 9), it.tiebreak))
    cond_use: Counter[int] = Counter()
    gold_use: Counter[int] = Counter()
    chosen: list[Item] = []
    reasons: Counter[str] = Counter()
    for item in ranked:
        tick(1)
        if len(chosen) >= params.n_queries:
            break
        if any(cond_use[c] >= params.max_condition_reuse for c in item.conditions):
            reasons["condition reuse cap"] += 1
            continue
        if any(gold_use[d] >= params.max_gold_reuse for d in item.golds):
            reasons["gold document reuse cap"] += 1
            continue
        if gate is not None and not gate(item):
            reasons["rejected by judge gate"] += 1
            continue
        chosen.append(item)
        cond_use.update(item.conditions)
        gold_use.update(item.golds)
    return chosen, reasons


def select_gated(
    items: list[Item],
    params: ComposeParams,
    gate: Callable[[Item], bool],
    known: Callable[[Item], bool],
    prefetch: Callable[[list[Item]], None],
    tick: Advance = lambda n: None,
) -> tuple[list[Item], Counter[str]]:
    """:func:`select` with a batched gate: optimistic passes collect the items whose verdict is
    unknown, ``prefetch`` judges them in one batch, and the pass repeats until no verdict is
    missing; the final pass is exactly ``select(items, params, gate)``."""
    while True:
        missing: list[Item] = []

        def probe(item: Item) -> bool:
            if known(item):
                return gate(item)
            missing.append(item)  # noqa: B023 - probe is called by select() within this iteration
            return True

        select(items, params, probe)
        if not missing:
            return select(items, params, gate, tick)
        prefetch(missing)
        tick(len(missing))
