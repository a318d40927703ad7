"""Page-line rules: running lines, reference (TOC/index) lines, headings, boilerplate and list items.

One definition of each, read by benchmark construction (:mod:`nclue.bench.text`) and by the
structure extractor (:mod:`nclue.corpus.structure`), so "heading" means one thing everywhere.
Every rule looks at one line of a page's text (``str.splitlines`` of the page store's text,
blank lines dropped), plus, for running lines, the other pages of the same document:

* **running line** — one of the first or last :data:`EDGE_LINES` lines of a page whose
  digit-free, case-folded form (:func:`edge_key`) recurs at those positions on at least
  :data:`RUNNING_MIN_PAGES` pages of the document (page numbers, running chapter titles such as
  ``Chapter 2: Installing R under Unix-alikes 5``).
* **reference line** — a table-of-contents or index entry: dot leaders, or text ending in a page
  number (``6 Numbering text lines and paragraphs 8``, ``hyphenation, 12, 40``).
* **page role** — a whole page that is a table of contents, an index or a bibliography
  (:func:`page_role`): its lines only point at concepts.
* **numbered heading** — a section number and a capitalised title of at most 10 words with a
  word of ≥ 3 letters, no arithmetic sign, no sentence-final punctuation, and not read as a
  sentence: no finite verb unless it asks a question (``2.1 What is R?``), no function word at
  its end, nothing after a colon but a short subtitle (``2.3 Making the manuals``,
  ``Chapter 4 Footnotes``; not ``5 Tag name is invalid in a block``, a numbered message).
* **Title-Case heading** — a short line (1–6 words, ≤ 80 characters) whose words are all
  capitalised except short function words, with no bare number or ``_`` identifier (a table
  row) and not read as a sentence (``Critical Apparatus``).
* **boilerplate** — copyright and licence lines, BibTeX fields and bibliography entries, e-mail
  addresses and bare URLs (:func:`is_boilerplate_line`): they name organisations, titles and
  people, never the page's subject.
* **list item** — a line that starts with a bullet or a letter/number in parentheses
  (``• block name …``, ``(a) …``), or an entry of an option or command list (an identifier followed
  by its capitalised description): an item of a list of topics, messages or options.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

RUNNING_MIN_PAGES = 3
EDGE_LINES = 2
TOC_MIN_LINES = 5
MAX_HEADING_WORDS = 10
MAX_TITLECASE_WORDS = 6

_SPACES = re.compile(r"\s+")
_DIGITS = re.compile(r"[0-9ivxlcdm]+\b|[0-9]+")
_DOT_LEADER = re.compile(r"(?:\.\s?){3,}|(?:\s\.){3,}")
_ENDS_IN_PAGE = re.compile(
    r"(?:[A-Za-z)\]’'\"”]\s*[,:]?\s+|,\s*)(?:[0-9]{1,4}|[ivxlc]{1,6})(?:\s*[,–-]\s*[0-9]{1,4})*\s*$"
)
_INDEX_ENTRY = re.compile(r"^[^\d]{2,60}?,?\s+[0-9ivxlc]{1,4}(?:\s*[,–-]\s*[0-9ivxlc]{1,4})*\s*$")
_NUMBERED = re.compile(
    r"^\s*(?P<num>(?i:chapter|appendix|part|section)\s+[0-9A-Z]{1,3}[:.]?|[0-9]{1,2}(?:\.[0-9]{1,2}){0,3}\.?"
    r"|[A-Z](?:\.[0-9]{1,2})+\.?)\s+(?P<title>[A-Z][^\\{}=$%&#_^|<>]{1,80})$"
)
_LONG_WORD = re.compile(r"[A-Za-z]{3}")
_MATH = frozenset("=≥≤<>+–−×÷^")
SMALL_WORDS = frozenset(
    {"of", "and", "the", "in", "for", "to", "with", "a", "an", "on", "or", "by", "from", "at", "as"}
)
_TITLE_WORD = re.compile(r"^(?:[A-Z0-9][\w'’()/+-]*|[a-z]{1,4})$")
_FINITE_VERBS = frozenset(
    "is are was were be been being can cannot could must should shall will would may might has have had does do did not".split()
)
_QUESTION = re.compile(r"^(?:what|how|why|when|where|which|who|can|is|are|does|do|should)\b", re.IGNORECASE)
_SEVERAL_PAGES = re.compile(r"[0-9]{1,4}\s*,\s*[0-9]{1,4}\s*,?\s*$")
_CONTENTS = re.compile(r"^\s*(?:table of )?contents\s*$", re.IGNORECASE)
_INDEX_HEAD = re.compile(r"^\s*(?:[0-9]+\s+)?(?:general |subject |command |concept )?index\s*$", re.IGNORECASE)
_BIBLIOGRAPHY_HEAD = re.compile(
    r"^\s*(?:[0-9]+(?:\.[0-9]+)*\.?\s+|(?:chapter|appendix)\s+[0-9A-Z]{1,3}[:.]?\s+)?"
    r"(?:references|bibliography|works cited|literature cited|literatur|literaturverzeichnis|bibliographie|"
    r"références|further reading)\s*$",
    re.IGNORECASE,
)
_BOILERPLATE = re.compile(
    r"copyright|©|\(c\)\s*(?:19|20)[0-9]{2}|all rights reserved|permission is granted|verbatim copies|"
    r"\blicen[cs]ed? under\b|public licen[cs]e|\bisbn\b|\bdoi:|^\s*<?(?:https?://|www\.)\S+\s*$|"
    r"[\w.+-]+@[\w-]+\.[\w.-]+",
    re.IGNORECASE,
)
_BIBTEX = re.compile(r"^\s*(?:@\w+\s*[{(]|[a-z]+\s*=\s*[{\"])", re.IGNORECASE)
_CITATION = re.compile(
    r"(?:19|20)[0-9]{2}[a-z]?\b.*(?:\bpp?\.\s*[0-9]|\bvol(?:ume)?\.?\s*[0-9]|proceedings|\bjournal\b|\bpress\b|"
    r"\beds?\.|\bet al\.|\bpublisher)|^\s*\[[0-9A-Za-z+]{1,12}\]\s+[A-Z]",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"^\s*(?:[•◦▪▫▸►‣⁃∗*·●○■□✓✗–—]|-(?=\s)|\(?[a-z]\)|\([0-9ivx]{1,4}\))\s*\S")
_ENTRY = re.compile(r"^\s*(\\?[a-z@][A-Za-z0-9@_-]{2,})(?:=\S*)?\s+[A-Z](?:[a-z]|\s)")
_PROSE_STARTS = frozenset(
    "and are but can for from has have into its may not now one our see since some than that the their then there "
    "these they this those thus use was were what when where which while who will with you".split()
)


def edge_key(line: str) -> str:
    """A line's digit-free, case-folded, space-collapsed form (the key of running lines)."""
    return _SPACES.sub(" ", _DIGITS.sub("", line.lower())).strip()


