"""Records shared by every stage: queries, judgments (qrels), ranked documents and runs.

Stages talk through these small typed values (see ``docs/formats.md`` for their file
forms). Hot paths convert them to NumPy arrays once, at their boundary.

Labels (SPEC §2): a *gold* document establishes every condition on distinct pages
(an injective condition→page assignment exists and no single page holds all
conditions); a *partial* (subset) document establishes at least one condition but is
not gold. Documents with grade 0 are omitted from compact qrels files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Label = Literal["gold", "partial"]
FORMS: tuple[str, ...] = ("raw", "clean_v2", "natural")


@dataclass(frozen=True)
class Query:
    """A conjunctive query: 2–3 (up to 8) named conditions plus their text renderings.

    ``forms`` maps a rendering name (``raw``, ``clean_v2``, ``natural``; optionally
    ``paraphrase`` read from a frozen cache) to the query text.
    """

    qid: str
    conditions: tuple[str, ...]
    forms: dict[str, str] = field(default_factory=dict, compare=False)
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @property
    def n(self) -> int:
        """Number of conditions."""
        return len(self.conditions)


@dataclass(frozen=True)
class Judgment:
    """One qrel row: the clue count (grade) of ``doc_id`` for ``qid`` and its evidence pages."""

    qid: str
    doc_id: str
    grade: int
    label: Label
    pages: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class RankedDoc:
    """One entry of a ranking.

    ``pages`` are the surfaced pages as ``(page, score)`` in descending score order
    (page-aware systems only); ``evidence`` maps each condition to the pages that support
    it (for ``distinct`` decomposition: the assigned page).
    """

    doc_id: str
    score: float
    pages: tuple[tuple[int, float], ...] = ()
    evidence: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False)


@dataclass
class Run:
    """A named run: for each qid, the ranked documents in run-file order.

    Order matters: equal scores keep this input order (SPEC §3 tie rule).
    """

    name: str
    rankings: dict[str, list[RankedDoc]]
