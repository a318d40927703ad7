"""``nclue ingest``: a folder of PDFs → a resumable, deterministic Parquet page store.

Steps:

1. **Scan** ``PDF_DIR`` for ``*.pdf`` (any case; hidden folders and the collection itself
   skipped), sorted by relative path. ``doc_id`` = the relative path without ``.pdf``,
   characters outside ``[A-Za-z0-9._+/-]`` replaced by ``_`` (a ``~2``, ``~3`` … suffix
   keeps ids unique if two paths collide). ``source`` = the first folder of the path (the
   Debian package for ``nclue corpus fetch`` folders).
2. **Hash** every regular file (SHA-256; a FIFO, socket or device named ``*.pdf`` is stored
   as unreadable, never opened). Files with the same hash are one document: the smallest
   ``doc_id`` is extracted, the others get ``status="duplicate"`` and no page rows.
3. **Extract** each distinct document (:func:`nclue.corpus.pdftext.extract_pdf`) on an
   engine (:mod:`nclue.engine`: this process, a spawn process pool, or Ray), largest file first. Results go to
   shard files ``COLLECTION/.ingest/shard-NNNNNN.arrow`` (atomic writes, every ~2,000
   pages or 5 s; see :mod:`nclue.corpus.merge`), so a killed run loses at most the last
   few seconds. A rerun reuses shard results and the rows of an existing store built with
   the same OCR mode and text normalisation (:data:`~nclue.corpus.normalize.NORMALIZATION_VERSION`),
   keyed by SHA-256, so it only extracts what is new or changed.
4. **Merge** deterministically: ``pages.parquet`` sorted by ``(doc_id, page)``,
   ``docs.parquet`` by ``doc_id``, ``collection.json`` last; then the shards are removed.
   Rows depend only on the PDF bytes and the OCR mode, never on scheduling, so a run
   interrupted by SIGKILL and rerun writes byte-identical files.

``docs.parquet`` ``status`` values: ``ok``, ``duplicate`` (``error`` names the original),
and the failure reasons of :mod:`nclue.corpus.pdftext` plus ``error``. A duplicate row
carries its original's ``n_pages``; only ``ok`` rows have page rows.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.compute as pc

from nclue.corpus.merge import (
    FORMAT_VERSION,
    PageChunks,
    ShardWriter,
    Stored,
    build_tables,
    read_previous_store,
    read_shards,
)
from nclue.corpus.normalize import NORMALIZATION_VERSION
from nclue.corpus.pdftext import OCR_MODES, DocText, extract_pdf
from nclue.corpus.store import DOCS_FILE, META_FILE, PAGES_FILE, pages_record, write_table_atomic
from nclue.engine import Engine, make_engine
from nclue.errors import NclueError
from nclue.io import exclusive_lock, sha256_file, writable_dir, write_json
from nclue.progress import Progress, quiet, stage_advance

WORK_DIR = ".ingest"
FLUSH_PAGES = 2000
FLUSH_SECONDS = 5.0
UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9._+/-]")


@dataclass(frozen=True)
class SourceFile:
    """One ``*.pdf`` found under ``PDF_DIR``."""

    doc_id: str
    path: str
    abspath: Path
    sha256: str
    n_bytes: int
    source: str

    @property
    def key(self) -> str:
        """Content key: the SHA-256, or a per-file key when the file could not be read."""
        return self.sha256 or f"unreadable:{self.doc_id}"


@dataclass
class IngestSummary:
    """What an ingest run produced; ``failures`` counts failed files by reason."""

    collection: Path
    n_files: int
    n_docs: int
    n_pages: int
    n_chars: int
    n_ocr_pages: int
    n_extracted: int
    n_reused: int
    extracted_pages: int
    seconds: float
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)

    @property
    def pages_per_s(self) -> float:
        """Pages extracted in this run per wall-clock second (0 when nothing was extracted)."""
        return self.extracted_pages / self.seconds if self.seconds > 0 and self.extracted_pages else 0.0


def make_doc_id(relpath: str) -> str:
    """``a/b c.pdf`` → ``a/b_c``: the relative path without its extension, made id-safe."""
    stem = relpath[: -len(".pdf")] if relpath.lower().endswith(".pdf") else relpath
    return UNSAFE_ID_CHARS.sub("_", stem)


def _iter_pdfs(root: Path, exclude: Path | None) -> Iterator[Path]:
    """PDF files under ``root``; hidden entries, symlinked folders and ``exclude`` are skipped."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        current = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and (current / d).resolve() != exclude)
        for name in filenames:
            if name.lower().endswith(".pdf") and not name.startswith("."):
                yield current / name


