"""``rerank(BASE, SCORER, pool=100)``: rescore a fixed candidate pool, never extend it.

The pool is exactly ``BASE``'s top ``pool`` documents for the request (``docs/systems.md``: top 100
for text). Each pooled document gets a new score and the pool is re-sorted by it
(descending; equal scores keep the base order — a stable sort); documents outside the
pool are never added, so the output is a permutation of the pool truncated at ``depth``.

Document score = the best passage score over the document's *candidate pages*: the
pages ``BASE`` surfaced for it (its top ``PAGES_PER_DOC``, page-aware bases), otherwise
the document's first ``PAGES_PER_DOC`` pages. Passages are those pages cut into token
windows by :func:`nclue.models.chunking.chunk_pages` with the scorer's tokenizer.

``SCORER`` (see :mod:`nclue.models.crossencoder`): ``minilm`` — the bundled bi-encoder,
passage score = cosine with the query (read from the collection's dense index when one was
built with the same model files on the torch, torch-bf16 or onnx backend, else encoded on the fly);
any other token — the local model named by ``NCLUE_MODEL_<TOKEN>``, a ``CrossEncoder``
or a sentence-transformers bi-encoder. The query text is the request's rendering.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from nclue.errors import NclueError
from nclue.systems.backbone import PageTable, Request, System
from nclue.systems.names import Call, format_name
from nclue.types import RankedDoc

if TYPE_CHECKING:
    from nclue.systems.registry import Workspace

DEFAULT_POOL = 100
PAGES_PER_DOC = 3
PASSAGE_OVERLAP = 32
CACHE_PAGES = 20000


class PoolScorer(Protocol):
    """Scores each pooled document from its candidate page rows."""

    def doc_scores(self, query: str, doc_rows: list[list[int]]) -> np.ndarray:
        """One float32 score per document."""
        ...


class BiEncoderPassages:
    """Passage vectors per page row for a bi-encoder scorer, from a dense index when possible."""

    kind = "bi"

    def __init__(self, model_dir: Path, collection_dir: Path, texts: Callable[[], list[str]]) -> None:
        from nclue.models.encoder import QUERY_BACKEND, load_encoder, load_tokenizer
        from nclue.models.identity import model_identity

        self.identity = model_identity(model_dir)
        self.index = self._matching_index(collection_dir)
        backend = QUERY_BACKEND.get(self.index.backend, self.index.backend) if self.index is not None else "torch"
        self.encoder = load_encoder(model_dir, backend=backend)
        self.tokenizer = load_tokenizer(model_dir)
        self.window = max(1, self.encoder.max_length - 2)
        self.texts = texts
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()

    def _matching_index(self, collection_dir: Path):  # noqa: ANN202 - DenseIndex | None
        from nclue.index.dense import list_dense_indexes, open_index_dir

        for directory in list_dense_indexes(collection_dir):
            index = open_index_dir(collection_dir, directory)
            exact = index.backend in ("torch", "torch-bf16", "onnx")
            if index.manifest["model"]["sha256"] == self.identity.sha256 and exact:
                return index
        return None

    def page_vectors(self, rows: Sequence[int]) -> list[np.ndarray]:
        """``(n_chunks, dim)`` normalised chunk vectors of each page row."""
        missing = [r for r in dict.fromkeys(int(r) for r in rows) if r not in self._cache]
        if missing and self.index is not None:
            page = self.index.chunks.page
            for r in missing:
                lo, hi = np.searchsorted(page, r, side="left"), np.searchsorted(page, r, side="right")
                self._cache[r] = np.asarray(self.index.vectors[lo:hi], dtype=np.float32)
        elif missing:
            from nclue.models.chunking import chunk_pages

            texts = self.texts()
            page_texts = [texts[r] for r in missing]
            chunks = chunk_pages(page_texts, self.tokenizer, self.window, PASSAGE_OVERLAP)
            vectors = self.encoder.encode(chunks.texts(page_texts))
            for i, r in enumerate(missing):
                self._cache[r] = vectors[chunks.page == i]
        out = [self._cache[int(r)] for r in rows]
        while len(self._cache) > CACHE_PAGES:
            self._cache.popitem(last=False)
        return out

    def doc_scores(self, query: str, doc_rows: list[list[int]]) -> np.ndarray:
        """Best passage cosine per document (0 for a document without text)."""
        q = self.encoder.encode([query])[0]
        out = np.zeros(len(doc_rows), np.float32)
        for i, rows in enumerate(doc_rows):
            vecs = [v for v in self.page_vectors(rows) if len(v)]
            if vecs:
                out[i] = float((np.concatenate(vecs) @ q).max())
        return out


class CrossEncoderPassages:
    """Cross-encoder passage scores: every candidate page cut into windows, scored with the query."""

    kind = "cross"

    def __init__(self, model_dir: Path, texts: Callable[[], list[str]]) -> None:
        from nclue.models.crossencoder import CrossEncoderScorer
        from nclue.models.tokenizer import load_tokenizer_dir

        self.scorer = CrossEncoderScorer(model_dir)
        self.tokenizer = load_tokenizer_dir(model_dir)
        self.window = max(1, self.scorer.max_length // 2)
        self.texts = texts

    def doc_scores(self, query: str, doc_rows: list[list[int]]) -> np.ndarray:
        """Best (query, passage) cross-encoder score per document; a document without text
        scores one below the lowest document that has text (scores stay finite for run files)."""
        from nclue.models.chunking import chunk_pages

        texts = self.texts()
        flat = [r for rows in doc_rows for r in rows]
        owner = np.repeat(np.arange(len(doc_rows)), [len(rows) for rows in doc_rows])
        page_texts = [texts[r] for r in flat]
        chunks = chunk_pages(page_texts, self.tokenizer, self.window, PASSAGE_OVERLAP)
        scores = self.scorer.score(query, chunks.texts(page_texts))
        out = np.full(len(doc_rows), -np.inf, np.float32)
        if len(scores):
            np.maximum.at(out, owner[chunks.page], scores)
        empty = ~np.isfinite(out)
        if empty.any():
            out[empty] = float(out[~empty].min()) - 1.0 if (~empty).any() else 0.0
        return out


@dataclass
class RerankSystem:
    """A fixed pool from ``base``, rescored by ``scorer``."""

    name: str
    base: System
    scorer: PoolScorer
    pages: PageTable
    doc_index: dict[str, int]
    pool: int = DEFAULT_POOL
    page_aware: bool = field(init=False)

    def __post_init__(self) -> None:
        self.page_aware = bool(self.base.page_aware)

    def candidate_rows(self, doc: RankedDoc) -> list[int]:
        """Page rows scored for a pooled document (surfaced pages, else its first pages)."""
        i = self.doc_index[doc.doc_id]
        start, stop = int(self.pages.doc_offsets[i]), int(self.pages.doc_offsets[i + 1])
        numbers = self.pages.page_number[start:stop]
        if doc.pages:
            wanted = [p for p, _ in doc.pages[:PAGES_PER_DOC]]
            return [start + int(j) for p in wanted for j in np.flatnonzero(numbers == p)[:1]]
        return list(range(start, min(stop, start + PAGES_PER_DOC)))

    def search(self, request: Request, depth: int = 100) -> list[RankedDoc]:
        """The base's top ``pool`` documents, re-sorted by the scorer (stable), first ``depth``."""
        pooled = self.base.search(request, depth=self.pool)
        if not pooled:
            return []
        scores = self.scorer.doc_scores(request.text, [self.candidate_rows(d) for d in pooled])
        order = sorted(range(len(pooled)), key=lambda i: -float(scores[i]))
        return [
            RankedDoc(pooled[i].doc_id, float(scores[i]), pages=pooled[i].pages, evidence=pooled[i].evidence)
            for i in order[:depth]
        ]


