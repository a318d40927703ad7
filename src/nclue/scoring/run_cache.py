"""Parsed run files as columns, cached by the file's SHA-256, so a run is parsed once.

Why: ``nclue evaluate``, ``compare``, ``report`` and ``reproduce --verify`` read the same run
files again and again, and parsing nclue JSONL costs about 10 µs per ranked document in
Python's ``json`` (≈ 1 s for one 564-query run at depth 100 with pages), while hashing the file
costs ≈ 10 ms. The first read parses the file with :func:`nclue.runfile.parse_run` — every check
and error message is the parser's — and stores what the scorer needs as one Arrow IPC file in
``$NCLUE_CACHE/runs/`` (default ``~/.cache/nclue/runs``); later reads of the same bytes load the
columns and encode them against a benchmark with array operations
(:func:`nclue.scoring.runs.encode_columns`).

An entry is named by the SHA-256 of the file's bytes, the parser its suffix picks (``jsonl`` or
``trec``) and :func:`_parser_key` (:data:`FORMAT` and a hash of the parser's source), so an edited
file, the same bytes under the other suffix and another nclue version never meet a stale entry.
Only files that parsed cleanly are stored; not a run without any ranked document, nor a file
rewritten while it was parsed (hashed again afterwards). The folder is kept under
:data:`LIMIT_BYTES`: a hit marks its entry as used (its mtime), and a store removes the least
recently used entries beyond the limit. The cache is an optimisation only: an unwritable cache
folder, or ``NCLUE_RUN_CACHE=off``, means every read parses, with the same result; an unreadable
or damaged entry is parsed again and replaced. Deleting the folder is always safe.

Columns, one row per ranked document in file order (queries contiguous, in first-appearance
order): ``qid``, ``doc_id``, ``score`` (float64), ``page1``–``page3`` (int32, the three
highest-scoring distinct surfaced pages, ``-1`` padding) and ``has_pages`` (the entry carried a
non-empty ``pages`` list).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.io import cache_home

SUPPORT_PAGES = 3
"""Surfaced pages kept per ranked document: the three highest-scoring distinct ones."""

FORMAT = 1
"""Layout version of a cache entry (part of its key)."""

LIMIT_BYTES = 1 << 30
"""The cache folder's size cap (1 GiB, about 400 runs of 564 queries at depth 100 with pages)."""

_PAGE_COLUMNS = tuple(f"page{i + 1}" for i in range(SUPPORT_PAGES))


def cache_root() -> Path | None:
    """The run cache folder: ``$NCLUE_CACHE/runs`` (default ``~/.cache/nclue/runs``); ``None`` when
    ``NCLUE_RUN_CACHE`` is ``off``, ``0`` or ``no``."""
    if os.environ.get("NCLUE_RUN_CACHE", "").strip().lower() in ("off", "0", "no", "false"):
        return None
    return cache_home() / "runs"


@dataclass(frozen=True)
class RunColumns:
    """A parsed run as aligned arrays (module docstring), ids dictionary-encoded: row ``i`` ranks
    document ``doc_values[doc_codes[i]]`` for query ``qid_values[qid_codes[i]]``. Query codes
    follow first appearance, so they are non-decreasing (a query's rows are contiguous);
    ``scores`` float64, ``pages`` ``(n, 3)`` int32, ``has_pages`` bool."""

    qid_values: tuple[str, ...]
    qid_codes: np.ndarray
    doc_values: tuple[str, ...]
    doc_codes: np.ndarray
    scores: np.ndarray
    pages: np.ndarray
    has_pages: np.ndarray

    @classmethod
    def from_parsed(cls, parsed: dict) -> RunColumns:
        """Columns of :func:`nclue.runfile.parse_run`'s ``qid → entries`` (file order kept)."""
        doc_code: dict[str, int] = {}
        qid_codes, doc_codes, scores, pages, has = [], [], [], [], []
        for q, rows in enumerate(parsed.values()):
            for doc, score, page_scores, _ in rows:
                qid_codes.append(q)
                doc_codes.append(doc_code.setdefault(doc, len(doc_code)))
                scores.append(score)
                top = top_pages(page_scores) if page_scores else ()
                pages.append((*top, *(-1,) * (SUPPORT_PAGES - len(top))))
                has.append(bool(page_scores))
        return cls(
            tuple(parsed),
            np.array(qid_codes, dtype=np.int32),
            tuple(doc_code),
            np.array(doc_codes, dtype=np.int32),
            np.array(scores, dtype=np.float64),
            np.array(pages, dtype=np.int32).reshape(-1, SUPPORT_PAGES),
            np.array(has, dtype=bool),
        )

    def to_ipc(self) -> bytes:
        """The columns as one Arrow IPC file (ids as dictionary arrays)."""
        import pyarrow as pa

        def ids(codes: np.ndarray, values: tuple[str, ...]) -> pa.DictionaryArray:
            return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(values, pa.string()))

        columns = {
            "qid": ids(self.qid_codes, self.qid_values),
            "doc_id": ids(self.doc_codes, self.doc_values),
            "score": pa.array(self.scores, pa.float64()),
            **{name: pa.array(self.pages[:, i], pa.int32()) for i, name in enumerate(_PAGE_COLUMNS)},
            "has_pages": pa.array(self.has_pages, pa.bool_()),
        }
        table = pa.table(columns)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        return sink.getvalue().to_pybytes()

    @classmethod
    def from_ipc(cls, data: bytes) -> RunColumns:
        """Columns read back from :meth:`to_ipc`'s bytes (raises on a damaged entry)."""
        import pyarrow as pa

        table = pa.ipc.open_file(pa.py_buffer(data)).read_all().combine_chunks()
        if not table.num_rows:  # never stored (an Arrow table without rows keeps no dictionary)
            raise ValueError("empty cache entry")

        def ids(name: str) -> tuple[tuple[str, ...], np.ndarray]:
            column = table[name].chunk(0)
            return tuple(column.dictionary.to_pylist()), column.indices.to_numpy(zero_copy_only=False).astype(np.int32)

        qid_values, qid_codes = ids("qid")
        doc_values, doc_codes = ids("doc_id")
        pages = np.stack([table[name].to_numpy() for name in _PAGE_COLUMNS], axis=1).astype(np.int32)
        if len(qid_codes) and (np.any(np.diff(qid_codes) < 0) or qid_codes.max() >= len(qid_values)):
            raise ValueError("damaged cache entry: query codes out of order or range")
        if len(doc_codes) and doc_codes.max() >= len(doc_values):
            raise ValueError("damaged cache entry: document codes out of range")
        return cls(
            qid_values,
            qid_codes,
            doc_values,
            doc_codes,
            table["score"].to_numpy().astype(np.float64),
            pages.reshape(-1, SUPPORT_PAGES),
            table["has_pages"].to_numpy().astype(bool),
        )


