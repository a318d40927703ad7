"""Records shared by every stage: queries, judgments, corpus documents, ranked documents, runs.

Stages talk through these small typed values (their file forms are in ``docs/formats.md``,
read and written by :mod:`nclue.release` and :mod:`nclue.runfile`). Hot paths convert them to
NumPy arrays once, at their boundary.

Labels (``docs/labels.md``): a *gold* document establishes every condition on distinct pages
(an injective condition→page assignment exists and no single page holds every condition); a
*partial* (subset) document establishes at least one condition but is not gold. Documents
with grade 0 are omitted from compact qrels files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal

Label = Literal["gold", "partial"]
FORMS: tuple[str, ...] = ("raw", "clean_v2", "natural")
DEFAULT_FORM = "clean_v2"
DEFAULT_SEED = 11
"""The seed of every random step unless the caller gives another (construction, bootstrap, tests)."""


class Form(str, Enum):
    """A query rendering (``docs/labels.md#renderings``); ``paraphrase`` is read from a frozen cache."""

    raw = "raw"
    clean_v2 = "clean_v2"
    natural = "natural"
    paraphrase = "paraphrase"


@dataclass(frozen=True)
class Query:
    """A conjunctive query: 2–8 named conditions plus their text renderings.

    ``forms`` maps a rendering name (``raw``, ``clean_v2``, ``natural``; optionally
    ``paraphrase``) to the query text as stored; :meth:`text` fills the three standard
    renderings from the conditions when the release does not carry them.
    """

    qid: str
    conditions: tuple[str, ...]
    forms: Mapping[str, str] = field(default_factory=dict, compare=False)
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @property
    def n(self) -> int:
        """Number of conditions."""
        return len(self.conditions)

    def text(self, form: str = DEFAULT_FORM) -> str:
        """The query text in ``form``; the standard forms are rendered when absent.

        A ``paraphrase`` (or any other non-standard form) must be stored; it is never invented.
        """
        stored = self.forms.get(form)
        if stored:
            return stored
        if form in FORMS:
            from nclue.query import render_forms

            return render_forms(self.conditions)[form]
        from nclue.errors import NclueError

        raise NclueError(
            f"query {self.qid!r} has no {form!r} text; the {form} form is read only from a frozen cache "
            "and never generated — add it to the release or choose raw, clean_v2 or natural"
        )

    def to_json(self) -> dict:
        """The ``queries.jsonl`` row."""
        return {
            "qid": self.qid,
            "conditions": list(self.conditions),
            "aliases": {c: list(a) for c, a in self.aliases.items()},
            "forms": dict(self.forms),
        }


@dataclass(frozen=True)
class Judgment:
    """One qrel row: the clue count (grade) of ``doc_id`` for ``qid``, its label and evidence pages.

    ``pages`` maps each condition with evidence to its 1-based pages; ``None`` when the qrels
    carry no evidence (BEIR and TREC qrels).
    """

    qid: str
    doc_id: str
    grade: int
    label: Label
    pages: Mapping[str, tuple[int, ...]] | None = field(default=None, compare=False)

    def to_json(self) -> dict:
        """The ``qrels.jsonl`` row (``pages`` lists conditions with evidence only)."""
        row: dict = {"qid": self.qid, "doc_id": self.doc_id, "grade": self.grade, "label": self.label}
        if self.pages is not None:
            row["pages"] = {c: list(p) for c, p in self.pages.items() if p}
        return row


@dataclass(frozen=True)
class CorpusDoc:
    """One document of a release's corpus: its id and, where known, where it came from.

    Page text and PDFs are not redistributed; ``path``/``url`` and ``sha256`` let a user rebuild
    the content. ``n_pages`` gives the ``L_min`` stratum. BEIR corpora carry ``title`` only.
    """

    doc_id: str
    n_pages: int | None = None
    path: str | None = None
    source: str | None = None
    sha256: str | None = None
    n_bytes: int | None = None
    url: str | None = None
    title: str | None = None

    def to_json(self) -> dict:
        """The ``corpus.jsonl`` row (absent fields left out)."""
        names = ("doc_id", "path", "source", "sha256", "n_pages", "n_bytes", "url", "title")
        return {k: getattr(self, k) for k in names if getattr(self, k) is not None}


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
    evidence: Mapping[str, tuple[int, ...]] = field(default_factory=dict, compare=False)


@dataclass
class Run:
    """A named run: for each qid, the ranked documents in run-file order.

    Order matters: equal scores keep this input order (the tie rule of ``docs/metrics.md``).
    ``page_aware`` runs carry surfaced pages and per-condition evidence.
    """

    name: str
    rankings: dict[str, list[RankedDoc]]
    page_aware: bool = False

    def write(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write ``DIR/<name>.trec`` and ``DIR/<name>.jsonl`` atomically; return their paths."""
        from nclue.runfile import write_run

        return write_run(self, directory)

    @classmethod
    def read(cls, path: str | os.PathLike[str], name: str | None = None) -> Run:
        """Read a TREC (six columns) or nclue JSONL run file; the name defaults to the file stem."""
        from nclue.runfile import read_run

        return read_run(path, name)
