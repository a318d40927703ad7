"""The Parquet page store: ``docs.parquet`` + ``pages.parquet`` inside a collection directory.

Schema (see ``docs/formats.md``):

* ``docs.parquet``: ``doc_id`` (str, stable, derived from the relative path), ``path``,
  ``sha256``, ``n_pages`` (int32), ``n_bytes`` (int64), ``source``, ``status``
  (``"ok"`` or a failure reason such as ``"encrypted"``), ``error`` (str or null).
* ``pages.parquet``: ``doc_id``, ``page`` (1-based int32), ``text``, ``n_chars`` (int32),
  ``method`` (``"text"``, ``"ocr"`` or ``"none"``), sorted by ``(doc_id, page)``.

Consumers use :class:`PageStore`, which exposes the page table as aligned arrays (the
hot-path form): ``page_doc`` (document index per page), ``page_number`` and ``texts``,
plus ``doc_offsets`` so that pages of document ``i`` are rows
``doc_offsets[i]:doc_offsets[i+1]``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from nclue.errors import NclueError
from nclue.io import atomic_write_bytes, read_json_record, sha256_file

DOCS_FILE = "docs.parquet"
PAGES_FILE = "pages.parquet"
META_FILE = "collection.json"


def collection_record(collection: str | os.PathLike[str], strict: bool = False) -> dict[str, Any]:
    """The collection's ``collection.json`` (written by ``nclue ingest``): the one reader of that file.

    ``{}`` when it is missing; when it is damaged, ``{}`` too (callers that only reuse or look
    up a value fall back) unless ``strict``, which names the file and the fix.
    """
    path = Path(collection) / META_FILE
    if not strict:
        return read_json_record(path) or {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise NclueError(
            f"{path}: damaged ({type(exc).__name__}); re-ingest with `nclue ingest PDF_DIR {Path(collection)}` "
            "(unchanged PDFs are not extracted again)"
        ) from None
    if not isinstance(record, dict):
        raise NclueError(f"{path}: not a JSON object; re-ingest with `nclue ingest PDF_DIR {Path(collection)}`")
    return record


DOCS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("path", pa.string()),
        ("sha256", pa.string()),
        ("n_pages", pa.int32()),
        ("n_bytes", pa.int64()),
        ("source", pa.string()),
        ("status", pa.string()),
        ("error", pa.string()),
    ]
)
PAGES_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("page", pa.int32()),
        ("text", pa.string()),
        ("n_chars", pa.int32()),
        ("method", pa.string()),
    ]
)


def write_table_atomic(path: str | os.PathLike[str], table: pa.Table) -> None:
    """Write a Parquet table atomically (zstd, deterministic row order given by the caller)."""
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    atomic_write_bytes(path, buffer.getvalue())


def _read_parquet(path: Path, schema: pa.Schema, columns: list[str] | None = None) -> pa.Table:
    """A page-store table (or some of its columns), or one line naming the damaged file and the fix."""
    fix = f"re-ingest with `nclue ingest PDF_DIR {path.parent}` (unchanged PDFs are not extracted again)"
    try:  # ParquetFile, not read_table: one file needs no pyarrow.dataset (0.2 s of imports per command)
        table = pq.ParquetFile(path).read(columns=columns)
    except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
        raise NclueError(f"{path}: damaged or not a Parquet file ({type(exc).__name__}); {fix}") from None
    missing = [name for name in (columns or schema.names) if name not in table.column_names]
    if missing:
        raise NclueError(f"{path}: not an nclue page-store table (no column {', '.join(missing)}); {fix}")
    return table


TAIL_BYTES = 1 << 16


def _tail_sha256(path: Path) -> str:
    """SHA-256 of the last 64 KiB of a file (a Parquet file's footer: schema, offsets, statistics)."""
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - TAIL_BYTES))
        return hashlib.sha256(handle.read()).hexdigest()


def pages_fingerprint(root: str | os.PathLike[str]) -> str:
    """SHA-256 of ``pages.parquet``: the collection's content fingerprint, checked by every index.

    ``nclue ingest`` records it in ``collection.json`` with the file's size and the hash of its
    footer; when both still match the file, the recorded value is used (no full read), otherwise
    the file is hashed again — so a store replaced behind ingest's back is still detected.
    """
    base = Path(root)
    path = base / PAGES_FILE
    if not path.is_file():
        raise NclueError(f"{base}: not a collection (no {PAGES_FILE}); build it with `nclue ingest PDF_DIR {base}`")
    try:
        recorded = collection_record(base).get("pages")
        if (
            isinstance(recorded, dict)
            and recorded.get("bytes") == path.stat().st_size
            and recorded.get("tail_sha256") == _tail_sha256(path)
            and isinstance(recorded.get("sha256"), str)
        ):
            return recorded["sha256"]
    except (OSError, ValueError, AttributeError):
        pass
    return sha256_file(path)


