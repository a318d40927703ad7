"""Reader-verified coverage: a reader confirms or rejects the evidence before the verdicts.

``docs/coverage.md#reader-verified-verdicts``. The page-evidence model ranks pages well, but its
probabilities stop short of a reader's judgment: against the blind readers of the development
corpus, ``P ≥ 0.5`` has pair precision 0.85 and recall 0.73, and no threshold gives both 0.85
(``docs/evidence.md``). A reader — an LLM endpoint, a batch API or people — closes that gap.

For every pool (document, requirement) whose probability is at least ``floor``, the reader is
shown the document's ``pages`` best evidence pages (page logit order, :meth:`EvidenceModel.ranked_pages`)
under the audit's rubric and prompt — the same request, parser and quote validation as the reader
benchmark's reading (:mod:`nclue.reader.reading`): a positive must quote a shown page verbatim, a
negative quotes nothing. The reader's decision replaces the probability — 1 with the quoted pages
best first, or 0 — and the selectors then run on the verified probabilities. Pairs below the floor
are not read and keep their probability (below the floor, so never covered). A reply that fails
validation leaves its pairs unread (their probability stands), is counted, and is not frozen, so a
corrected reply can answer it on a later run.

Every reply is frozen in a response cache with its provenance (model, who answered, date, prompt
template SHA-256); a second run reads the cache and asks nothing. In batch mode the prompts still
unanswered are written to a batch request file and the command stops (exit 3) until the replies
are imported; imported replies that match no prompt (the requirements, their spelling, the pool
or the pages changed since they were written) are counted and named. A prompt is the document, its
requirements at or above the floor in the given order, and their pages: change any of them and the
prompt is new.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from nclue.audit.rubric import default_rubric
from nclue.errors import NclueError
from nclue.io import dumps_canonical, sha256_bytes
from nclue.llm.cache import Asker, BatchPending
from nclue.reader.reading import NEED, Readings, Request, read_all
from nclue.select.coverage_evidence import COVER_THRESHOLD, Evidence, EvidenceModel
from nclue.select.selection_defaults import VERIFY_CONDITIONS_PER_PROMPT, VERIFY_FLOOR, VERIFY_PAGES


@dataclass(frozen=True)
class VerifyOptions:
    """What verification reads: pairs with ``P ≥ floor``, ``pages`` pages each, ``per_prompt`` per request."""

    floor: float = VERIFY_FLOOR
    pages: int = VERIFY_PAGES
    per_prompt: int = VERIFY_CONDITIONS_PER_PROMPT

    def __post_init__(self) -> None:
        if not 0.0 < float(self.floor) <= COVER_THRESHOLD:
            raise NclueError(
                f"verify floor {self.floor!r} must lie in (0, {COVER_THRESHOLD}]: pairs at or above it are read; "
                f"e.g. {VERIFY_FLOOR}"
            )
        for name in ("pages", "per_prompt"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise NclueError(f"verify {name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class Verified:
    """Evidence after reading: the verified :class:`Evidence`, which pairs were read, and counts.

    ``read[d, r]``: the pair's reply was valid; ``established[d, r]``: the reader quoted a page.
    """

    evidence: Evidence
    read: np.ndarray
    established: np.ndarray
    summary: dict = field(default_factory=dict)


def verification_requests(
    model: EvidenceModel,
    evidence: Evidence,
    page_text: Callable[[str, int], str],
    options: VerifyOptions = VerifyOptions(),
) -> list[Request]:
    """The reading requests of every pair with ``P ≥ options.floor``, grouped by document.

    ``page_text(doc_id, page)`` gives a page's text. Requirements keep their given order; a
    document's requirements are split into prompts of ``options.per_prompt``.
    """
    out = []
    for d, doc in enumerate(evidence.doc_ids):
        names = [req for r, req in enumerate(evidence.requirements) if evidence.probs[d, r] >= options.floor]
        for start in range(0, len(names), options.per_prompt):
            chunk = names[start : start + options.per_prompt]
            out.append(
                reading_request(
                    doc, [(name, model.ranked_pages(name, doc, options.pages)) for name in chunk], page_text
                )
            )
    return out


def reading_request(
    doc: str, conditions: list[tuple[str, list[int]]], page_text: Callable[[str, int], str], prefix: str = "v"
) -> Request:
    """One prompt: document ``doc`` and, per condition ``(name, pages)``, those pages' texts in the given
    order, under the audit's default rubric. Its id is ``prefix`` (``v`` for verification) and a hash of
    the document and the condition names."""
    item_id = prefix + sha256_bytes(dumps_canonical([doc, [name for name, _ in conditions]]).encode())[:12]
    return Request(
        doc,
        {
            "id": item_id,
            "need": NEED,
            "conditions": [
                {
                    "id": f"{item_id}.{k}",
                    "name": name,
                    "aliases": [],
                    "rubric": default_rubric(name, ()),
                    "pages": [{"page": p, "text": page_text(doc, p)} for p in pages],
                }
                for k, (name, pages) in enumerate(conditions, start=1)
            ],
        },
    )


def apply_readings(evidence: Evidence, readings: Readings) -> Verified:
    """The evidence with every validly read pair replaced by the reader's decision (module docstring)."""
    probs = evidence.probs.copy()
    best_page = evidence.best_page.copy()
    read = np.zeros(probs.shape, dtype=bool)
    established = np.zeros(probs.shape, dtype=bool)
    pages = [list(row) for row in evidence.pages]
    for d, doc in enumerate(evidence.doc_ids):
        for r, req in enumerate(evidence.requirements):
            if (doc, req) not in readings.pages:
                continue
            quoted = readings.pages[(doc, req)]
            shown = readings.shown.get((doc, req), ())
            read[d, r] = True
            established[d, r] = bool(quoted)
            probs[d, r] = 1.0 if quoted else 0.0
            ordered = tuple(p for p in shown if p in quoted)  # best first, as shown
            pages[d][r] = ordered
            if ordered:
                best_page[d, r] = ordered[0]
    verified = replace(evidence, probs=probs, best_page=best_page, pages=tuple(tuple(row) for row in pages))
    summary = {
        "pairs_read": int(read.sum()),
        "established": int(established.sum()),
        "requests": readings.requests,
        "pending": readings.pending,
        "malformed_replies": readings.malformed,
        "rejected_answers": readings.rejected,
    }
    return Verified(verified, read, established, summary)


