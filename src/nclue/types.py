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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal

from nclue.runfile import parse_run, run_name, write_run

Label = Literal["gold", "partial"]
FORMS: tuple[str, ...] = ("raw", "clean_v2", "natural")
DEFAULT_FORM = "clean_v2"
DEFAULT_SEED = 11
"""The seed of every random step unless the caller gives another (construction, bootstrap, tests)."""
COVERAGE_SEED = 129_300
"""The coverage study's bootstrap seed (``docs/coverage.md``, :class:`nclue.select.results.BootstrapPlan`).

The coverage protocol declared it before any outcome was read, so it is kept rather than replaced by
:data:`DEFAULT_SEED`: another seed would change every published coverage interval."""


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


_QUERY_COLUMNS = ("qid", "query_id", "q_id")
_DOC_COLUMNS = ("docno", "doc_id")
_GRADE_COLUMNS = ("grade", "relevance", "label", "score")


@dataclass(frozen=True)
class Qrels:
    """Judgments made in memory, in the shapes other toolkits use; checked when attached to a release.

    ``rows`` are ``(qid, doc_id, grade, label or None)`` in input order. :meth:`from_dict` reads
    ranx's and pytrec_eval's ``{qid: {doc_id: grade}}``, :meth:`from_pandas` a PyTerrier
    (``qid, docno, label``), ir_measures (``query_id, doc_id, relevance``), ranx
    (``q_id, doc_id, score``) or nclue (``qid, doc_id, grade, label``) frame. The grade is the
    number of the query's conditions the document covers; without a label, ``gold`` iff the
    grade equals the query's condition count (as for BEIR and TREC qrels, which carry no
    evidence pages, so Gold+Support is not computed on them). :meth:`Release.with_qrels
    <nclue.release.Release.with_qrels>` checks every row against the queries (a grade above a
    query's condition count or an unknown qid is an :class:`~nclue.errors.NclueError` naming
    the row); ``nclue.evaluate(..., qrels=...)`` takes a :class:`Qrels`, a dict or a frame.
    """

    rows: tuple[tuple[str, str, int, str | None], ...]
    name: str = "qrels"

    def __post_init__(self) -> None:
        from nclue.errors import NclueError

        checked = []
        for i, row in enumerate(self.rows, start=1):
            if not isinstance(row, (tuple, list)) or len(row) not in (3, 4):
                raise NclueError(f"{self.name} row {i}: expected (qid, doc_id, grade[, label]), got {row!r}")
            qid, doc, grade, label = (*row, None) if len(row) == 3 else row
            checked.append((str(qid), str(doc), _grade(grade, f"{self.name} row {i} ({qid}, {doc})"), label))
            if label is not None and label not in ("gold", "partial"):
                raise NclueError(f"{self.name} row {i} ({qid}, {doc}): label {label!r} must be 'gold' or 'partial'")
        object.__setattr__(self, "rows", tuple(checked))

    @classmethod
    def from_dict(cls, grades: Mapping[str, Mapping[str, int]], name: str = "qrels") -> Qrels:
        """Qrels from ``{qid: {doc_id: grade}}`` (ranx, pytrec_eval)."""
        from nclue.errors import NclueError

        if not isinstance(grades, Mapping) or not all(isinstance(v, Mapping) for v in grades.values()):
            raise NclueError(f"{name}: expected {{qid: {{doc_id: grade}}}}, got {type(grades).__name__}")
        return cls(tuple((q, d, g) for q, docs in grades.items() for d, g in docs.items()), name)

    @classmethod
    def from_pandas(
        cls, frame, name: str = "qrels", qid: str | None = None, doc_id: str | None = None, grade: str | None = None
    ) -> Qrels:  # noqa: ANN001 - a pandas DataFrame (pandas is optional)
        """Qrels from a DataFrame with one row per judged document.

        Columns are found by name unless given: the query in ``qid`` / ``query_id`` / ``q_id``,
        the document in ``docno`` / ``doc_id``, the grade in ``grade`` / ``relevance`` /
        ``label`` / ``score`` (the first present; a ``label`` column of ``gold``/``partial`` next
        to ``grade`` is kept as the label).
        """
        from nclue.errors import NclueError

        columns = [str(c) for c in getattr(frame, "columns", ())]
        if not columns:
            raise NclueError(f"{name}: expected a pandas DataFrame, got {type(frame).__name__}")
        q = qid or next((c for c in _QUERY_COLUMNS if c in columns), None)
        d = doc_id or next((c for c in _DOC_COLUMNS if c in columns), None)
        g = grade or next((c for c in _GRADE_COLUMNS if c in columns), None)
        missing = [label for label, col in (("query", q), ("document", d), ("grade", g)) if col not in columns]
        if missing:
            raise NclueError(
                f"{name}: the frame has no {' or '.join(missing)} column (columns: {', '.join(columns)}); "
                "name them with qid=, doc_id=, grade="
            )
        labels = frame["label"].tolist() if g != "label" and "label" in columns else [None] * len(frame)
        rows = zip(frame[q].tolist(), frame[d].tolist(), frame[g].tolist(), labels)
        return cls(tuple((str(a), str(b), c, None if lab is None else str(lab)) for a, b, c, lab in rows), name)

    @classmethod
    def from_judgments(cls, judgments: Iterable[Judgment], name: str = "qrels") -> Qrels:
        """Qrels holding a release's :class:`Judgment` rows (evidence pages are not kept)."""
        return cls(tuple((j.qid, j.doc_id, j.grade, j.label) for j in judgments), name)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {doc_id: grade}}`` (ranx's and pytrec_eval's shape)."""
        out: dict[str, dict[str, int]] = {}
        for qid, doc, grade, _ in self.rows:
            out.setdefault(qid, {})[doc] = grade
        return out

    def to_pandas(self):  # noqa: ANN201 - a pandas DataFrame
        """nclue's frame: ``qid, doc_id, grade, label`` (label ``None`` where it is derived from the grade)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows), columns=["qid", "doc_id", "grade", "label"])


