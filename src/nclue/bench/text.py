"""Page text → lines → word tokens, with the page structure the offline judge needs.

Per document, every line is classified once by the shared line rules of
:mod:`nclue.corpus.lines`:

* a **table-of-contents or index page** (:func:`~nclue.corpus.lines.page_role`) is skipped whole;
* **running headers/footers**, **reference lines** (TOC/index entries) and **boilerplate**
  (copyright and licence lines, BibTeX fields, bibliography entries, e-mail addresses, bare URLs)
  are ignored, and so is every line of a **bibliography** (from a *References*/*Bibliography*
  heading to the next heading);
* a **heading** is a numbered section title (``2.3 Making the manuals``, ``Chapter 4 Footnotes``)
  or a Title-Case line (``Critical Apparatus``) — except on the first page of a document of three
  or more pages, where an unnumbered Title-Case line is the title, an author or a date, not a
  section;
* a **list item** (a line that starts with a bullet or ``(a)``) is body text whose words are marked
  ``item``: an item of a list of topics, messages or options is not a discussion;
* everything else is **body**. In body lines, a run of capitalised words with at least three
  capitals (``R Foundation for Statistical Computing``, ``R Core Team``; *of*, *for*, *and*,
  *the* may join them) is a **proper name**, and its words are marked ``name``: a concept named
  inside an organisation, a title or an author line is not discussed there.

Words are ASCII letter runs (``[A-Za-z]+``, an ``'s`` possessive dropped; a word with
non-ASCII letters, such as French *épaisseur*, is a break rather than a mangled fragment); a word
preceded by a backslash is a TeX control sequence and is skipped. Hyphens *join* words, so
``font-encoding`` and ``font encoding`` tokenise alike (soft hyphens were resolved at ingest,
:mod:`nclue.corpus.normalize`); any other punctuation, a digit run, or a heading boundary is a
*break* that an n-gram may not cross.

Inflection is folded by the S-stemmer (Harman, "How effective is suffixing?", JASIS 1991):
``ies→y``, ``es→e``, ``s→∅`` with its exceptions — deliberately weaker than Porter, which
would conflate *hyphenation* with *hyphen* — plus irregular plurals (*matrices* = *matrix*,
*indices* = *index*) and sibilant plurals (*indexes* = *index*, *branches* = *branch*).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from nclue.corpus.lines import (
    is_bibliography_heading,
    is_boilerplate_line,
    is_list_item,
    is_reference_line,
    is_running,
    numbered_heading,
    page_role,
    running_keys,
    titlecase_line,
)

TITLE_PAGE_MIN_PAGES = 3
MIN_NAME_CAPITALS = 3
NAME_JOINERS = frozenset({"of", "for", "and", "the"})

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
    thing things way ways case cases kind kinds lot lots second third fourth fifth particular minimum maximum
    original starting current whole entire two three four five ten around containing""".split()
)
STOPWORDS = ENGLISH_STOPWORDS | FOREIGN_WORDS | GENERIC_WORDS

_WORD_OR_BREAK = re.compile(r"\\[A-Za-z@]+|[^\W\d_]+(?:'[^\W\d_]+)?|[-\u00ad\ufffe]+|[^\w\s\-\u00ad\ufffe]+|[\d_]+")
_CODE_PUNCTUATION = frozenset("._/\\@{[<=:$#%&*+|~^")
_IRREGULAR_PLURALS = {
    "matrices": "matrix",
    "indices": "index",
    "vertices": "vertex",
    "appendices": "appendix",
    "simplices": "simplex",
    "apices": "apex",
    "helices": "helix",
    "radices": "radix",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "analyses": "analysis",
    "hypotheses": "hypothesis",
    "parentheses": "parenthesis",
    "syntheses": "synthesis",
    "theses": "thesis",
    "diagnoses": "diagnosis",
}
_SIBILANT_ES = re.compile(r"(?:x|ss|sh|zz|tch|[nr]ch)es$")


def s_stem(word: str) -> str:
    """Harman's S-stemmer on a lower-case word (inflection only), with Latin/Greek and sibilant plurals.

    ``matrices`` → ``matrix`` and ``hypotheses`` → ``hypothesis`` come from a table of
    irregular plurals; ``-xes``/``-sses``/``-shes``/``-zzes``/``-tches``/``-nches``/``-rches``
    drop ``es`` (``indexes`` → ``index``, ``branches`` → ``branch``), where Harman's rule would
    leave ``indexe``.
    """
    if len(word) <= 3:
        return word
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if _SIBILANT_ES.search(word):
        return word[:-2]
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss", "is")):
        return word[:-1]
    return word


def heading_title(line: str, title_page: bool = False) -> str | None:
    """The title text if ``line`` is a heading, else ``None`` (on a title page only numbered headings count)."""
    numbered = numbered_heading(line)
    if numbered is not None:
        return numbered[0]
    if not title_page and titlecase_line(line):
        return line.strip()
    return None


