"""Token-window chunking of page texts with the encoder's own tokenizer.

A page of ``n`` tokens (no special tokens) is cut into windows of at most ``window`` tokens,
each starting ``overlap`` tokens before the previous one ends, until the page's last token is
covered (:func:`word_windows`: every token is in a window and no window is empty). A window that
would start inside a word (a word-piece continuation) starts at that word's first piece instead,
so chunks never begin with half a word, and its end moves back with it, so no chunk holds more
tokens than the encoder reads. Windows are mapped back to character spans through the
tokenizer's offsets, and a chunk's text is that span of the page text, so re-tokenising it gives
(up to word-piece boundary effects) the same tokens. The default ``window`` is the model's
``max_seq_length − 2`` (room for ``[CLS]``/``[SEP]``). Pages without tokens produce no chunk.

**Page-spanning chunks** (:func:`chunk_documents`): a document's pages are joined with
:data:`PAGE_SEPARATOR` into one text and the same windows run over the whole document, so a
chunk may start on one page and end on a later one (never in another document). Each token
belongs to the page holding its last character; a chunk *covers* the pages of its tokens that are
not whitespace alone (``cover_pages[cover_offsets[i]:cover_offsets[i+1]]``, ascending), so a page
without text is never covered, even where a byte-level BPE makes a token of its page separator.
``page`` is the chunk's first covered page, ``start`` a character offset in that page, ``end`` one
in its last covered page. A page's score is the best over the chunks that cover it
(:meth:`Chunks.page_groups`).

A chunk's encoded text is ``prompt +`` its span (:meth:`Chunks.texts`): the passage prompt
of the index (:func:`nclue.models.st_layout.resolve_prompts`), empty by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nclue.errors import NclueError

PAGE_SEPARATOR = "\n"
"""What joins consecutive pages of a document into the text that page-spanning windows cut."""


@dataclass(frozen=True)
class Chunks:
    """Chunk → page row map and character spans, in page order (``page`` is non-decreasing).

    Per-page chunks have ``cover_offsets``/``cover_pages`` ``None`` (chunk ``i`` covers page
    ``page[i]`` only); page-spanning chunks carry them (module docstring). ``prompt`` is prepended
    to every chunk text.
    """

    page: np.ndarray
    start: np.ndarray
    end: np.ndarray
    cover_offsets: np.ndarray | None = None
    cover_pages: np.ndarray | None = None
    prompt: str = ""

    def __len__(self) -> int:
        return int(len(self.page))

    @property
    def spanning(self) -> bool:
        """Whether chunks may cover several pages (built by :func:`chunk_documents`)."""
        return self.cover_pages is not None

    def last_page(self, i: int) -> int:
        """Page row holding chunk ``i``'s last token (where ``end`` is measured)."""
        if self.cover_pages is None or self.cover_offsets is None:
            return int(self.page[i])
        return int(self.cover_pages[int(self.cover_offsets[i + 1]) - 1])

    def span(self, page_texts: Sequence[str], i: int) -> str:
        """Chunk ``i``'s text without the prompt: its first page from ``start``, the pages between,
        its last page up to ``end``, joined by :data:`PAGE_SEPARATOR`."""
        first, last = int(self.page[i]), self.last_page(i)
        if first == last:
            return page_texts[first][int(self.start[i]) : int(self.end[i])]
        middle = [
            page_texts[first][int(self.start[i]) :],
            *page_texts[first + 1 : last],
            page_texts[last][: int(self.end[i])],
        ]
        return PAGE_SEPARATOR.join(middle)

    def texts(self, page_texts: Sequence[str], rows: slice | None = None) -> list[str]:
        """Encoded chunk texts, ``prompt +`` span (optionally a slice of chunks), cut from ``page_texts``."""
        sel = range(len(self.page))[rows] if rows is not None else range(len(self.page))
        return [self.prompt + self.span(page_texts, i) for i in sel]

    def page_groups(self) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """``(columns, starts, rows)`` for a page's best chunk score: take the chunk-score columns
        ``columns`` (``None`` = all, in order), then ``np.maximum.reduceat(..., starts)`` gives
        one maximum per page row ``rows`` (every chunk covering that page)."""
        if self.cover_pages is None or self.cover_offsets is None:
            page = self.page
            starts = np.flatnonzero(np.r_[True, page[1:] != page[:-1]]) if len(page) else page
            return None, starts, page[starts] if len(page) else page
        owner = np.repeat(np.arange(len(self.page)), np.diff(self.cover_offsets))
        order = np.argsort(self.cover_pages, kind="stable")
        pages = self.cover_pages[order]
        starts = np.flatnonzero(np.r_[True, pages[1:] != pages[:-1]]) if len(pages) else pages
        return owner[order], starts, pages[starts] if len(pages) else pages

    def arrays(self) -> dict[str, np.ndarray]:
        """What ``chunks.npz`` stores: ``page``, ``start``, ``end`` (and the cover map when spanning)."""
        out = {"page": self.page, "start": self.start, "end": self.end}
        if self.cover_pages is not None and self.cover_offsets is not None:
            out.update(cover_offsets=self.cover_offsets, cover_pages=self.cover_pages)
        return out


