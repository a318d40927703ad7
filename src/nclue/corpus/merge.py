"""Where extraction results live until the merge, and the deterministic merge itself.

Page text never accumulates as Python strings: each batch of results is converted once
to Arrow, written as a shard (``shard-NNNNNN.arrow``, an uncompressed Arrow IPC stream,
written atomically) and kept only as Arrow columns. Results reused from shards of a
killed run or from the previous ``pages.parquet`` are Arrow too. Every document is then a
*span* — ``(chunk, start, n_pages)`` into one of these page tables — and the final page
table is one vectorised ``take`` over their concatenation, in ``doc_id`` order, followed
by a contiguous copy. The bytes written therefore depend only on the rows, never on
which run or shard a row came from (the resume guarantee).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nclue.corpus.normalize import NORMALIZATION_VERSION
from nclue.corpus.pdftext import DocText
from nclue.corpus.store import DOCS_FILE, DOCS_SCHEMA, PAGES_FILE, PAGES_SCHEMA, collection_record
from nclue.io import atomic_write_bytes

FORMAT_VERSION = 1
SHARD_SUFFIX = ".arrow"
SHARD_SCHEMA = pa.schema(
    [
        ("sha256", pa.string()),
        ("ocr", pa.string()),
        ("status", pa.string()),
        ("error", pa.string()),
        ("n_pages", pa.int32()),
        ("normalization", pa.int32()),
        ("texts", pa.list_(pa.string())),
        ("methods", pa.list_(pa.string())),
    ]
)
PAGE_COLUMNS = pa.schema([("text", pa.string()), ("method", pa.string())])


@dataclass(frozen=True)
class Stored:
    """One document's result: status, page count and, when ``ok``, where its pages are."""

    status: str
    error: str | None
    n_pages: int
    chunk: int = -1
    start: int = 0


class PageChunks:
    """Page tables (``text``, ``method``) that document spans point into."""

    def __init__(self) -> None:
        self.tables: list[pa.Table] = []

    def add(self, table: pa.Table) -> int:
        """Register a page table; return its chunk number."""
        self.tables.append(table.select(PAGE_COLUMNS.names).cast(PAGE_COLUMNS))
        return len(self.tables) - 1

    def gather(self, spans: list[Stored]) -> pa.Table:
        """The pages of ``spans``, in that order, as one contiguous table."""
        lengths = np.array([s.n_pages for s in spans], dtype=np.int64)
        total = int(lengths.sum())
        if total == 0:
            return PAGE_COLUMNS.empty_table()
        bases = np.cumsum([0] + [t.num_rows for t in self.tables])
        starts = np.array([bases[s.chunk] + s.start for s in spans], dtype=np.int64)
        before = np.cumsum(lengths) - lengths
        index = np.repeat(starts - before, lengths) + np.arange(total, dtype=np.int64)
        return pa.concat_tables(self.tables).take(pa.array(index)).combine_chunks()


def register_shard(table: pa.Table, ocr: str, chunks: PageChunks, results: dict[str, Stored]) -> None:
    """Record the rows of one shard table built with OCR mode ``ocr`` (other modes are ignored)."""
    texts = table.column("texts").combine_chunks()
    lengths = pc.fill_null(pc.list_value_length(texts), 0).to_numpy()
    starts = np.cumsum(lengths) - lengths
    chunk = chunks.add(
        pa.table({"text": pc.list_flatten(texts), "method": pc.list_flatten(table.column("methods").combine_chunks())})
    )
    meta = table.select(["sha256", "ocr", "status", "error", "n_pages", "normalization"]).to_pylist()
    for row, start, length in zip(meta, starts.tolist(), lengths.tolist(), strict=True):
        if row["ocr"] != ocr or row["normalization"] != NORMALIZATION_VERSION:
            continue
        if row["status"] == "ok" and length != row["n_pages"]:
            continue
        results[row["sha256"]] = Stored(row["status"], row["error"], row["n_pages"], chunk, start)


def shard_table(batch: Iterable[tuple[str, DocText]], ocr: str) -> pa.Table:
    """One shard: a row per document with its page texts and methods as lists."""
    shas, statuses, errors, n_pages, texts, methods = [], [], [], [], [], []
    for sha, doc in batch:
        shas.append(sha)
        statuses.append(doc.status)
        errors.append(doc.error)
        n_pages.append(doc.n_pages)
        texts.append(doc.texts)
        methods.append(doc.methods)
    columns = [shas, [ocr] * len(shas), statuses, errors, n_pages, [NORMALIZATION_VERSION] * len(shas), texts, methods]
    return pa.table(
        [pa.array(values, type=field.type) for values, field in zip(columns, SHARD_SCHEMA, strict=True)],
        schema=SHARD_SCHEMA,
    )