def running_keys(pages: Sequence[Sequence[str]], min_pages: int = RUNNING_MIN_PAGES) -> set[str]:
    """Edge-line keys (first/last :data:`EDGE_LINES` lines) recurring on ≥ ``min_pages`` pages of one document."""
    counts: Counter[str] = Counter()
    for lines in pages:
        counts.update({edge_key(line) for line in (*lines[:EDGE_LINES], *lines[-EDGE_LINES:])})
    return {key for key, n in counts.items() if n >= min_pages or key == ""}


def is_running(i: int, n: int, line: str, running: set[str]) -> bool:
    """Line ``i`` of a page of ``n`` lines is a running header or footer."""
    return (i < EDGE_LINES or i >= n - EDGE_LINES) and edge_key(line) in running


def ends_in_number(line: str) -> bool:
    """The line's last character is a digit or a lower-case Roman numeral letter."""
    tail = line.rstrip()[-1:]
    return bool(tail) and (tail.isdigit() or tail in "ivxlc")


def is_reference_line(line: str) -> bool:
    """A table-of-contents or index entry: dot leaders or a trailing page number."""
    if ends_in_number(line) and _ENDS_IN_PAGE.search(line):
        return True
    return (".." in line or ". ." in line) and bool(_DOT_LEADER.search(line))


def _sentence_like(title: str) -> bool:
    """A title that reads as a sentence or a list entry rather than a section title.

    It has a finite verb (unless it asks a question: ``What is R?``), ends with a function word
    (the line goes on: ``Customization hooks allow easy adjustments to the default style of``), or
    goes on after a colon (``AVM structures: These exist within lingmacros``).
    """
    words = [w.strip("?!.,:;'’\"").lower() for w in title.split()]
    if words and words[-1] in SMALL_WORDS | {"a", "an", "the"}:
        return True
    head, colon, rest = title.partition(": ")
    if colon and len(rest.split()) >= 3:
        return True
    return bool(set(words) & _FINITE_VERBS) and not (_QUESTION.match(title) and title.rstrip().endswith("?"))


