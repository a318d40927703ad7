"""Page text → lines → word tokens, with the page structure the offline judge needs.

Per document, lines are classified once:

* **running header/footer**: one of the first or last two non-blank lines of a page whose
  digit-free, case-folded form recurs in those positions on at least
  :data:`RUNNING_MIN_PAGES` pages of the same document (page numbers, chapter running
  heads such as ``Chapter 2: Installing R under Unix-alikes 5``). Ignored entirely.
* **reference line**: a table-of-contents or index entry — a line with dot leaders, or a
  line whose text ends in a page number (``6 Numbering text lines and paragraphs 8``,
  ``hyphenation, 12, 40``). A reference line only *points* at a concept, so it is ignored.
* **heading**: a numbered section title (``2.3 Making the manuals``, ``A.1 Fonts``,
  ``Chapter 4 Footnotes``) or a short Title-Case line of 1–5 words with no sentence
  punctuation (``Critical Apparatus``).
* everything else is **body**.

Words are ASCII letter runs (``[A-Za-z]+``, an ``'s`` possessive dropped; a word with
non-ASCII letters, such as French *épaisseur*, is a break rather than a mangled fragment); a word
preceded by a backslash is a TeX control sequence and is skipped. Hyphens (including the
PDF soft hyphen U+FFFE/U+00AD) *join* words, so ``font-encoding`` and ``font encoding``
tokenise alike; any other punctuation, a digit run, or a heading boundary is a *break*
that an n-gram may not cross.

Inflection is folded by the S-stemmer (Harman, "How effective is suffixing?", JASIS 1991):
``ies→y``, ``es→e``, ``s→∅`` with its exceptions — deliberately weaker than Porter, which
would conflate *hyphenation* with *hyphen*.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

RUNNING_MIN_PAGES = 3
EDGE_LINES = 2

ENGLISH_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can cannot could did do does doing done down during each either else etc
    even ever every few for from further get gets given had has have having he her here hers herself him
    himself his how however i if in into is it its itself just least less let like may me might more most
    much must my myself neither no nor not now of off on once one only or other otherwise our ours
    ourselves out over own per rather same see seen shall she should since so some still such than that
    the their theirs them themselves then there these they this those though through thus to too under
    until up upon us use used uses using very via was way we well were what when where whether which while
    who whom whose why will with within without would yet you your yours yourself yourselves""".split()
)
FOREIGN_WORDS = frozenset(
    # function words of the other languages the corpus is written in (French, German, Italian,
    # Spanish), the words of the Lorem-ipsum filler text and of the two font-sample pangrams
    # ("Many-wived Jack laughs at probes of sex quiz", "Playing jazz vibe chords quickly excites
    # my wife"), so that none of them is mined as an English concept
    """au aux avec ce ces cette dans de del della des die der das den dem du ein eine el en est et il ist
    la las le les los mit nicht nous ou par pas pour qui que si sind son sont sur um und une von vous zu
    lorem ipsum dolor sit amet consectetur consectetuer adipiscing adipisicing elit sed eiusmod tempor
    incididunt ut labore dolore magna aliqua enim minim veniam quis nostrud exercitation ullamco laboris
    nisi aliquip ex ea commodo consequat duis aute irure reprehenderit voluptate velit esse cillum eu
    fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt
    mollit anim id est laborum vestibulum curabitur donec aenean maecenas nam etiam integer nunc morbi
    mauris pellentesque praesent proin quisque suspendisse vivamus phasellus fusce nullam cras sapien
    ante tellus tortor lectus libero lacus ligula neque metus massa risus felis nibh odio orci purus
    quam urna erat eros arcu augue diam dui justo leo mi nec sem vel vitae at ac
    wived jack laughs probes sex quiz playing jazz vibe chords quickly excites""".split()
)
GENERIC_WORDS = frozenset(
    # modifiers and light verbs that make a phrase generic rather than a concept
    """new old first last next previous main simple special different various certain several many general
    specific normal standard additional extra following given left right top bottom good best better
    make makes made sure want need needs let set sets setting creating defining changing fixing getting
    thing things way ways case cases kind kinds lot lots""".split()
)
STOPWORDS = ENGLISH_STOPWORDS | FOREIGN_WORDS | GENERIC_WORDS

