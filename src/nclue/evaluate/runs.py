"""Read runs (TREC six-column or nclue JSONL) into rank-ordered arrays aligned to a benchmark.

A :class:`RunMatrix` holds, for every benchmark query (row, in benchmark order), the
ranked documents as benchmark doc indices. Ranking rule (SPEC §3): sort by score
descending with a *stable* sort, so equal scores keep the run file's order. Queries the
run does not answer have an empty row (scored as a miss); qids the benchmark does not
know are counted in :attr:`RunMatrix.unknown_qids`, never silently dropped.

Doc codes: ``>= 0`` benchmark doc index; :data:`OUTSIDE` a doc the benchmark has never
seen (grade 0); :data:`PAD` no document at that rank.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.errors import NclueError, where
from nclue.evaluate.benchmark import Benchmark
from nclue.io import iter_jsonl, require_finite
from nclue.types import Run

PAD = -1
OUTSIDE = -2
SUPPORT_PAGES = 3


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


def load_run(path: str | Path, bench: Benchmark, name: str | None = None) -> RunMatrix:
    """Read ``path`` (``.jsonl`` → nclue JSONL, anything else → TREC six columns).

    The run's name is the file stem unless ``name`` is given. Malformed lines, non-finite
    scores and a document listed twice for one query raise :class:`NclueError` naming
    file and line.
    """
    p = Path(path)
    if not p.is_file():
        raise NclueError(f"{p}: run file not found")
    parsed = _parse_jsonl(p) if p.suffix == ".jsonl" else _parse_trec(p)
    return _encode(name or p.stem, parsed, bench, p)


def from_records(run: Run, bench: Benchmark) -> RunMatrix:
    """Encode an in-memory :class:`nclue.types.Run` (rankings in input order)."""
    parsed: dict[str, list[tuple[str, float, tuple[int, ...] | None]]] = {}
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
            rows.append((doc.doc_id, float(doc.score), _top_pages(doc.pages) if doc.pages else None))
        parsed[qid] = rows
    return _encode(run.name, parsed, bench, None)


_Parsed = dict[str, list[tuple[str, float, "tuple[int, ...] | None"]]]


def _encode(name: str, parsed: _Parsed, bench: Benchmark, path: Path | None) -> RunMatrix:
    nq = bench.n_queries
    depth = max((len(v) for v in parsed.values()), default=0)
    docs = np.full((nq, depth), PAD, dtype=np.int32)
    scores = np.full((nq, depth), -np.inf)
    page_aware = any(r[2] is not None for rows in parsed.values() for r in rows)
    pages = np.full((nq, depth, SUPPORT_PAGES), -1, dtype=np.int32) if page_aware else None
    unknown = []
    index = bench.doc_index
    for qid, rows in parsed.items():
        qi = bench.qid_index.get(qid)
        if qi is None:
            unknown.append(qid)
            continue
        docs[qi, : len(rows)] = [index.get(d, OUTSIDE) for d, _, _ in rows]
        scores[qi, : len(rows)] = [s for _, s, _ in rows]
        if pages is not None:
            for j, (_, _, pg) in enumerate(rows):
                if pg:
                    pages[qi, j, : len(pg)] = pg
    return RunMatrix.from_arrays(name, docs, scores, pages, unknown, path)


def _top_pages(pairs: Iterable[tuple[int, float]] | Iterable[list[float]]) -> tuple[int, ...]:
    """The three highest-scoring distinct pages (stable for equal page scores)."""
    ordered = sorted(((int(p), float(s)) for p, s in pairs), key=lambda ps: -ps[1])
    out: list[int] = []
    for page, _ in ordered:
        if page not in out:
            out.append(page)
        if len(out) == SUPPORT_PAGES:
            break
    return tuple(out)


def _parse_trec(path: Path) -> _Parsed:
    parsed: _Parsed = {}
    seen: dict[tuple[str, str], int] = {}
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            parts = text.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise NclueError(
                    f"{where(path, line)}: TREC run lines need 6 columns (qid Q0 doc_id rank score name), got {len(parts)}"
                )
            qid, doc = parts[0], parts[2]
            score = require_finite(parts[4], path, line, "score")
            if (qid, doc) in seen:
                raise NclueError(
                    f"{where(path, line)}: {doc!r} already ranked for query {qid!r} on line {seen[(qid, doc)]}; keep one line"
                )
            seen[(qid, doc)] = line
            parsed.setdefault(qid, []).append((doc, score, None))
    return parsed


def _parse_jsonl(path: Path) -> _Parsed:
    parsed: _Parsed = {}
    lines: dict[str, int] = {}
    for line, obj in iter_jsonl(path):
        qid, docs = obj.get("qid"), obj.get("docs")
        if not isinstance(qid, str) or not isinstance(docs, list):
            raise NclueError(f"{where(path, line)}: each line needs a string 'qid' and a 'docs' list")
        if qid in lines:
            raise NclueError(
                f"{where(path, line)}: query {qid!r} already ranked on line {lines[qid]}; one line per query"
            )
        lines[qid] = line
        rows = []
        seen: set[str] = set()
        for entry in docs:
            if not isinstance(entry, dict) or not isinstance(entry.get("doc_id"), str):
                raise NclueError(f"{where(path, line)}: every entry of 'docs' needs a string 'doc_id'")
            doc = entry["doc_id"]
            if doc in seen:
                raise NclueError(f"{where(path, line)}: {doc!r} listed twice for query {qid!r}; keep one entry")
            seen.add(doc)
            score = require_finite(entry.get("score"), path, line, f"score of {doc}")
            rows.append((doc, score, _jsonl_pages(entry, path, line)))
        parsed[qid] = rows
    return parsed


def _jsonl_pages(entry: dict, path: Path, line: int) -> tuple[int, ...] | None:
    raw = entry.get("pages")
    evidence = entry.get("evidence")
    if evidence is not None and not (
        isinstance(evidence, dict)
        and all(
            isinstance(v, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in v)
            for v in evidence.values()
        )
    ):
        raise NclueError(
            f"{where(path, line)}: 'evidence' of {entry['doc_id']!r} must map condition to a list of page numbers"
        )
    if raw is None:
        return None
    ok = isinstance(raw, list) and all(
        isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and not isinstance(pair[0], bool)
        for pair in raw
    )
    if not ok:
        raise NclueError(f"{where(path, line)}: 'pages' of {entry['doc_id']!r} must be a list of [page, score] pairs")
    for _, s in raw:
        require_finite(s, path, line, f"page score of {entry['doc_id']}")
    return _top_pages(raw)
