"""The ``maxsim`` backbone: late-interaction (ColBERT-style MaxSim) scoring on a candidate pool.

What it is: ColBERT's MaxSim operator (Khattab & Zaharia, SIGIR 2020) applied to the
*contextual token vectors of the dense index's bi-encoder* (all-MiniLM-L6-v2 by
default) — not a ColBERT-trained model. For query tokens ``q_i`` and the tokens ``d_j``
of every chunk covering page ``p`` (every vector L2-normalised, special tokens included)::

    maxsim(q, p) = (1 / |q|) Σ_i max_j ⟨q_i, d_j⟩

MaxSim rescoring runs on a candidate pool: for each text, the ``POOL_PAGES`` best pages
under the dense backbone's cosine; every other page scores 0 (no support, as in every
backbone). The page token vectors are read from the collection's token index
(:mod:`nclue.index.tokens`, built with the dense vectors by ``nclue index --all`` or
``--tokens``), decoded from their compressed codes; without a token index they are
recomputed with the index's own encoder (exact, and slow: one encoder pass per pooled
page). ``maxsim:VARIANT`` selects the dense index exactly like ``dense:VARIANT``.

A text's scores depend on that text only (its query tokens and its dense row are computed
alone), so they are cached by text and a run's output never depends on what ran before it.
Decoded (or recomputed) page token vectors are cached too, page by page, up to
``CACHE_TOKENS`` vectors: the joint text and the conditions of one query, and neighbouring
queries, pool many of the same pages, so most pooled pages are decoded once per run. Each page
is decoded from its own contiguous slice of the token index (a block small enough to stay in
the CPU cache) and scored alone, so what is cached never changes a score.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from nclue.errors import NclueError
from nclue.models.encoder import unprompted
from nclue.systems.dense import DenseBackbone

if TYPE_CHECKING:
    from nclue.index.tokens import TokenIndex
    from nclue.models.chunking import Chunks
    from nclue.models.encoder import Encoder
    from nclue.systems.registry import Workspace

POOL_PAGES = 20  # pages rescored per text
CACHE_TOKENS = 1 << 18
"""Decoded page token vectors kept (LRU by page): 384 MiB of float32 at 384 dimensions."""
CACHE_TEXTS = 4096


def maxsim(query: np.ndarray, doc: np.ndarray) -> float:
    """``(1/|q|) Σ_i max_j ⟨q_i, d_j⟩`` for ``(n_q, dim)`` and ``(n_d, dim)`` normalised token vectors."""
    if not len(query) or not len(doc):
        return 0.0
    return float((query @ doc.T).max(axis=1).mean())


def page_chunk_ranges(chunks: Chunks, n_pages: int) -> tuple[np.ndarray, np.ndarray]:
    """Per page row, the chunks ``[first, end)`` whose tokens are that page's: the chunks that start on
    it, or for page-spanning chunks every chunk that covers it (``Chunks.page_groups``), so MaxSim
    scores a page by every covering chunk's tokens as the dense backbone does by their vectors.

    Windows advance monotonically through a document, so the chunks covering a page are consecutive
    and one slice of the token index holds them. A page without chunks gets an empty range.
    """
    columns, starts, rows = chunks.page_groups()
    if columns is None:
        pages = np.arange(n_pages)
        return np.searchsorted(chunks.page, pages, side="left"), np.searchsorted(chunks.page, pages, side="right")
    first, end = np.zeros(n_pages, np.int64), np.zeros(n_pages, np.int64)
    if len(starts):
        first[rows] = np.minimum.reduceat(columns, starts)
        end[rows] = np.maximum.reduceat(columns, starts) + 1
    return first, end


class MaxSimBackbone:
    """Dense candidate pool (top ``pool`` pages per text) rescored by token-level MaxSim."""

    def __init__(
        self, dense: DenseBackbone, tokens: TokenIndex | None = None, pool: int = POOL_PAGES, name: str = "maxsim"
    ) -> None:
        if dense.index.backend == "static":
            raise NclueError(
                f"{dense.index.directory}: maxsim needs contextual token vectors, which a static model has not; "
                "use a dense index built with --dense-backend torch-bf16, torch or onnx"
            )
        self.dense = dense
        self.tokens = tokens
        self.pages = dense.pages
        self.pool = int(pool)
        self.name = name
        if tokens is None and (dense.index.prompts.passage or dense.index.manifest.get("span_pages")):
            raise NclueError(
                f"{dense.index.directory}: MaxSim over a prompted or page-spanning dense index reads its token index; "
                f"build it with `nclue index {dense.index.directory.parents[2]} --tokens`"
            )
        self._first, self._end = page_chunk_ranges(dense.index.chunks, self.pages.n_pages)
        self._tokens: OrderedDict[int, np.ndarray] = OrderedDict()
        self._cached = 0
        self._scores: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._page_encoder: Encoder | None = None

    def page_vectors(self, row: int) -> np.ndarray:
        """The ``(n, dim)`` float32 token vectors of page ``row``: decoded from its slice of the token
        index, or recomputed with the index's encoder when there is none; cached (module docstring)."""
        vectors = self._tokens.get(row)
        if vectors is not None:
            self._tokens.move_to_end(row)
            return vectors
        first, end = int(self._first[row]), int(self._end[row])
        if self.tokens is not None:
            vectors = self.tokens.tokens(first, end)
        else:
            texts, chunks = self.dense.store_texts(), self.dense.index.chunks
            parts = self.page_encoder.token_vectors(
                [texts[row][int(chunks.start[i]) : int(chunks.end[i])] for i in range(first, end)]
            )
            dim = int(self.dense.vectors.shape[1])
            vectors = np.concatenate(parts) if parts else np.zeros((0, dim), np.float32)
        self._tokens[row] = vectors
        self._cached += len(vectors)
        while self._cached > CACHE_TOKENS and len(self._tokens) > 1:
            self._cached -= len(self._tokens.popitem(last=False)[1])
        return vectors

    @property
    def page_encoder(self) -> Encoder:
        """The encoder that recomputes page token vectors when there is no token index: the query
        encoder's model and backend without its query prompt (a page is not a query)."""
        if self._page_encoder is None:
            self._page_encoder = unprompted(self.dense.encoder)
        return self._page_encoder

    def query_tokens(self, text: str) -> np.ndarray:
        """Token vectors of ``text`` (alone); its pooled vector from the same forward pass goes to the
        dense backbone's cache."""
        from nclue.models.encoder import encode_with_tokens

        pooled, tokens = encode_with_tokens(self.dense.encoder, [text])
        self.dense.remember(text, pooled[0])
        return tokens[0]

    def text_scores(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """``(page rows, MaxSim scores)`` of one text's candidate pool (cached by text)."""
        if text not in self._scores:
            query = self.query_tokens(text)
            dense = self.dense.page_scores([text])[0]
            k = min(self.pool, len(dense))
            candidates = np.argpartition(-dense, k - 1)[:k] if k else np.zeros(0, np.int64)
            candidates = np.sort(candidates[dense[candidates] > 0])
            scores = np.fromiter(
                (maxsim(query, self.page_vectors(int(r))) for r in candidates), np.float32, len(candidates)
            )
            self._scores[text] = (candidates, scores)
        self._scores.move_to_end(text)
        while len(self._scores) > CACHE_TEXTS:
            self._scores.popitem(last=False)
        return self._scores[text]

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` float32: MaxSim on each text's dense top-``pool`` pages, 0 elsewhere."""
        out = np.zeros((len(texts), self.pages.n_pages), dtype=np.float32)
        for t, text in enumerate(texts):
            rows, scores = self.text_scores(text)
            out[t, rows] = scores
        return out


def load_backbone(workspace: Workspace, variant: str | None) -> MaxSimBackbone:
    """Registry hook: MaxSim over the collection's dense index and its token index (``maxsim[:variant]``)."""
    from nclue.index.tokens import open_token_index

    dense = workspace.backbone("dense" if variant is None else f"dense:{variant}")
    assert isinstance(dense, DenseBackbone)
    tokens = open_token_index(workspace.collection_dir, dense.index)
    return MaxSimBackbone(dense, tokens, name="maxsim" if variant is None else f"maxsim:{variant}")
