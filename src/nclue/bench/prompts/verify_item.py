"""Parser for ``verify_item.txt`` responses.

A response is accepted only if it is a JSON object (optionally inside a Markdown code
fence) with one entry per condition, in order, each with a Boolean ``established``; a
positive entry must name one of the offered pages and quote text that is a whitespace-
and case-normalised substring of that page's excerpt. Anything else is rejected (the
caller then retries nothing: a rejected response is an error, never a guess).
"""

from __future__ import annotations

import re

from nclue.llm.replies import json_object

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()


def parse(response: str, conditions: list[str], excerpts: dict[str, dict[int, str]]) -> dict[str, bool]:
    """Map each condition to its verdict; raise ``ValueError`` naming what is wrong."""
    entries = json_object(response).get("conditions")
    if not isinstance(entries, list) or len(entries) != len(conditions):
        raise ValueError(f"expected {len(conditions)} condition entries")
    verdicts: dict[str, bool] = {}
    for name, entry in zip(conditions, entries):
        if not isinstance(entry, dict) or entry.get("condition") != name:
            raise ValueError(f"entry for {name!r} missing or out of order")
        established = entry.get("established")
        if not isinstance(established, bool):
            raise ValueError(f"'established' for {name!r} is not a Boolean")
        if established:
            page = entry.get("page")
            quote = entry.get("quote") or ""
            text = excerpts[name].get(page) if isinstance(page, int) else None
            if text is None:
                raise ValueError(f"page {page!r} for {name!r} is not one of the offered pages")
            if len(_norm(quote)) < 3 or _norm(quote) not in _norm(text):
                raise ValueError(f"quote for {name!r} is not a verbatim substring of page {page}")
        verdicts[name] = established
    return verdicts
