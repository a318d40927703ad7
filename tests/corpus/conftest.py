"""Corpus-test helpers: bad PDFs made from real ones, and a bare pypdfium2 reference loop."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

FUNCTAN = "texlive-science-doc/texlive-doc/latex/functan/functan.pdf"
ALGORITHMS = "texlive-science-doc/texlive-doc/latex/algorithms/algorithms.pdf"
R_DATA = "r-doc-pdf/R/doc/manual/R-data.pdf"


def bare_pages(path: Path) -> list[str]:
    """The reference: ``get_text_range()`` of every page, as a bare pypdfium2 loop gets it."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def stored_pages(path: Path) -> list[str]:
    """What ``nclue ingest`` stores for a text-layer PDF: the bare loop's texts, normalised per document."""
    from nclue.corpus.normalize import normalize_document

    return normalize_document(bare_pages(path))


def encrypt_marker(data: bytes) -> bytes:
    """Append an incremental update that declares Standard-handler encryption (RC4, R2).

    The ``/O`` and ``/U`` entries are arbitrary, so the empty user password does not
    validate and a reader must ask for a password: a password-protected PDF as far as
    any reader can tell, made from a real one. Needs a classic ``xref`` table.
    """
    prev = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
    size = int(re.findall(rb"/Size\s+(\d+)", data)[-1])
    root = re.findall(rb"/Root\s+(\d+\s+\d+\s+R)", data)[-1]
    body = b"\n%d 0 obj\n<< /Filter /Standard /V 1 /R 2 /Length 40 /P -4 /O <%s> /U <%s> >>\nendobj\n" % (
        size,
        b"11" * 32,
        b"22" * 32,
    )
    xref_at = len(data) + len(body)
    xref = b"xref\n0 1\n0000000000 65535 f \n%d 1\n%010d 00000 n \n" % (size, len(data) + 1)
    trailer = b"trailer\n<< /Size %d /Root %s /Encrypt %d 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (
        size + 1,
        root,
        size,
        prev,
        xref_at,
    )
    return data + body + xref + trailer


def zero_page_pdf() -> bytes:
    """A well-formed PDF with an empty page tree, saved by PDFium itself."""
    import pypdfium2 as pdfium

    buffer = io.BytesIO()
    pdfium.PdfDocument.new().save(buffer)
    return buffer.getvalue()


def corrupt_pdf(data: bytes) -> bytes:
    """Keep the header and the trailer, replace everything between by junk."""
    return data[:16] + bytes((i * 131 + 7) % 256 for i in range(4096)) + b"\n%%EOF\n"


@pytest.fixture(scope="session")
def bad_pdf_dir(debian_pdf_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two good real PDFs, a duplicate, and one file for each failure reason."""
    root = tmp_path_factory.mktemp("bad-pdfs")
    good = root / "good"
    good.mkdir()
    shutil.copyfile(debian_pdf_dir / FUNCTAN, good / "functan.pdf")
    shutil.copyfile(debian_pdf_dir / ALGORITHMS, good / "algorithms.pdf")
    shutil.copyfile(debian_pdf_dir / FUNCTAN, good / "functan copy.pdf")
    real = (debian_pdf_dir / R_DATA).read_bytes()
    functan = (debian_pdf_dir / FUNCTAN).read_bytes()
    bad = root / "bad"
    bad.mkdir()
    (bad / "truncated.pdf").write_bytes(real[: len(real) // 2])
    (bad / "corrupt.pdf").write_bytes(corrupt_pdf(real))
    (bad / "locked.pdf").write_bytes(encrypt_marker(functan))
    (bad / "zero-pages.pdf").write_bytes(zero_page_pdf())
    (bad / "notes.pdf").write_text("These are plain-text notes saved with a .pdf name.\n")
    return root


@pytest.fixture(scope="session")
def small_collection(small_pdf_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Here the small collection is ingested from the real PDFs (byte comparisons need one PDF folder)."""
    from nclue.corpus.ingest import ingest

    collection = tmp_path_factory.mktemp("small-collection") / "collection"
    ingest(small_pdf_dir, collection, workers=1, ocr="auto")
    return collection
