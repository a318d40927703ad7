"""Concept-containment QA of the query forms (the seed's ``query_forms_report``).

The three verbatim renderings — ``raw``, ``clean_v2``, ``natural`` (``docs/labels.md#renderings``)
— promise not to add, drop or reword a condition. This checks the promise on the stored texts: a
query is *covered* in a form when every one of its conditions occurs in that form's text as an
exact substring (case and spacing included). The seed reports 1,000/1,000 for each verbatim form;
``nclue build`` records the counts in ``MANIFEST.json`` (``query_forms``) and the dataset card, and
``nclue bench verify`` re-derives them and fails on any verbatim form below every query. A
``paraphrase`` form that queries carry is measured by :func:`form_coverage` but neither recorded nor
required: an LLM paraphrase may substitute a concept (the seed's "executive overview" for "Executive
Summary"), which is what the S2a probe is about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nclue.types import FORMS, Query

PARAPHRASE = "paraphrase"
SHOWN_MISSES = 10
"""How many uncovered query ids a record lists (the count is always complete)."""


@dataclass(frozen=True)
class FormCoverage:
    """One form: how many queries carry it, how many contain every condition verbatim, the first misses."""

    form: str
    queries: int
    covered: int
    missing: tuple[str, ...]

    @property
    def complete(self) -> bool:
        """Whether every query of the form contains every condition."""
        return self.covered == self.queries

    def to_json(self) -> dict:
        return {"queries": self.queries, "covered": self.covered, "missing": list(self.missing)}


def missing_conditions(query: Query, form: str) -> tuple[str, ...]:
    """The conditions of ``query`` that its ``form`` text does not contain verbatim."""
    text = query.text(form)
    return tuple(c for c in query.conditions if c not in text)


def form_coverage(queries: Sequence[Query]) -> dict[str, FormCoverage]:
    """Per form (the verbatim ones, then ``paraphrase`` where any query stores one), the coverage above."""
    forms = [*FORMS, *([PARAPHRASE] if any(q.forms.get(PARAPHRASE) for q in queries) else [])]
    out = {}
    for form in forms:
        carrying = [q for q in queries if form in FORMS or q.forms.get(form)]
        misses = [q.qid for q in carrying if missing_conditions(q, form)]
        out[form] = FormCoverage(form, len(carrying), len(carrying) - len(misses), tuple(misses[:SHOWN_MISSES]))
    return out


def coverage_record(queries: Sequence[Query]) -> dict[str, dict]:
    """``MANIFEST.json``'s ``query_forms``: :func:`form_coverage` of the verbatim forms, as JSON."""
    return {form: cov.to_json() for form, cov in form_coverage(queries).items() if form in FORMS}


def coverage_problems(queries: Sequence[Query], recorded: dict | None) -> list[str]:
    """``nclue bench verify``'s findings: a verbatim form that drops a condition, and a recorded
    ``query_forms`` that is not what the queries give (``None``: a release built before the record)."""
    found = form_coverage(queries)
    problems = [
        f"queries.jsonl: the {c.form} form of {c.queries - c.covered} of {c.queries} queries does not contain every "
        f"condition verbatim (first: {', '.join(c.missing)}); rebuild the release so each form renders its conditions"
        for c in found.values()
        if c.form in FORMS and not c.complete
    ]
    derived = {form: c.to_json() for form, c in found.items() if form in FORMS}
    if recorded is not None and recorded != derived:
        problems.append(
            "MANIFEST.json: query_forms records other coverage than queries.jsonl gives "
            f"({recorded} recorded, {derived} derived); the queries changed after the build"
        )
    return problems


def coverage_lines(record: dict[str, dict] | None) -> list[str]:
    """The dataset card's lines for a ``query_forms`` record (none without one)."""
    if not record:
        return []
    cells = ", ".join(f"`{form}` {r['covered']:,}/{r['queries']:,}" for form, r in record.items())
    return [
        "## Query forms",
        "",
        f"Verbatim concept containment (every condition an exact substring of the rendered text): {cells}.",
        "",
    ]
