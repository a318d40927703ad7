"""Document coverage evidence: P(document covers requirement) from the document's best page.

``docs/coverage.md#evidence``. Every page of every pool document is read (long documents are
read whole) through the page-evidence layer (:mod:`nclue.evidence`): the signals of the
calibration (:mod:`nclue.evidence.signals`) give each page a logit ``z(r, p)``; the document's
best page ``p*(d, r) = argmax_{p ∈ d} z(r, p)`` (ties: earlier page) gives
``P(d covers r) = σ(a + c · z(r, p*))`` (:mod:`nclue.evidence.model`). By default the calibration
is the shipped one fitted on blind-reader judgments of another corpus than the pools' collection
(:func:`nclue.evidence.model.for_sources`).

Where a task set has no collection (hand-written ``docs.jsonl``), :func:`docs_source` makes one
page per document, a lexical index over those pages in a scratch directory, and takes the dense
signal from the task set's own frozen vectors; it has no document structure, so the heading
signals read 0 there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.model import Calibration, page_logits, segment_best, sigmoid
from nclue.evidence.signals import EvidenceSource, check_texts, signal_matrix
from nclue.models.similarity import row_products

COVER_THRESHOLD = 0.5
"""A document covers a requirement when ``P ≥ 0.5``; a page is evidence when its page probability is."""
MAX_EVIDENCE_PAGES = 3


def docs_source(
    texts: Mapping[str, str], vectors: np.ndarray, encode: Callable[[list[str]], np.ndarray], scratch: Path
) -> EvidenceSource:
    """One page per document (``texts``: doc_id → text, sorted by ID, aligned with ``vectors``):
    a page store and lexical index written under ``scratch``; dense = ``encode(texts) · vectors``."""
    import pyarrow as pa

    from nclue.corpus.store import DOCS_SCHEMA, PAGES_SCHEMA, PageStore, write_table_atomic
    from nclue.index.lexical import LexicalIndex, build_lexical_index
    from nclue.systems.backbone import PageTable
    from nclue.systems.lexical import LexicalBackbone

    ids = list(texts)
    scratch.mkdir(parents=True, exist_ok=True)
    docs = [
        {
            "doc_id": d,
            "path": d,
            "sha256": hashlib.sha256(texts[d].encode("utf-8")).hexdigest(),
            "n_pages": 1,
            "n_bytes": len(texts[d].encode("utf-8")),
            "source": "docs.jsonl",
            "status": "ok",
            "error": None,
        }
        for d in ids
    ]
    pages = [{"doc_id": d, "page": 1, "text": texts[d], "n_chars": len(texts[d]), "method": "text"} for d in ids]
    write_table_atomic(scratch / "docs.parquet", pa.Table.from_pylist(docs, schema=DOCS_SCHEMA))
    write_table_atomic(scratch / "pages.parquet", pa.Table.from_pylist(pages, schema=PAGES_SCHEMA))
    store = PageStore.open(scratch)
    build_lexical_index(scratch, store=store)
    table = PageTable.from_store(store)
    if list(table.id_list) != ids:
        raise NclueError("document IDs must be unique and given in sorted order")
    doc_vectors = np.asarray(vectors, dtype=np.float32)

    def dense(queries: Sequence[str]) -> np.ndarray:
        return row_products(np.asarray(encode(list(queries)), dtype=np.float32), doc_vectors).astype(np.float32)

    lexical = LexicalBackbone("bm25", table, LexicalIndex(scratch, store))
    describe = {
        "collection": "docs.jsonl (one page per document)",
        "pages": len(ids),
        "structure": "absent: the heading signals and role read 0",
    }
    return EvidenceSource(table, lexical, dense, describe)


@dataclass(frozen=True)
class Evidence:
    """Per pool document and requirement: probability, best page, and evidence pages.

    ``pages[d][r]``: the pages of document ``d`` whose page probability ``σ(z)`` is at least
    :data:`COVER_THRESHOLD`, best first (at most :data:`MAX_EVIDENCE_PAGES`); the best page alone
    when none is but the document covers ``r``; empty otherwise.
    """

    doc_ids: tuple[str, ...]
    requirements: tuple[str, ...]
    probs: np.ndarray
    best_page: np.ndarray
    pages: tuple[tuple[tuple[int, ...], ...], ...]

    def covers(self, d: int) -> dict[str, list[int]]:
        """``{requirement: evidence pages, best first}`` for the requirements document ``d`` covers."""
        return {
            req: list(self.pages[d][r])
            for r, req in enumerate(self.requirements)
            if self.probs[d, r] >= COVER_THRESHOLD
        }


class EvidenceVerifier(Protocol):
    """Confirms or rejects evidence before selection (:class:`nclue.reader.verified_coverage.Verifier`,
    a reader behind an endpoint or batch files). ``verify`` returns an object with ``evidence`` (the
    verified :class:`Evidence`) and ``summary`` (a JSON-ready record of what was read)."""

    def verify(self, model: EvidenceModel, evidence: Evidence, page_text: Callable[[str, int], str]) -> Any: ...


class EvidenceModel:
    """A calibration applied to one source, with page logits cached per requirement text."""

    def __init__(self, source: EvidenceSource, calibration: Calibration, crossfit: bool = False) -> None:
        calibration.check_source(source.describe)
        self.source = source
        self.calibration = calibration
        self.crossfit = crossfit
        self._logits: dict[str, np.ndarray] = {}

    def prepare(self, texts: Sequence[str], batch: int = 64) -> None:
        """Compute and cache the page logits of every new text (in batches of ``batch``)."""
        new = [t for t in dict.fromkeys(texts) if t not in self._logits]
        check_texts(new)
        for start in range(0, len(new), batch):
            chunk = new[start : start + batch]
            features = signal_matrix(self.source, self.calibration.signals, chunk)
            models = [self.calibration.model_for(t, self.crossfit) for t in chunk]
            for text, row in zip(chunk, page_logits(features, models)):
                self._logits[text] = row.astype(np.float32)

    def ranked_pages(self, requirement: str, doc_id: str, n: int) -> tuple[int, ...]:
        """The ``n`` pages of ``doc_id`` with the highest page logit for ``requirement``, best first (ties: earlier page)."""
        self.prepare([requirement])
        rows, _ = self.source.rows([doc_id])
        z = self._logits[requirement][rows]
        top = np.lexsort((np.arange(len(rows)), -z))[:n]
        return tuple(int(self.source.pages.page_number[rows[i]]) for i in top)

    def evidence(self, requirements: Sequence[str], doc_ids: Sequence[str]) -> Evidence:
        """:class:`Evidence` of ``doc_ids`` (in that order) for ``requirements``."""
        self.prepare(requirements)
        rows, starts = self.source.rows(doc_ids)
        z = np.stack([self._logits[r][rows] for r in requirements]).astype(np.float64)  # (m, R)
        best, first = segment_best(z, starts)
        docs_models = [self.calibration.model_for(r, self.crossfit) for r in requirements]
        a = np.array([m.doc[0] for m in docs_models])[:, None]
        c = np.array([m.doc[1] for m in docs_models])[:, None]
        probs = sigmoid(a + c * best).T  # (n, m)
        numbers = self.source.pages.page_number[rows]
        best_page = numbers[first].T.astype(np.int32)
        page_prob = sigmoid(z)
        ends = np.r_[starts[1:], len(rows)]
        pages = []
        for d, (lo, hi) in enumerate(zip(starts.tolist(), ends.tolist())):
            per_req = []
            for r in range(len(requirements)):
                local = page_prob[r, lo:hi]
                top = np.lexsort((np.arange(hi - lo), -local))[:MAX_EVIDENCE_PAGES]
                found = tuple(int(numbers[lo + i]) for i in top if local[i] >= COVER_THRESHOLD)
                if not found and probs[d, r] >= COVER_THRESHOLD:
                    found = (int(best_page[d, r]),)
                per_req.append(found)
            pages.append(tuple(per_req))
        return Evidence(tuple(doc_ids), tuple(requirements), probs, best_page, tuple(pages))