def numbered_heading(line: str) -> tuple[str, int] | None:
    """``(title, level)`` when ``line`` is a numbered section heading, else ``None``."""
    stripped = line.strip()
    if len(stripped) > 90:
        return None
    m = _NUMBERED.match(stripped)
    if not m:
        return None
    title = m.group("title").strip()
    if title[-1:] in ".,;:" or len(title.split()) > MAX_HEADING_WORDS:
        return None
    if not _LONG_WORD.search(title) or any(c in _MATH for c in title) or _sentence_like(title):
        return None
    num = m.group("num").rstrip(".:").strip()
    if " " in num:  # Chapter 4, Appendix B
        return title, 1
    if num.isdigit() and int(num) > 40:  # a quantity, not a chapter number
        return None
    return title, num.count(".") + 1


def short_line(line: str) -> bool:
    """1–8 words, ≤ 80 characters, at least one letter, not ending like a sentence or a list item."""
    stripped = line.strip()
    if not stripped or len(stripped) > 80 or stripped[-1] in ".,;:" or not any(c.isalpha() for c in stripped):
        return False
    return len(stripped.split()) <= 8


def titlecase_line(line: str) -> bool:
    """A short Title-Case line: 1–6 words, the first capitalised, every other word capitalised or short.

    A line with a bare number or an identifier with an underscore is a table row (``CF_DIF 5 Data
    Interchange Format``), and a sentence-like line (:func:`_sentence_like`) is not a title either.
    """
    words = line.strip().split()
    if not 1 <= len(words) <= MAX_TITLECASE_WORDS or not short_line(line) or not words[0][:1].isupper():
        return False
    if any(w.isdigit() or "_" in w for w in words) or _sentence_like(line.strip()):
        return False
    if not all(_TITLE_WORD.match(w) for w in words):
        return False
    letters = sum(c.isalpha() for c in line)
    return letters >= 3 and sum(1 for w in words if w.lower() not in SMALL_WORDS) >= 1


def is_boilerplate_line(line: str) -> bool:
    """A copyright/licence line, a BibTeX field, a bibliography entry, an e-mail address or a bare URL."""
    return bool(_BOILERPLATE.search(line) or _BIBTEX.match(line) or _CITATION.search(line))


def is_list_item(line: str) -> bool:
    """A list item: a bullet, a dash or a parenthesised letter/number (``• …``, ``(a) …``), or an entry of an
    option or command list — an identifier, then its capitalised description (``topstyle The TIKZ style
    to be used for the top node.``, ``\\linenummargin Sets the margin …``)."""
    if _LIST_ITEM.match(line):
        return True
    entry = _ENTRY.match(line)
    return bool(entry) and entry.group(1).lower() not in _PROSE_STARTS


def is_bibliography_heading(line: str) -> bool:
    """``References``, ``Bibliography`` (numbered or not, in the corpus's languages)."""
    return bool(_BIBLIOGRAPHY_HEAD.match(line))


def page_role(lines: Sequence[str], running: set[str]) -> str | None:
    """``toc``, ``index`` or ``None`` for one page's non-blank lines.

    A page that starts with *Contents* and holds ≥ 3 reference lines, or whose non-running lines
    are mostly (≥ half, ≥ :data:`TOC_MIN_LINES`) reference lines, is ``toc`` — unless it has index
    features: it starts with *Index* and holds ≥ 3 entries (``word, 12, 40``), or has ≥ 2
    single-letter group lines (``D``, ``E``) or ≥ 20% of its references list several pages
    (``5, 7, 9,``): then it is ``index``.
    """
    body = [ln for i, ln in enumerate(lines) if not is_running(i, len(lines), ln, running)]
    if not body:
        return None
    refs = sum(1 for ln in body if is_reference_line(ln))
    if refs < 3:
        return None
    entries = sum(1 for ln in body if ends_in_number(ln) and _INDEX_ENTRY.match(ln.strip()))
    head = body[:3]
    if any(_CONTENTS.match(ln) for ln in head):
        return "toc"
    if any(_INDEX_HEAD.match(ln) for ln in head) and entries >= 3:
        return "index"
    if refs >= TOC_MIN_LINES and refs >= 0.5 * len(body):
        letters = sum(1 for ln in body if len(ln.strip()) == 1 and ln.strip().isupper())
        several = sum(1 for ln in body if _SEVERAL_PAGES.search(ln))
        if letters >= 2 or several >= 0.2 * refs:
            return "index"
        return "toc"
    return None
