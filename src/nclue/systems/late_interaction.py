"""The ``maxsim`` backbone: late-interaction (ColBERT-style MaxSim) scoring on a candidate pool.

What it is: ColBERT's MaxSim operator (Khattab & Zaharia, SIGIR 2020) applied to the
*contextual token vectors of the dense index's bi-encoder* (all-MiniLM-L6-v2 by
default) — not a ColBERT-trained model. For query tokens ``q_i`` and the tokens ``d_j``
of all chunks of page ``p`` (every vector L2-normalised, special tokens included)::

    maxsim(q, p) = (1 / |q|) Σ_i max_j ⟨q_i, d_j⟩

Token vectors for a whole collection would not fit in memory, so MaxSim rescoring runs on
a candidate pool: for each text, the ``POOL_PAGES`` best pages under the dense backbone's
cosine; every other page scores 0 (no support, as in every backbone). Page token vectors
are computed on demand with the index's own encoder and kept in an LRU cache.
``maxsim:VARIANT`` selects the dense index exactly like ``dense:VARIANT``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from nclue.errors import NclueError
from nclue.systems.dense import DenseBackbone

if TYPE_CHECKING:
    from nclue.systems.registry import Workspace

POOL_PAGES = 20  # pages encoded per text: token vectors cost one encoder pass per pooled page
CACHE_PAGES = 2000


def maxsim(query: np.ndarray, doc: np.ndarray) -> float:
    """``(1/|q|) Σ_i max_j ⟨q_i, d_j⟩`` for ``(n_q, dim)`` and ``(n_d, dim)`` normalised token vectors."""
    if not len(query) or not len(doc):
        return 0.0
    return float((query @ doc.T).max(axis=1).mean())


class MaxSimBackbone:
    """Dense candidate pool (top ``pool`` pages per text) rescored by token-level MaxSim."""

    def __init__(self, dense: DenseBackbone, pool: int = POOL_PAGES, name: str = "maxsim") -> None:
        if dense.index.backend == "static":
            raise NclueError(
                f"{dense.index.directory}: maxsim needs contextual token vectors, which a static model has not; "
                "use a dense index built with --dense-backend torch or onnx"
            )
        self.dense = dense
        self.pages = dense.pages
        self.pool = int(pool)
        self.name = name
        self._tokens: OrderedDict[int, np.ndarray] = OrderedDict()

    def page_tokens(self, rows: Sequence[int]) -> list[np.ndarray]:
        """Token vectors (float16, all chunks stacked) of the given page rows, cached."""
        missing = [r for r in dict.fromkeys(int(r) for r in rows) if r not in self._tokens]
        if missing:
            chunks = self.dense.index.chunks
            texts = self.dense.store_texts()
            which = np.flatnonzero(np.isin(chunks.page, missing))
            chunk_texts = [texts[int(chunks.page[i])][int(chunks.start[i]) : int(chunks.end[i])] for i in which]
            vectors = self.dense.encoder.token_vectors(chunk_texts)
            per_page: dict[int, list[np.ndarray]] = {r: [] for r in missing}
            for i, v in zip(which, vectors):
                per_page[int(chunks.page[i])].append(v.astype(np.float16))
            dim = int(self.dense.vectors.shape[1])
            for r in missing:
                self._tokens[r] = np.concatenate(per_page[r]) if per_page[r] else np.zeros((0, dim), np.float16)
        out = []
        for r in rows:
            self._tokens.move_to_end(int(r))
            out.append(self._tokens[int(r)])
        while len(self._tokens) > CACHE_PAGES:
            self._tokens.popitem(last=False)
        return out

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` float32: MaxSim on each text's dense top-``pool`` pages, 0 elsewhere."""
        dense = self.dense.page_scores(texts)
        out = np.zeros_like(dense)
        queries = self.dense.encoder.token_vectors(list(texts))
        for t, query in enumerate(queries):
            k = min(self.pool, dense.shape[1])
            candidates = np.argpartition(-dense[t], k - 1)[:k] if k else np.zeros(0, np.int64)
            candidates = candidates[dense[t, candidates] > 0]
            for row, tokens in zip(candidates, self.page_tokens(candidates)):
                out[t, row] = maxsim(query, tokens.astype(np.float32))
        return out


def load_backbone(workspace: Workspace, variant: str | None) -> MaxSimBackbone:
    """Registry hook: MaxSim over the collection's dense index (``maxsim[:variant]``)."""
    dense = workspace.backbone("dense" if variant is None else f"dense:{variant}")
    assert isinstance(dense, DenseBackbone)
    return MaxSimBackbone(dense, name="maxsim" if variant is None else f"maxsim:{variant}")
