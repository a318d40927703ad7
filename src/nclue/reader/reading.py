"""Reading requests: every (condition, document) of the pools, read blind on high-recall pages.

A request shows one document's pages for up to ``conditions_per_prompt`` conditions, each with the
audit's default rubric (:func:`nclue.audit.rubric.default_rubric`) and its ``pages_per_condition``
best pages of the audit's candidate routes (:class:`nclue.audit.pool.RouteFinder`: the rule's own
pages, every surface-form occurrence, BM25, OCR-tolerant matches, round-robin). The prompt is the
machine evaluator's (:func:`nclue.audit.machine.prompt_for`), so a reply is parsed by the same
parser and checked by the same rules as an audit export: a positive needs a page of the pool and a
verbatim quote from it, a negative none. A reply that fails leaves its pairs unread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nclue.audit.audit_params import PoolParams
from nclue.audit.machine import parse_reply, prompt_for
from nclue.audit.pool import RouteFinder, pool
from nclue.audit.rubric import default_rubric
from nclue.audit.validate import condition_problems
from nclue.bench.inventory import Inventory
from nclue.corpus.store import PageStore
from nclue.io import dumps_canonical, sha256_bytes
from nclue.llm.cache import Asker
from nclue.reader.pools import Candidate

NEED = "Which of the conditions below does this document establish? Judge each condition on its own pages."
MAX_PAGE_CHARS = 4000


@dataclass(frozen=True)
class Request:
    """One reading request: a document and the payload item shown for its conditions."""

    doc_id: str
    item: Mapping[str, object]

    @property
    def prompt(self) -> str:
        """The text the reader gets (pages cut at :data:`MAX_PAGE_CHARS`)."""
        return prompt_for(self.item, MAX_PAGE_CHARS)


@dataclass
class Readings:
    """What the readers decided: ``pages[(doc_id, condition)]`` = the pages they quoted (empty: not established).

    ``shown[(doc_id, condition)]``: the pages the reader was shown for the pair.
    """

    pages: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)
    shown: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)
    requests: int = 0
    malformed: int = 0
    rejected: int = 0
    pending: int = 0

    def read(self, doc_id: str, condition: str) -> bool:
        """The pair was read (either way)."""
        return (doc_id, condition) in self.pages

    def establishing_any(self, doc_id: str, conditions: tuple[str, ...]) -> bool:
        """A reader found ``doc_id`` establishing one of ``conditions``."""
        return any(self.pages.get((doc_id, c)) for c in conditions)

    def establishing(self) -> dict[str, set[str]]:
        """Condition → the documents a reader found establishing it."""
        out: dict[str, set[str]] = {}
        for (doc, name), pages in self.pages.items():
            if pages:
                out.setdefault(name, set()).add(doc)
        return out

    def merge(self, other: Readings) -> None:
        """Add a later round's readings (its pairs were not read here)."""
        self.pages |= other.pages
        self.shown |= other.shown
        self.requests += other.requests
        self.malformed += other.malformed
        self.rejected += other.rejected
        self.pending += other.pending


def judged_set(cand: Candidate, readings: Readings) -> list[str]:
    """The documents a candidate's labels rest on: its pool, then every document read as establishing one of
    its conditions (sorted)."""
    established = readings.establishing()
    extra = {d for c in cand.query.conditions for d in established.get(c, ())} - set(cand.pool)
    return [*cand.pool, *sorted(extra)]


def pairs_to_read(candidates: list[Candidate], readings: Readings) -> dict[str, set[str]]:
    """Document → the conditions still unread for some candidate whose judged set holds it.

    Before any reading this is every (pool document, condition); after a round, a document read as
    establishing one condition of a candidate must be read on the candidate's other conditions too,
    or its label (gold or partial) would rest on an unread pair.
    """
    out: dict[str, set[str]] = {}
    for cand in candidates:
        for doc in judged_set(cand, readings):
            todo = {c for c in cand.query.conditions if not readings.read(doc, c)}
            if todo:
                out.setdefault(doc, set()).update(todo)
    return out


