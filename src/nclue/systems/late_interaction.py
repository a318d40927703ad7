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
alone, and each pooled page is scored alone), so they are cached by text and a run's output never
depends on what ran before it, nor on which of the paths below computed a score:

* **Only what is read.** The pooled pages are scored straight from the token index's codes
  (:meth:`~nclue.index.tokens.TokenIndex.maxsim`: decoded a tile at a time into the CPU cache by a
  compiled kernel, the pages of one text in parallel), never decoded whole. Recomputed page token
  vectors (no token index) are cached, page by page, up to ``CACHE_TOKENS`` vectors, since
  recomputing costs an encoder pass. :meth:`MaxSimBackbone.scores_at` scores a text on given pages
  only: a joint system needs its conditions' scores on the pages it surfaces, not on their pools.
* **Encoding beside scoring.** :meth:`MaxSimBackbone.prefetch` (``nclue run`` hands it each batch of
  queries) makes the pools in a pipeline of two threads, :data:`PREFETCH_GROUP` texts at a time: one
  encodes a group (one encoder batch where that gives each text its vectors alone,
  :mod:`nclue.models.batching`), the other computes the group's dense rows (one row product per
  text) and candidate pages, while the main thread scores the pools already made. ONNX Runtime,
  BLAS and the kernel release the GIL, so the three stages share the machine's cores instead of
  running one after the other.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nclue.errors import NclueError
from nclue.models.batching import encode_with_tokens_as_alone
from nclue.models.encoder import unprompted
from nclue.systems.dense import DenseBackbone

if TYPE_CHECKING:
    from nclue.index.tokens import TokenIndex
    from nclue.models.chunking import Chunks
    from nclue.models.encoder import Encoder
    from nclue.systems.registry import Workspace

