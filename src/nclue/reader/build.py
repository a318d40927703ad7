"""``nclue build --judge reader``: a benchmark whose labels blind readers give (``docs/construction.md#reader-judged-construction``).

1. **Candidates and pools** (:mod:`nclue.reader.pools`): the lexical inventory's conjunctions,
   contested absences allowed, each with a pool of documents from the rule and several
   retrievers to a declared depth.
2. **Reading** (:mod:`nclue.reader.reading`): every (condition, document) of the pools, once,
   through the LLM client — an endpoint, or a batch file any batch API, script or people fill
   (``--llm-batch-out`` writes the requests and stops; ``--llm-batch-in`` imports the replies) —
   into the frozen cache ``OUT/judge/reader_cache.jsonl``; a rebuild with the cache reads nothing.
3. **Labels on what was read**: ``P(d, c)`` = the pages a reader quoted; a candidate's judged
   documents are its pool documents whose every condition was read; clue count, gold, partial and
   the distinct-page rule follow (``docs/labels.md``), and a document whose conditions meet only on
   one page is a partial (the supplement's J061 decision) rather than a reason to drop the
   candidate. A candidate is kept when it has a gold, a partial and at most ``max_golds`` golds.
4. **Selection and release**: the same seeded quality/diversity selection and reuse caps, and the
   same writer (:func:`nclue.bench.pipeline.write_release`); ``MANIFEST.json`` gains a
   ``reading`` record — pool systems and depth, pages per condition, pairs read, the judged
   fraction, who read (the cache's provenance).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, replace
from pathlib import Path

from nclue.bench.compose import Item, evaluate, select
from nclue.bench.construction_params import BuildOptions
from nclue.bench.inventory import Inventory, mine
from nclue.bench.pipeline import (
    JUDGMENTS_FILE,
    READING_FILE,
    BuildSummary,
    Construction,
    apply_gate,
    options_asker,
    qid_of,
    write_release,
)
from nclue.corpus.store import PageStore
from nclue.engine import Engine
from nclue.errors import NclueError
from nclue.io import exclusive_lock, writable_dir
from nclue.llm.cache import Asker
from nclue.llm.client import LLMConfig
from nclue.progress import Progress, quiet
from nclue.reader.pools import Candidate, candidate_items, candidate_queries, pool_documents
from nclue.reader.reading import Readings, judged_set, pairs_to_read, read_all, requests_for

CACHE = Path("judge") / "reader_cache.jsonl"
UNJUDGED = "a document read as establishing a condition is unread on another"


def build_read_benchmark(
    collection: str | Path,
    out: str | Path,
    options: BuildOptions,
    tick: Progress = quiet,
    engine: Engine | None = None,
) -> BuildSummary:
    """Build a reader-judged release from ``collection`` into ``out`` (see the module docstring)."""
    if options.judge != "reader":
        raise NclueError(f"build_read_benchmark builds --judge reader releases, not {options.judge!r}")
    if options.conditions != "lexical":
        raise NclueError("--judge reader reads the lexical inventory's conditions; use --conditions lexical")
    if options.compose.labels != "page":
        raise NclueError("--judge reader labels the pages its readers quote; drop --labels document")
    store = PageStore.open(collection)
    if store.n_pages == 0:
        raise NclueError(f"{collection}: the collection has no pages; ingest PDFs first with `nclue ingest`")
    out_dir = writable_dir(out, "benchmark release")
    with exclusive_lock(out_dir, "benchmark release"):
        return _build(str(collection), store, out_dir, options, tick, engine)


def _build(
    collection: str, store: PageStore, out_dir: Path, options: BuildOptions, tick: Progress, engine: Engine | None
) -> BuildSummary:
    full_docs, full_pages = len(store.doc_ids), int(store.n_pages)
    store, gate_record = apply_gate(collection, store, options)
    tick("mine", 0, len(store.doc_ids))
    inventory = mine(store, options.mine, lambda n: tick("mine", n, None), engine)
    items = candidate_items(inventory, options)
    if not items:
        raise NclueError(f"{collection}: no candidate conjunction to read; relax --min-df or add documents")
    tick("pool", 0, None)
    candidates = pool_documents(inventory, items, candidate_queries(inventory, items), collection, options)
    asker = _asker(options, out_dir, collection)
    readings, per_round = Readings(), []
    alive, no_label = candidates, "no gold, no partial or too many golds on what was read"
    drops = {no_label: 0, UNJUDGED: 0}
    for round_no in range(1, options.reader.rounds + 1):
        pairs = pairs_to_read(alive, readings)
        if not pairs:
            break
        requests = requests_for(
            store,
            collection,
            inventory,
            pairs,
            options.reader.pages_per_condition,
            options.reader.conditions_per_prompt,
        )
        stage = f"read (round {round_no})"
        tick(stage, 0, len(requests))
        per_round.append(len(requests))
        readings.merge(read_all(requests, asker))
        tick(stage, len(requests), None)
        labelled = _labelled(alive, inventory, readings, options)
        drops[no_label] += len(alive) - len(labelled)
        alive = [cand for cand, _ in labelled]
    judged = []
    for cand, item in _labelled(alive, inventory, readings, options):
        if any(readings.establishing_any(d, cand.query.conditions) for d in _unjudged(cand, readings)):
            drops[UNJUDGED] += 1
        else:
            judged.append(item)
    chosen, selection_drops = select(judged, replace(options.compose, max_contested=None))
    by_conditions = {cand.item.conditions: cand for cand in candidates}
    if not chosen:
        raise NclueError(
            f"{collection}: none of {len(candidates)} candidates has a gold and a partial on what the readers read; "
            "read more candidates (--reader-candidates) or deeper pools"
        )
    drops.update(selection_drops)
    released = [by_conditions[it.conditions] for it in chosen]
    record = reading_record(options, candidates, released, per_round, readings, asker)
    read_inventory = inventory_of(inventory, readings)
    return write_release(
        collection,
        store,
        out_dir,
        options,
        read_inventory,
        chosen,
        Construction(
            gate=gate_record,
            judge_settings={"readers": record["provenance"], "cache": CACHE.as_posix()},
            conditions={"kind": "lexical", "labels": "reader"},
            candidates=len(judged),
            drops=drops,
            documents_before_gate=full_docs,
            pages_before_gate=full_pages,
            extra={"reading": record},
            files={READING_FILE: reading_rows(released, readings), JUDGMENTS_FILE: judgment_rows(readings)},
        ),
        tick,
    )


def _asker(options: BuildOptions, out_dir: Path, collection: str) -> Asker:
    from nclue.audit.machine import TEMPLATE, template_text

    config = replace(
        LLMConfig.from_env(options.llm_url, options.llm_model, options.llm_key, options.llm_api), max_tokens=1500
    )
    return options_asker(options, config, out_dir, collection, CACHE.name, (TEMPLATE, template_text()), "reader")


def inventory_of(rule: Inventory, readings: Readings) -> Inventory:
    """The rule inventory's conditions with the pages readers quoted as their evidence (read pairs only)."""
    doc_index = {d: i for i, d in enumerate(rule.doc_ids)}
    by_name = {c.name: i for i, c in enumerate(rule.conditions)}
    pages: list[dict[int, tuple[int, ...]]] = [{} for _ in rule.conditions]
    for (doc, name), quoted in sorted(readings.pages.items()):
        if quoted:
            pages[by_name[name]][doc_index[doc]] = quoted
    return Inventory(
        doc_ids=rule.doc_ids, n_pages=rule.n_pages, conditions=rule.conditions, pages=pages, params=rule.params
    )


