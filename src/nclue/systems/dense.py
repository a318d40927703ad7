"""The ``dense`` backbone: bi-encoder cosine between a text and every page of the collection.

A page's score for a text ``q`` is the best cosine over the page's chunks,
``s(q, p) = max_{c ∈ chunks(p)} ⟨e(q), e(c)⟩`` (both L2-normalised, so the dot product is
the cosine); pages without text score 0. With page-spanning chunks (``--dense-span-pages``)
``chunks(p)`` is every chunk that covers ``p`` (holds one of its tokens), so one chunk can give
several pages their score. The chunk vectors come from the collection's
dense index (``nclue index COLLECTION --dense MODEL_PATH``), the query vector from the
same model files (checked by SHA-256) on the same backend, with the index's query prompt. Every generic operation —
``dense.joint(max)``, ``dense.joint(ptop3)``, ``dense.decompose(min|product|hmean|distinct)``
— comes from :mod:`nclue.systems.operations`.

Backbone tokens: ``dense`` uses the collection's dense index (the only one, or the one built
last when ``nclue index --add-dense`` kept several); ``dense:VARIANT`` selects one of several
(:func:`nclue.index.dense.variant_matches`): by its directory name or a prefix of it,
its backend (``torch``, ``torch-bf16``, ``onnx``, ``onnx-int8``, ``static``), a SHA-256 prefix, or a word
of its model name (``dense:minilm``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from nclue.errors import NclueError
from nclue.index.dense import DenseIndex, open_index_dir, select_index
from nclue.models.batching import encode_as_alone
from nclue.models.encoder import Encoder
from nclue.models.similarity import row_products
from nclue.systems.backbone import PageTable

if TYPE_CHECKING:
    from nclue.systems.registry import Workspace

CACHE_TEXTS = 4096
CACHE_PAGE_ROWS_BYTES = 64 << 20
"""Page-score rows kept by text (LRU): about 1,150 texts on a 14,517-page collection. Conditions recur
across queries, so a warm query computes the product for its new texts only."""
CACHE_CALL_TEXTS = 64
"""Rows of a call with more new texts are not cached: batch callers (evidence, audits) read each text
once, and copying their rows into the cache cost time for nothing."""


class DenseBackbone:
    """Page scores from a dense index; the query encoder is loaded on first use."""

    def __init__(
        self,
        index: DenseIndex,
        pages: PageTable,
        name: str = "dense",
        encoder: Encoder | None = None,
        texts: Callable[[], list[str]] | None = None,
    ) -> None:
        if int(index.manifest["n_pages"]) != pages.n_pages:
            raise NclueError(
                f"{index.directory}: built for {index.manifest['n_pages']} pages, the collection has {pages.n_pages}; "
                "rebuild with --rebuild"
            )
        self.index = index
        self.pages = pages
        self.name = name
        self._encoder = encoder
        self._vectors: np.ndarray | None = None
        self._columns, self._starts, self._rows = index.chunks.page_groups()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._page_rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._texts = texts

    def store_texts(self) -> list[str]:
        """Page texts of the collection (for chunk texts), aligned with the page rows."""
        if self._texts is None:
            from nclue.corpus.store import PageStore

            store = PageStore.open(self.index.directory.parents[2])
            self._texts = lambda: store.texts
        return self._texts()

    @property
    def encoder(self) -> Encoder:
        """The query encoder (same model and backend as the vectors, prepending the index's query prompt)."""
        if self._encoder is None:
            self._encoder = self.index.load_encoder()
        return self._encoder

    @property
    def vectors(self) -> np.ndarray:
        """``(n_chunks, dim)`` float32 chunk vectors (read once from the memory map)."""
        if self._vectors is None:
            self._vectors = np.ascontiguousarray(self.index.vectors, dtype=np.float32)
        return self._vectors

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors, cached by text (conditions recur across systems and queries).

        Each text gets the vector it has encoded alone (:func:`~nclue.models.batching.encode_as_alone`:
        one batch where the encoder passed the batching probe, else one forward pass per text), so
        a vector depends on its text only and a run's scores do not depend on the runs (or processes)
        that filled the cache before it.
        """
        missing = [text for text in dict.fromkeys(texts) if text not in self._cache]
        vectors = dict(zip(missing, encode_as_alone(self.encoder, missing), strict=True))
        for text in texts:
            if text in self._cache:
                self._cache.move_to_end(text)
                vectors.setdefault(text, self._cache[text])
        self._cache.update(vectors)
        while len(self._cache) > CACHE_TEXTS:
            self._cache.popitem(last=False)
        return np.stack([vectors[t] for t in texts]) if texts else np.zeros((0, self.vectors.shape[1]), np.float32)

    def clear_cache(self) -> None:
        """Forget every cached query vector and page-score row, e.g. to time cold queries."""
        self._cache.clear()
        self._page_rows.clear()

    def remember(self, text: str, vector: np.ndarray) -> None:
        """Cache the query vector of ``text`` computed elsewhere by :attr:`encoder` on ``[text]`` alone
        (MaxSim gets it from the forward pass that gives its query tokens)."""
        self._cache[text] = vector
        while len(self._cache) > CACHE_TEXTS:
            self._cache.popitem(last=False)

    def prefetch(self, texts: Sequence[str]) -> None:
        """Prepare a batch's texts (``nclue run`` hands over each batch of queries): their vectors in one
        encoder call where that is exact (:meth:`encode`) and their page rows, cached, so that the
        queries that follow compute neither (the rows only while the batch's rows fit
        :data:`CACHE_PAGE_ROWS_BYTES`). The results are those of encoding and scoring each text when it
        is first asked for."""
        texts = list(dict.fromkeys(texts))
        self.encode(texts)
        if len(texts) > CACHE_PAGE_ROWS_BYTES // max(self.pages.n_pages * 4, 1):
            return  # the rows would not stay cached until the queries read them
        for start in range(0, len(texts), CACHE_CALL_TEXTS):
            self.page_scores(texts[start : start + CACHE_CALL_TEXTS])

    def prefetch_joint(self, texts: Sequence[str], conditions: Sequence[Sequence[str]]) -> None:
        """:meth:`prefetch` for a joint system's batch: each request's joint text and its conditions."""
        self.prefetch([text for joint, own in zip(texts, conditions, strict=True) for text in (joint, *own)])

    def chunk_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_chunks)`` cosines between each text and every chunk."""
        return row_products(self.encode(texts), self.vectors)

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` float32: best cosine of the chunks covering each page, 0 for pages without text.

        Rows are cached by text (:data:`CACHE_PAGE_ROWS_BYTES`); each text's row is computed on its own
        (:func:`~nclue.models.similarity.row_products`, a maximum per page), so a cached row equals a fresh one.
        """
        out = np.zeros((len(texts), self.pages.n_pages), dtype=np.float32)
        if not len(texts) or not len(self._starts):
            return out
        missing = [t for t in dict.fromkeys(texts) if t not in self._page_rows]
        fresh: dict[str, np.ndarray] = {}
        if missing:
            scores = self.chunk_scores(missing)
            scores = scores if self._columns is None else scores[:, self._columns]
            rows = np.zeros((len(missing), self.pages.n_pages), dtype=np.float32)
            rows[:, self._rows] = np.maximum.reduceat(scores, self._starts, axis=1)
            fresh = dict(zip(missing, rows))
        for i, text in enumerate(texts):
            row = fresh.get(text)
            if row is None:
                row = self._page_rows[text]
                self._page_rows.move_to_end(text)
            out[i] = row
        keep = CACHE_PAGE_ROWS_BYTES // max(out.shape[1] * 4, 1) if len(fresh) <= CACHE_CALL_TEXTS else 0
        for text in list(fresh)[-keep:] if keep else []:
            self._page_rows[text] = fresh[text].copy()
        while len(self._page_rows) > keep:
            self._page_rows.popitem(last=False)
        return out


def load_backbone(workspace: Workspace, variant: str | None) -> DenseBackbone:
    """Registry hook: the dense backbone of ``workspace``'s collection (``dense[:variant]``)."""
    index = open_index_dir(workspace.collection_dir, select_index(workspace.collection_dir, variant))
    name = "dense" if variant is None else f"dense:{variant}"
    return DenseBackbone(index, workspace.pages, name=name, texts=lambda: workspace.store.texts)
