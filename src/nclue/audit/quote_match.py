"""Quote normalisation (shared with the packet's JavaScript) and OCR-tolerant approximate matching.

**Quotes** (``docs/audit.md#validation``). A quote is checked against the text of the page it
was selected on after the same normalisation on both sides: Unicode NFKC, soft hyphens removed,
lower case, every run of white space (the class :data:`SPACE_CLASS`, spelled identically in
Python's ``re`` and JavaScript's ``RegExp``, and handed to the packet in its settings) replaced
by one space, ends trimmed. A quote is *non-trivial* with at least
:data:`~nclue.audit.audit_params.MIN_QUOTE_CHARS` normalised characters.

**Fuzzy hits** (the OCR-tolerant candidate route). Page text and surface form are reduced to
lower-case letters and digits separated by single spaces; a page holds a fuzzy hit of a form
with budget ``e`` when some substring of the page is within Levenshtein distance ``e`` of the
form. The distance to the best-matching substring ending at every text position comes from
Sellers' dynamic programme (Sellers, *J. Algorithms* 1, 1980): row ``i`` of the table is
``D_i[j] = min(A_i[j], D_i[j-1] + 1)`` with ``A_i[j] = min(D_{i-1}[j] + 1, D_{i-1}[j-1] + [p_i ≠ t_j])``,
which unrolls to ``D_i[j] = j + min_{k≤j}(A_i[k] − k)`` — one ``np.minimum.accumulate`` per
pattern character over the whole document at once, instead of a Python loop per position.
No library in the dependency set does approximate substring search, so this is the one place
nclue implements it.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from nclue.audit.audit_params import MIN_QUOTE_CHARS

SPACE_CLASS = r"[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\u001c-\u001f\ufeff]+"
"""White space for quote normalisation, written so that Python and JavaScript read the same class."""

_SPACE = re.compile(SPACE_CLASS)
_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalise(text: str) -> str:
    """The normalised form of a quote or page text (see the module docstring)."""
    folded = unicodedata.normalize("NFKC", text).replace("\u00ad", "").lower()
    return _SPACE.sub(" ", folded).strip()


QUOTE_MESSAGES: dict[str, str] = {
    "empty": "the quote is empty",
    "short": "the quote has {n} characters; quote at least {min} (a phrase, not a word)",
    "missing": "the quote is not on the page; copy the words exactly as the page shows them",
}
"""The sentences of :func:`quote_problem` (the packet fills the same templates)."""


def quote_problem(quote: str, page_text: str) -> str | None:
    """Why ``quote`` is not valid evidence on a page with ``page_text`` (``None`` when it is)."""
    q = normalise(quote)
    if not q:
        return QUOTE_MESSAGES["empty"]
    if len(q) < MIN_QUOTE_CHARS:
        return QUOTE_MESSAGES["short"].format(n=len(q), min=MIN_QUOTE_CHARS)
    if q not in normalise(page_text):
        return QUOTE_MESSAGES["missing"]
    return None


def verbatim(quote: str, page_text: str) -> bool:
    """Whether ``quote`` occurs in ``page_text`` character for character.

    Line endings are the one exception: browsers turn ``\r\n`` and ``\r`` into ``\n`` in form
    fields, so both sides count line endings as ``\n``.
    """

    def lf(text: str) -> str:
        return text.replace("\r\n", "\n").replace("\r", "\n")

    return bool(quote) and lf(quote) in lf(page_text)


def letters(text: str) -> str:
    """Lower-case ASCII letters and digits, every other run replaced by one space (the fuzzy route's view)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return _NON_WORD.sub(" ", folded).strip()


def substring_distances(pattern: str, text: str) -> np.ndarray:
    """``D[j]``: the least edit distance between ``pattern`` and a substring of ``text`` ending before ``j``.

    Length ``len(text) + 1``; ``D[0]`` is ``len(pattern)`` (the empty substring).
    """
    t = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    n = len(t)
    prev = np.zeros(n + 1, dtype=np.int32)
    idx = np.arange(n + 1, dtype=np.int32)
    for i, ch in enumerate(pattern, start=1):
        a = np.empty(n + 1, dtype=np.int32)
        a[0] = i
        a[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (t != ord(ch)))
        prev = idx + np.minimum.accumulate(a - idx)
    return prev


class FuzzyText:
    """The pages of one document (in the :func:`letters` view), searchable for approximate matches.

    Pages are joined by a separator of :attr:`SEP` NUL characters, longer than any match within
    budget, so no match crosses from one page into the next.
    """

    SEP = 128
    Q = 3

    def __init__(self, pages: list[str]) -> None:
        self.pages = pages
        sep = "\x00" * self.SEP
        self.text = sep.join(pages)
        lengths = np.array([len(p) for p in pages], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(lengths[:-1] + self.SEP)]) if pages else np.zeros(0, np.int64)
        self.ends = self.starts + lengths
        codes = np.frombuffer(self.text.encode("utf-32-le"), dtype=np.uint32).astype(np.int32)
        if len(codes) and codes.max() >= 128:
            raise ValueError("FuzzyText takes pages in the letters() view (ASCII only)")
        self.grams = codes[:-2] * 128 * 128 + codes[1:-1] * 128 + codes[2:] if len(codes) >= self.Q else codes[:0]
        self._table = np.zeros(128**3, dtype=bool)

    def distances(self, pattern: str, budget: int) -> dict[int, int]:
        """``{page position: best distance}`` for every page holding a match of ``pattern`` within ``budget`` edits.

        ``budget = 0`` is plain substring search. Otherwise the q-gram lemma (Jokinen & Ukkonen,
        MFCS 1991) filters first: a match with at most ``e`` edits spans at most ``m + e`` text
        characters and keeps at least ``m − q + 1 − q·e`` of the pattern's q-grams, so only the
        text around windows of ``m + e − q + 1`` q-grams holding that many pattern q-grams is
        searched with the exact dynamic programme.
        """
        q = self.Q
        if not pattern or not self.pages:
            return {}
        if budget == 0:
            return {i: 0 for i, page in enumerate(self.pages) if pattern in page}
        if len(pattern) + budget >= self.SEP:
            raise ValueError(f"pattern of {len(pattern)} characters is longer than the page separator")
        p = [ord(c) for c in pattern]
        need = len(p) - q + 1 - q * budget
        if need < 1:
            lo, hi = np.array([0]), np.array([len(self.text)])
        else:
            mine = [p[i] * 128 * 128 + p[i + 1] * 128 + p[i + 2] for i in range(len(p) - q + 1)]
            self._table[mine] = True
            hits = self._table[self.grams]
            self._table[mine] = False
            window = len(p) + budget - q + 1
            cum = np.concatenate([[0], np.cumsum(hits, dtype=np.int32)])
            counts = cum[window:] - cum[:-window] if len(cum) > window else cum[-1:] - cum[:1]
            first = np.flatnonzero(counts >= need)
            if not len(first):
                return {}
            # a match starting at s lies in text[s : s + m + e]; merge the (sorted) intervals into segments
            lo = np.maximum(first - budget, 0)
            hi = np.minimum(first + len(p) + 2 * budget, len(self.text))
            breaks = np.flatnonzero(lo[1:] > hi[:-1]) + 1
            lo, hi = lo[np.r_[0, breaks]], hi[np.r_[breaks - 1, len(hi) - 1]]
        sep = "\x00" * self.SEP
        pieces = [self.text[a:b] for a, b in zip(lo.tolist(), hi.tolist())]
        offsets = np.concatenate([[0], np.cumsum(np.array([len(x) + self.SEP for x in pieces[:-1]], dtype=np.int64))])
        dist = substring_distances(pattern, sep.join(pieces))[1:]
        found = np.flatnonzero(dist <= budget)
        out: dict[int, int] = {}
        if not len(found):
            return out
        seg = np.searchsorted(offsets, found, side="right") - 1
        origin = lo[seg] + (found - offsets[seg])
        page = np.searchsorted(self.starts, origin, side="right") - 1
        inside = (found - offsets[seg] < hi[seg] - lo[seg]) & (origin < self.ends[page])
        for pos, k in zip(found[inside].tolist(), page[inside].tolist()):
            d = int(dist[pos])
            if d < out.get(k, budget + 1):
                out[k] = d
        return out
