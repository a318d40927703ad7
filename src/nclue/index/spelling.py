"""British and American spellings of one word (``customisation`` / ``customization``).

The Porter 2 stemmer keeps the two spellings apart (``customis`` vs ``custom``, ``colour`` vs
``color``), so a condition written one way reads 0 on a page written the other way under every
lexical signal. :func:`alternate_text` rewrites a condition into the other convention, one token at
a time, and only where the rewritten word's stem occurs in the collection: the evidence layer
scores both texts and keeps the better (:mod:`nclue.evidence.signals`).

The rules (:func:`alternates`), after the usual British/American tables (Oxford's *-ize* aside):

* ``-ise``/``-isation``/``-yse`` and their inflections ↔ ``-ize``/``-ization``/``-yze``, when at
  least three letters precede the suffix (``size``, ``rise`` and ``wise`` are left alone);
* ``-our`` ↔ ``-or``, ``-tre`` ↔ ``-ter``, ``-ogue`` ↔ ``-og``, the doubled ``l`` of ``labelled`` and
  ``-ence`` ↔ ``-ense``, each for a listed family of bases (the suffixes alone would turn ``four``
  into ``for`` and ``filled`` into ``filed``);
* a short table of single words (``grey``/``gray``, ``programme``/``program``, ...).

A rewrite whose stem the collection never uses is dropped, so a word that merely looks British
(``precise`` → ``precize``) is kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_ISE = re.compile(r"^([a-z]{3,}?)(is|iz)(e|ed|es|ing|ation|ations|ational|er|ers|able)$")
_YSE = re.compile(r"^([a-z]{2,}?)(ys|yz)(e|ed|es|ing|er|ers)$")
_SWAP = {"is": "iz", "iz": "is", "ys": "yz", "yz": "ys"}

_OUR_BASES = (
    "arm behavi clam col endeav fav flav glam harb hon hum lab neighb od parl rum sav splend val vap vig"
).split()
_OUR_TAILS = ("", "s", "ed", "ing", "ful", "able", "ite", "ites", "less", "er", "ers")
_TRE_BASES = "calib cent fib lit lust meag met sab spect theat".split()
_TRE_PAIRS = (("re", "er"), ("res", "ers"), ("red", "ered"), ("ring", "ering"))
_OGUE_BASES = "analog catalog dialog epilog monolog prolog".split()
_OGUE_PAIRS = (("ue", ""), ("ues", "s"), ("ued", "ed"), ("uing", "ing"))
_LL_BASES = (
    "cancel channel counsel dial equal fuel funnel label level marshal model panel pedal quarrel rival "
    "shovel signal total travel tunnel"
).split()
_LL_TAILS = ("ed", "ing", "er", "ers", "or", "ors")
_ENCE_BASES = "def lic off pret".split()
_ENCE_PAIRS = (("ence", "ense"), ("ences", "enses"), ("enced", "ensed"), ("encing", "ensing"))
_WORDS = (
    "grey gray|greys grays|programme program|programmes programs|aluminium aluminum|"
    "manoeuvre maneuver|manoeuvres maneuvers|ageing aging|judgement judgment|judgements judgments|"
    "acknowledgement acknowledgment|acknowledgements acknowledgments|sceptical skeptical|"
    "artefact artifact|artefacts artifacts|enquiry inquiry|enquiries inquiries|plough plow|"
    "mould mold|moulds molds|cosy cozy|learnt learned|spelt spelled|burnt burned|fulfil fulfill|"
    "fulfils fulfills|enrol enroll|enrols enrolls|instalment installment|instalments installments|"
    "skilful skillful|wilful willful|distil distill|encyclopaedia encyclopedia|"
    "anaesthesia anesthesia|paediatric pediatric|orthopaedic orthopedic"
)


def _pairs() -> dict[str, str]:
    """Every listed spelling → its other-convention spelling (both directions)."""
    families = (
        (_OUR_BASES, tuple((f"our{t}", f"or{t}") for t in _OUR_TAILS)),
        (_TRE_BASES, _TRE_PAIRS),
        (_OGUE_BASES, _OGUE_PAIRS),
        (_LL_BASES, tuple((f"l{t}", t) for t in _LL_TAILS)),
        (_ENCE_BASES, _ENCE_PAIRS),
    )
    words = [pair.split() for pair in _WORDS.split("|")]
    words += [
        (base + british, base + american) for bases, pairs in families for base in bases for british, american in pairs
    ]
    out: dict[str, str] = {}
    for british, american in words:
        out[british], out[american] = american, british
    return out


_TABLE = _pairs()
_WORD = re.compile(r"\w+")


def alternates(word: str) -> str | None:
    """The other-convention spelling of a lower-case ``word``, or ``None`` (module docstring)."""
    listed = _TABLE.get(word)
    if listed is not None:
        return listed
    for pattern in (_ISE, _YSE):
        m = pattern.match(word)
        if m is not None:
            return m.group(1) + _SWAP[m.group(2)] + m.group(3)
    return None


def alternate_text(text: str, stem: Callable[[str], str | None]) -> str | None:
    """``text`` with every word whose other spelling the collection uses rewritten to it; ``None``
    when no word changes.

    ``stem(word)`` returns the word's analysed term when the collection's vocabulary holds it, else
    ``None`` (stopwords included), so a rewrite never drops a term from the condition.
    """
    changed = False

    def swap(m: re.Match[str]) -> str:
        nonlocal changed
        word = m.group(0)
        other = alternates(word.lower())
        if other is None or stem(other) is None or stem(other) == stem(word.lower()):
            return word
        changed = True
        return other

    rewritten = _WORD.sub(swap, text)
    return rewritten if changed else None