@dataclass
class Verifier:
    """A reader behind an :class:`~nclue.llm.cache.Asker`, with what it reads (:class:`VerifyOptions`)."""

    asker: Asker
    options: VerifyOptions = field(default_factory=VerifyOptions)

    def verify(self, model: EvidenceModel, evidence: Evidence, page_text: Callable[[str, int], str]) -> Verified:
        """Read every pair at or above the floor and apply the decisions.

        Raises :class:`nclue.llm.cache.BatchPending` (exit 3) while replies are missing in batch mode.
        """
        requests = verification_requests(model, evidence, page_text, self.options)
        try:
            readings = read_all(requests, self.asker, forget_failed=True)
        except BatchPending as pending:
            unmatched = self.asker.unmatched
            if not unmatched:
                raise
            raise BatchPending(
                f"{pending} ({unmatched} imported replies matched no prompt of this selection: the "
                "requirements, their spelling, the pool or the pages differ from those the replies answered)",
                pending.path,
                pending.pending,
            ) from None
        verified = apply_readings(evidence, readings)
        verified.summary.update(
            {
                "model": self.asker.config.model,
                "floor": self.options.floor,
                "pages": self.options.pages,
                "cache": str(self.asker.cache.path),
                "template_sha256": self.asker.template_hash,
                "unmatched_replies": self.asker.unmatched,
            }
        )
        return verified


VERIFY_CACHE = "llm/coverage_verify.jsonl"
"""Default response cache of verification, inside the collection."""


def open_verifier(
    collection: str | os.PathLike[str],
    model: str,
    url: str | None = None,
    key: str | None = None,
    api: str | None = None,
    cache: str | os.PathLike[str] | None = None,
    batch_out: str | os.PathLike[str] | None = None,
    batch_in: str | os.PathLike[str] | None = None,
    answered_by: str = "",
    answered_on: str | None = None,
    options: VerifyOptions = VerifyOptions(),
) -> Verifier:
    """A :class:`Verifier` reading through an endpoint (``url``, or ``NCLUE_LLM_URL``) or else in batch mode
    (cached and imported replies answer; prompts still unanswered go to ``batch_out``, default beside
    the cache, and stop the command); replies frozen in ``cache`` (default
    ``COLLECTION/llm/coverage_verify.jsonl``)."""
    from nclue.audit.machine import TEMPLATE, template_text
    from nclue.llm.cache import ResponseCache
    from nclue.llm.client import LLMConfig

    if not isinstance(model, str) or not model.strip():
        raise NclueError("verification needs the reader's model name (--verify-model), e.g. gpt-4o-mini or reader:A")
    config = LLMConfig.from_env(url, model, key, api)
    files = batch_out is not None or batch_in is not None
    if files and url:
        raise NclueError(
            "give either an endpoint (--llm-url) or batch files (--verify-batch-out/--verify-batch-in), not both"
        )
    cache_path = Path(cache) if cache else Path(collection) / VERIFY_CACHE
    try:
        cache_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NclueError(
            f"cannot write the verification cache {cache_path} ({exc.strerror}); pass --verify-cache PATH"
        ) from None
    return Verifier(
        Asker(
            config,
            ResponseCache(cache_path),
            TEMPLATE,
            template_text(),
            mode="batch" if files or not config.url else "online",
            batch_out=Path(batch_out) if batch_out else cache_path.with_name("coverage_verify.requests.jsonl"),
            batch_in=Path(batch_in) if batch_in else None,
            answered_by=answered_by,
            answered_on=answered_on,
            resume=f"the same nclue coverage select command with --verify-batch-in REPLIES.jsonl (model {model})",
        ),
        options,
    )