def _labelled(
    candidates: list[Candidate], inventory: Inventory, readings: Readings, options: BuildOptions
) -> list[tuple[Candidate, Item]]:
    """The candidates that have a gold, a partial and at most ``max_golds`` golds on their read documents.

    Reading more documents can only add golds and partials, so a candidate with too many golds is
    final; one without a gold among its pool is dropped rather than read further.
    """
    read_inventory = inventory_of(inventory, readings)
    doc_index = {d: i for i, d in enumerate(inventory.doc_ids)}
    out = []
    for cand in candidates:
        docs = [doc_index[d] for d in _judged_docs(cand, readings)]
        item = evaluate(read_inventory, cand.item.conditions, options.compose.max_golds, None, "partial", docs)
        if item is not None:
            out.append((cand, item))
    return out


def _unjudged(cand: Candidate, readings: Readings) -> list[str]:
    """Documents of the candidate's judged set with a condition still unread."""
    return [d for d in judged_set(cand, readings) if not all(readings.read(d, c) for c in cand.query.conditions)]


def _judged_docs(cand: Candidate, readings: Readings) -> list[str]:
    """The candidate's judged set (:func:`judged_set`) less documents with an unread condition."""
    return [d for d in judged_set(cand, readings) if all(readings.read(d, c) for c in cand.query.conditions)]


