"""Candidate conjunctions and their judged-document pools (``docs/construction.md#reader-judged-construction``).

Candidates are conjunctions of the lexical inventory's conditions drawn as ``nclue build`` draws
them (:func:`nclue.bench.compose.generate`, quality/diversity order, reuse caps), with contested
absences allowed — what readers will decide is exactly what the rule could not. Each candidate's
pool is the rule's union (golds first, then partials by grade) interleaved with the top
``pool_depth`` documents of every pooling system's ranking of the candidate's ``clean_v2`` text,
at most ``max_docs`` documents (documents of sources below the extraction gate are skipped, as
the release leaves them out): a document no system retrieves and the rule does not see is never
judged (it is a zero), as in TREC-style pooling.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nclue.bench.compose import Item, generate, select
from nclue.bench.construction_params import BuildOptions
from nclue.bench.inventory import Inventory
from nclue.query import render_forms
from nclue.release import Release
from nclue.types import Query


@dataclass(frozen=True)
class Candidate:
    """One candidate conjunction: its query, its rule item and its pool (document ids, pool order)."""

    query: Query
    item: Item
    pool: tuple[str, ...]


def candidate_items(inventory: Inventory, options: BuildOptions) -> list[Item]:
    """The rule's candidate conjunctions, contested absences allowed, ``options.reader.candidates`` of them."""
    compose = replace(options.compose, max_contested=None, n_queries=options.reader.candidates)
    items = generate(inventory, compose)
    chosen, _ = select(items, compose)
    return chosen


def candidate_queries(inventory: Inventory, items: list[Item]) -> list[Query]:
    """The query of each candidate (ids ``cand_NNNN``, canonical names, aliases, the three forms)."""
    out = []
    for i, item in enumerate(items):
        names = [inventory.conditions[c].name for c in item.conditions]
        aliases = {n: tuple(inventory.conditions[c].aliases) for n, c in zip(names, item.conditions)}
        out.append(Query(f"cand_{i:04d}", tuple(names), render_forms(names), aliases))
    return out


def pool_documents(
    inventory: Inventory, items: list[Item], queries: list[Query], collection: str, options: BuildOptions
) -> list[Candidate]:
    """Every candidate with its pool (see the module docstring); the systems read the collection's indexes."""
    from nclue.corpus.store import PageStore
    from nclue.systems.run import run_systems

    params = options.reader
    kept = set(inventory.doc_ids)  # documents of sources below the extraction gate are never pooled
    depth = params.pool_depth + len(PageStore.open(collection).doc_ids) - len(kept)  # room for the skipped ones
    report = run_systems(Release.from_records(queries), collection, list(params.pool_systems), depth=depth)
    out = []
    for query, item in zip(queries, items):
        rule = sorted(item.docs, key=lambda d: (item.labels[d] != "gold", -sum(1 for s in item.docs[d] if s), d))
        lists = [[inventory.doc_ids[d] for d in rule]]
        lists += [
            [r.doc_id for r in run.rankings.get(query.qid, []) if r.doc_id in kept][: params.pool_depth]
            for run in report.runs.values()
        ]
        pool: list[str] = []
        for rank in range(max(len(x) for x in lists)):
            for ranked in lists:
                if rank < len(ranked) and ranked[rank] not in pool and len(pool) < params.max_docs:
                    pool.append(ranked[rank])
        out.append(Candidate(query, item, tuple(pool)))
    return out
