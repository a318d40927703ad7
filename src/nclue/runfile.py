"""Run files: read and write TREC six-column and nclue JSONL runs (``docs/formats.md#runs``).

One parser for both forms, used by the scorer (which encodes the parsed rows straight into
arrays, :mod:`nclue.scoring.runs`) and by :meth:`nclue.types.Run.read` (typed records); the
writers take a :class:`~nclue.types.Run` (:meth:`nclue.types.Run.write`).
Every malformed line is an :class:`~nclue.errors.NclueError` naming the file, the line and
the fix: a wrong column count, a non-finite score, a document ranked twice for one query, a
query on two lines, a page number that is not a positive 32-bit integer, text that is not
UTF-8.

The file order is the tie order: equal scores keep it when a run is sorted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from nclue.errors import NclueError, where
from nclue.io import atomic_write_text, dumps_canonical, iter_jsonl, iter_text_lines, require_finite

if TYPE_CHECKING:  # annotations only: types.Run.read builds records from parse_run, so no cycle
    from nclue.types import Run

MAX_PAGE = 2**31 - 1
"""Largest page number a run may carry (page numbers are stored as int32)."""

Entry = tuple[str, float, tuple[tuple[int, float], ...] | None, dict[str, tuple[int, ...]] | None]
"""One ranked document as parsed: ``(doc_id, score, pages or None, evidence or None)``."""

ParsedRun = dict[str, list[Entry]]
"""``qid → entries`` in file order."""


_SHELL_SAFE = re.compile(r"[A-Za-z0-9_+@][A-Za-z0-9._+@-]*")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._+@-]+")
_DIGEST = 8


def file_stem(name: str) -> str:
    """The shell-safe file stem of a run named ``name``.

    A name made only of letters, digits and ``. _ + @ -`` (not starting with ``.`` or ``-``)
    is its own stem (``bm25.and``, ``bm25.and@paraphrase``). Any other name, such as
    ``rrf(bm25.and, dense.joint(ptop3))``, becomes its characters with each run of unsafe
    ones replaced by ``_``, then ``-`` and the first 8 hex digits of the SHA-256 of the name
    with its whitespace removed (``rrf_bm25.and_dense.joint_ptop3-…``): two names that differ
    only in punctuation get different stems, and the stem never needs quoting in a shell. The
    name itself is recorded in the file (the JSONL ``run`` field, the TREC tag).
    """
    if _SHELL_SAFE.fullmatch(name):
        return name
    compact = re.sub(r"\s+", "", name)
    slug = _UNSAFE_RUN.sub("_", compact).strip("_.-") or "run"
    return f"{slug}-{hashlib.sha256(compact.encode('utf-8')).hexdigest()[:_DIGEST]}"


def run_path(directory: str | os.PathLike[str], name: str, suffix: str = ".jsonl") -> Path:
    """Where the run named ``name`` is written in ``directory`` (``DIR/<file_stem(name)><suffix>``)."""
    return Path(directory) / f"{file_stem(name)}{suffix}"


def run_name(path: str | os.PathLike[str]) -> str:
    """The name of the run in a file: the one recorded in it, else the file stem.

    A JSONL run records its name in each line's ``run`` field. A TREC run records it, without
    spaces, as the tag (sixth column) of its first line; the tag is taken (with ``, `` restored
    between arguments, the canonical spelling of system names) only when the file's stem is
    that name's :func:`file_stem`, so a user's TREC file keeps its stem as its name.
    """
    p = Path(path)
    first = _first_line(p)
    if is_jsonl(p):
        recorded = _recorded_jsonl_name(first)
        return recorded if recorded is not None else p.stem
    parts = first.split()
    if len(parts) == 6:
        restored = parts[5].replace(",", ", ")
        if file_stem(restored) == p.stem:
            return restored
    return p.stem


def _first_line(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            for raw in handle:
                text = raw.decode("utf-8", errors="replace").lstrip("\ufeff").strip()
                if text:
                    return text
    except OSError:
        return ""
    return ""


def _recorded_jsonl_name(line: str) -> str | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    name = obj.get("run") if isinstance(obj, dict) else None
    return name if isinstance(name, str) and name.strip() else None


def is_jsonl(path: str | os.PathLike[str]) -> bool:
    """Whether a run file is nclue JSONL (by its ``.jsonl`` suffix) rather than TREC."""
    return Path(path).suffix == ".jsonl"


def parse_run(path: str | os.PathLike[str]) -> ParsedRun:
    """Parse a run file (``.jsonl`` → nclue JSONL, anything else → TREC six columns)."""
    p = Path(path)
    if not p.is_file():
        raise NclueError(f"{p}: run file not found" + (" (it is a directory)" if p.is_dir() else ""))
    return _parse_jsonl(p) if is_jsonl(p) else _parse_trec(p)


def _parse_trec(path: Path) -> ParsedRun:
    parsed: ParsedRun = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in iter_text_lines(path):
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
        parsed.setdefault(qid, []).append((doc, score, None, None))
    return parsed


def _parse_jsonl(path: Path) -> ParsedRun:
    parsed: ParsedRun = {}
    lines: dict[str, int] = {}
    recorded: tuple[int, object] | None = None
    for line, obj in iter_jsonl(path):
        qid, docs = obj.get("qid"), obj.get("docs")
        if not isinstance(qid, str) or not isinstance(docs, list):
            raise NclueError(f"{where(path, line)}: each line needs a string 'qid' and a 'docs' list")
        if recorded is None:
            recorded = (line, obj.get("run"))
        elif obj.get("run") != recorded[1]:
            raise NclueError(
                f"{where(path, line)}: run name {obj.get('run')!r} differs from {recorded[1]!r} on line "
                f"{recorded[0]}; one file holds one run"
            )
        if qid in lines:
            raise NclueError(
                f"{where(path, line)}: query {qid!r} already ranked on line {lines[qid]}; one line per query"
            )
        lines[qid] = line
        rows: list[Entry] = []
        seen: set[str] = set()
        for entry in docs:
            if not isinstance(entry, dict) or not isinstance(entry.get("doc_id"), str) or not entry["doc_id"]:
                raise NclueError(f"{where(path, line)}: every entry of 'docs' needs a non-empty string 'doc_id'")
            doc = entry["doc_id"]
            if doc in seen:
                raise NclueError(f"{where(path, line)}: {doc!r} listed twice for query {qid!r}; keep one entry")
            seen.add(doc)
            score = require_finite(entry.get("score"), path, line, f"score of {doc}")
            rows.append((doc, score, _pages(entry, path, line), _evidence(entry, path, line)))
        parsed[qid] = rows
    return parsed


def _page_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PAGE


def _pages(entry: dict, path: Path, line: int) -> tuple[tuple[int, float], ...] | None:
    raw = entry.get("pages")
    if raw is None:
        return None
    ok = isinstance(raw, list) and all(
        isinstance(pair, list) and len(pair) == 2 and _page_number(pair[0]) for pair in raw
    )
    if not ok:
        raise NclueError(
            f"{where(path, line)}: 'pages' of {entry['doc_id']!r} must be a list of [page, score] pairs "
            f"with 1 <= page <= {MAX_PAGE}"
        )
    return tuple((int(p), require_finite(s, path, line, f"page score of {entry['doc_id']}")) for p, s in raw)


def _evidence(entry: dict, path: Path, line: int) -> dict[str, tuple[int, ...]] | None:
    raw = entry.get("evidence")
    if raw is None:
        return None
    ok = isinstance(raw, dict) and all(isinstance(v, list) and all(_page_number(p) for p in v) for v in raw.values())
    if not ok:
        raise NclueError(
            f"{where(path, line)}: 'evidence' of {entry['doc_id']!r} must map each condition to a list of page "
            f"numbers (1 <= page <= {MAX_PAGE})"
        )
    return {str(c): tuple(v) for c, v in raw.items()}


def trec_text(run: Run) -> str:
    """TREC six-column text: ``qid Q0 doc_id rank score tag``, ranking order = file order."""
    tag = run.name.replace(" ", "")
    lines = []
    for qid, docs in run.rankings.items():
        for rank, doc in enumerate(docs, start=1):
            lines.append(f"{qid} Q0 {doc.doc_id} {rank} {doc.score:.9g} {tag}\n")
    return "".join(lines)


def jsonl_rows(run: Run) -> Iterable[dict]:
    """JSONL rows of a run: ``qid``, the ``run`` name and ``docs`` (``pages``/``evidence`` only for page-aware runs)."""
    for qid, docs in run.rankings.items():
        entries = []
        for doc in docs:
            entry: dict = {"doc_id": doc.doc_id, "score": float(doc.score)}
            if run.page_aware:
                entry["pages"] = [[int(p), float(s)] for p, s in doc.pages]
                entry["evidence"] = {c: [int(p) for p in pages] for c, pages in doc.evidence.items()}
            entries.append(entry)
        yield {"qid": qid, "run": run.name, "docs": entries}


def write_run(run: Run, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``OUT/<stem>.trec`` and ``OUT/<stem>.jsonl`` atomically (``stem`` = :func:`file_stem`); return their paths."""
    trec, jsonl = run_path(out_dir, run.name, ".trec"), run_path(out_dir, run.name, ".jsonl")
    atomic_write_text(trec, trec_text(run))
    atomic_write_text(jsonl, "".join(dumps_canonical(r) + "\n" for r in jsonl_rows(run)))
    return [trec, jsonl]