_WORD_OR_BREAK = re.compile(r"\\[A-Za-z@]+|[^\W\d_]+(?:'[^\W\d_]+)?|[-\u00ad\ufffe]+|[^\w\s\-\u00ad\ufffe]+|[\d_]+")
_DIGITS = re.compile(r"[0-9ivxlcdm]+\b|[0-9]+")
_SPACES = re.compile(r"\s+")
_DOT_LEADER = re.compile(r"(?:\.\s?){3,}|(?:\s\.){3,}")
_ENDS_IN_PAGE = re.compile(
    r"(?:[A-Za-z)\]’'\"”]\s*[,:]?\s+|,\s*)(?:[0-9]{1,4}|[ivxlc]{1,6})(?:\s*[,–-]\s*[0-9]{1,4})*\s*$"
)
_NUMBERED = re.compile(
    r"^\s*(?:(?:chapter|appendix|part|section)\s+[0-9A-Z]{1,3}[:.]?\s+|[0-9]{1,2}(?:\.[0-9]{1,2}){0,3}\.?\s+|[A-Z]\.[0-9]{1,2}(?:\.[0-9]{1,2})*\.?\s+)"
    r"([A-Z][^\\{}=$%&#_^]{1,80})$",
    re.IGNORECASE,
)
_TITLE_WORD = re.compile(r"^(?:[A-Z][A-Za-z]*(?:-[A-Za-z]+)*|of|and|the|in|for|to|with|a|an|on)$")
_SMALL = frozenset({"of", "and", "the", "in", "for", "to", "with", "a", "an", "on"})


def s_stem(word: str) -> str:
    """Harman's S-stemmer on a lower-case word (inflection only)."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss", "is")):
        return word[:-1]
    return word


def _edge_key(line: str) -> str:
    return _SPACES.sub(" ", _DIGITS.sub("", line.lower())).strip()


def running_lines(pages: list[list[str]]) -> set[str]:
    """Edge-line keys (digit-free, case-folded) recurring on ≥ RUNNING_MIN_PAGES pages of one document."""
    counts: Counter[str] = Counter()
    for lines in pages:
        edges = lines[:EDGE_LINES] + lines[-EDGE_LINES:]
        counts.update({_edge_key(line) for line in edges})
    return {key for key, n in counts.items() if n >= RUNNING_MIN_PAGES or key == ""}


def is_reference_line(line: str) -> bool:
    """True for table-of-contents / index entries (dot leaders or a trailing page number)."""
    return bool(_DOT_LEADER.search(line) or _ENDS_IN_PAGE.search(line))


def heading_title(line: str) -> str | None:
    """The title text if ``line`` is a heading, else ``None`` (rules in the module docstring)."""
    stripped = line.strip()
    if not stripped or len(stripped) > 90:
        return None
    numbered = _NUMBERED.match(stripped)
    if numbered:
        title = numbered.group(1).strip()
        if title[-1:] in ".,;:" or len(title.split()) > 10:
            return None
        return title
    words = stripped.split()
    if 1 <= len(words) <= 5 and words[0] not in _SMALL and all(_TITLE_WORD.match(w) for w in words):
        return stripped
    return None


@dataclass
class PageTokens:
    """Token arrays of one page.

    ``words``: surface words (case kept, hyphen-split); ``brk``: a break precedes the word;
    ``hyph``: the word is hyphen-joined to the previous one; ``head``: the word lies on a
    heading line; ``hend``: the word is the last word of a heading (the head noun of an
    English noun-phrase title).
    """

    words: list[str]
    brk: np.ndarray
    hyph: np.ndarray
    head: np.ndarray
    hend: np.ndarray


def split_pages(texts: list[str]) -> list[list[str]]:
    """Non-blank lines of each page (``\\r\\n``, ``\\r`` and ``\\n`` all end a line)."""
    return [[ln for ln in (t or "").splitlines() if ln.strip()] for t in texts]


def tokenize_document(pages: list[list[str]]) -> list[PageTokens]:
    """Tokenise every page of one document, dropping running lines and reference lines."""
    running = running_lines(pages)
    out: list[PageTokens] = []
    for lines in pages:
        words: list[str] = []
        brk: list[bool] = []
        hyph: list[bool] = []
        head: list[bool] = []
        hend_at: set[int] = set()
        n_lines = len(lines)
        pending_break = True
        for i, line in enumerate(lines):
            if (i < EDGE_LINES or i >= n_lines - EDGE_LINES) and _edge_key(line) in running:
                pending_break = True
                continue
            if is_reference_line(line):
                pending_break = True
                continue
            title = heading_title(line)
            is_head = title is not None
            if is_head:
                pending_break = True
            joined = False
            for piece in _WORD_OR_BREAK.findall(title if is_head else line):
                first = piece[0]
                if first.isalpha():
                    if not piece.isascii():
                        pending_break = True
                        joined = False
                        continue
                    if piece.endswith(("'s", "'S")):
                        piece = piece[:-2]
                    elif "'" in piece:
                        pending_break = True
                        continue
                    words.append(piece)
                    brk.append(pending_break)
                    hyph.append(joined)
                    head.append(is_head)
                    pending_break = False
                    joined = False
                elif first in "-\u00ad\ufffe":
                    joined = bool(words) and not pending_break
                else:
                    pending_break = True
                    joined = False
            if is_head:
                pending_break = True
                if head and head[-1]:
                    hend_at.add(len(words) - 1)
        hend = np.zeros(len(words), dtype=bool)
        hend[list(hend_at)] = True
        out.append(
            PageTokens(
                words=words,
                brk=np.array(brk, dtype=bool),
                hyph=np.array(hyph, dtype=bool),
                head=np.array(head, dtype=bool),
                hend=hend,
            )
        )
    return out