def _grade(value: object, where: str) -> int:
    """``value`` as a non-negative integer grade (integral floats from a frame accepted)."""
    from nclue.errors import NclueError

    number = value.item() if hasattr(value, "item") else value
    integral = isinstance(number, int) or isinstance(number, float) and number.is_integer()
    if isinstance(number, bool) or not integral or number < 0:
        raise NclueError(f"{where}: grade {value!r} must be a non-negative integer (conditions covered)")
    return int(number)


@dataclass(frozen=True)
class CorpusDoc:
    """One document of a release's corpus: its id and, where known, where it came from.

    Page text and PDFs are not redistributed; ``path``/``url`` and ``sha256`` let a user rebuild
    the content (``url``: the ``.deb``'s URL ``#`` the file inside it, for fetched corpora);
    ``licence`` and ``licence_file`` say under what terms the bytes were distributed and where
    that is written (:mod:`nclue.corpus.licences`). ``n_pages`` gives the ``L_min`` stratum. BEIR corpora carry ``title`` only.
    """

    doc_id: str
    n_pages: int | None = None
    path: str | None = None
    source: str | None = None
    sha256: str | None = None
    n_bytes: int | None = None
    url: str | None = None
    title: str | None = None
    licence: str | None = None
    licence_file: str | None = None

    def to_json(self) -> dict:
        """The ``corpus.jsonl`` row (absent fields left out)."""
        names = ("doc_id", "path", "source", "sha256", "n_pages", "n_bytes", "url", "licence", "licence_file", "title")
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

    ``rankings`` may also be given as ranx and pytrec_eval write them, ``{qid: {doc_id: score}}``
    (the mapping's order is the tie order), or as ``{qid: [(doc_id, score), ...]}``; they are
    stored as :class:`RankedDoc` lists. :meth:`from_pandas` reads a PyTerrier or ranx frame and
    :meth:`to_pandas` writes one. Anything else is refused with an :class:`~nclue.errors.NclueError`
    that names what was expected.
    """

    name: str
    rankings: dict[str, list[RankedDoc]]
    page_aware: bool = False

    def __post_init__(self) -> None:
        from nclue.errors import NclueError

        if not isinstance(self.name, str) or not self.name.strip():
            raise NclueError(f"a run's name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.rankings, Mapping):
            raise NclueError(
                f"run {self.name}: rankings must be a mapping qid → ranking ({{qid: {{doc_id: score}}}} or "
                f"{{qid: [RankedDoc, ...]}}), got {type(self.rankings).__name__}"
            )
        self.rankings = {str(qid): _ranking(self.name, str(qid), docs) for qid, docs in self.rankings.items()}

    @classmethod
    def from_dict(cls, name: str, rankings: Mapping[str, Mapping[str, float]]) -> Run:
        """A run from ranx's / pytrec_eval's ``{qid: {doc_id: score}}``."""
        return cls(name, dict(rankings))

    @classmethod
    def from_pandas(
        cls, frame, name: str, qid: str | None = None, doc_id: str | None = None, score: str = "score"
    ) -> Run:  # noqa: ANN001 - a pandas DataFrame (pandas is optional)
        """A run from a DataFrame with one row per ranked document, in the frame's order.

        The query and document columns are found by name unless given: ``qid`` / ``query_id`` /
        ``q_id`` and ``docno`` / ``doc_id`` (PyTerrier, ir_measures and ranx frames all work).
        """
        from nclue.errors import NclueError

        columns = [str(c) for c in getattr(frame, "columns", ())]
        if not columns:
            raise NclueError(f"run {name}: expected a pandas DataFrame, got {type(frame).__name__}")
        q = qid or next((c for c in ("qid", "query_id", "q_id") if c in columns), None)
        d = doc_id or next((c for c in ("docno", "doc_id") if c in columns), None)
        missing = [label for label, col in (("query", q), ("document", d), ("score", score)) if col not in columns]
        if missing:
            raise NclueError(
                f"run {name}: the frame has no {' or '.join(missing)} column (columns: {', '.join(columns)}); "
                "name them with qid=, doc_id=, score="
            )
        rankings: dict[str, list[tuple[str, float]]] = {}
        for query, doc, value in zip(frame[q].tolist(), frame[d].tolist(), frame[score].tolist()):
            rankings.setdefault(str(query), []).append((str(doc), value))
        return cls(name, rankings)

    def to_pandas(self):  # noqa: ANN201 - a pandas DataFrame
        """PyTerrier's frame: ``qid, docno, score, rank`` (rank from 0), one row per ranked document,
        each query in nclue's ranking order (score descending, ties in input order)."""
        import pandas as pd

        rows = []
        for qid, docs in self.rankings.items():
            ordered = sorted(range(len(docs)), key=lambda i: -docs[i].score)
            rows.extend((qid, docs[i].doc_id, docs[i].score, rank) for rank, i in enumerate(ordered))
        return pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])

    def write(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write ``DIR/<stem>.trec`` and ``DIR/<stem>.jsonl`` atomically (a shell-safe stem of the name,
        :func:`nclue.runfile.file_stem`; the name is recorded inside); return their paths."""
        return write_run(self, directory)

    @classmethod
    def read(cls, path: str | os.PathLike[str], name: str | None = None) -> Run:
        """Read a TREC (six columns) or nclue JSONL run file; the name defaults to the one recorded, else the stem."""
        parsed = parse_run(path)
        page_aware = any(e[2] is not None for rows in parsed.values() for e in rows)
        rankings = {
            qid: [RankedDoc(doc, score, pages or (), evidence or {}) for doc, score, pages, evidence in rows]
            for qid, rows in parsed.items()
        }
        return cls(name or run_name(path), rankings, page_aware)


def _ranking(name: str, qid: str, docs: object) -> list[RankedDoc]:
    """One query's ranking as :class:`RankedDoc` values (the accepted shapes are :class:`Run`'s)."""
    from nclue.errors import NclueError

    def bad(what: str) -> NclueError:
        return NclueError(
            f"run {name}: query {qid!r}: {what}; give {{doc_id: score}}, [(doc_id, score), ...] or [RankedDoc, ...]"
        )

    if isinstance(docs, Mapping):
        docs = list(docs.items())
    if isinstance(docs, (str, bytes)) or not hasattr(docs, "__iter__"):
        raise bad(f"expected a ranking, got {type(docs).__name__}")
    out = []
    for entry in docs:
        if isinstance(entry, RankedDoc):
            out.append(entry)
            continue
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise bad(f"expected (doc_id, score), got {entry!r}")
        doc, score = entry
        if isinstance(score, bool) or not isinstance(score, (int, float)) and not hasattr(score, "__float__"):
            raise bad(f"the score of {doc!r} is {score!r}, not a number")
        out.append(RankedDoc(str(doc), float(score)))
    return out