def run_columns(path: str | os.PathLike[str]) -> RunColumns:
    """The run file at ``path`` as :class:`RunColumns`, from the cache when its bytes were parsed
    before, else parsed (:func:`nclue.runfile.parse_run`, which raises on a malformed file) and
    stored."""
    from nclue.runfile import is_jsonl, parse_run

    p = Path(path)
    root = cache_root()
    entry = digest = None
    if root is not None and p.is_file():
        try:
            digest = _digest(p)
            entry = root / f"{digest}-{'jsonl' if is_jsonl(p) else 'trec'}-{_parser_key()}.arrow"
            columns = RunColumns.from_ipc(entry.read_bytes())
        except Exception:  # noqa: BLE001 - a missing, damaged or foreign entry is parsed and replaced
            pass
        else:
            try:
                os.utime(entry)  # marks it used (a read-only cache still serves the hit)
            except OSError:
                pass
            return columns
    columns = RunColumns.from_parsed(parse_run(p))
    # Not stored: a run without rows (parsed at once; Arrow would drop its query ids), or a file
    # rewritten while it was parsed (its columns are not those of the digest).
    if entry is not None and len(columns.qid_codes) and _digest(p) == digest:
        _store(entry, columns)
    return columns


@functools.cache
def _parser_key() -> str:
    """:data:`FORMAT` and 12 hex of the SHA-256 of the parser's and this module's source, so a
    changed parser or layout never meets an entry made by another version."""
    import nclue.runfile

    h = hashlib.sha256(str(FORMAT).encode())
    for module in (nclue.runfile, sys.modules[__name__]):
        h.update(Path(module.__file__).read_bytes())
    return f"{FORMAT}.{h.hexdigest()[:12]}"


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _store(entry: Path, columns: RunColumns) -> None:
    """Write a cache entry atomically; a cache that cannot be written is skipped (reads still parse)."""
    from nclue.errors import NclueError
    from nclue.io import atomic_write_bytes

    try:
        atomic_write_bytes(entry, columns.to_ipc())
        _prune(entry.parent, LIMIT_BYTES)
    except (NclueError, OSError):
        pass


def _prune(root: Path, limit: int) -> None:
    """Remove the least recently used entries (oldest mtime) until the folder holds ``limit`` bytes."""
    entries = []
    for path in root.glob("*.arrow"):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((stat.st_mtime_ns, path.name, stat.st_size, path))
    total = sum(size for _, _, size, _ in entries)
    for _, _, size, path in sorted(entries):
        if total <= limit:
            break
        path.unlink(missing_ok=True)
        total -= size


def top_pages(pairs: Iterable[tuple[int, float]]) -> tuple[int, ...]:
    """The three highest-scoring distinct pages (stable for equal page scores)."""
    ordered = sorted(((int(p), float(s)) for p, s in pairs), key=lambda ps: -ps[1])
    out: list[int] = []
    for page, _ in ordered:
        if page not in out:
            out.append(page)
        if len(out) == SUPPORT_PAGES:
            break
    return tuple(out)