def pages_record(root: str | os.PathLike[str]) -> dict[str, object]:
    """What ``collection.json`` stores about ``pages.parquet``: size, footer hash and SHA-256."""
    path = Path(root) / PAGES_FILE
    return {"bytes": path.stat().st_size, "tail_sha256": _tail_sha256(path), "sha256": sha256_file(path)}


def _collection_dir(root: str | os.PathLike[str]) -> Path:
    """``root`` as a path once it holds both tables; an :class:`NclueError` naming what is missing otherwise."""
    base = Path(root)
    if not base.is_dir():
        raise NclueError(f"{base}: collection directory not found; build it with `nclue ingest PDF_DIR {base}`")
    missing = [name for name in (DOCS_FILE, PAGES_FILE) if not (base / name).is_file()]
    if missing:
        raise NclueError(
            f"{base}: not a collection (missing {', '.join(missing)}); build it with `nclue ingest PDF_DIR {base}`"
        )
    return base


def cross_check(root: str | os.PathLike[str]) -> list[str]:
    """Every way ``docs.parquet`` and ``pages.parquet`` disagree, one line each (empty when they agree).

    Reads only ``doc_id``, ``status`` and ``n_pages`` of the documents and ``doc_id`` and
    ``page`` of the pages. What ingest writes: each ``doc_id`` once in ``docs.parquet``; page
    rows only for ``ok`` documents (failed files and duplicates legitimately have none, whatever
    their ``n_pages``), exactly ``n_pages`` of them, numbered 1…n in order.
    """
    base = _collection_dir(root)
    docs = _read_parquet(base / DOCS_FILE, DOCS_SCHEMA, columns=["doc_id", "status", "n_pages"]).to_pydict()
    pages = _read_parquet(base / PAGES_FILE, PAGES_SCHEMA, columns=["doc_id", "page"]).to_pydict()
    counts, numbering = _page_counts(base / PAGES_FILE, pages["doc_id"], pages["page"])
    return _repeated_documents(base / DOCS_FILE, docs["doc_id"]) + _count_problems(base, docs, counts) + numbering


def _page_counts(path: Path, doc_ids: list[str], numbers: list[int]) -> tuple[dict[str, int], list[str]]:
    """``(pages per doc_id, problems)``: the first page row of each document out of its 1…n order."""
    counts: dict[str, int] = {}
    problems: dict[str, str] = {}
    for doc_id, page in zip(doc_ids, numbers, strict=True):
        expected = counts.get(doc_id, 0) + 1
        counts[doc_id] = expected
        if page != expected and doc_id not in problems:
            problems[doc_id] = (
                f"{path}: document {doc_id!r} has a row for page {page} where page {expected} belongs "
                "(a document's pages must run 1…n in order)"
            )
    return counts, [problems[d] for d in sorted(problems, key=str)]


def _repeated_documents(path: Path, doc_ids: list[str]) -> list[str]:
    """One line per ``doc_id`` that ``docs.parquet`` lists more than once."""
    seen: dict[str, int] = {}
    for doc_id in doc_ids:
        seen[doc_id] = seen.get(doc_id, 0) + 1
    return [
        f"{path}: document {d!r} is listed {n} times"
        for d, n in sorted(seen.items(), key=lambda item: str(item[0]))
        if n > 1
    ]


def _count_problems(base: Path, docs: dict[str, list], counts: dict[str, int]) -> list[str]:
    """One line per document whose page rows do not match its ``docs.parquet`` row, by ``doc_id``."""
    rows = {d: (s, n) for d, s, n in zip(docs["doc_id"], docs["status"], docs["n_pages"], strict=True)}
    out = []
    for doc_id in sorted(set(rows) | set(counts), key=str):  # str: a damaged table may hold null ids
        found = counts.get(doc_id, 0)
        if doc_id not in rows:
            out.append(
                f"{base / PAGES_FILE}: {found} page rows of document {doc_id!r}, which {DOCS_FILE} does not list"
            )
            continue
        status, n_pages = rows[doc_id]
        if status != "ok" and found:
            out.append(
                f"{base / PAGES_FILE}: {found} page rows of document {doc_id!r}, which {DOCS_FILE} records as "
                f"{status!r} (only 'ok' documents have pages)"
            )
        elif status == "ok" and found != n_pages:
            out.append(
                f"{base / DOCS_FILE}: document {doc_id!r} has n_pages {n_pages} but {PAGES_FILE} holds "
                f"{found} of its pages"
            )
    return out


def require_consistent(root: str | os.PathLike[str]) -> None:
    """Return when :func:`cross_check` finds nothing; else raise one :class:`NclueError` line: the first
    disagreement, how many more, and the fix (re-running ingest rewrites both files)."""
    found = cross_check(root)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise NclueError(f"{found[0]}{more}; {DOCS_FILE} and {PAGES_FILE} disagree — {consistency_fix(root)}")


