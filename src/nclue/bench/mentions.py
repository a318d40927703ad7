"""Loose mentions: where a reader may find a condition that the establishes rule does not see.

Readers judge concepts, not strings: a page about *parsing* that only says *parses*, or one
that explains ``methods(class = …)`` for *class methods*, is established for many readers while
the rule, which matches a condition's surface forms, sees nothing. A label of *absent* is
therefore contested wherever the document mentions the condition loosely, and composition can
refuse queries whose labels rest on contested absences (``ComposeParams.max_contested``).

A document **mentions** a condition loosely when, outside TOC/index, running, boilerplate and
bibliography lines and outside proper names (the lines :mod:`nclue.bench.text` keeps), every
content word of the condition's name occurs within :data:`WINDOW` tokens of the first, on one
page, where a word matches by its *loose stem*: lower case, British spelling folded to American
(*colour* → *color*, *-ise* → *-ize*), Snowball-stemmed (Porter's English stemmer, via PyStemmer),
and — for stems of at least :data:`PREFIX_MIN` letters — any stem that extends it or that it
extends (*customiz* ~ *custom*, *pars* stays exact).
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from nclue.bench.text import STOPWORDS

WINDOW = 6
PREFIX_MIN = 99
_BRITISH = ((re.compile(r"our(s?)$"), r"or\1"), (re.compile(r"is(e|es|ed|ing|ation|ations)$"), r"iz\1"))


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - a PyStemmer Stemmer
    import Stemmer

    return Stemmer.Stemmer("english")


def loose_stem(word: str) -> str:
    """The loose stem of one word (module docstring)."""
    low = word.lower()
    for pattern, repl in _BRITISH:
        low = pattern.sub(repl, low)
    return _stemmer().stemWord(low)


def _matching_stems(stem: str, stems: list[str]) -> np.ndarray:
    """Indices of the vocabulary stems that match ``stem`` (equal, or a prefix either way when long enough)."""
    if len(stem) < PREFIX_MIN:
        return np.array([i for i, s in enumerate(stems) if s == stem], dtype=np.int64)
    return np.array(
        [
            i
            for i, s in enumerate(stems)
            if s == stem or (len(s) >= PREFIX_MIN and (s.startswith(stem) or stem.startswith(s)))
        ],
        dtype=np.int64,
    )


def loose_mention_docs(
    surface: list[str], orig: np.ndarray, row: np.ndarray, name: np.ndarray, page_doc: np.ndarray, names: list[str]
) -> list[set[int]]:
    """For each condition name, the documents (indices) that mention it loosely.

    ``surface``: the token vocabulary; ``orig``/``row``/``name``: per token, its vocabulary id,
    global page row and proper-name flag (:class:`nclue.bench.inventory._Tokens`).
    """
    stems = sorted({loose_stem(w) for w in surface})
    stem_index = {s: i for i, s in enumerate(stems)}
    token_stem = np.array([stem_index[loose_stem(w)] for w in surface], dtype=np.int64)[orig] if len(orig) else orig
    usable = ~name
    out: list[set[int]] = []
    for cond in names:
        words = [w for w in re.findall(r"[A-Za-z]+", cond) if w.lower() not in STOPWORDS]
        if not words:
            out.append(set())
            continue
        positions = []
        for w in words:
            matching = np.zeros(len(stems), dtype=bool)
            matching[_matching_stems(loose_stem(w), stems)] = True
            positions.append(np.flatnonzero(matching[token_stem] & usable))  # a table look-up, not np.isin's sort
        anchor = positions[0]
        ok = np.ones(len(anchor), dtype=bool)
        for other in positions[1:]:
            if not len(other):
                ok[:] = False
                break
            j = (
                np.clip(np.searchsorted(other, anchor), 1, len(other) - 1)
                if len(other) > 1
                else np.zeros(len(anchor), dtype=np.int64)
            )
            near = np.stack([other[np.maximum(j - 1, 0)], other[j]])
            gap = np.abs(near - anchor)
            best = near[np.argmin(gap, axis=0), np.arange(len(anchor))]
            ok &= (np.min(gap, axis=0) <= WINDOW) & (row[best] == row[anchor])
        out.append({int(d) for d in np.unique(page_doc[row[anchor[ok]]])})
    return out