POOL_PAGES = 20  # pages rescored per text
CACHE_TOKENS = 1 << 18
"""Recomputed page token vectors kept (LRU by page): 384 MiB of float32 at 384 dimensions."""
CACHE_TEXTS = 4096
"""Texts whose pools are kept (LRU). A pool not yet scored whole (a condition read only where a joint
system surfaces pages) also keeps its query tokens, 1.5 KiB each: at most about 4096 × 30 tokens
= 180 MiB for long condition texts, usually far less."""
PREFETCH_GROUP = 16
"""Texts encoded together by :meth:`MaxSimBackbone.prefetch`'s second thread (one batch where the encoder
is batch-independent, :mod:`nclue.models.batching`): batches of 16 cost 2.4 ms a text against 3.7 ms
alone."""
PREFETCH_FIRST = 4
"""Texts of the second thread's first group, smaller so that the scoring thread starts sooner."""


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
        self._pools: OrderedDict[str, TextPool] = OrderedDict()
        self._page_encoder: Encoder | None = None

    def page_vectors(self, row: int) -> np.ndarray:
        """The ``(n, dim)`` float32 token vectors of page ``row``: decoded from its slice of the token
        index (a fresh array), or recomputed with the index's encoder when there is none (cached,
        module docstring)."""
        first, end = int(self._first[row]), int(self._end[row])
        if self.tokens is not None:
            return self.tokens.tokens(first, end)
        vectors = self._tokens.get(row)
        if vectors is not None:
            self._tokens.move_to_end(row)
            return vectors
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

    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """``(pooled vector, token vectors)`` of ``text`` encoded alone, from one forward pass."""
        pooled, tokens = encode_with_tokens_as_alone(self.dense.encoder, [text])
        return pooled[0], tokens[0]

    def new_pools(self, texts: Sequence[str]) -> list[TextPool]:
        """The pools of ``texts``, nothing scored yet: each text's query tokens (as encoded alone; the
        pooled vector of the same pass goes to the dense backbone's cache) and its ``pool`` best dense
        pages."""
        return self.pools_of(texts, encode_with_tokens_as_alone(self.dense.encoder, texts))

    def pools_of(self, texts: Sequence[str], encoded: tuple[np.ndarray, list[np.ndarray]] | Future) -> list[TextPool]:
        """:meth:`new_pools` from the texts' ``encoded`` ``(pooled, tokens)`` (or a future of them)."""
        pooled, tokens = encoded.result() if isinstance(encoded, Future) else encoded
        for text, vector in zip(texts, pooled, strict=True):
            self.dense.remember(text, vector)
        pools = []
        for text_tokens, dense in zip(tokens, self.dense.page_scores(list(texts)), strict=True):
            k = min(self.pool, len(dense))
            candidates = np.argpartition(-dense, k - 1)[:k] if k else np.zeros(0, np.int64)
            candidates = np.sort(candidates[dense[candidates] > 0])
            pools.append(TextPool(text_tokens, candidates, np.full(len(candidates), np.nan, np.float32)))
        return pools

    def text_pool(self, text: str) -> TextPool:
        """The pool of ``text`` (:meth:`new_pools`), cached by text."""
        pool = self._pools.get(text)
        if pool is None:
            pool = self.keep(text, self.new_pools([text])[0])
        self._pools.move_to_end(text)
        return pool

    def keep(self, text: str, pool: TextPool) -> TextPool:
        """Cache ``pool`` as the pool of ``text`` (LRU, :data:`CACHE_TEXTS`)."""
        self._pools[text] = pool
        while len(self._pools) > CACHE_TEXTS:
            self._pools.popitem(last=False)
        return pool

    def fill(self, pool: TextPool, wanted: np.ndarray | None = None) -> None:
        """Score the pool's pages not yet scored, of all of them or of the positions ``wanted``."""
        if pool.tokens is None:
            return
        todo = np.flatnonzero(np.isnan(pool.scores))
        if wanted is not None:
            todo = np.intersect1d(todo, wanted)
        rows = pool.rows[todo]
        if self.tokens is not None:
            pool.scores[todo] = self.tokens.maxsim(pool.tokens, self._first[rows], self._end[rows])
        else:
            for j, row in zip(todo.tolist(), rows.tolist(), strict=True):
                pool.scores[j] = maxsim(pool.tokens, self.page_vectors(row))
        if not np.isnan(pool.scores).any():
            pool.tokens = None  # complete: the query tokens are no longer needed

    def text_scores(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """``(page rows, MaxSim scores)`` of one text's whole candidate pool (cached by text)."""
        pool = self.text_pool(text)
        self.fill(pool)
        return pool.rows, pool.scores

    def prefetch(self, texts: Sequence[str], unscored: Sequence[str] = ()) -> None:
        """Make the pools of ``unscored`` and ``texts`` (in that order) in two more threads, one encoding
        and one computing dense rows, :data:`PREFETCH_FIRST` texts and then :data:`PREFETCH_GROUP` at a
        time, while this thread scores the pools of ``texts`` already made (module docstring).

        The scores are those of :meth:`text_scores`: every text gets the vectors it has encoded alone
        and every page is scored alone. Until the last group is made, this thread's kernels and BLAS
        use one thread each, so that the stages share the cores instead of contending for them; then
        every core again. Only the rows thread touches the dense backbone meanwhile. Without a token
        index there are no other threads: recomputing page token vectors runs the same encoder, which
        they would contend for."""
        todo = [t for t in dict.fromkeys([*unscored, *texts]) if t not in self._pools]
        cuts = [0, *range(min(PREFETCH_FIRST, len(todo)), len(todo), PREFETCH_GROUP), len(todo)]
        groups = [todo[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
        score = set(texts)
        with ExitStack() as stack:
            limits = stack.enter_context(ExitStack())
            if self.tokens is None or len(todo) < 2:
                made: Iterator[list[TextPool]] = map(self.new_pools, groups)
            else:
                limits.enter_context(single_threaded())
                encoder, rows = (
                    stack.enter_context(ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"nclue-{name}"))
                    for name in ("encode", "rows")
                )
                encoded = [encoder.submit(encode_with_tokens_as_alone, self.dense.encoder, g) for g in groups]
                pending = [rows.submit(self.pools_of, g, e) for g, e in zip(groups, encoded, strict=True)]
                stack.callback(lambda: [f.cancel() for f in (*encoded, *pending)])  # on an error, stop at once
                made = (f.result() for f in pending)
            for number, (group, pools) in enumerate(zip(groups, made, strict=True), 1):
                if number == len(groups):
                    limits.close()  # the other threads are done: the scoring gets every core again
                for text, pool in zip(group, pools, strict=True):
                    self.keep(text, pool)
                    if text in score:
                        self.fill(pool)

    def prefetch_joint(self, texts: Sequence[str], conditions: Sequence[Sequence[str]]) -> None:
        """:meth:`prefetch` for a joint system's batch: each request's joint text (``texts[i]``) scored
        whole, its ``conditions[i]`` only made (the system reads them on its surfaced pages,
        :meth:`scores_at`). The pools are made request by request, the conditions beside their joint
        text, so that the scoring thread is not left waiting for a batch's conditions at its end."""
        order = [text for joint, own in zip(texts, conditions, strict=True) for text in (joint, *own)]
        self.prefetch(texts, unscored=order)

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` float32: MaxSim on each text's dense top-``pool`` pages, 0 elsewhere."""
        out = np.zeros((len(texts), self.pages.n_pages), dtype=np.float32)
        for t, text in enumerate(texts):
            rows, scores = self.text_scores(text)
            out[t, rows] = scores
        return out

    def scores_at(self, texts: Sequence[str], rows: np.ndarray) -> np.ndarray:
        """``(len(texts), len(rows))`` float32: :meth:`page_scores` at the page ``rows`` only, computing
        MaxSim on no pooled page outside them."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(texts), len(rows)), dtype=np.float32)
        for t, text in enumerate(texts):
            pool = self.text_pool(text)
            at = np.minimum(np.searchsorted(pool.rows, rows), max(len(pool.rows) - 1, 0))
            found = pool.rows[at] == rows if len(pool.rows) else np.zeros(len(rows), dtype=bool)
            self.fill(pool, np.unique(at[found]))
            out[t, found] = pool.scores[at[found]]
        return out


@contextmanager
def single_threaded() -> Iterator[None]:
    """BLAS libraries at one thread (process-wide) and numba's parallel loops at one thread (in the
    calling thread) for the duration; both restored after."""
    from threadpoolctl import threadpool_limits

    try:
        import numba
    except ImportError:  # without numba there is no kernel to limit
        numba = None
    before = numba.get_num_threads() if numba is not None else 0
    with threadpool_limits(1, user_api="blas"):
        if numba is not None:
            numba.set_num_threads(1)
        try:
            yield
        finally:
            if numba is not None:
                numba.set_num_threads(before)


@dataclass
class TextPool:
    """One text's MaxSim pool: its sorted candidate page ``rows``, their ``scores`` (NaN until
    computed) and, while any is missing, the text's query ``tokens``."""

    tokens: np.ndarray | None
    rows: np.ndarray
    scores: np.ndarray


def load_backbone(workspace: Workspace, variant: str | None) -> MaxSimBackbone:
    """Registry hook: MaxSim over the collection's dense index and its token index (``maxsim[:variant]``)."""
    from nclue.index.tokens import open_token_index

    dense = workspace.backbone("dense" if variant is None else f"dense:{variant}")
    assert isinstance(dense, DenseBackbone)
    tokens = open_token_index(workspace.collection_dir, dense.index)
    return MaxSimBackbone(dense, tokens, name="maxsim" if variant is None else f"maxsim:{variant}")
