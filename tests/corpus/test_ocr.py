"""OCR fallback on a real page turned image-only, and the tesseract-missing message."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

import nclue.corpus.ocr as ocr
from nclue.corpus.ingest import ingest
from nclue.corpus.normalize import normalize_document
from nclue.corpus.store import PageStore
from nclue.errors import NclueError

from .conftest import FUNCTAN, bare_pages


def words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)}


def image_only_pdf(source: Path, index: int, dpi: int = 200) -> bytes:
    """Page ``index`` of ``source`` rendered to a bitmap and placed alone on a new page."""
    import pypdfium2 as pdfium

    src = pdfium.PdfDocument(str(source))
    page = src[index]
    width, height = page.get_size()
    image = page.render(scale=dpi / 72, grayscale=True).to_pil()
    out = pdfium.PdfDocument.new()
    new_page = out.new_page(width, height)
    obj = pdfium.PdfImage.new(out)
    obj.set_bitmap(pdfium.PdfBitmap.from_pil(image))
    obj.set_matrix(pdfium.PdfMatrix().scale(width, height))
    new_page.insert_obj(obj)
    new_page.gen_content()
    buffer = io.BytesIO()
    out.save(buffer)
    return buffer.getvalue()


def one_page_pdf(source: Path, index: int) -> bytes:
    """Page ``index`` of ``source`` copied with its text layer into a one-page PDF."""
    import pypdfium2 as pdfium

    out = pdfium.PdfDocument.new()
    out.import_pages(pdfium.PdfDocument(str(source)), [index])
    buffer = io.BytesIO()
    out.save(buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def scanned_dir(debian_pdf_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scanned")
    (root / "scan.pdf").write_bytes(image_only_pdf(debian_pdf_dir / FUNCTAN, 1))
    (root / "text.pdf").write_bytes(one_page_pdf(debian_pdf_dir / FUNCTAN, 1))
    return root


@pytest.mark.slow
def test_image_only_page_is_ocred_in_auto_mode(scanned_dir: Path, debian_pdf_dir: Path, tmp_path: Path) -> None:
    original = bare_pages(debian_pdf_dir / FUNCTAN)[1]
    assert bare_pages(scanned_dir / "scan.pdf") == [""]
    summary = ingest(scanned_dir, tmp_path / "auto", ocr="auto")
    assert summary.n_ocr_pages == 1
    rows = {r["doc_id"]: r for r in PageStore.open(tmp_path / "auto").pages.to_pylist()}
    assert rows["scan"]["method"] == "ocr" and rows["text"]["method"] == "text"
    assert rows["text"]["text"] == normalize_document([original])[0]  # ingest normalises every page
    expected = words(original)
    assert len(expected & words(rows["scan"]["text"])) >= 0.85 * len(expected)


def test_ocr_off_leaves_image_pages_empty(scanned_dir: Path, tmp_path: Path) -> None:
    ingest(scanned_dir, tmp_path / "off", ocr="off")
    rows = {r["doc_id"]: r for r in PageStore.open(tmp_path / "off").pages.to_pylist()}
    assert rows["scan"]["method"] == "none" and rows["scan"]["text"] == "" and rows["scan"]["n_chars"] == 0


@pytest.mark.slow
def test_force_ocrs_text_pages_too(scanned_dir: Path, tmp_path: Path) -> None:
    ingest(scanned_dir, tmp_path / "force", ocr="force")
    rows = {r["doc_id"]: r for r in PageStore.open(tmp_path / "force").pages.to_pylist()}
    assert rows["text"]["method"] == "ocr" and rows["scan"]["method"] == "ocr"


def test_missing_tesseract_is_a_clear_error(scanned_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr.shutil, "which", lambda name: None)
    with pytest.raises(NclueError, match="apt-get install -y tesseract-ocr") as error:
        ingest(scanned_dir, tmp_path / "c", ocr="auto")
    assert error.value.exit_code == 2
    assert ingest(scanned_dir, tmp_path / "c", ocr="off").n_docs == 2