def _hash_regular(path: Path) -> tuple[str, int]:
    """``(sha256, size)`` of a regular file; ``("", 0)`` (stored as unreadable) for one that cannot be
    read or is not a regular file: reading a FIFO, socket or device named ``*.pdf`` would block or
    never end."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return "", 0
        return sha256_file(path), info.st_size
    except OSError:
        return "", 0


def scan_pdf_dir(pdf_dir: str | os.PathLike[str], exclude: str | os.PathLike[str] | None = None) -> list[SourceFile]:
    """Find, hash and name every PDF under ``pdf_dir`` (sorted by ``doc_id``); see step 1."""
    root = Path(pdf_dir)
    if not root.is_dir():
        raise NclueError(f"{root}: PDF folder not found; pass a folder of PDFs, e.g. one made by `nclue corpus fetch`")
    skip = Path(exclude).resolve() if exclude is not None else None
    paths = sorted(_iter_pdfs(root, skip), key=lambda p: p.relative_to(root).as_posix())
    files: list[SourceFile] = []
    seen: Counter[str] = Counter()
    for path in paths:
        rel = path.relative_to(root).as_posix()
        base = make_doc_id(rel)
        seen[base] += 1
        doc_id = base if seen[base] == 1 else f"{base}~{seen[base]}"
        parts = rel.split("/")
        digest, size = _hash_regular(path)
        source = parts[0] if len(parts) > 1 else root.resolve().name
        files.append(SourceFile(doc_id, rel, path, digest, size, source))
    files.sort(key=lambda f: f.doc_id)
    return files


def _extract_task(path: str, sha: str, ocr: str) -> tuple[str, DocText]:
    """Extract one file; an unexpected exception becomes ``status="error"`` so the run goes on."""
    try:
        return sha, extract_pdf(path, ocr=ocr)  # type: ignore[arg-type]
    except Exception as exc:  # a bug or a PDFium surprise must not stop a long run
        return sha, DocText(status="error", error=f"{type(exc).__name__}: {exc}")


def _run_extraction(
    todo: list[SourceFile], ocr: str, engine: Engine, on_result: Callable[[str, DocText], None]
) -> None:
    """Extract ``todo`` (largest file first) on ``engine``; hand each result to ``on_result`` as it completes."""
    ordered = sorted(todo, key=lambda f: (-f.n_bytes, f.doc_id))
    for _, result in engine.imap(_extract_task, ((str(item.abspath), item.sha256, ocr) for item in ordered)):
        on_result(*result)


def _rows(
    files: list[SourceFile], canonical: dict[str, str], results: dict[str, Stored]
) -> tuple[list[dict], list[tuple[str, Stored]]]:
    """``docs.parquet`` rows for every file and the page spans of ``ok`` ones, in ``doc_id`` order."""
    doc_rows: list[dict] = []
    with_pages: list[tuple[str, Stored]] = []
    for item in files:
        result = results[item.key]
        first = canonical[item.key]
        duplicate = first != item.doc_id
        status = "duplicate" if duplicate else result.status
        doc_rows.append(
            {
                "doc_id": item.doc_id,
                "path": item.path,
                "sha256": item.sha256,
                "n_pages": result.n_pages,
                "n_bytes": item.n_bytes,
                "source": item.source,
                "status": status,
                "error": f"same SHA-256 as {first}" if duplicate else result.error,
            }
        )
        if status == "ok":
            with_pages.append((item.doc_id, result))
    return doc_rows, with_pages


def ingest(
    pdf_dir: str | os.PathLike[str],
    collection_dir: str | os.PathLike[str],
    workers: int = 1,
    ocr: str = "auto",
    progress: Progress = quiet,
    engine: str = "local",
    ray_address: str | None = None,
) -> IngestSummary:
    """Build (or resume, or update) the page store of ``pdf_dir`` in ``collection_dir``.

    ``workers``: processes (1 = in this process, 0 = one per CPU). ``ocr``: ``auto``
    (OCR pages that have no text layer but draw an image), ``off`` or ``force``.
    ``engine``: ``local`` or ``ray`` (:mod:`nclue.engine`; ``ray_address`` names an existing
    cluster, else a local Ray instance with ``workers`` CPUs runs the extraction). Every
    engine writes the same bytes. ``progress`` (:mod:`nclue.progress`) hears two stages:
    ``"documents"`` (total: the documents to extract) and ``"pages"`` (their pages, total unknown).
    Bad files are recorded with their reason and the run goes on; raises
    :class:`NclueError` for wrong arguments (exit 2) or when no document could be
    ingested (exit 1, after writing the store that records why).
    """
    started = time.perf_counter()
    if ocr not in OCR_MODES:
        raise NclueError(f"--ocr {ocr!r} is not one of {', '.join(OCR_MODES)}")
    if workers < 0:
        raise NclueError(f"--workers {workers}: must be ≥ 0 (0 = one per CPU)")
    workers = workers or (os.cpu_count() or 1)
    if ocr != "off":
        from nclue.corpus.ocr import require_tesseract

        require_tesseract()
    collection = Path(collection_dir)
    if collection.exists() and not collection.is_dir():
        raise NclueError(f"{collection}: exists and is not a folder; choose another COLLECTION_DIR")
    files = scan_pdf_dir(pdf_dir, exclude=collection)
    if not files:
        raise NclueError(f"{pdf_dir}: no *.pdf files found; point PDF_DIR at a folder of PDFs")
    writable_dir(collection, "collection")
    runner = make_engine(engine, workers, ray_address)
    try:
        with exclusive_lock(collection, "collection"):
            summary = _ingest_locked(pdf_dir, collection, files, runner, ocr, progress, started)
    finally:
        runner.close()
    if summary.n_docs == 0:
        reasons = ", ".join(f"{count} {reason}" for reason, count in summary.failures.items()) or "none readable"
        raise NclueError(
            f"{pdf_dir}: no document could be ingested ({reasons}); see {collection / DOCS_FILE} for each file's error",
            exit_code=1,
        )
    return summary


def _ingest_locked(
    pdf_dir: str | os.PathLike[str],
    collection: Path,
    files: list[SourceFile],
    engine: Engine,
    ocr: str,
    progress: Progress,
    started: float,
) -> IngestSummary:
    """The work of :func:`ingest` while it holds the collection's lock."""
    canonical: dict[str, str] = {}
    for item in files:
        canonical.setdefault(item.key, item.doc_id)
    unique = [item for item in files if canonical[item.key] == item.doc_id]
    work = collection / WORK_DIR
    work.mkdir(parents=True, exist_ok=True)
    for stale in work.glob(".*.tmp"):
        stale.unlink(missing_ok=True)
    chunks = PageChunks()
    results: dict[str, Stored] = {}
    read_previous_store(collection, ocr, chunks, results)
    read_shards(work, ocr, chunks, results)
    n_reused = sum(1 for item in unique if item.key in results)
    for item in unique:
        if not item.sha256:
            results[item.key] = Stored("unreadable", "cannot read file", 0)
    todo = [item for item in unique if item.key not in results]
    writer = ShardWriter(work, ocr, chunks, results, FLUSH_PAGES, FLUSH_SECONDS)
    extracted_pages = 0
    documents = stage_advance(progress, "documents", len(todo))
    pages = stage_advance(progress, "pages")

    def on_result(sha: str, doc: DocText) -> None:
        nonlocal extracted_pages
        writer.add(sha, doc)
        stored = doc.n_pages if doc.status == "ok" else 0
        extracted_pages += stored
        pages(stored)
        documents(1)

    _run_extraction(todo, ocr, engine, on_result)
    writer.flush()
    n_pages, n_docs, n_chars, n_ocr, failures = _write_store(
        pdf_dir, collection, files, canonical, results, chunks, ocr
    )
    shutil.rmtree(work, ignore_errors=True)
    duplicates = [(item.doc_id, canonical[item.key]) for item in files if canonical[item.key] != item.doc_id]
    return IngestSummary(
        collection=collection,
        n_files=len(files),
        n_docs=n_docs,
        n_pages=n_pages,
        n_chars=n_chars,
        n_ocr_pages=n_ocr,
        n_extracted=len(todo),
        n_reused=n_reused,
        extracted_pages=extracted_pages,
        seconds=time.perf_counter() - started,
        duplicates=duplicates,
        failures=failures,
    )