def write_shard(path: Path, table: pa.Table) -> None:
    """Write a shard atomically as an uncompressed Arrow IPC stream (cheap; merged later)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def read_shards(work: Path, ocr: str, chunks: PageChunks, results: dict[str, Stored]) -> None:
    """Register every readable shard in ``work`` (a torn or foreign file is skipped)."""
    if not work.is_dir():
        return
    for shard in sorted(work.glob(f"shard-*{SHARD_SUFFIX}")):
        try:
            with pa.ipc.open_stream(pa.memory_map(str(shard))) as reader:
                table = reader.read_all()
        except (OSError, pa.ArrowInvalid):
            continue
        if table.schema.equals(SHARD_SCHEMA):
            register_shard(table, ocr, chunks, results)


def read_previous_store(collection: Path, ocr: str, chunks: PageChunks, results: dict[str, Stored]) -> None:
    """Register the documents of a finished earlier store built with the same OCR mode and text normalisation.

    Unreadable and duplicate rows are not reused (the file may be readable now; a
    duplicate's content is its original's).
    """
    try:
        meta = collection_record(collection)
        if meta.get("ocr") != ocr or meta.get("format") != FORMAT_VERSION:
            return
        if meta.get("normalization") != NORMALIZATION_VERSION:
            return
        docs = pq.read_table(collection / DOCS_FILE).to_pylist()
        pages = pq.read_table(collection / PAGES_FILE, columns=["doc_id", "text", "method"])
    except (OSError, ValueError, pa.ArrowInvalid):
        return
    ids = pages.column("doc_id").to_numpy(zero_copy_only=False)
    bounds = np.flatnonzero(ids[1:] != ids[:-1]) + 1 if len(ids) else np.array([], dtype=np.int64)
    starts = np.concatenate([[0], bounds]).astype(np.int64) if len(ids) else bounds
    ends = np.concatenate([bounds, [len(ids)]]).astype(np.int64) if len(ids) else bounds
    spans = {ids[s]: (int(s), int(e - s)) for s, e in zip(starts, ends, strict=True)}
    chunk = chunks.add(pages)
    for row in docs:
        if row["status"] in ("duplicate", "unreadable"):
            continue
        if row["status"] == "ok":
            start, count = spans.get(row["doc_id"], (0, -1))
            if count == row["n_pages"]:
                results[row["sha256"]] = Stored("ok", None, count, chunk, start)
        else:
            results[row["sha256"]] = Stored(row["status"], row["error"], row["n_pages"])


class ShardWriter:
    """Buffers extraction results and flushes them to the next shard (by pages or time)."""

    def __init__(
        self,
        work: Path,
        ocr: str,
        chunks: PageChunks,
        results: dict[str, Stored],
        flush_pages: int,
        flush_seconds: float,
    ) -> None:
        self.work, self.ocr, self.chunks, self.results = work, ocr, chunks, results
        self.flush_pages, self.flush_seconds = flush_pages, flush_seconds
        self.buffer: list[tuple[str, DocText]] = []
        self.pages = 0
        self.last = time.monotonic()
        stems = [p.name[len("shard-") : -len(SHARD_SUFFIX)] for p in work.glob(f"shard-*{SHARD_SUFFIX}")]
        self.next = max((int(s) for s in stems if s.isdigit()), default=0) + 1

    def add(self, sha: str, doc: DocText) -> None:
        """Buffer one result; flush when enough pages or seconds have accumulated."""
        self.buffer.append((sha, doc))
        self.pages += doc.n_pages
        if self.pages >= self.flush_pages or time.monotonic() - self.last >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Write the buffer as a shard and register its rows (their text now lives in Arrow)."""
        if self.buffer:
            table = shard_table(self.buffer, self.ocr)
            write_shard(self.work / f"shard-{self.next:06d}{SHARD_SUFFIX}", table)
            register_shard(table, self.ocr, self.chunks, self.results)
            self.next += 1
        self.buffer, self.pages, self.last = [], 0, time.monotonic()


def build_tables(
    doc_rows: list[dict], with_pages: list[tuple[str, Stored]], chunks: PageChunks
) -> tuple[pa.Table, pa.Table]:
    """The ``docs`` table from ``doc_rows`` and the ``pages`` table of ``with_pages``.

    Both inputs are already in ``doc_id`` order; pages are numbered 1…n per document and
    ``n_chars`` counts code points (``len(text)``).
    """
    docs_table = pa.table(
        [pa.array([row[f.name] for row in doc_rows], type=f.type) for f in DOCS_SCHEMA], schema=DOCS_SCHEMA
    )
    spans = [span for _, span in with_pages]
    pages = chunks.gather(spans)
    lengths = np.array([s.n_pages for s in spans], dtype=np.int64)
    before = np.repeat(np.cumsum(lengths) - lengths, lengths)
    text = pages.column("text").combine_chunks()
    pages_table = pa.table(
        [
            pa.array(np.repeat(np.array([d for d, _ in with_pages], dtype=object), lengths).tolist(), type=pa.string()),
            pa.array(np.arange(len(before), dtype=np.int64) - before + 1, type=pa.int32()),
            text,
            pc.utf8_length(text).cast(pa.int32()),
            pages.column("method").combine_chunks(),
        ],
        schema=PAGES_SCHEMA,
    )
    return docs_table, pages_table
