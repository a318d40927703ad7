"""Privileged controls and simple baselines, written as runs (``docs/construction.md#controls``; the oracles are never
ranked, the baselines are ranked as BL unless the matrix spec keeps them apart).

* ``oracle.surface_and`` — documents in which the inventory establishes every condition
  under any alias (the construction's own facts: must score n-Clue 100);
* ``oracle.canonical_and`` — the same, counting only evidence pages on which the
  condition's canonical name itself occurs (what alias grouping adds);
* ``oracle.single_page_and`` — documents with one page that establishes every condition
  (the floor: stored gold evidence is cross-page, so it must score 0);
* ``oracle.surface_form_count`` — the gold-defining fact-count oracle (the paper's
  ``surface_form_count``): every document of the query's union, ranked by its label rule
  (:func:`nclue.bench.matching.label`) — golds first, then partial documents by clue count —
  with score ``grade + 0.5·[gold]``, ties by ``doc_id``, top 100 (the ideal graded ranking:
  must score n-Clue 100, since every gold precedes every partial document);
* ``baseline.random`` — a seeded random permutation of the corpus per query (depth 100);
* ``baseline.frequency_prior`` — one query-independent ranking by how many inventory
  conditions a document establishes (depth 100).

Oracles rank matching documents by ``doc_id`` with score = number of conditions and carry
``pages``/``evidence`` (page-aware). Their scores are computed by the scorer
(:func:`nclue.bench.verify.control_scores`) to assert the invariants at build and verify time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nclue.bench.excerpts import mentions
from nclue.bench.inventory import Inventory
from nclue.bench.matching import clue_count, distinct_assignment, label, single_page_solvable
from nclue.corpus.store import PageStore

CONTROL_NAMES = (
    "oracle.surface_and",
    "oracle.canonical_and",
    "oracle.single_page_and",
    "oracle.surface_form_count",
    "baseline.random",
    "baseline.frequency_prior",
)
DEPTH = 100


def _oracle_entry(doc_id: str, names: Sequence[str], sets: Sequence[Sequence[int]]) -> dict[str, Any]:
    witness = distinct_assignment(sets) or tuple(sorted(set.intersection(*map(set, sets)))[:1])
    return {
        "doc_id": doc_id,
        "score": float(len(names)),
        "pages": [[int(p), 1.0] for p in sorted(set(witness))],
        "evidence": {name: [int(p) for p in s] for name, s in zip(names, sets)},
    }


def _count_entry(doc_id: str, names: Sequence[str], sets: Sequence[Sequence[int]]) -> dict[str, Any]:
    """One ``oracle.surface_form_count`` row: score ``grade + 0.5·[gold]``, evidence per established condition."""
    gold = label(sets) == "gold"
    witness = distinct_assignment(sets) if gold else ()
    return {
        "doc_id": doc_id,
        "score": clue_count(sets) + (0.5 if gold else 0.0),
        "pages": [[int(p), 1.0] for p in sorted(set(witness or ()))],
        "evidence": {name: [int(p) for p in s] for name, s in zip(names, sets) if s},
    }


def build_controls(
    inventory: Inventory,
    store: PageStore,
    queries: list[tuple[str, tuple[int, ...]]],
    seed: int,
) -> dict[str, list[dict[str, Any]]]:
    """Rows (``{"qid", "docs": [...]}``) of every control run, in query order."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in CONTROL_NAMES}
    degree = np.zeros(len(inventory.doc_ids), dtype=np.int64)
    for pages in inventory.pages:
        for d in pages:
            degree[d] += 1
    prior_order = sorted(range(len(inventory.doc_ids)), key=lambda d: (-int(degree[d]), inventory.doc_ids[d]))[:DEPTH]
    prior = [{"doc_id": inventory.doc_ids[d], "score": float(degree[d])} for d in prior_order]
    canonical_cache: dict[tuple[int, int, int], bool] = {}
    for index, (qid, conds) in enumerate(queries):
        names = [inventory.conditions[c].name for c in conds]
        union = sorted(set().union(*(inventory.pages[c].keys() for c in conds)))
        surface, canonical, single, counted = [], [], [], []
        for d in union:
            sets = [inventory.pages[c].get(d, ()) for c in conds]
            counted.append(_count_entry(inventory.doc_ids[d], names, sets))
            if not all(sets):
                continue
            doc_id = inventory.doc_ids[d]
            surface.append(_oracle_entry(doc_id, names, sets))
            if single_page_solvable(sets):
                single.append(_oracle_entry(doc_id, names, sets))
            canon_sets = []
            for c, s in zip(conds, sets):
                kept = []
                for p in s:
                    key = (c, d, p)
                    if key not in canonical_cache:
                        canonical_cache[key] = mentions(store.page_text(doc_id, p), (inventory.conditions[c].name,))
                    if canonical_cache[key]:
                        kept.append(p)
                canon_sets.append(tuple(kept))
            if all(canon_sets):
                canonical.append(_oracle_entry(doc_id, names, canon_sets))
        runs["oracle.surface_and"].append({"qid": qid, "docs": surface})
        runs["oracle.canonical_and"].append({"qid": qid, "docs": canonical})
        runs["oracle.single_page_and"].append({"qid": qid, "docs": single})
        counted.sort(key=lambda e: (-e["score"], e["doc_id"]))
        runs["oracle.surface_form_count"].append({"qid": qid, "docs": counted[:DEPTH]})
        rng = np.random.default_rng([seed, index])
        perm = rng.permutation(len(inventory.doc_ids))[:DEPTH]
        runs["baseline.random"].append(
            {
                "qid": qid,
                "docs": [{"doc_id": inventory.doc_ids[int(d)], "score": float(DEPTH - r)} for r, d in enumerate(perm)],
            }
        )
        runs["baseline.frequency_prior"].append({"qid": qid, "docs": prior})
    return runs
