"""Conditions, query parsing, and the three verbatim renderings of ``docs/labels.md#renderings``.

* ``raw``: the construction text (here: the conditions joined by ``" "``, unless the
  builder supplies its own raw text);
* ``clean_v2``: each concept quoted, separated by ``"; "`` —
  ``"Grievance Mechanism"; "Comparison"; "Resettlement"``;
* ``natural``: ``Find the document that discusses "X", "Y", and "Z".`` (two conditions:
  ``"X" and "Y"``).

The semicolon delimiter is deliberate: concept-internal "and" makes other delimiters
ambiguous (seed, Query-Form Robustness Protocol).

:func:`split_sentence` is the exception, for people who type a sentence: it splits one
plain-language request on commas, "and", "with" and similar joiners, and the CLI prints the
conditions it used, so a wrong split is seen and fixed with ``--require``.
"""

from __future__ import annotations

import re

from nclue.errors import NclueError

MAX_CONDITIONS = 8
_QUOTED = re.compile(r'"([^"]+)"')
_NATURAL = re.compile(r"^\s*Find the document that discusses (.+?)\.?\s*$", re.IGNORECASE)


def render_raw(conditions: list[str] | tuple[str, ...]) -> str:
    """The default raw construction text: conditions separated by single spaces."""
    return " ".join(conditions)


def render_clean_v2(conditions: list[str] | tuple[str, ...]) -> str:
    """``"A"; "B"; "C"``."""
    return "; ".join(f'"{c}"' for c in conditions)


def render_natural(conditions: list[str] | tuple[str, ...]) -> str:
    """``Find the document that discusses "A", "B", and "C".`` (``"A" and "B"`` for two)."""
    quoted = [f'"{c}"' for c in conditions]
    if len(quoted) == 1:
        body = quoted[0]
    elif len(quoted) == 2:
        body = f"{quoted[0]} and {quoted[1]}"
    else:
        body = ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    return f"Find the document that discusses {body}."


def render_forms(conditions: list[str] | tuple[str, ...], raw: str | None = None) -> dict[str, str]:
    """All three renderings; ``raw`` overrides the default raw text when given."""
    return {
        "raw": raw if raw is not None else render_raw(conditions),
        "clean_v2": render_clean_v2(conditions),
        "natural": render_natural(conditions),
    }


def parse_conditions(text: str, extra: list[str] | tuple[str, ...] = ()) -> tuple[str, ...]:
    """Parse a query into its conditions.

    Accepts the clean_v2 form (``"A"; "B"``), the natural template, or free text plus
    explicit ``extra`` conditions (the CLI's ``--condition`` flags). Quoted concepts win;
    free text without quotes is split on ``;``. Raises :class:`NclueError` for an empty
    query, a single condition, or more than :data:`MAX_CONDITIONS`.
    """
    conditions: list[str] = []
    body = text or ""
    natural = _NATURAL.match(body)
    if natural:
        body = natural.group(1)
    quoted = _QUOTED.findall(body)
    if quoted:
        conditions.extend(q.strip() for q in quoted)
    elif body.strip():
        conditions.extend(part.strip() for part in body.split(";"))
    conditions.extend(c.strip() for c in extra)
    conditions = [c for c in conditions if c]
    seen: dict[str, None] = {}
    for c in conditions:
        seen.setdefault(c, None)
    unique = tuple(seen)
    if not unique:
        raise NclueError('empty query: give conditions as "A"; "B" or with --condition A --condition B')
    if len(unique) == 1:
        raise NclueError(
            f"only one condition ({unique[0]!r}): a conjunctive query needs at least two; "
            'separate them as "A"; "B" or add --condition'
        )
    if len(unique) > MAX_CONDITIONS:
        raise NclueError(f"{len(unique)} conditions given; at most {MAX_CONDITIONS} are supported")
    return unique


_LEAD = re.compile(
    r"^\s*(?:(?:please\s+)?(?:how\s+(?:do|can|should|would)\s+(?:i|we|you|one)|how\s+to|where\s+(?:do|can)\s+i"
    r"|what\s+(?:is|are)|which\s+(?:documents?|manuals?|pages?|guides?)\s+(?:cover|covers|discuss|discusses|explain|explains|describe|describes)"
    r"|find(?:\s+(?:me|the\s+documents?|documents?))?(?:\s+(?:about|on|that\s+cover|covering))?|show\s+me|i\s+(?:need|want)(?:\s+to)?"
    r"|documents?\s+(?:about|on|covering))\b)\s*",
    re.IGNORECASE,
)
_JOINERS = re.compile(
    r"\s*(?:,|;|\s(?:and|with|plus|including|as\s+well\s+as|along\s+with|together\s+with|using)\s)\s*", re.IGNORECASE
)
_ARTICLE = re.compile(r"^(?:(?:a|an|the|some|about|also|its|their)\s+)+", re.IGNORECASE)


def split_sentence(text: str) -> tuple[str, ...]:
    """The conditions of one plain-language request, e.g. ``how do I typeset a critical edition
    with line numbers and footnotes`` → ``typeset a critical edition``, ``line numbers``,
    ``footnotes``.

    A leading question phrase (``how do I``, ``how to``, ``find documents about``, ...) and the
    final ``?``/``.`` are dropped; the rest is split on commas, semicolons and the joiners
    ``and``, ``with``, ``plus``, ``including``, ``as well as``, ``along with``, ``together with``
    and ``using``; leading articles are dropped from each part. A concept that itself contains
    "and" is split too: quote the conditions (``"A"; "B"``) or give them one by one when it matters.
    """
    body = _LEAD.sub("", (text or "").strip().rstrip("?.!").strip())
    parts = [_ARTICLE.sub("", part).strip(" .,;:") for part in _JOINERS.split(body)]
    return tuple(dict.fromkeys(p for p in parts if p))
