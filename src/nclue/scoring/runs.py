"""Encode runs (files parsed by :mod:`nclue.runfile`, or in-memory runs) as arrays aligned to a benchmark.

A :class:`RunMatrix` holds, for every benchmark query (row, in benchmark order), the
ranked documents as benchmark doc indices. Ranking rule (``docs/metrics.md#ranking-rule``): sort by score
descending with a *stable* sort, so equal scores keep the run file's order. Queries the
run does not answer have an empty row (scored as a miss); qids the benchmark does not
know are counted in :attr:`RunMatrix.unknown_qids`, never silently dropped.

Doc codes: ``>= 0`` benchmark doc index; :data:`OUTSIDE` a doc the benchmark has never
seen (grade 0); :data:`PAD` no document at that rank.

:func:`coverage_of` says how much of the benchmark a run covers (:class:`RunCoverage`): a run
that answers half the queries, ranks documents of another corpus or cites pages a document does
not have is scored as written — as misses — but never without saying so.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.runfile import run_name
from nclue.scoring.benchmark import Benchmark
from nclue.scoring.run_cache import SUPPORT_PAGES, RunColumns, run_columns
from nclue.types import Run

PAD = -1
OUTSIDE = -2


@dataclass(frozen=True)
class RunMatrix:
    """A run encoded once for scoring.

    ``docs``: ``(n_queries, depth)`` int32 doc codes in rank order; ``scores``: the
    matching scores (``-inf`` at padding); ``pages``: ``(n_queries, depth, 3)`` int32, the
    three highest-scoring distinct surfaced pages per ranked doc (``-1`` padding), or
    ``None`` for a run that is not page-aware.
    """

    name: str
    docs: np.ndarray
    scores: np.ndarray
    pages: np.ndarray | None
    unknown_qids: tuple[str, ...] = ()
    path: Path | None = None

    @property
    def page_aware(self) -> bool:
        """Whether the run surfaces pages (Gold+Support is defined)."""
        return self.pages is not None

    @property
    def answered(self) -> np.ndarray:
        """Boolean per benchmark query: the run has at least one document for it."""
        return self.docs[:, 0] != PAD if self.docs.shape[1] else np.zeros(len(self.docs), dtype=bool)

    @classmethod
    def from_arrays(
        cls,
        name: str,
        docs: np.ndarray,
        scores: np.ndarray,
        pages: np.ndarray | None = None,
        unknown_qids: Iterable[str] = (),
        path: Path | None = None,
    ) -> RunMatrix:
        """Build from unsorted ``(n_queries, depth)`` arrays in input (tie) order.

        Rows are stably sorted by score descending; ``PAD`` cells must carry ``-inf``.
        """
        scores = np.asarray(scores, dtype=np.float64)
        order = np.argsort(-scores, axis=1, kind="stable")
        docs_sorted = np.take_along_axis(np.asarray(docs, dtype=np.int32), order, axis=1)
        pages_sorted = None
        if pages is not None:
            pages_sorted = np.take_along_axis(np.asarray(pages, dtype=np.int32), order[:, :, None], axis=1)
        return cls(
            name=name,
            docs=docs_sorted,
            scores=np.take_along_axis(scores, order, axis=1),
            pages=pages_sorted,
            unknown_qids=tuple(sorted(set(unknown_qids))),
            path=path,
        )


@dataclass(frozen=True)
class RunCoverage:
    """How much of a benchmark one run covers.

    ``queries``: the benchmark's; ``answered``: those with at least one ranked document;
    ``unknown_qids``: query ids the benchmark does not have (ignored); ``ranked``: ranked entries
    over the benchmark's queries; ``unknown_docs``: those naming a document outside the
    benchmark's corpus and judgments (``None`` when the release has no ``corpus.jsonl``, so
    nothing can be said); ``cited_pages`` / ``pages_out_of_range``: surfaced pages, and those
    below 1 or past the document's page count (known from ``corpus.jsonl``).
    """

    name: str
    queries: int
    answered: int
    unknown_qids: tuple[str, ...]
    ranked: int
    unknown_docs: int | None
    cited_pages: int
    pages_out_of_range: int

    @property
    def missing(self) -> int:
        """Benchmark queries the run does not answer (scored as misses)."""
        return self.queries - self.answered

    def problems(self) -> list[str]:
        """One sentence per way the run falls short of the benchmark (empty: it covers it)."""
        out = []
        if self.missing:
            out.append(
                f"run {self.name}: answers {self.answered} of {self.queries} queries; "
                f"the {self.missing} it does not answer are scored as misses"
            )
        if self.unknown_qids:
            shown = ", ".join(repr(q) for q in self.unknown_qids[:3])
            more = f" and {len(self.unknown_qids) - 3} more" if len(self.unknown_qids) > 3 else ""
            out.append(
                f"run {self.name}: {len(self.unknown_qids)} query ids are not in the benchmark ({shown}{more}) "
                "and were ignored"
            )
        if self.unknown_docs:
            share = self.unknown_docs / self.ranked
            hint = "; is it a run of another benchmark or collection?" if share > 0.5 else ""
            out.append(
                f"run {self.name}: {self.unknown_docs} of {self.ranked} ranked documents ({share:.0%}) are not in "
                f"the benchmark's corpus and count as non-relevant{hint}"
            )
        if self.pages_out_of_range:
            out.append(
                f"run {self.name}: {self.pages_out_of_range} of {self.cited_pages} cited pages are outside their "
                "document's pages (below 1 or past its page count); they can support nothing"
            )
        return out

    def to_json(self) -> dict:
        return {
            "queries": self.queries,
            "answered": self.answered,
            "missing": self.missing,
            "unknown_qids": len(self.unknown_qids),
            "ranked": self.ranked,
            "unknown_docs": self.unknown_docs,
            "cited_pages": self.cited_pages,
            "pages_out_of_range": self.pages_out_of_range,
        }


def coverage_of(run: RunMatrix, bench: Benchmark) -> RunCoverage:
    """The :class:`RunCoverage` of ``run`` on ``bench`` (its encoded arrays, no rereading)."""
    ranked_cells = run.docs != PAD
    known_pages = bench.n_pages >= 0
    cited, outside = 0, 0
    if run.pages is not None:
        cells = run.pages >= 0
        cited = int(cells.sum())
        doc = np.where(run.docs >= 0, run.docs, 0)
        limit = np.where(run.docs >= 0, bench.n_pages[doc], -1)[:, :, None]
        has_limit = (limit >= 1) & cells
        outside = int((cells & (run.pages < 1)).sum() + (has_limit & (run.pages > limit)).sum())
    return RunCoverage(
        name=run.name,
        queries=bench.n_queries,
        answered=int(run.answered.sum()),
        unknown_qids=run.unknown_qids,
        ranked=int(ranked_cells.sum()),
        unknown_docs=int((run.docs == OUTSIDE).sum()) if known_pages.any() else None,
        cited_pages=cited,
        pages_out_of_range=outside,
    )


def load_run_matrix(path: str | Path, bench: Benchmark, name: str | None = None) -> RunMatrix:
    """Read a run file (:mod:`nclue.runfile`: ``.jsonl`` → nclue JSONL, else TREC) into arrays.

    The run's name is ``name``, else the one recorded in the file, else its stem
    (:func:`nclue.runfile.run_name`). Malformed lines raise
    :class:`NclueError` naming file and line.
    """
    p = Path(path)
    return encode_columns(name or run_name(p), run_columns(p), bench, p)


def encode_columns(name: str, columns: RunColumns, bench: Benchmark, path: Path | None = None) -> RunMatrix:
    """Encode a run's :class:`~nclue.scoring.run_cache.RunColumns` against ``bench``, with array
    operations only (a dictionary look-up per *distinct* query and document, not per row).

    The same matrix as encoding the parsed rows one by one: a query's documents go to columns
    0, 1, … in file order, documents the benchmark does not know become :data:`OUTSIDE`, and the
    rows of query ids the benchmark does not know are dropped and named in ``unknown_qids``.
    """
    nq = bench.n_queries
    codes = columns.qid_codes
    row_of = np.array([bench.qid_index.get(q, -1) for q in columns.qid_values], dtype=np.int64)
    unknown = [q for q, r in zip(columns.qid_values, row_of.tolist(), strict=True) if r < 0]
    if not len(codes):
        empty = np.full((nq, 0), PAD, dtype=np.int32)
        return RunMatrix.from_arrays(name, empty, np.full((nq, 0), -np.inf), None, unknown, path)
    # Query codes follow first appearance and a query's rows are contiguous, so codes never
    # decrease and a query's ranks start where its code first appears (a query listed with no
    # documents has a code and no rows).
    first = np.searchsorted(codes, np.arange(len(columns.qid_values)))
    rank = np.arange(len(codes)) - first[codes]
    depth = int(np.bincount(codes).max())
    index = bench.doc_index
    doc_code = np.array([index.get(d, OUTSIDE) for d in columns.doc_values], dtype=np.int32)
    rows = row_of[codes]
    known = rows >= 0
    docs = np.full((nq, depth), PAD, dtype=np.int32)
    scores = np.full((nq, depth), -np.inf)
    docs[rows[known], rank[known]] = doc_code[columns.doc_codes[known]]
    scores[rows[known], rank[known]] = columns.scores[known]
    pages = None
    if columns.has_pages.any():
        pages = np.full((nq, depth, SUPPORT_PAGES), -1, dtype=np.int32)
        cited = known & columns.has_pages
        pages[rows[cited], rank[cited]] = columns.pages[cited]
    return RunMatrix.from_arrays(name, docs, scores, pages, unknown, path)


def from_records(run: Run, bench: Benchmark) -> RunMatrix:
    """Encode an in-memory :class:`nclue.types.Run` (rankings in input order)."""
    parsed = {}
    for qid, ranking in run.rankings.items():
        seen: set[str] = set()
        rows = []
        for doc in ranking:
            if doc.doc_id in seen:
                raise NclueError(f"run {run.name}: {doc.doc_id!r} listed twice for query {qid!r}; keep one entry")
            if not math.isfinite(doc.score):
                raise NclueError(
                    f"run {run.name}: query {qid!r} doc {doc.doc_id!r} has score {doc.score}; scores must be finite"
                )
            seen.add(doc.doc_id)
            rows.append((doc.doc_id, float(doc.score), tuple(doc.pages) or None, None))
        parsed[qid] = rows
    return encode_columns(run.name, RunColumns.from_parsed(parsed), bench)


def load_run(path: str | Path, bench: Benchmark, name: str | None = None) -> RunMatrix:
    """Deprecated name of :func:`load_run_matrix` (``nclue.load_run`` returns a typed :class:`~nclue.types.Run`;
    this one returns the scorer's arrays)."""
    warnings.warn(
        "nclue.scoring.load_run is deprecated: use nclue.scoring.load_run_matrix (same arguments, a RunMatrix)",
        DeprecationWarning,
        stacklevel=2,
    )
    return load_run_matrix(path, bench, name)