def _write_store(  # noqa: ANN001 - results: dict[str, Stored], chunks: PageChunks
    pdf_dir: str | os.PathLike[str],
    collection: Path,
    files: list[SourceFile],
    canonical: dict[str, str],
    results,
    chunks,
    ocr: str,
) -> tuple[int, int, int, int, dict[str, int]]:
    """Write ``pages.parquet``, ``docs.parquet`` and ``collection.json`` from the extraction results;
    return ``(pages, documents, characters, OCR pages, failures by status)``."""
    doc_rows, with_pages = _rows(files, canonical, results)
    docs_table, pages_table = build_tables(doc_rows, with_pages, chunks)
    write_table_atomic(collection / PAGES_FILE, pages_table)
    write_table_atomic(collection / DOCS_FILE, docs_table)
    statuses = docs_table.column("status").to_pylist()
    n_docs = statuses.count("ok")
    failures = dict(sorted(Counter(s for s in statuses if s not in ("ok", "duplicate")).items()))
    n_chars = int(pc.sum(pages_table.column("n_chars")).as_py() or 0)
    n_ocr = int(pc.sum(pc.equal(pages_table.column("method"), "ocr")).as_py() or 0)
    write_json(
        collection / META_FILE,
        {
            "format": FORMAT_VERSION,
            "ocr": ocr,
            "normalization": NORMALIZATION_VERSION,
            "pdf_dir": str(Path(pdf_dir).resolve()),
            "n_files": len(files),
            "n_docs": n_docs,
            "n_pages": pages_table.num_rows,
            "n_chars": n_chars,
            "failures": failures,
            "pages": pages_record(collection),
        },
    )
    return pages_table.num_rows, n_docs, n_chars, n_ocr, failures
