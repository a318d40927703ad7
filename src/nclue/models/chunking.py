"""Token-window chunking of page texts with the encoder's own tokenizer.

A page of ``n`` tokens (no special tokens) is cut into windows of ``window`` tokens that
start every ``window − overlap`` tokens; the last window ends at the page's last token
(so every token is covered and no window is empty). Windows are mapped back to
character spans through the tokenizer's offsets, and a chunk's text is that span of the
page text, so re-tokenising it gives (up to word-piece boundary effects) the same
tokens. A window that would start inside a word (a word-piece continuation) starts at
that word's first piece instead, so chunks never begin with half a word. The default ``window`` is the model's ``max_seq_length − 2`` (room for
``[CLS]``/``[SEP]``). Pages without tokens produce no chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nclue.errors import NclueError


@dataclass(frozen=True)
class Chunks:
    """Chunk → page row map and character spans, in page order (``page`` is non-decreasing)."""

    page: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __len__(self) -> int:
        return int(len(self.page))

    def texts(self, page_texts: Sequence[str], rows: slice | None = None) -> list[str]:
        """Chunk texts (optionally a slice of chunks) cut from ``page_texts``."""
        sel = range(len(self.page))[rows] if rows is not None else range(len(self.page))
        return [page_texts[int(self.page[i])][int(self.start[i]) : int(self.end[i])] for i in sel]


def window_starts(n_tokens: int, window: int, overlap: int) -> list[int]:
    """Token start of every window for a text of ``n_tokens`` tokens."""
    if n_tokens <= 0:
        return []
    stride = window - overlap
    starts = [0]
    while starts[-1] + window < n_tokens:
        starts.append(starts[-1] + stride)
    return starts


def chunk_pages(
    page_texts: Sequence[str],
    tokenizer,
    window: int,
    overlap: int,
    batch: int = 512,  # noqa: ANN001
    max_chunks: int | None = None,
) -> Chunks:
    """Chunk every page text (``tokenizer``: a ``tokenizers.Tokenizer`` without truncation).

    ``max_chunks`` keeps only each page's first windows (``1`` = the page truncated to one
    window, the usual bi-encoder practice when encoding time is the constraint).
    """
    if max_chunks is not None and max_chunks < 1:
        raise NclueError(f"max chunks per page must be at least 1, got {max_chunks}")
    if window < 1:
        raise NclueError(f"chunk window must be at least 1 token, got {window}")
    if not 0 <= overlap < window:
        raise NclueError(f"chunk overlap must be in [0, window); got overlap={overlap}, window={window}")
    pages: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    for base in range(0, len(page_texts), batch):
        encodings = tokenizer.encode_batch(list(page_texts[base : base + batch]), add_special_tokens=False)
        for offset, enc in enumerate(encodings):
            spans = enc.offsets
            words = enc.word_ids
            for s in window_starts(len(spans), window, overlap)[:max_chunks]:
                e = min(s + window, len(spans)) - 1
                while s > 0 and words[s] is not None and words[s - 1] == words[s]:
                    s -= 1
                pages.append(base + offset)
                starts.append(spans[s][0])
                ends.append(spans[e][1])
    return Chunks(
        page=np.asarray(pages, dtype=np.int32),
        start=np.asarray(starts, dtype=np.int32),
        end=np.asarray(ends, dtype=np.int32),
    )