def requests_for(
    store: PageStore,
    collection: str,
    inventory: Inventory,
    pairs: dict[str, set[str]],
    pages_per_condition: int,
    conditions_per_prompt: int,
) -> list[Request]:
    """The reading requests of ``pairs`` (document → conditions), in document order (deterministic)."""
    by_name = {c.name: i for i, c in enumerate(inventory.conditions)}
    doc_index = {d: i for i, d in enumerate(inventory.doc_ids)}
    finder = RouteFinder(store, collection, PoolParams())
    names_read = set().union(*pairs.values()) if pairs else set()
    finder.prefetch_bm25(
        " ".join(dict.fromkeys((c.name, *c.aliases))) for c in inventory.conditions if c.name in names_read
    )
    out = []
    for doc, names in sorted(pairs.items()):
        ordered = sorted(names)
        for start in range(0, len(ordered), conditions_per_prompt):
            chunk = ordered[start : start + conditions_per_prompt]
            item_id = "r" + sha256_bytes(dumps_canonical([doc, chunk]).encode())[:12]
            conditions = []
            for k, name in enumerate(chunk, start=1):
                cond = inventory.conditions[by_name[name]]
                construction = inventory.pages[by_name[name]].get(doc_index[doc], ())
                routes = finder.routes(doc, name, cond.aliases, construction)
                pages = pool(routes, pages_per_condition)
                conditions.append(
                    {
                        "id": f"{item_id}.{k}",
                        "name": name,
                        "aliases": list(cond.aliases),
                        "rubric": default_rubric(name, cond.aliases),
                        "pages": [{"page": p, "text": store.page_text(doc, p)} for p in pages],
                    }
                )
            out.append(Request(doc, {"id": item_id, "need": NEED, "conditions": conditions}))
    return out


def read_all(requests: list[Request], asker: Asker, forget_failed: bool = False) -> Readings:
    """Ask every request (cache → imported batch → endpoint); validate each reply; then finish the asker.

    With ``forget_failed``, a reply that fails parsing or has a rejected answer is not kept in the
    frozen cache, so a corrected reply (a later import, or the endpoint asked again) can replace it.
    Raises :class:`nclue.llm.cache.BatchPending` when replies are still missing (nothing is built).
    """
    out = Readings(requests=len(requests))
    for request in requests:
        for cond in request.item["conditions"]:  # type: ignore[union-attr]
            out.shown[(request.doc_id, cond["name"])] = tuple(int(p["page"]) for p in cond["pages"])
        reply = asker.ask(request.prompt)
        if reply is None:
            out.pending += 1
            continue
        try:
            parsed = parse_reply(reply, request.item)
        except ValueError:
            out.malformed += 1
            if forget_failed:
                asker.forget(request.prompt)
            continue
        for cond, (answer, evidence) in zip(request.item["conditions"], parsed):  # type: ignore[union-attr]
            if condition_problems(cond, answer, evidence):
                out.rejected += 1
                if forget_failed:
                    asker.forget(request.prompt)
                continue
            out.pages[(request.doc_id, cond["name"])] = tuple(sorted({p for p, _ in evidence})) if answer else ()
    asker.finish()
    return out


def read_from_files(
    requests: list[Request],
    work: Path,
    replies: Path,
    model: str,
    answered_by: str = "",
    answered_on: str | None = None,
) -> Readings:
    """:func:`read_all` in batch mode over files in ``work``, for replies that people or helpers write.

    Replies are frozen in ``work/cache.jsonl``; ``replies`` (``{custom_id, reply}`` lines) is imported
    when it exists. When prompts are still unanswered, they are written to ``work/requests.jsonl``
    (batch rows) and ``work/prompts.jsonl`` (``{custom_id, prompt}`` lines, the form a reader is
    given), and :class:`nclue.llm.cache.BatchPending` is raised.
    """
    from nclue.audit.machine import template_text
    from nclue.io import write_jsonl
    from nclue.llm.batch import read_requests
    from nclue.llm.cache import BatchPending, ResponseCache
    from nclue.llm.client import LLMConfig

    work.mkdir(parents=True, exist_ok=True)
    asker = Asker(
        LLMConfig(model=model),
        ResponseCache(work / "cache.jsonl"),
        "evaluate_item",
        template_text(),
        mode="batch",
        batch_out=work / "requests.jsonl",
        batch_in=replies if replies.is_file() else None,
        answered_by=answered_by,
        answered_on=answered_on,
    )
    try:
        return read_all(requests, asker)
    except BatchPending as pending:
        write_jsonl(work / "prompts.jsonl", [{"custom_id": c, "prompt": p} for c, p in read_requests(pending.path)])
        raise
