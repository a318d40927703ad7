"""Page text that reads right: soft hyphens joined, glyph codes resolved, line ends normalised.

PDFium's text layer (:mod:`nclue.corpus.pdftext`) is faithful to the PDF, and PDFs made by TeX
and similar engines carry three artefacts that split or corrupt words:

* **Soft hyphens.** A word hyphenated at a line end comes back as ``Win\\ufffedows`` (PDFium
  marks the line-end hyphen as U+FFFE and drops the line break); U+00AD (the Unicode soft
  hyphen) appears too.
* **Glyph codes without a ToUnicode map.** A font that does not say which character a glyph
  is yields its code; in TeX fonts the f-ligatures sit in the C0 control range (OT1: ``ff``
  0x0B … ``ffl`` 0x0F; T1: 0x1B–0x1F; subsetted fonts renumber them per document), so
  *fine-tuning* reads ``\\x1bne-tuning``. Other codes are accents and math symbols.
* **Line ends.** PDFium ends lines with ``\\r\\n``.

:func:`normalize_document` fixes them per document — the only evidence it uses is the
document's own text and an English word list (web2 and GCIDE from the ``english-words``
package, lower-cased, with inflections stripped by :func:`_in_lexicon`), so a page's text
depends only on its PDF:

1. ``\\r\\n`` and a lone ``\\r`` at a line end become ``\\n``.
2. Adobe's private-use old-style figures and small capitals (U+F730–F739, U+F761–F77A in the
   Adobe Glyph List) become ``0``–``9`` and ``a``–``z``.
3. A soft hyphen ``x<SH>y`` between word parts becomes ``-`` when the evidence says it is a
   hyphen that was always there, and is removed (the halves joined) otherwise. In order, the
   first rule that applies decides: a digit on either side keeps ``-`` (``UTF-8``); the
   document itself writes the compound ``x-y`` and never ``xy`` (keep) or writes ``xy``
   (join); fewer than :data:`LEFT_MIN` letters before or :data:`RIGHT_MIN` after the break
   keeps ``-``, since TeX's hyphenation never breaks there (``\\lefthyphenmin=2``,
   ``\\righthyphenmin=3``: ``R-help``); a capital after a lower-case letter keeps ``-``
   (``Unix-Alike``); ``xy`` an English word joins (``Windows``, ``repository``); ``x`` and
   ``y`` both written as words of their own in the document keep ``-`` (``font-encoding``);
   otherwise join (``anderen``, ``Methode``: a break inside a word of another language).
4. A C0 control code (other than tab and newline) inside a lower-case word (its first letter may
   be a capital) is resolved to the ligature (:data:`LIGATURES`) that makes the word an English
   word when exactly one does; a code's
   majority resolution in the document (at least :data:`MAJORITY` of its word-level
   resolutions, and at least two of them) then resolves the words of the same code that the
   word list cannot decide (names, German words), when a lower-case letter follows the code and
   the letter 3-grams across the ligature occur in English words (:func:`_majority_fits`). Every other control code — an accent or
   math-symbol slot, a code between digits — becomes U+FFFD (the Unicode replacement
   character, a word break for every reader), so no control code reaches an index, a
   snippet or a terminal.

:data:`NORMALIZATION_VERSION` is recorded in ``collection.json``: a store written under
another version is re-extracted by ``nclue ingest``, and indexes refuse the changed pages
through their content fingerprint.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter, defaultdict
from functools import cached_property, lru_cache

import numpy as np

NORMALIZATION_VERSION = 1
LIGATURES: tuple[str, ...] = ("ff", "fi", "fl", "ffi", "ffl", "tt", "ft")
LEFT_MIN = 2
RIGHT_MIN = 3
MAJORITY = 0.8
REPLACEMENT = "\ufffd"

_SOFT = "\ufffe\u00ad"
_CONTROL_CHARS = "\x00-\x08\x0b-\x1f"  # after rule 1 a carriage return left inside a line is a glyph code too
_CONTROL = re.compile(f"[{_CONTROL_CHARS}]")
_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")  # C0 controls other than tab, newline and carriage return
_LONE_CR = re.compile(r"\r(?=[\r\n]|$)")
_SOFT_RUN = re.compile(f"[{_SOFT}]+")
_HYPHENATED = re.compile(r"(?<![^\W\d_])[^\W\d_]+-[^\W\d_]+")
_HYPHENATED_ASCII = re.compile(r"(?<![a-z])[a-z]+-[a-z]+")
_LETTER = re.compile(r"[^\W\d_]")
_SEARCH_BUDGET = 400  # occurrences a document's searches may visit before all its words are collected
_SEARCH_MAX_CHARS = 200_000  # longer documents collect their words at once (a search scans the whole text)
_PUA_CHARS = re.compile("[\uf730-\uf77a]")
_WORD = re.compile(r"[^\W\d_]+")
_PUA = {
    **{0xF730 + i: str(i) for i in range(10)},
    **{0xF761 + i: chr(ord("a") + i) for i in range(26)},
}
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ies", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
    ("ly", ""),
    ("ers", ""),
    ("er", ""),
    ("ness", ""),
    ("ment", ""),
    ("ation", "e"),
)


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Lower-case alphabetic English words (web2 ∪ GCIDE, ``english-words`` package); loaded once per process."""
    from english_words import get_english_words_set

    return frozenset(get_english_words_set(["web2", "gcide"], alpha=True, lower=True))


