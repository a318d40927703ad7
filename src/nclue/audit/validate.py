"""The acceptance rules of an item, shared word for word by the packet and by Python (``docs/audit.md#validation``).

An item is accepted only when, for every condition shown:

1. it has a binary answer (established or not);
2. a positive answer selects at least one page of the condition's displayed pool, and every
   selected page carries a non-trivial quote that is a normalised substring of that page
   (:func:`nclue.audit.quote_match.quote_problem`);
3. a negative answer selects no page and carries no quote.

:data:`MESSAGES` are the templates of every problem; the packet receives them in its
settings and its JavaScript fills the same templates, so a person sees in the browser
exactly the sentence that Python prints when it re-validates an export.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nclue.audit.quote_match import QUOTE_MESSAGES, quote_problem

__all__ = ["MESSAGES", "QUOTE_MESSAGES", "condition_label", "condition_problems"]

MESSAGES: dict[str, str] = {
    "unanswered": "answer Established or Not established",
    "no_page": "answered Established but no page is selected; select the page(s) that establish it",
    "not_in_pool": "page {page} is not one of this condition's pages",
    "quote": "page {page}: {problem}",
    "negative_pages": "answered Not established but page(s) {pages} are selected; clear them or answer Established",
}
"""Problem templates (``{page}``, ``{pages}``, ``{problem}`` are filled in)."""


def condition_label(index: int, name: str) -> str:
    """How a problem names a condition: ``condition 2 (“footnotes”)``."""
    return f"condition {index} (“{name}”)"


def condition_problems(shown: Mapping[str, object], answer: object, evidence: Sequence[tuple[int, str]]) -> list[str]:
    """The problems of one condition's response; ``shown`` is the payload condition (pages with text)."""
    pages = {int(p["page"]): str(p["text"]) for p in shown["pages"]}  # type: ignore[index, union-attr]
    if answer is None:
        return [MESSAGES["unanswered"]]
    if answer is False:
        if evidence:
            listed = ", ".join(str(p) for p, _ in evidence)
            return [MESSAGES["negative_pages"].format(pages=listed)]
        return []
    if not evidence:
        return [MESSAGES["no_page"]]
    out = []
    for page, quote in evidence:
        if page not in pages:
            out.append(MESSAGES["not_in_pool"].format(page=page))
            continue
        problem = quote_problem(quote, pages[page])
        if problem is not None:
            out.append(MESSAGES["quote"].format(page=page, problem=problem))
    return out