def build_system(spec: Call, workspace: Workspace) -> RerankSystem:
    """Registry hook for ``rerank(BASE, SCORER, pool=N)``."""
    from nclue.models.crossencoder import resolve_scorer

    name = format_name(spec)
    if len(spec.args) != 2 or len(spec.systems) != 1 or not isinstance(spec.args[1], str):
        raise NclueError(
            f"{name!r}: write rerank(BASE_SYSTEM, SCORER, pool=N), e.g. rerank(bm25.joint, minilm, pool=100)"
        )
    unknown = [k for k, _ in spec.options if k != "pool"]
    if unknown:
        raise NclueError(f"{name!r}: unknown option {unknown[0]!r}; rerank takes only pool=N")
    raw_pool = spec.option("pool", str(DEFAULT_POOL)) or ""
    if not raw_pool.isdigit() or int(raw_pool) < 1:
        raise NclueError(f"{name!r}: pool must be a positive integer, got {raw_pool!r}")
    base = workspace.system(spec.systems[0])
    kind, model_dir = resolve_scorer(spec.args[1])
    texts = lambda: workspace.store.texts  # noqa: E731 - deferred read of page texts
    scorer: PoolScorer = workspace.shared(
        ("rerank scorer", kind, str(model_dir)),
        lambda: (
            CrossEncoderPassages(model_dir, texts)
            if kind == "cross"
            else BiEncoderPassages(model_dir, workspace.collection_dir, texts)
        ),
    )
    return RerankSystem(
        name=name,
        base=base,
        scorer=scorer,
        pages=workspace.pages,
        doc_index=workspace.store.doc_index,
        pool=int(raw_pool),
    )