@dataclass
class PageTokens:
    """Token arrays of one page.

    ``words``: surface words (case kept, hyphen-split); ``brk``: a break precedes the word;
    ``hyph``: the word is hyphen-joined to the previous one; ``head``: the word lies on a
    heading line; ``hend``: the word is the last word of a heading (the head noun of an
    English noun-phrase title); ``item``: the word lies on a list-item line; ``name``: the word
    is part of a proper name in a body line; ``glued``: the word follows code punctuation with no
    space (``read.fortran``, ``\\LOCAL{list``): an identifier or a code argument, not prose.
    """

    words: list[str]
    brk: np.ndarray
    hyph: np.ndarray
    head: np.ndarray
    hend: np.ndarray
    item: np.ndarray
    name: np.ndarray
    glued: np.ndarray


def split_pages(texts: list[str]) -> list[list[str]]:
    """Non-blank lines of each page (``\\r\\n``, ``\\r`` and ``\\n`` all end a line)."""
    return [[ln for ln in (t or "").splitlines() if ln.strip()] for t in texts]


def running_lines(pages: list[list[str]]) -> set[str]:
    """The running-line keys of one document (:func:`nclue.corpus.lines.running_keys`)."""
    return running_keys(pages)


def _name_words(words: list[str], brk: list[bool], start: int) -> list[int]:
    """Indices (≥ ``start``) of the words of one body line that belong to a proper name.

    A name is a run of capitalised words, unbroken by punctuation, with at least
    :data:`MIN_NAME_CAPITALS` capitals; *of*, *for*, *and*, *the* may join two capitalised words.
    """
    out: list[int] = []
    run: list[int] = []
    capitals = 0

    def close() -> None:
        nonlocal run, capitals
        while run and not words[run[-1]][:1].isupper():
            run.pop()
        if capitals >= MIN_NAME_CAPITALS:
            out.extend(run)
        run, capitals = [], 0

    for k in range(start, len(words)):
        word = words[k]
        if run and brk[k]:
            close()
        if word[:1].isupper():
            run.append(k)
            capitals += 1
        elif run and word in NAME_JOINERS:
            run.append(k)
        else:
            close()
    close()
    return out


def _skipped(line: str) -> bool:
    """Lines that never carry evidence: reference (TOC/index) entries and boilerplate."""
    return is_reference_line(line) or is_boilerplate_line(line)


def tokenize_document(pages: list[list[str]]) -> list[PageTokens]:
    """Tokenise every page of one document with the line classes of the module docstring."""
    running = running_lines(pages)
    title_page_rule = len(pages) >= TITLE_PAGE_MIN_PAGES
    in_bibliography = False
    out: list[PageTokens] = []
    for p, lines in enumerate(pages):
        words: list[str] = []
        brk: list[bool] = []
        hyph: list[bool] = []
        head: list[bool] = []
        item: list[bool] = []
        glued: list[bool] = []
        hend_at: set[int] = set()
        name_at: list[int] = []
        n_lines = len(lines)
        pending_break = True
        skip_page = page_role(lines, running) is not None
        for i, line in enumerate(lines if not skip_page else ()):
            if is_running(i, n_lines, line, running):
                pending_break = True
                continue
            title = heading_title(line, title_page=title_page_rule and p == 0)
            if title is not None:
                in_bibliography = is_bibliography_heading(title) or is_bibliography_heading(line)
            elif is_bibliography_heading(line):
                in_bibliography = True
            if in_bibliography or _skipped(line):
                pending_break = True
                continue
            is_head = title is not None
            on_item = not is_head and is_list_item(line)
            if is_head or on_item:
                pending_break = True
            first_word = len(words)
            joined = False
            code_end = -1
            for match in _WORD_OR_BREAK.finditer(title if is_head else line):
                piece = match.group(0)
                first = piece[0]
                if first.isalpha():
                    glued.append(match.start() == code_end)
                    if not piece.isascii() or ("'" in piece and not piece.endswith(("'s", "'S"))):
                        glued.pop()
                        pending_break = True
                        joined = False
                        continue
                    if piece.endswith(("'s", "'S")):
                        piece = piece[:-2]
                    words.append(piece)
                    brk.append(pending_break)
                    hyph.append(joined)
                    head.append(is_head)
                    item.append(on_item)
                    pending_break = False
                    joined = False
                elif first in "-\u00ad\ufffe":
                    joined = bool(words) and not pending_break
                else:
                    pending_break = True
                    joined = False
                    if first == "\\" or set(piece) & _CODE_PUNCTUATION:
                        code_end = match.end()
            if is_head:
                pending_break = True
                if head and head[-1]:
                    hend_at.add(len(words) - 1)
            else:
                name_at.extend(_name_words(words, brk, first_word))
        hend = np.zeros(len(words), dtype=bool)
        hend[list(hend_at)] = True
        name = np.zeros(len(words), dtype=bool)
        name[name_at] = True
        out.append(
            PageTokens(
                words=words,
                brk=np.array(brk, dtype=bool),
                hyph=np.array(hyph, dtype=bool),
                head=np.array(head, dtype=bool),
                hend=hend,
                item=np.array(item, dtype=bool),
                name=name,
                glued=np.array(glued, dtype=bool),
            )
        )
    return out