def consistency_fix(root: str | os.PathLike[str]) -> str:
    """The fix for a collection whose two tables disagree: re-running ingest (which resumes and reuses)."""
    return (
        f"re-run `nclue ingest PDF_DIR {Path(root)}` to rewrite both (it finishes an interrupted ingest; "
        "unchanged PDFs are not extracted again)"
    )


class PageStore:
    """Read access to a collection directory's page store.

    Opening reads ``docs.parquet`` and only the ``doc_id`` and ``page`` columns of
    ``pages.parquet``; the page texts (the bulk of the file) are read on first use of
    :attr:`texts` or :attr:`pages`, so commands that only score against indexes start fast.
    """

    def __init__(self, root: Path, docs: pa.Table, pages: pa.Table | None = None) -> None:
        self.root = Path(root)
        self.docs = docs
        self._pages = pages

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> PageStore:
        """Open a collection; raise :class:`NclueError` naming what is missing and how to build it."""
        base = _collection_dir(root)
        store = cls(root=base, docs=_read_parquet(base / DOCS_FILE, DOCS_SCHEMA))
        store._index  # noqa: B018 - read the page index now, so a damaged pages.parquet is reported at open
        return store

    @property
    def pages(self) -> pa.Table:
        """The whole page table (``doc_id``, ``page``, ``text``, ``n_chars``, ``method``), read on first use."""
        if self._pages is None:
            self._pages = _read_parquet(self.root / PAGES_FILE, PAGES_SCHEMA)
        return self._pages

    @cached_property
    def _index(self) -> pa.Table:
        """The ``doc_id`` and ``page`` columns of every page row."""
        if self._pages is not None:
            return self._pages.select(["doc_id", "page"])
        return _read_parquet(self.root / PAGES_FILE, PAGES_SCHEMA, columns=["doc_id", "page"])

    @cached_property
    def doc_ids(self) -> np.ndarray:
        """Sorted ``doc_id``s of successfully ingested documents (object array)."""
        ids = set(self._index.column("doc_id").to_pylist())  # to_numpy on strings would import pandas (0.2 s)
        return np.array(sorted(ids), dtype=object) if ids else np.array([], dtype=object)

    @cached_property
    def doc_index(self) -> dict[str, int]:
        """``doc_id`` → position in :attr:`doc_ids`."""
        return {doc_id: i for i, doc_id in enumerate(self.doc_ids.tolist())}

    @cached_property
    def page_doc(self) -> np.ndarray:
        """int32 document index (into :attr:`doc_ids`) of every page row."""
        index = self.doc_index
        ids = self._index.column("doc_id").to_pylist()
        return np.fromiter((index[d] for d in ids), dtype=np.int32, count=len(ids))

    @cached_property
    def page_number(self) -> np.ndarray:
        """int32 1-based page number of every page row."""
        pages = self._index.column("page").to_pylist()  # to_numpy would import pandas (0.2 s per command)
        return np.fromiter(pages, dtype=np.int32, count=len(pages))

    @cached_property
    def texts(self) -> list[str]:
        """Text of every page row, aligned with :attr:`page_doc`."""
        return [t or "" for t in self.pages.column("text").to_pylist()]

    @cached_property
    def doc_offsets(self) -> np.ndarray:
        """CSR offsets: pages of document ``i`` are rows ``doc_offsets[i]:doc_offsets[i+1]``."""
        counts = np.bincount(self.page_doc, minlength=len(self.doc_ids))
        offsets = np.zeros(len(self.doc_ids) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        if len(self.page_doc) and np.any(np.diff(self.page_doc) < 0):
            raise NclueError(f"{self.root / PAGES_FILE}: rows are not sorted by (doc_id, page); re-run `nclue ingest`")
        return offsets

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of ``pages.parquet`` (:func:`pages_fingerprint`)."""
        return pages_fingerprint(self.root)

    @cached_property
    def doc_sha256(self) -> dict[str, str]:
        """``doc_id`` → SHA-256 for every ingested document."""
        rows = self.docs.select(["doc_id", "sha256"]).to_pylist()
        return {r["doc_id"]: r["sha256"] for r in rows}

    def page_text(self, doc_id: str, page: int) -> str:
        """Text of one page (1-based); raises :class:`NclueError` if it does not exist."""
        i = self.doc_index.get(doc_id)
        if i is None:
            raise NclueError(f"{self.root}: unknown document {doc_id!r}")
        start, stop = int(self.doc_offsets[i]), int(self.doc_offsets[i + 1])
        rows = np.nonzero(self.page_number[start:stop] == page)[0]
        if not len(rows):
            raise NclueError(f"{self.root}: document {doc_id!r} has no page {page}")
        row = start + int(rows[0])
        if "texts" in self.__dict__:  # every text already read
            return self.texts[row]
        return self.pages.column("text")[row].as_py() or ""  # one cell, not 14,517 Python strings

    @property
    def n_pages(self) -> int:
        """Number of page rows."""
        return self._index.num_rows