def _check_windows(window: int, overlap: int) -> None:
    if window < 1:
        raise NclueError(f"chunk window must be at least 1 token, got {window}")
    if not 0 <= overlap < window:
        raise NclueError(f"chunk overlap must be in [0, window); got overlap={overlap}, window={window}")


def _word_start(words: Sequence[int | None], s: int) -> int:
    """Token ``s`` moved back to the first piece of its word."""
    while s > 0 and words[s] is not None and words[s - 1] == words[s]:
        s -= 1
    return s


def word_windows(
    words: Sequence[int | None], n_tokens: int, window: int, overlap: int, max_chunks: int | None = None
) -> list[tuple[int, int]]:
    """``(first, last)`` token of every window over ``n_tokens`` tokens, each at most ``window`` long.

    The first window starts at token 0; each next one starts ``overlap`` tokens before the previous
    end, moved back to the first piece of its word (a chunk never opens on ``##bian``), or inside the
    word when that word is longer than the stride ``window − overlap``. Windows run until the last
    token is covered, so every token is in a window and none holds more than ``window`` tokens (the
    encoder would silently cut them). Without word-piece continuations the starts are the plain
    grid ``0, window − overlap, 2(window − overlap), …``. ``max_chunks`` keeps the first windows only.
    """
    out: list[tuple[int, int]] = []
    s = 0
    while n_tokens > 0 and (max_chunks is None or len(out) < max_chunks):
        e = min(s + window, n_tokens) - 1
        out.append((s, e))
        if e >= n_tokens - 1:
            break
        nxt = _word_start(words, e + 1 - overlap)
        s = nxt if nxt > s else e + 1 - overlap
    return out


PREFIX_CHARS_PER_TOKEN = 5
"""Characters read per token a page's first ``max_chunks`` windows need (pages average 3.3–3.6
characters per MiniLM token on the Debian corpora); a page whose prefix falls short is read whole."""

PREFIX_MARGIN = 16
"""Tokens a prefix must hold beyond the windows it serves, so none of them ends near the cut."""


def _prefix(text: str, limit: int) -> str:
    """``text`` cut at its last blank at or before ``limit`` characters (whole when not longer)."""
    if len(text) <= limit:
        return text
    cut = limit
    while cut > 0 and not text[cut].isspace():
        cut -= 1
    return text[:cut] if cut > 0 else text


