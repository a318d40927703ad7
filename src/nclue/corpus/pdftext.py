"""Per-page text of one PDF with pypdfium2, with failures classified instead of raised.

Page text is ``page.get_textpage().get_text_range()`` (PDFium's text layer, the same
string a bare pypdfium2 loop gets), then normalised per document by
:func:`nclue.corpus.normalize.normalize_document` (soft hyphens joined, ligature codes
resolved, ``\n`` line ends; ``normalize=False`` keeps PDFium's string). A page whose text layer is empty is OCR'd
(:mod:`nclue.corpus.ocr`) when ``ocr="auto"`` and the page draws at least one image (a
scanned or image-only page; blank and vector-only pages are left empty), and every page
is OCR'd when ``ocr="force"``. ``method`` records ``text``, ``ocr`` or ``none`` per page.

Failure reasons (``status``), checked in this order so each bad file gets one reason:
``unreadable`` (I/O error), ``not_pdf`` (no ``%PDF-`` in the first KiB), ``truncated``
(no ``%%EOF`` in the last KiB: the PDF trailer is missing; PDFium would silently rebuild
a partial document), ``encrypted`` (a password is required), ``empty`` (zero pages),
``corrupt`` (PDFium cannot parse the file or a page), ``ocr_failed`` (Tesseract failed on
a page that needed it). :mod:`nclue.corpus.ingest` adds ``duplicate`` and ``error`` (an
unexpected exception, recorded with its type and message).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

OcrMode = Literal["auto", "off", "force"]
OCR_MODES: tuple[str, ...] = ("auto", "off", "force")
PROBE = 1024
EMPTY_PAGE_TREE = re.compile(rb"/Count\s*0\b")
PAGE_LEAF = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
ENCRYPT = re.compile(rb"/Encrypt\s*(?:\d+\s+\d+\s+R|<<)")


@dataclass
class DocText:
    """Extraction result of one file: status, page count and, when ``ok``, per-page text."""

    status: str
    error: str | None = None
    n_pages: int = 0
    texts: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)

    @property
    def n_ocr(self) -> int:
        """Number of pages whose text came from OCR."""
        return sum(1 for m in self.methods if m == "ocr")


def _probe(path: str | os.PathLike[str]) -> DocText | None:
    """Cheap structural checks on the file's head and tail; ``None`` when they pass."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(PROBE)
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - PROBE))
            tail = handle.read(PROBE)
    except OSError as exc:
        return DocText(status="unreadable", error=f"cannot read file: {exc.strerror or exc}")
    if b"%PDF-" not in head:
        return DocText(status="not_pdf", error="no %PDF- header in the first 1024 bytes; not a PDF file")
    if b"%%EOF" not in tail:
        return DocText(status="truncated", error="no %%EOF marker in the last 1024 bytes; the file is cut short")
    return None


def _load_failure(path: str | os.PathLike[str], exc: Exception) -> DocText:
    """Name the reason PDFium refused a file that passed :func:`_probe`.

    PDFium's error code is not trusted on its own (``FPDF_GetLastError`` can be stale for
    documents it rejects without setting one, e.g. an empty page tree), so the reason is
    read from the file: an ``/Encrypt`` entry means a password is required; a page tree
    with ``/Count 0`` and no ``/Type /Page`` leaf means zero pages; anything else is corrupt.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc_io:
        return DocText(status="unreadable", error=f"cannot read file: {exc_io.strerror or exc_io}")
    if ENCRYPT.search(data):
        return DocText(status="encrypted", error="password-protected or unsupported encryption; decrypt it first")
    if EMPTY_PAGE_TREE.search(data) and not PAGE_LEAF.search(data):
        return DocText(status="empty", error="the page tree has zero pages")
    return DocText(status="corrupt", error=f"PDFium cannot parse the file ({exc})")


def _has_image(page: object) -> bool:
    import pypdfium2.raw as raw

    return any(True for _ in page.get_objects(filter=(raw.FPDF_PAGEOBJ_IMAGE,)))


def extract_pdf(path: str | os.PathLike[str], ocr: OcrMode = "auto", normalize: bool = True) -> DocText:
    """Extract every page's text of ``path`` (see the module docstring); never raises for bad PDFs."""
    import pypdfium2 as pdfium

    from nclue.corpus.normalize import normalize_document
    from nclue.corpus.ocr import ocr_page

    failure = _probe(path)
    if failure is not None:
        return failure
    try:
        pdf = pdfium.PdfDocument(os.fspath(path))
    except pdfium.PdfiumError as exc:
        return _load_failure(path, exc)
    try:
        n_pages = len(pdf)
        if n_pages == 0:
            return DocText(status="empty", error="the document has zero pages")
        texts: list[str] = []
        methods: list[str] = []
        for index in range(n_pages):
            try:
                page = pdf[index]
                textpage = page.get_textpage()
                text = textpage.get_text_range()
                textpage.close()
                method = "text" if text else "none"
                if ocr == "force" or (ocr == "auto" and not text and _has_image(page)):
                    try:
                        text, method = ocr_page(page), "ocr"
                    except (RuntimeError, OSError) as exc:
                        return DocText(status="ocr_failed", error=f"page {index + 1}: {exc}", n_pages=n_pages)
                page.close()
            except pdfium.PdfiumError as exc:
                return DocText(status="corrupt", error=f"page {index + 1}: {exc}", n_pages=n_pages)
            texts.append(text)
            methods.append(method)
        return DocText(
            status="ok", n_pages=n_pages, texts=normalize_document(texts) if normalize else texts, methods=methods
        )
    finally:
        pdf.close()
