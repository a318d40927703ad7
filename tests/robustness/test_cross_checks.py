"""Cross-checks between a collection's files: ``docs.parquet`` against ``pages.parquet``, and the
lexical index's ``nclue.json``. Each disagreement is one line naming the file, the document and the fix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from nclue.corpus.store import (
    DOCS_FILE,
    DOCS_SCHEMA,
    PAGES_FILE,
    cross_check,
    require_consistent,
    write_table_atomic,
)
from nclue.errors import NclueError
from nclue.index.lexical import INDEX_DIR
from tests.robustness.robust_helpers import assert_clean

FIRST = "r-doc-pdf/R/doc/manual/R-FAQ"  # 52 pages in the fixture collection
INGEST_FIX = "nclue ingest PDF_DIR"


def _edit_docs(collection: Path, edit) -> None:  # noqa: ANN001 - edit: list[dict] -> list[dict]
    """Rewrite ``docs.parquet`` with ``edit`` applied to its rows."""
    rows = edit(pq.read_table(collection / DOCS_FILE).to_pylist())
    write_table_atomic(collection / DOCS_FILE, pa.Table.from_pylist(rows, schema=DOCS_SCHEMA))


def _edit_pages(collection: Path, keep: pa.Array) -> None:
    """Rewrite ``pages.parquet`` keeping the rows where ``keep`` is true."""
    table = pq.read_table(collection / PAGES_FILE)
    write_table_atomic(collection / PAGES_FILE, table.filter(keep))


def _with_n_pages(rows: list[dict], doc_id: str, n_pages: int) -> list[dict]:
    return [{**r, "n_pages": n_pages} if r["doc_id"] == doc_id else r for r in rows]


def test_a_document_with_pages_but_no_docs_row_is_named(cli, indexed: Path) -> None:
    _edit_docs(indexed, lambda rows: rows[1:])
    assert_clean(cli("collection", "info", indexed), 2, str(indexed / PAGES_FILE), FIRST, "does not list", INGEST_FIX)


def test_a_page_count_that_differs_is_named(cli, indexed: Path) -> None:
    _edit_docs(indexed, lambda rows: _with_n_pages(rows, FIRST, 55))
    assert_clean(
        cli("collection", "info", indexed), 2, str(indexed / DOCS_FILE), FIRST, "n_pages 55", "holds 52", INGEST_FIX
    )


def test_a_listed_document_whose_pages_are_missing_is_named(cli, indexed: Path) -> None:
    table = pq.read_table(indexed / PAGES_FILE, columns=["doc_id"])
    _edit_pages(indexed, pc.not_equal(table.column("doc_id"), FIRST))
    out = assert_clean(cli("collection", "info", indexed), 2, FIRST, "n_pages 52", "holds 0", INGEST_FIX)
    assert "Traceback" not in out and "KeyError" not in out


def test_pages_of_a_failed_file_are_named(cli, indexed: Path) -> None:
    _edit_docs(indexed, lambda rows: [{**r, "status": "encrypted"} if r["doc_id"] == FIRST else r for r in rows])
    assert_clean(cli("collection", "info", indexed), 2, FIRST, "'encrypted'", "only 'ok' documents", INGEST_FIX)


def test_a_gap_in_a_documents_page_numbers_is_named(indexed: Path) -> None:
    table = pq.read_table(indexed / PAGES_FILE, columns=["doc_id", "page"])
    _edit_pages(indexed, pc.invert(pc.and_(pc.equal(table.column("doc_id"), FIRST), pc.equal(table.column("page"), 3))))
    _edit_docs(indexed, lambda rows: _with_n_pages(rows, FIRST, 51))
    found = cross_check(indexed)
    assert len(found) == 1 and "page 4 where page 3 belongs" in found[0] and FIRST in found[0], found


def test_every_disagreement_is_counted_in_the_one_line(indexed: Path) -> None:
    """What ``nclue build`` is to call after opening the store: one line, the first problem and how many more."""
    _edit_docs(indexed, lambda rows: [{**r, "n_pages": r["n_pages"] + 1} for r in rows])
    with pytest.raises(NclueError) as caught:
        require_consistent(indexed)
    message = str(caught.value)
    assert "\n" not in message and "(and 11 more)" in message and INGEST_FIX in message, message
    assert caught.value.exit_code == 2


def test_failed_files_and_duplicates_without_pages_are_not_refused(cli, indexed: Path) -> None:
    """Ingest writes no page rows for failed files (whatever page count PDFium read) or duplicates."""
    extra = [
        ("bad/unreadable", "unreadable", 0),
        ("bad/encrypted", "encrypted", 0),
        ("bad/corrupt", "corrupt", 7),
        ("bad/error", "error", 0),
        ("r-doc-pdf/R/doc/manual/R-FAQ~2", "duplicate", 52),
    ]
    template = pq.read_table(indexed / DOCS_FILE).to_pylist()[0]
    added = [{**template, "doc_id": d, "path": f"{d}.pdf", "status": s, "n_pages": n, "error": s} for d, s, n in extra]
    _edit_docs(indexed, lambda rows: sorted(rows + added, key=lambda r: r["doc_id"]))
    assert cross_check(indexed) == []
    assert_clean(cli("collection", "info", indexed, "--format", "json"), 0, '"unreadable":1', '"duplicates":1')
    assert_clean(cli("index", indexed, "--verify"), 0, "✓ lexical")


def test_verify_reports_the_two_tables_disagreeing(cli, indexed: Path) -> None:
    _edit_docs(indexed, lambda rows: _with_n_pages(rows, FIRST, 55))
    out = assert_clean(cli("index", indexed, "--verify"), 1, "✗ collection", FIRST, "n_pages 55", INGEST_FIX)
    assert "✓ lexical" in out


def test_verify_reports_a_missing_lexical_nclue_json(cli, indexed: Path) -> None:
    meta = indexed / INDEX_DIR / "nclue.json"
    meta.unlink()
    assert_clean(cli("index", indexed, "--verify"), 1, "✗ lexical", str(meta), "missing", "--lexical")


def test_an_ingest_killed_between_its_two_writes_is_refused_until_rerun(
    cli, debian_pdf_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed before its merge leaves the previous store whole (accepted); one killed between
    writing pages.parquet and docs.parquet is refused with the fix, and rerunning ingest repairs it."""
    import nclue.corpus.ingest as ingest_module
    from nclue.corpus.ingest import ingest

    pdfs, coll = tmp_path / "pdfs", tmp_path / "coll"
    names = ["functan/functan.pdf", "algorithms/algorithms.pdf"]
    for name in names:
        source = debian_pdf_dir / "texlive-science-doc/texlive-doc/latex" / name
        (pdfs / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, pdfs / name)
    shutil.move(pdfs / names[1], tmp_path / "later.pdf")
    ingest(pdfs, coll, ocr="off")
    shutil.move(tmp_path / "later.pdf", pdfs / names[1])

    def killed(*_: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(ingest_module, "build_tables", killed)  # killed after extracting, before the merge
        with pytest.raises(KeyboardInterrupt):
            ingest(pdfs, coll, ocr="off")
    assert (coll / ".ingest").is_dir()
    assert_clean(cli("collection", "info", coll), 0, "documents (ok)")

    write = ingest_module.write_table_atomic
    with monkeypatch.context() as patch:
        patch.setattr(
            ingest_module, "write_table_atomic", lambda p, t: write(p, t) if p.name == PAGES_FILE else killed()
        )
        with pytest.raises(KeyboardInterrupt):
            ingest(pdfs, coll, ocr="off")
    assert_clean(cli("collection", "info", coll), 2, "algorithms", "does not list", f"nclue ingest PDF_DIR {coll}")

    ingest(pdfs, coll, ocr="off")
    assert cross_check(coll) == []
    assert_clean(cli("collection", "info", coll), 0, "documents (ok)")