def judgment_rows(readings: Readings) -> list[dict]:
    """``judgments.jsonl``: every (document, condition) read, with the pages shown and the pages quoted.

    The reader inventory every query reuses, and the labels a page-evidence model is calibrated on
    (``nclue evidence fit``): a shown page is positive when the reader quoted it.
    """
    return [
        {
            "doc_id": doc,
            "condition": name,
            "shown": list(readings.shown.get((doc, name), ())),
            "established": list(pages),
        }
        for (doc, name), pages in sorted(readings.pages.items())
    ]


def reading_rows(chosen: list[Candidate], readings: Readings) -> list[dict]:
    """``reading.jsonl``: per query (release order), its pool, judged documents, judgments, pages shown, read labels."""
    rows = []
    for i, cand in enumerate(chosen):
        judged = _judged_docs(cand, readings)
        pairs = [(d, c) for d in judged_set(cand, readings) for c in cand.query.conditions if readings.read(d, c)]
        rows.append(
            {
                "qid": qid_of(i),
                "conditions": list(cand.query.conditions),
                "pool": list(cand.pool),
                "read_beyond_pool": [d for d in judged if d not in cand.pool],
                "judged": judged,
                "judgments": len(pairs),
                "pages_shown": sum(len(readings.shown.get(pair, ())) for pair in pairs),
                "established": {
                    d: {c: list(readings.pages[(d, c)]) for c in cand.query.conditions if readings.pages[(d, c)]}
                    for d in judged
                },
            }
        )
    return rows


def reading_record(
    options: BuildOptions,
    candidates: list[Candidate],
    released: list[Candidate],
    per_round: list[int],
    readings: Readings,
    asker: Asker,
) -> dict:
    """The ``reading`` record of ``MANIFEST.json``: what was pooled, what was read, who read it.

    ``judged_fraction`` is over the released queries' judged sets (pool, then every document read as
    establishing one of the query's conditions): the share of their (document, condition) pairs read.
    """
    pool_pairs = {(d, c) for cand in candidates for d in cand.pool for c in cand.query.conditions}
    judged_pairs = {(d, c) for cand in released for d in judged_set(cand, readings) for c in cand.query.conditions}
    read = sum(1 for pair in judged_pairs if pair in readings.pages)
    return {
        "params": asdict(options.reader),
        "candidates": len(candidates),
        "pool_documents_median": statistics.median(len(c.pool) for c in candidates),
        "pool_pairs": len(pool_pairs),
        "pairs_read": len(readings.pages),
        "pairs_established": sum(1 for pages in readings.pages.values() if pages),
        "pages_shown": sum(len(p) for p in readings.shown.values()),
        "requests": readings.requests,
        "requests_per_round": per_round,
        "replies_malformed": readings.malformed,
        "conditions_rejected": readings.rejected,
        "released_judged_pairs": len(judged_pairs),
        "judged_fraction": round(read / max(len(judged_pairs), 1), 4),
        "single_page": "partial",
        "provenance": asker.cache.provenance(),
    }
