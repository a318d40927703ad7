"""The ``paraphrase`` query form, read only from a frozen cache file — never generated.

Cache format: JSON Lines, one object per query, ``{"qid": "...", "text": "..."}``
(``paraphrase`` is accepted as the text key too). A qid may appear once; text must be a
non-empty string. :func:`query_text` gives every system its query text for a form:
``raw`` / ``clean_v2`` / ``natural`` from the query's renderings (rendered from its
conditions when the query carries none), ``paraphrase`` from the cache — a query missing
from the cache is an error, because paraphrases are never invented at evaluation time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from nclue.errors import NclueError, where
from nclue.io import iter_jsonl
from nclue.query import render_forms
from nclue.types import FORMS, Query

PARAPHRASE = "paraphrase"
QUERY_FORMS: tuple[str, ...] = (*FORMS, PARAPHRASE)


def load_paraphrases(path: str | os.PathLike[str]) -> dict[str, str]:
    """``qid → paraphrase`` from a frozen JSONL cache; errors name the file and line."""
    cache: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for line, row in iter_jsonl(path):
        qid = row.get("qid")
        text = row.get("text", row.get(PARAPHRASE))
        if not isinstance(qid, str) or not qid:
            raise NclueError(f"{where(path, line)}: missing or non-string 'qid'")
        if not isinstance(text, str) or not text.strip():
            raise NclueError(f"{where(path, line)}: qid {qid!r} has no non-empty 'text'")
        if qid in cache:
            raise NclueError(f"{where(path, line)}: qid {qid!r} repeated (first at line {first_line[qid]}); keep one")
        cache[qid] = text.strip()
        first_line[qid] = line
    return cache


def query_text(
    query: Query, form: str, paraphrases: Mapping[str, str] | None = None, cache_path: str | Path | None = None
) -> str:
    """The text of ``query`` in ``form`` (``raw``, ``clean_v2``, ``natural`` or ``paraphrase``)."""
    if form not in QUERY_FORMS:
        raise NclueError(f"unknown query form {form!r}; choose one of {', '.join(QUERY_FORMS)}")
    if form == PARAPHRASE:
        where_from = f" {cache_path}" if cache_path is not None else ""
        if paraphrases is None:
            raise NclueError(
                'the paraphrase form is read only from a frozen cache file; pass one (JSONL of {"qid", "text"})'
            )
        if query.qid not in paraphrases:
            raise NclueError(
                f"paraphrase cache{where_from} has no entry for qid {query.qid!r}; paraphrases are never generated — "
                "add the query to the frozen cache or use another form"
            )
        return paraphrases[query.qid]
    text = query.forms.get(form)
    return text if text else render_forms(query.conditions)[form]