def _in_lexicon(word: str) -> bool:
    """``word`` (any case) or its stem after one inflectional suffix is an English word of ≥ 2 letters."""
    low = word.lower()
    words = english_words()
    if len(low) >= 2 and low in words:
        return True
    for suffix, repl in _SUFFIXES:
        if low.endswith(suffix) and len(low) - len(suffix) >= 3:
            stem = low[: -len(suffix)]
            if stem + repl in words or (not repl and stem[-1] == stem[-2] and stem[:-1] in words):  # formatting
                return True
    return False


_CODE_BASE = 0x110000  # one more than the largest code point


def _trigram_codes(text: str) -> np.ndarray:
    """The code ``c0·B² + c1·B + c2`` of every 3-gram of ``text`` (B: the code-point range)."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    return points[:-2] * _CODE_BASE * _CODE_BASE + points[1:-1] * _CODE_BASE + points[2:]


@lru_cache(maxsize=1)
def _lexicon_trigrams() -> frozenset[int]:
    """Every letter 3-gram of the word list, with ``^``/``$`` marking word edges, as :func:`_trigram_codes`.

    Vectorised over one string of all words (a Python loop over the 2.5 million 3-grams takes a
    second per process): a 3-gram is kept unless it runs over a word's end marker into the next word.
    """
    text = "".join(f"^{word}$" for word in english_words())
    codes = _trigram_codes(text)
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    inside = (points[:-2] != ord("$")) & (points[1:-1] != ord("$"))
    return frozenset(np.unique(codes[inside]).tolist())


def _plausible(word: str, at: int, lig: str) -> bool:
    """Every letter 3-gram of ``word`` that overlaps the ligature put at ``at`` occurs in some English word."""
    marked = f"^{word.lower()}$"
    codes = _trigram_codes(marked)
    grams = _lexicon_trigrams()
    lo, hi = at + 1, at + 1 + len(lig)  # the ligature's span in ``marked``
    return all(int(codes[i]) in grams for i in range(max(0, lo - 2), min(hi, len(marked) - 2)))


def _line_ends(text: str) -> str:
    return _LONE_CR.sub("\n", text.replace("\r\n", "\n"))


def _private_use(text: str) -> str:
    return text.translate(_PUA) if _PUA_CHARS.search(text) else text


def _runs(text: str, anchor: re.Pattern[str], run: re.Pattern[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of the maximal runs of ``run`` characters around each ``anchor`` match.

    Anchored scanning: a regex for the whole run would start with ``*`` and be tried at every
    position of a page, and anchors are rare. ``run`` is ``(?:CLASS)*`` (anchors included in CLASS);
    the run's left end is found in a window before the anchor, widened until it holds.
    """
    spans: list[tuple[int, int]] = []
    left = _left_of(run)
    for match in anchor.finditer(text):
        start, end = match.start(), match.end()
        if spans and start < spans[-1][1]:
            continue
        width = 64
        while True:
            lo = max(0, start - width)
            found = left.search(text, lo, start)
            if found is None or found.start() > lo or lo == 0:
                break
            width *= 4
        start = found.start() if found is not None else start
        end = run.match(text, end).end()
        spans.append((start, end))
    return spans


@lru_cache(maxsize=4)
def _left_of(run: re.Pattern[str]) -> re.Pattern[str]:
    """``run`` anchored at the end of the searched slice."""
    return re.compile(f"{run.pattern}\\Z")


