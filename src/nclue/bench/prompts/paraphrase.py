"""Parser for ``paraphrase.txt`` responses (``docs/construction.md#paraphrases``).

A response is accepted only if it is a JSON object (optionally inside a Markdown code fence)
whose ``paraphrase`` is a string of 3 to 300 characters on one line, without double quotes,
that differs (case- and whitespace-insensitively) from each of the query's verbatim
renderings (``raw``, ``clean_v2``, ``natural``). Anything else raises ``ValueError`` naming
the problem; the caller records it and may ask again.
"""

from __future__ import annotations

import re

from nclue.llm.replies import json_object
from nclue.query import render_forms

_WS = re.compile(r"\s+")
MAX_CHARS = 300


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()


def parse(response: str, conditions: tuple[str, ...]) -> str:
    """The accepted paraphrase (whitespace-normalised); raise ``ValueError`` naming what is wrong."""
    text = json_object(response).get("paraphrase")
    if not isinstance(text, str):
        raise ValueError("no string 'paraphrase' in the JSON object")
    if "\n" in text.strip() or '"' in text:
        raise ValueError("the paraphrase must be one line without quotation marks")
    clean = _WS.sub(" ", text).strip()
    if not 3 <= len(clean) <= MAX_CHARS:
        raise ValueError(f"the paraphrase must have 3 to {MAX_CHARS} characters")
    if _norm(clean) in {_norm(v) for v in render_forms(conditions).values()}:
        raise ValueError("the paraphrase repeats a verbatim rendering of the query")
    return clean
