"""How indexes are built, as values whose defaults are written once: :class:`BM25Params` for the
lexical index, :class:`DenseOptions` for the dense and token indexes.

A :class:`DenseOptions` travels from ``nclue index`` / ``nclue demo`` (inside
:class:`nclue.index.builders.IndexOptions`) through :func:`nclue.index.dense.build_dense_index`
into the encoder pass and the token pass (:func:`nclue.index.tokens.tokens_pass`); no function
below the CLI retypes a default, and the CLI's option defaults are read from here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any

from nclue.errors import NclueError
from nclue.index.token_codec import DEFAULT_BITS
from nclue.models.encoder import BACKENDS, DEFAULT_BACKEND, DEFAULT_BATCH_SIZE

DEFAULT_OVERLAP = 32
"""Tokens shared by consecutive windows of one page."""
DEFAULT_SHARD_SIZE = 1024
"""Chunks per resumable shard of an encoder pass."""
DTYPES = ("float32", "float16")
METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
"""The bm25s BM25 variants."""


@dataclass(frozen=True)
class BM25Params:
    """BM25 parameters and variant (any bm25s ``method``)."""

    k1: float = 1.5
    b: float = 0.75
    delta: float = 0.5
    method: str = "lucene"

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise NclueError(f"BM25 variant {self.method!r} is not one of {', '.join(METHODS)}")
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise NclueError(
                f"BM25 parameters out of range: need k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}"
            )
        if (self.method == "bm25+" and self.k1 == 0) or (self.method == "bm25l" and self.k1 + self.delta == 0):
            raise NclueError(
                f"BM25 variant {self.method} gives absent terms the weight 0/0 at k1={self.k1}, delta={self.delta}; "
                "use k1 > 0" + (" or delta > 0" if self.method == "bm25l" else "")
            )


@dataclass(frozen=True)
class DenseOptions:
    """Settings of a dense index (they name and define its vectors) and of the pass that builds it.

    Index settings: ``model_path`` (a sentence-transformers directory; ``None`` = the bundled
    all-MiniLM-L6-v2), ``backend`` (:data:`nclue.models.encoder.BACKENDS`), ``window`` (tokens per
    chunk, prompt excluded; ``None`` = the model's ``max_seq_length − 2`` less the passage prompt's
    tokens, and a larger one is refused), ``overlap``, ``max_chunks_per_page`` (keep each page's
    first windows only; ``None`` = whole pages), ``dtype`` of the stored vectors, ``shard_size``,
    ``token_bits`` of a token index built in the same pass, ``query_prompt`` / ``passage_prompt``
    (``None`` = the model's own, :func:`nclue.models.st_layout.resolve_prompts`; ``""`` = none),
    ``span_pages`` (windows over each document's joined pages instead of each page,
    :func:`nclue.models.chunking.chunk_documents`). How the pass runs (same vectors whatever they
    are): ``batch_size``, ``threads`` of one in-process encoder, ``workers`` encoder processes
    (``None``: :func:`nclue.index.encoding.plan_processes`).
    """

    model_path: str | os.PathLike[str] | None = None
    backend: str = DEFAULT_BACKEND
    window: int | None = None
    overlap: int = DEFAULT_OVERLAP
    max_chunks_per_page: int | None = None
    dtype: str = "float32"
    shard_size: int = DEFAULT_SHARD_SIZE
    token_bits: int = DEFAULT_BITS
    batch_size: int = DEFAULT_BATCH_SIZE
    threads: int | None = None
    workers: int | None = None
    query_prompt: str | None = None
    passage_prompt: str | None = None
    span_pages: bool = False

    def checked(self) -> DenseOptions:
        """``self`` when every value is usable; else one error naming the setting and what it accepts."""
        if self.backend not in BACKENDS:
            raise NclueError(f"unknown dense backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")
        if self.dtype not in DTYPES:
            raise NclueError(f"vector dtype must be float32 or float16, got {self.dtype!r}")
        if self.shard_size < 1:
            raise NclueError(f"shard size must be positive, got {self.shard_size}")
        if self.span_pages and self.max_chunks_per_page is not None:
            raise NclueError(
                "--dense-span-pages windows run over whole documents, so --dense-max-chunks (a per-page cap) "
                "does not apply; drop one of the two"
            )
        return self

    def with_settings(self, **settings: Any) -> DenseOptions:
        """A copy with ``settings`` changed; an unknown name is refused with the list of known ones."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise NclueError(f"unknown dense index setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return replace(self, **settings)