_SOFT_RUN_CHARS = re.compile(f"(?:[^\\W_]|[{_SOFT}])*")  # str.isalnum() is \\w without _
_CODE_RUN_CHARS = re.compile(f"[A-Za-z{_CONTROL_CHARS}]*")


class _DocWords:
    """The words of one document, computed when a rule first asks (most soft hyphens never need them)."""

    def __init__(self, texts: list[str], sites: list[list[tuple[int, int]]]) -> None:
        self.texts, self.sites = texts, sites
        self._visits = 0

    @cached_property
    def whole(self) -> str:
        return "\n".join(self.texts).lower()

    @cached_property
    def hyphenated(self) -> set[str]:
        """Every ``x-y`` compound the document writes (lower case).

        A compound lies within one line, so only the lines with a hyphen are scanned.
        """
        lines = "\n".join(line for line in self.whole.split("\n") if "-" in line)
        pattern = _HYPHENATED_ASCII if lines.isascii() else _HYPHENATED
        return set(pattern.findall(lines))

    @cached_property
    def blanked(self) -> str:
        """The document in lower case with every split word blanked (its halves are not words)."""
        return "\n".join(_blank(text, spans) for text, spans in zip(self.texts, self.sites)).lower()

    @cached_property
    def plain(self) -> set[str]:
        """Every word the document writes outside the split words (lower case).

        The maximal runs of word letters: a whitespace token made of letters only is one, any other
        token is split by the word pattern (faster than one regex pass over the document).
        """
        tokens = set(self.blanked.split())  # each distinct whitespace token once
        words = {token for token in tokens if token.isalpha()}
        rest = " ".join(token for token in tokens if not token.isalpha())  # runs never cross the spaces
        return words | set(_WORD.findall(rest))

    def writes(self, word: str) -> bool:
        """``word`` (lower case) is in :attr:`plain`. Searching for a word is about a hundred times cheaper
        than collecting every word of a long document, so a document's questions are answered by search
        until they have visited :data:`_SEARCH_BUDGET` occurrences, then by the set."""
        if "plain" in self.__dict__ or self._visits >= _SEARCH_BUDGET or len(self.blanked) > _SEARCH_MAX_CHARS:
            return word in self.plain
        text, at = self.blanked, self.blanked.find(word)
        while at >= 0:
            self._visits += 1
            before, after = text[at - 1 : at], text[at + len(word) : at + len(word) + 1]
            if not (before and _LETTER.match(before)) and not (after and _LETTER.match(after)):
                return True
            if self._visits >= _SEARCH_BUDGET:
                return word in self.plain
            at = text.find(word, at + 1)
        return False


def _soft_hyphen_choice(left: str, right: str, words: _DocWords) -> str:
    """``"-"`` or ``""`` for the soft hyphen between word parts ``left`` and ``right`` (rule 3)."""
    if not left or not right or left[-1].isdigit() or right[0].isdigit():
        return "-" if left and right else ""
    low_left, low_right = left.lower(), right.lower()
    if words.writes(low_left + low_right):
        return ""
    if f"{low_left}-{low_right}" in words.hyphenated:
        return "-"
    if len(left) < LEFT_MIN or len(right) < RIGHT_MIN:
        return "-"
    if left[-1].islower() and right[0].isupper():
        return "-"
    if (left + right).isascii() and _in_lexicon(left + right):
        return ""
    if words.writes(low_left) and words.writes(low_right):
        return "-"
    return ""


