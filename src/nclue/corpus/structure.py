"""Document structure: outlines, headings and page roles, stored as ``COLLECTION/structure.parquet``.

``nclue structure COLLECTION`` reads each document's PDF (``collection.json``'s ``pdf_dir`` +
``docs.parquet``'s ``path``, checked against the recorded SHA-256) and its page text from the page
store, and writes one row per structural element (``docs/formats.md#structureparquet``):

* **outline** — a PDF bookmark (``PdfDocument.get_toc``): ``level`` is its depth (1 = top),
  ``page`` its destination; bookmarks without a destination page are dropped.
* **numbered** — a text-layer line that starts with a section number and is followed by a
  capitalised title of at most 10 words, with a word of ≥ 3 letters and no arithmetic sign (``2.3 Making the manuals``, ``A.1 Fonts``,
  ``Chapter 4 Footnotes``, ``Appendix B Licence``): ``level`` = depth of the number
  (``2.3`` → 2, ``Chapter 4`` → 1).
* **font** — a short line (1–8 words, ≤ 80 characters, no sentence-final ``.``, ``,``, ``;``)
  set larger than the document's body text (size ≥ :data:`FONT_RATIO` × the median size of its
  long lines) or bold (PDFium font weight ≥ :data:`BOLD_WEIGHT`) while the body is not:
  ``level`` 1 for ≥ 1.5 × body, 2 for ≥ 1.25 ×, else 3. Sizes and weights come from PDFium's
  per-character API (``FPDFText_GetFontSize``, ``FPDFText_GetFontWeight``) at the line's first
  and middle characters.
* **titlecase** — a short Title-Case line (1–6 words, every word capitalised except short
  function words) with no font evidence (its page was not read, or its font equals the body's):
  ``level`` 0. Weaker than ``font``; consumers choose.
* **toc** / **index** — a page *role*, not a heading (``title`` empty, ``level`` 0): a page that starts
  with *Contents* and holds ≥ 3 reference lines (dot leaders or a trailing page number) or whose
  non-running lines are mostly (≥ half, ≥ :data:`~nclue.corpus.lines.TOC_MIN_LINES`) reference lines is **toc** —
  unless it has index features: it starts with *Index* and holds ≥ 3 entries (``word, 12, 40``),
  or has ≥ 2 single-letter group lines (``D``, ``E``) or ≥ 20% of its references list several
  pages (``5, 7, 9,``): then it is **index**. Headings on these pages are not emitted (they only point at sections).

Lines that recur at the top or bottom of at least :data:`~nclue.corpus.lines.RUNNING_MIN_PAGES` pages of the document
(digits ignored: page numbers, running chapter titles) are running headers/footers and are never
headings. Every line rule is :mod:`nclue.corpus.lines`'s, shared with benchmark construction. Font reading is the costly step (each page is loaded again by PDFium, about the cost of
ingesting it): ``fonts="auto"`` reads it only in documents whose structure is *sparse* (fewer
outline entries plus numbered headings than :data:`SPARSE_SHARE` × pages — there the text layer
alone cannot tell headings apart), on the pages that hold an unnumbered Title-Case candidate
(then every short line of those pages is checked); ``"all"`` reads every page; ``"off"`` none. Documents whose PDF is missing or changed get text-layer rows only (counted in the
metadata as ``pdf_missing``).

The file carries its parameters, counts and the ``pages.parquet`` fingerprint
(:func:`nclue.corpus.store.pages_fingerprint`) in its Parquet metadata: :func:`open_structure`
refuses a file built for other pages (stale) or damaged, naming the fix. Extraction is resumable
(finished batches of documents are kept in ``structure.parts/`` until the final atomic write; a
finished file with the same pages fingerprint and parameters is kept as it is) and deterministic (rows sorted by ``doc_id``, ``page``, ``line``, ``origin``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from nclue.corpus.lines import (
    RUNNING_MIN_PAGES,
    is_reference_line,
    is_running,
    numbered_heading,
    page_role,
    running_keys,
    short_line,
    titlecase_line,
)
from nclue.corpus.store import PageStore, collection_record, pages_fingerprint, write_table_atomic
from nclue.errors import NclueError
from nclue.io import exclusive_lock, sha256_file, writable_dir
from nclue.progress import Advance

STRUCTURE_FILE = "structure.parquet"
PARTS_DIR = "structure.parts"
FORMAT_VERSION = 1
META_KEY = b"nclue.structure"
ORIGINS: tuple[str, ...] = ("outline", "numbered", "font", "titlecase", "toc", "index")
HEADING_ORIGINS: tuple[str, ...] = ("outline", "numbered", "font", "titlecase")
FONT_MODES: tuple[str, ...] = ("auto", "all", "off")
FONT_RATIO = 1.15
BOLD_WEIGHT = 600
BATCH_DOCS = 32
SPARSE_SHARE = 0.5

SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("page", pa.int32()),
        ("line", pa.int32()),
        ("level", pa.int8()),
        ("title", pa.string()),
        ("origin", pa.string()),
        ("size_ratio", pa.float32()),
        ("weight", pa.int16()),
    ]
)

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class StructureParams:
    """Extraction parameters (recorded in the file's metadata)."""

    fonts: str = "auto"
    font_ratio: float = FONT_RATIO
    bold_weight: int = BOLD_WEIGHT
    running_min_pages: int = RUNNING_MIN_PAGES


@dataclass
class _Line:
    page: int  # index within the document
    line: int
    text: str
    kind: str  # numbered | short
    level: int = 0
    title: str = ""


def text_candidates(texts: Sequence[str], params: StructureParams) -> tuple[list[_Line], dict[int, str]]:
    """Heading candidates from one document's page texts, and its page roles (``toc``/``index``)."""
    pages = [[ln for ln in (t or "").splitlines() if ln.strip()] for t in texts]
    running = running_keys(pages, params.running_min_pages)
    roles: dict[int, str] = {}
    found: list[_Line] = []
    for p, lines in enumerate(pages):
        role = page_role(lines, running)
        if role is not None:
            roles[p] = role
            continue
        n = len(lines)
        for i, line in enumerate(lines):
            if len(line) > 90 or is_running(i, n, line, running) or is_reference_line(line):
                continue
            numbered = numbered_heading(line)
            if numbered is not None:
                found.append(_Line(p, i, line, "numbered", numbered[1], _clean(numbered[0])))
            elif short_line(line):
                found.append(_Line(p, i, line, "short", 0, _clean(line)))
    return found, roles


def _clean(title: str) -> str:
    return _SPACES.sub(" ", title.replace("\ufffe", "").replace("\u00ad", "")).strip()


def _line_offsets(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the non-blank lines of ``text`` (as :func:`str.splitlines`)."""
    out = []
    pos = 0
    for piece in text.splitlines(keepends=True):
        body = piece.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
        if body.strip():
            out.append((pos, pos + len(body)))
        pos += len(piece)
    return out


def _font_at(raw: Any, textpage: Any, text_index: int) -> tuple[float, int]:
    char = raw.FPDFText_GetCharIndexFromTextIndex(textpage, text_index)
    if char < 0:
        return 0.0, -1
    return float(raw.FPDFText_GetFontSize(textpage, char)), int(raw.FPDFText_GetFontWeight(textpage, char))


def _read_fonts(
    pdf: Any, page_index: int, text: str, wanted: set[int]
) -> tuple[dict[int, tuple[float, int]], list[float], list[int]]:
    """Font size/weight of the wanted lines (by non-blank line index) of one page, plus body samples."""
    import pypdfium2.raw as raw

    page = pdf[page_index]
    textpage = page.get_textpage()
    try:
        offsets = _line_offsets(text)
        found: dict[int, tuple[float, int]] = {}
        body_sizes: list[float] = []
        body_weights: list[int] = []
        for i, (start, end) in enumerate(offsets):
            first = start + (len(text[start:end]) - len(text[start:end].lstrip()))
            mid = (first + end) // 2
            if i in wanted:
                s1, w1 = _font_at(raw, textpage, first)
                s2, w2 = _font_at(raw, textpage, mid)
                found[i] = (min(s1, s2), min(w1, w2))
            elif end - start >= 60:
                size, weight = _font_at(raw, textpage, mid)
                if size > 0:
                    body_sizes.append(size)
                    body_weights.append(weight)
        return found, body_sizes, body_weights
    finally:
        textpage.close()
        page.close()


def outline_rows(pdf: Any, doc_id: str, n_pages: int) -> list[dict[str, Any]]:
    """One row per PDF bookmark that points at a page of the document."""
    rows = []
    for item in pdf.get_toc():
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        if index is None or not 0 <= index < n_pages:
            continue
        title = _clean(item.get_title() or "")
        if title:
            rows.append(_row(doc_id, index + 1, -1, item.level + 1, title, "outline"))
    return rows


def _row(
    doc_id: str, page: int, line: int, level: int, title: str, origin: str, size: float = float("nan"), weight: int = -1
) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "page": int(page),
        "line": int(line),
        "level": int(min(level, 127)),
        "title": title,
        "origin": origin,
        "size_ratio": float(size),
        "weight": int(weight),
    }


def extract_document(
    doc_id: str, texts: Sequence[str], page_numbers: Sequence[int], pdf_path: Path | None, params: StructureParams
) -> list[dict[str, Any]]:
    """Every structure row of one document (a pure function: texts and an optional PDF in, rows out)."""
    candidates, roles = text_candidates(texts, params)
    rows: list[dict[str, Any]] = [_row(doc_id, page_numbers[p], -1, 0, "", role) for p, role in sorted(roles.items())]
    outline: list[dict[str, Any]] = []
    pdf = None
    if pdf_path is not None:
        import pypdfium2 as pdfium

        try:
            pdf = pdfium.PdfDocument(os.fspath(pdf_path))
        except pdfium.PdfiumError:
            pdf = None
    try:
        if pdf is not None:
            n_doc_pages = len(pdf)
            keep = set(page_numbers)
            outline = [
                r for r in outline_rows(pdf, doc_id, n_doc_pages) if r["page"] in keep and r["page"] - 1 not in roles
            ]
            rows += outline
        fonts: dict[tuple[int, int], tuple[float, int]] = {}
        sizes: list[float] = []
        weights: list[int] = []
        if pdf is not None and params.fonts != "off":
            by_page: dict[int, set[int]] = {}
            sparse = sum(1 for c in candidates if c.kind == "numbered") + len(outline) < SPARSE_SHARE * len(texts)
            for c in candidates:
                if params.fonts == "all" or (sparse and c.kind == "short" and titlecase_line(c.text)):
                    by_page.setdefault(c.page, set())
            for c in candidates:
                if c.page in by_page:
                    by_page[c.page].add(c.line)
            if params.fonts == "all":
                for p in range(len(texts)):
                    by_page.setdefault(p, set())
            for p in sorted(by_page):
                number = page_numbers[p]
                if number - 1 >= len(pdf):
                    continue
                found, s, w = _read_fonts(pdf, number - 1, texts[p] or "", by_page[p])
                fonts.update({(p, i): v for i, v in found.items()})
                sizes += s
                weights += w
        body_size = statistics.median(sizes) if sizes else 0.0
        body_bold = bool(weights) and statistics.median(weights) >= params.bold_weight
        for c in candidates:
            size, weight = fonts.get((c.page, c.line), (0.0, -1))
            ratio = size / body_size if body_size > 0 and size > 0 else float("nan")
            page = page_numbers[c.page]
            if c.kind == "numbered":
                rows.append(_row(doc_id, page, c.line, c.level, c.title, "numbered", ratio, weight))
                continue
            bigger = ratio == ratio and ratio >= params.font_ratio
            bolder = weight >= params.bold_weight and not body_bold
            if bigger or bolder:
                level = 1 if ratio >= 1.5 else 2 if ratio >= 1.25 else 3
                rows.append(_row(doc_id, page, c.line, level, c.title, "font", ratio, weight))
            elif titlecase_line(c.text) and not (ratio == ratio and ratio < 0.95):
                rows.append(_row(doc_id, page, c.line, 0, c.title, "titlecase", ratio, weight))
    finally:
        if pdf is not None:
            pdf.close()
    return rows


def _sort_key(row: dict[str, Any]) -> tuple:
    return row["doc_id"], row["page"], row["line"], ORIGINS.index(row["origin"]), row["title"]


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(sorted(rows, key=_sort_key), schema=SCHEMA)


def _pdf_dir(collection: Path) -> Path | None:
    value = collection_record(collection).get("pdf_dir")
    return Path(value) if isinstance(value, str) else None


@dataclass
class StructureSummary:
    """What :func:`build_structure` wrote."""

    path: Path
    rows: int
    documents: int
    pdf_missing: int
    counts: dict[str, int]
    resumed_batches: int
    reused: bool = False


def build_structure(
    collection: str | os.PathLike[str],
    params: StructureParams = StructureParams(),
    pdf_dir: str | os.PathLike[str] | None = None,
    rebuild: bool = False,
    tick: Advance = lambda n: None,
    batch_docs: int = BATCH_DOCS,
) -> StructureSummary:
    """Extract the structure of every document of ``collection`` into ``structure.parquet`` (resumable).

    ``pdf_dir`` overrides ``collection.json``'s; ``rebuild`` discards finished batches. ``tick``
    is called with the number of documents done.
    """
    if params.fonts not in FONT_MODES:
        raise NclueError(f"unknown font mode {params.fonts!r}; choose one of {', '.join(FONT_MODES)}")
    base = Path(collection)
    store = PageStore.open(base)
    writable_dir(base, "collection")
    with exclusive_lock(base, "collection"):
        return _build(base, store, params, pdf_dir, rebuild, tick, batch_docs)


def _build(
    base: Path,
    store: PageStore,
    params: StructureParams,
    pdf_dir: str | os.PathLike[str] | None,
    rebuild: bool,
    tick: Advance,
    batch_docs: int,
) -> StructureSummary:
    fingerprint = pages_fingerprint(base)
    root = Path(pdf_dir) if pdf_dir is not None else _pdf_dir(base)
    parts = base / PARTS_DIR
    stamp = {"pages_sha256": fingerprint, "params": asdict(params), "format_version": FORMAT_VERSION}
    stamp_file = parts / "stamp.json"
    done = _existing(base / STRUCTURE_FILE)
    if not rebuild and done is not None and {k: done.get(k) for k in stamp} == stamp:
        counts = done.get("counts", {})
        return StructureSummary(
            base / STRUCTURE_FILE,
            int(done.get("rows", 0)),
            len(store.doc_ids),
            int(done.get("pdf_missing", 0)),
            counts,
            0,
            reused=True,
        )
    if parts.is_dir() and (rebuild or _stamp(stamp_file) != stamp):
        shutil.rmtree(parts)
    parts.mkdir(exist_ok=True)
    if not stamp_file.is_file():
        stamp_file.write_text(json.dumps(stamp, sort_keys=True), encoding="utf-8")
    docs = {r["doc_id"]: r for r in store.docs.to_pylist()}
    ids = store.doc_ids.tolist()
    offsets = store.doc_offsets
    texts = store.texts
    numbers = store.page_number.tolist()
    resumed = 0
    missing = 0
    for b, start in enumerate(range(0, len(ids), batch_docs)):
        part = parts / f"part-{b:05d}.parquet"
        batch = ids[start : start + batch_docs]
        if part.is_file():
            meta = pq.read_schema(part).metadata or {}
            if json.loads(meta.get(b"docs", b"[]")) == batch:
                resumed += 1
                missing += int(meta.get(b"pdf_missing", b"0"))
                tick(len(batch))
                continue
        rows: list[dict[str, Any]] = []
        batch_missing = 0
        for doc_id in batch:
            i = store.doc_index[doc_id]
            lo, hi = int(offsets[i]), int(offsets[i + 1])
            path = _pdf_path(root, docs.get(doc_id))
            batch_missing += path is None
            rows += extract_document(doc_id, texts[lo:hi], numbers[lo:hi], path, params)
            tick(1)
        table = _table(rows).replace_schema_metadata(
            {b"docs": json.dumps(batch).encode(), b"pdf_missing": str(batch_missing).encode()}
        )
        write_table_atomic(part, table)
        missing += batch_missing
    pieces = [pq.read_table(parts / f"part-{b:05d}.parquet") for b in range((len(ids) + batch_docs - 1) // batch_docs)]
    table = pa.concat_tables([p.replace_schema_metadata(None) for p in pieces]) if pieces else _table([])
    counts = {o: 0 for o in ORIGINS}
    counts.update(Counter(table.column("origin").to_pylist()))
    meta = {
        **stamp,
        "documents": len(ids),
        "pdf_dir": str(root) if root is not None else None,
        "pdf_missing": missing,
        "rows": table.num_rows,
        "counts": counts,
    }
    table = table.replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True).encode("utf-8")})
    path = base / STRUCTURE_FILE
    write_table_atomic(path, table)
    shutil.rmtree(parts, ignore_errors=True)
    return StructureSummary(path, table.num_rows, len(ids), missing, counts, resumed)


def _stamp(path: Path) -> dict | None:
    """The parts folder's recorded stamp; ``None`` when it is missing or damaged (the parts are then
    rebuilt: a killed run may have left the file half written)."""
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return stamp if isinstance(stamp, dict) else None


def _existing(path: Path) -> dict[str, Any] | None:
    """The metadata of a finished structure file, or ``None`` (absent or unreadable: extract again)."""
    if not path.is_file():
        return None
    try:
        raw = (pq.read_schema(path).metadata or {}).get(META_KEY)
        return json.loads(raw) if raw else None
    except (OSError, ValueError, pa.ArrowException):
        return None


def _pdf_path(root: Path | None, doc: dict[str, Any] | None) -> Path | None:
    """The document's PDF when it exists and still has the ingested SHA-256."""
    if root is None or doc is None or not doc.get("path"):
        return None
    path = root / doc["path"]
    if not path.is_file():
        return None
    try:
        if path.stat().st_size != doc.get("n_bytes") or sha256_file(path) != doc.get("sha256"):
            return None
    except OSError:
        return None
    return path


@dataclass
class Structure:
    """``structure.parquet`` of one collection, checked against its pages, as arrays aligned with the page store.

    ``head_row`` is the page row (``PageStore`` order) of every heading (origins
    :data:`HEADING_ORIGINS`), ``titles``/``origins``/``levels`` its fields, ``role`` the page role
    of every page row (``""``, ``toc`` or ``index``).
    """

    path: Path
    table: pa.Table
    meta: dict[str, Any]
    store: PageStore

    @cached_property
    def _rows(self) -> np.ndarray:
        """Page row of every structure row (−1 when its document or page is not in the store).

        Page rows are sorted by (document index, page number), so the key ``doc · B + page`` is
        sorted over the page rows and one ``searchsorted`` finds every structure row at once."""
        encoded = self.table.column("doc_id").combine_chunks().dictionary_encode()
        known = np.array([self.store.doc_index.get(d, -1) for d in encoded.dictionary.to_pylist()], dtype=np.int64)
        doc = known[_integers(encoded.indices)] if len(known) else np.zeros(0, np.int64)
        pages = _integers(self.table.column("page").combine_chunks())
        number = np.asarray(self.store.page_number, dtype=np.int64)
        base = int(max(number.max(initial=0), pages.max(initial=0))) + 1
        page_doc = np.repeat(np.arange(len(self.store.doc_offsets) - 1), np.diff(self.store.doc_offsets))
        keys = page_doc * base + number
        wanted = np.maximum(doc, 0) * base + pages
        at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        hit = (doc >= 0) & (len(keys) > 0) & (keys[at] == wanted) if len(keys) else np.zeros(len(doc), dtype=bool)
        return np.where(hit, at, -1).astype(np.int64)

    @cached_property
    def _heading_mask(self) -> np.ndarray:
        origin = np.array(self.table.column("origin").to_pylist(), dtype=object)
        return np.isin(origin, HEADING_ORIGINS) & (self._rows >= 0)

    @cached_property
    def head_row(self) -> np.ndarray:
        """Page row of every heading."""
        return self._rows[self._heading_mask]

    @cached_property
    def titles(self) -> list[str]:
        """Title of every heading."""
        col = self.table.column("title").to_pylist()
        return [t for t, keep in zip(col, self._heading_mask.tolist()) if keep]

    @cached_property
    def origins(self) -> np.ndarray:
        """Origin of every heading (object array)."""
        return np.array(self.table.column("origin").to_pylist(), dtype=object)[self._heading_mask]

    @cached_property
    def levels(self) -> np.ndarray:
        """Level of every heading (int8)."""
        return np.array(self.table.column("level").to_pylist(), dtype=np.int8)[self._heading_mask]

    @cached_property
    def role(self) -> np.ndarray:
        """Page role of every page row: ``""``, ``toc`` or ``index`` (object array)."""
        out = np.full(self.store.n_pages, "", dtype=object)
        origin = np.array(self.table.column("origin").to_pylist(), dtype=object)
        mark = np.isin(origin, ("toc", "index")) & (self._rows >= 0)
        out[self._rows[mark]] = origin[mark]
        return out


def _integers(array: pa.Array) -> np.ndarray:
    """An integer Arrow array without nulls as int64, read from its buffer (``to_numpy`` would
    import pandas: 0.2 s of a cold start)."""
    if array.null_count:
        raise NclueError("structure.parquet: unexpected null in an integer column; rebuild it with `nclue structure`")
    width = array.type.bit_width // 8
    data = np.frombuffer(array.buffers()[1], dtype=f"<i{width}", count=len(array), offset=array.offset * width)
    return data.astype(np.int64)


def structure_exists(collection: str | os.PathLike[str]) -> bool:
    """Whether ``collection`` has a ``structure.parquet``."""
    return (Path(collection) / STRUCTURE_FILE).is_file()


def open_structure(collection: str | os.PathLike[str], store: PageStore | None = None) -> Structure:
    """Read ``structure.parquet``; refuse a missing, damaged or stale file with one line naming the fix."""
    base = Path(collection)
    path = base / STRUCTURE_FILE
    fix = f"rebuild it with `nclue structure {base} --rebuild`"
    if not path.is_file():
        raise NclueError(f"{base}: no document structure ({STRUCTURE_FILE}); build it with `nclue structure {base}`")
    try:
        table = pq.ParquetFile(path).read()  # not read_table: it imports pyarrow.dataset (0.3 s)
        raw_meta = (table.schema.metadata or {}).get(META_KEY)
        meta = json.loads(raw_meta) if raw_meta else None
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise NclueError(f"{path}: damaged or not a Parquet file ({type(exc).__name__}); {fix}") from None
    if not isinstance(meta, dict) or any(name not in table.column_names for name in SCHEMA.names):
        raise NclueError(f"{path}: not an nclue structure file (no metadata or missing columns); {fix}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise NclueError(f"{path}: format version {meta.get('format_version')}, expected {FORMAT_VERSION}; {fix}")
    if meta.get("pages_sha256") != pages_fingerprint(base):
        raise NclueError(f"{path}: stale — built for another pages.parquet (the collection was re-ingested); {fix}")
    return Structure(path, table, meta, store if store is not None else PageStore.open(base))