def _settled(words: Sequence[int | None]) -> int:
    """Tokens of a prefix before its last word: the tokenizer's own word boundaries lie before them,
    so the text after the cut cannot change them (the last word may go on past the cut)."""
    return list(words).index(words[-1]) if len(words) else 0  # a word's pieces are consecutive


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
    window, the usual bi-encoder practice when encoding time is the constraint). Then only a
    prefix of each page is tokenised, cut at a blank. The tokens of the prefix's words before its
    last one are the whole page's (the tokenizer itself ended those words before the cut; its
    last word may run on, e.g. where the normaliser deletes the character cut at); a prefix
    holding :data:`PREFIX_MARGIN` such tokens more than the windows need gives the same windows,
    and any other is tokenised again whole, as is every page of a tokenizer without a
    pre-tokenizer (no words). Why: on the demo collection the whole pages
    take 10.9 s with one tokenizer thread (`make` sets `TOKENIZERS_PARALLELISM=false`), the prefixes 6.8 s.
    """
    if max_chunks is not None and max_chunks < 1:
        raise NclueError(f"max chunks per page must be at least 1, got {max_chunks}")
    _check_windows(window, overlap)
    needed = None if max_chunks is None or tokenizer.pre_tokenizer is None else max_chunks * window + PREFIX_MARGIN
    pages: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    for base in range(0, len(page_texts), batch):
        texts = list(page_texts[base : base + batch])
        read = texts if needed is None else [_prefix(t, needed * PREFIX_CHARS_PER_TOKEN) for t in texts]
        encodings = tokenizer.encode_batch(read, add_special_tokens=False)
        short = [i for i, enc in enumerate(encodings) if read[i] is not texts[i] and _settled(enc.word_ids) < needed]
        if short:
            for i, enc in zip(short, tokenizer.encode_batch([texts[i] for i in short], add_special_tokens=False)):
                encodings[i] = enc
        for offset, enc in enumerate(encodings):
            spans = enc.offsets
            words = enc.word_ids
            for s, e in word_windows(words, len(spans), window, overlap, max_chunks):
                pages.append(base + offset)
                starts.append(spans[s][0])
                ends.append(spans[e][1])
    return Chunks(
        page=np.asarray(pages, dtype=np.int32),
        start=np.asarray(starts, dtype=np.int32),
        end=np.asarray(ends, dtype=np.int32),
    )


def chunk_documents(
    page_texts: Sequence[str],
    doc_offsets: Sequence[int],
    tokenizer,  # noqa: ANN001 - tokenizers.Tokenizer
    window: int,
    overlap: int,
    batch: int = 64,
) -> Chunks:
    """Page-spanning chunks (module docstring): windows over each document's joined pages, where
    document ``d`` is page rows ``doc_offsets[d]:doc_offsets[d+1]``."""
    _check_windows(window, overlap)
    pages: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    covers: list[np.ndarray] = []
    bounds = [(int(doc_offsets[d]), int(doc_offsets[d + 1])) for d in range(len(doc_offsets) - 1)]
    for base in range(0, len(bounds), batch):
        docs = bounds[base : base + batch]
        joined = [PAGE_SEPARATOR.join(page_texts[lo:hi]) for lo, hi in docs]
        encodings = tokenizer.encode_batch(joined, add_special_tokens=False)
        for (lo, hi), text, enc in zip(docs, joined, encodings, strict=True):
            lengths = [len(t) + len(PAGE_SEPARATOR) for t in page_texts[lo:hi]]
            page_start = np.r_[0, np.cumsum(lengths)[:-1]] if lengths else np.zeros(0, np.int64)
            token_page = np.searchsorted(page_start, [max(a, b - 1) for a, b in enc.offsets], side="right") - 1
            # A token that is only whitespace (a byte-level BPE's "Ċ" for the page separator) covers no
            # page: the separator after an empty page would otherwise make that page covered.
            blank = np.fromiter((not text[a:b].strip() for a, b in enc.offsets), bool, len(enc.offsets))
            for s, e in word_windows(enc.word_ids, len(enc.offsets), window, overlap):
                inked = token_page[s : e + 1][~blank[s : e + 1]]
                covered = np.unique(inked if len(inked) else token_page[s : e + 1])
                first, last = int(covered[0]), int(covered[-1])
                pages.append(lo + first)
                starts.append(max(0, enc.offsets[s][0] - int(page_start[first])))
                ends.append(min(enc.offsets[e][1] - int(page_start[last]), lengths[last] - len(PAGE_SEPARATOR)))
                covers.append(lo + covered)
    return Chunks(
        page=np.asarray(pages, dtype=np.int32),
        start=np.asarray(starts, dtype=np.int32),
        end=np.asarray(ends, dtype=np.int32),
        cover_offsets=np.r_[0, np.cumsum([len(c) for c in covers], dtype=np.int64)].astype(np.int64),
        cover_pages=np.concatenate(covers).astype(np.int32) if covers else np.zeros(0, np.int32),
    )
