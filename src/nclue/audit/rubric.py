"""The per-condition rubric an evaluator applies (``docs/audit.md#rubric``).

Every condition gets (i) a complete requirement, (ii) what counts, (iii) what does not count
and (iv) a note naming the surface forms the benchmark treats as the same concept. The
default wording restates the benchmark's establishes rule (``docs/labels.md#establishes-rule``):
a page *establishes* a condition when a reader of that page learns about the concept there;
a mere mention does not. A JSON file can replace any field for any condition::

    {"conditions": {"footnotes": {"note": "Endnotes count as footnotes here."}}}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import read_json

FIELDS = ("requirement", "counts", "does_not_count", "note")


def default_rubric(name: str, aliases: tuple[str, ...]) -> dict:
    """The rubric of condition ``name`` with surface forms ``aliases``."""
    others = sorted({a for a in aliases if a.casefold() != name.casefold()}, key=lambda a: (a.casefold(), a))
    note = (
        f"These surface forms name the same concept: “{name}”, " + ", ".join(f"“{a}”" for a in others) + "."
        if others
        else f"Only the concept matters, not the exact wording “{name}”; a different name for the same concept counts."
    )
    return {
        "requirement": (
            f"The page establishes “{name}”: a reader of this page learns about {name} here — the page defines it, "
            "explains it, or carries a section about it."
        ),
        "counts": [
            f"a heading or section title naming {name}, followed by text about it",
            f"a sentence that defines or explains {name}",
            f"a passage whose subject is {name} (how it works, how to use it, what it is for)",
        ],
        "does_not_count": [
            "a table-of-contents, index or bibliography entry",
            "a running header or footer",
            "an item in a list of topics, options or keywords",
            f"a passing mention of {name} in a sentence about something else",
            "anything you know from outside the displayed text",
        ],
        "note": note,
    }


def load_overrides(path: str | os.PathLike[str] | None) -> Mapping[str, Mapping[str, object]]:
    """Per-condition rubric fields from a JSON file (``{"conditions": {name: {field: value}}}``)."""
    if path is None:
        return {}
    p = Path(path)
    data = read_json(p, 'write {"conditions": {name: {field: text}}}', "rubric file")
    conditions = data.get("conditions") if isinstance(data, dict) else None
    if not isinstance(conditions, dict):
        raise NclueError(f"{p}: needs a 'conditions' object mapping condition names to rubric fields")
    for name, fields in conditions.items():
        if not isinstance(fields, dict) or set(fields) - set(FIELDS):
            raise NclueError(f"{p}: condition {name!r}: rubric fields must be among {', '.join(FIELDS)}")
        for key in ("counts", "does_not_count"):
            if key in fields and not (
                isinstance(fields[key], list) and all(isinstance(x, str) and x.strip() for x in fields[key])
            ):
                raise NclueError(f"{p}: condition {name!r}: '{key}' must be a list of non-empty strings")
        for key in ("requirement", "note"):
            if key in fields and not isinstance(fields[key], str):
                raise NclueError(f"{p}: condition {name!r}: '{key}' must be a string")
    return conditions


def rubric(name: str, aliases: tuple[str, ...], overrides: Mapping[str, Mapping[str, object]]) -> dict:
    """The default rubric of ``name`` with any fields the override file gives for it."""
    return {**default_rubric(name, aliases), **dict(overrides.get(name, {}))}