def _join_soft_hyphens(texts: list[str]) -> list[str]:
    soft = [any(ch in text for ch in _SOFT) for text in texts]
    if not any(soft):
        return texts
    sites = [_runs(text, _SOFT_RUN, _SOFT_RUN_CHARS) if has else [] for text, has in zip(texts, soft)]
    words = _DocWords(texts, sites)
    out = []
    for text, spans in zip(texts, sites):
        if not spans:
            out.append(text)
            continue
        pieces, last = [], 0
        for start, end in spans:
            pieces += [text[last:start], _joined(text[start:end], words)]
            last = end
        out.append("".join(pieces) + text[last:])
    return out


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by a space (the halves of split words are not words)."""
    pieces, last = [], 0
    for start, end in spans:
        pieces += [text[last:start], " "]
        last = end
    return "".join(pieces) + text[last:]


def _joined(run: str, words: _DocWords) -> str:
    """A run of word parts and soft hyphens with each soft hyphen resolved (rule 3)."""
    parts = _SOFT_RUN.split(run)
    out = parts[0]
    for right in parts[1:]:
        left = re.split(r"[^\w]", out)[-1]
        out += _soft_hyphen_choice(left, right, words) + right
    return out


def _word_resolution(word: str) -> str | None:
    """The one ligature that makes ``word`` (one kind of control code) an English word, else ``None``."""
    code = _CONTROL.search(word)
    if code is None:
        return None
    letters = _CONTROL.sub("", word)
    if len(letters) < 2 or not letters[1:].islower():  # ligatures sit in lower-case text: not "\x1cAB"
        return None
    hits = [lig for lig in LIGATURES if _in_lexicon(word.replace(code.group(0), lig))]
    return hits[0] if len(hits) == 1 else None


def _majority_fits(word: str, lig: str) -> bool:
    """A document's majority ligature fits a word the word list cannot decide (``Anforderungsprofil``).

    Each code must be followed by a lower-case letter (a ligature starts a letter run), and the
    letter 3-grams across the ligature must occur in English words (``flgrad`` does not fit).
    """
    resolved, offset = word, 0
    for match in _CONTROL.finditer(word):
        after = word[match.end() : match.end() + 1]
        if not after.islower():
            return False
        if not _plausible(resolved.replace(match.group(0), lig, 1), match.start() + offset, lig):
            return False
        resolved = resolved.replace(match.group(0), lig, 1)
        offset += len(lig) - 1
    return True


def _pages_with(texts: list[str], anchor: re.Pattern[str]) -> set[int]:
    """Indices of the pages where ``anchor`` occurs (one scan of the whole document)."""
    ends = list(itertools.accumulate(len(text) + 1 for text in texts))
    whole = "\n".join(texts)
    return {bisect.bisect_right(ends, m.start()) for m in anchor.finditer(whole)}


def _resolve_controls(texts: list[str]) -> list[str]:
    pages = _pages_with(texts, _CONTROL)
    if not pages:
        return texts
    spans = [_runs(text, _CONTROL, _CODE_RUN_CHARS) if i in pages else [] for i, text in enumerate(texts)]
    words = Counter(text[a:b] for text, found in zip(texts, spans) for a, b in found)
    decided: dict[str, str | None] = {}
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for word, count in words.items():
        codes = set(_CONTROL.findall(word))
        decided[word] = _word_resolution(word) if len(codes) == 1 else None
        if decided[word] is not None:
            votes[codes.pop()][decided[word]] += count  # type: ignore[index]
    majority: dict[str, str] = {}
    for code, tally in votes.items():
        lig, n = tally.most_common(1)[0]
        if n >= 2 and n >= MAJORITY * sum(tally.values()):
            majority[code] = lig
    for word in words:
        codes = set(_CONTROL.findall(word))
        if decided[word] is None and len(codes) == 1 and len(_CONTROL.sub("", word)) >= 2:
            lig = majority.get(next(iter(codes)))
            if lig is not None and _majority_fits(word, lig):
                decided[word] = lig

    def repl(word: str) -> str:
        lig = decided.get(word)
        if lig is None:
            return _CONTROL.sub(REPLACEMENT, word)
        return _CONTROL.sub(lig, word)

    out = []
    for text, found in zip(texts, spans):
        pieces, last = [], 0
        for a, b in found:
            pieces += [text[last:a], repl(text[a:b])]
            last = b
        out.append("".join(pieces) + text[last:] if found else text)
    return out


def normalize_document(texts: list[str]) -> list[str]:
    """The page texts of one document with the fixes of the module docstring (same length, same order)."""
    texts = [_line_ends(text) for text in texts]
    whole = "".join(texts)
    if _PUA_CHARS.search(whole):
        texts = [_private_use(text) for text in texts]
    if _SOFT_RUN.search(whole):
        texts = _join_soft_hyphens(texts)
    if _CONTROL.search(whole):
        texts = _resolve_controls(texts)
    return texts


def text_defects(text: str) -> Counter[str]:
    """Counts of the artefacts this module removes: ``soft_hyphen``, ``control`` (C0 except tab/newline), ``cr``."""
    return Counter(
        soft_hyphen=sum(text.count(ch) for ch in _SOFT),
        control=len(_C0.findall(text)),
        cr=text.count("\r"),
    )
