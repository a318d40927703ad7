"""Document structure (``nclue structure``): hand-made lines, real PDFs, resume, staleness, damage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nclue.corpus.lines import is_reference_line, numbered_heading, page_role, running_keys, titlecase_line
from nclue.corpus.store import META_FILE, PAGES_FILE, pages_record, write_table_atomic
from nclue.corpus.structure import (
    STRUCTURE_FILE,
    StructureParams,
    build_structure,
    extract_document,
    open_structure,
)
from nclue.errors import NclueError
from nclue.io import write_json

FUNCTAN = "texlive-science-doc/texlive-doc/latex/functan/functan"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2.3 Making the manuals", ("Making the manuals", 2)),
        ("A.1 Fonts", ("Fonts", 2)),
        ("Chapter 4 Footnotes", ("Footnotes", 1)),
        ("1 Introduction", ("Introduction", 1)),
        ("1024 Bytes are reserved for the buffer", None),  # a quantity, not a chapter number
        ("3.1 This sentence ends with a period.", None),
        ("12 + 4 = 16", None),
    ],
)
def test_numbered_headings(line: str, expected: tuple[str, int] | None) -> None:
    assert numbered_heading(line) == expected


def test_reference_lines_and_title_case() -> None:
    assert is_reference_line("6 Numbering text lines and paragraphs 8")
    assert is_reference_line("Footnotes . . . . . . . . . . 12")
    assert is_reference_line("hyphenation, 12, 40")
    assert not is_reference_line("The package defines two commands.")
    assert titlecase_line("Known Issues")
    assert titlecase_line("Loading the Package")
    assert not titlecase_line("the package defines")
    assert not titlecase_line("A Very Long Heading With Far Too Many Words In It")


def test_running_lines_and_page_role() -> None:
    pages = [[f"Chapter 2: Installing R {n}", "Body text here", f"{n}"] for n in range(3, 8)]
    keys = running_keys(pages)
    assert "chapter : installing r" in keys
    toc = ["Contents", "1 Introduction . . . . . 3", "2 Usage . . . . . 5", "3 Options . . . . 9"]
    assert page_role(toc, set()) == "toc"
    index = ["Index", "apparatus, 3, 9", "footnotes, 12", "line numbers, 4, 7"]
    assert page_role(index, set()) == "index"
    assert page_role(["1 Introduction", "This package typesets verse."], set()) is None


def test_text_layer_rows_of_a_real_page_store(small_collection: Path) -> None:
    """functan's own numbered sections (read off its page text by hand), no PDF needed."""
    from nclue.corpus.store import PageStore

    store = PageStore.open(small_collection)
    i = store.doc_index[FUNCTAN]
    lo, hi = int(store.doc_offsets[i]), int(store.doc_offsets[i + 1])
    rows = extract_document(FUNCTAN, store.texts[lo:hi], store.page_number[lo:hi].tolist(), None, StructureParams())
    numbered = {(r["page"], r["title"], r["level"]) for r in rows if r["origin"] == "numbered"}
    assert {(1, "Introduction", 1), (2, "Loading the package", 1), (3, "Norms", 2), (7, "Examples", 1)} <= numbered
    roles = {(r["page"], r["origin"]) for r in rows if r["origin"] in ("toc", "index")}
    assert roles == {(15, "index"), (16, "index")}  # the docstrip index at the end


def test_outline_rows_match_pypdfium2_and_builds_are_deterministic(
    small_collection: Path, small_pdf_dir: Path, tmp_path: Path
) -> None:
    import pypdfium2 as pdfium

    coll = Path(shutil.copytree(small_collection, tmp_path / "coll"))
    summary = build_structure(coll, pdf_dir=small_pdf_dir)
    assert summary.pdf_missing == 0
    table = pq.read_table(coll / STRUCTURE_FILE).to_pylist()
    docs = pq.read_table(coll / "docs.parquet").to_pylist()
    for doc in docs:
        pdf = pdfium.PdfDocument(str(small_pdf_dir / doc["path"]))
        expected = sum(
            1
            for bm in pdf.get_toc()
            if bm.get_dest() is not None and bm.get_dest().get_index() is not None and bm.get_title().strip()
        )
        pdf.close()
        got = sum(1 for r in table if r["doc_id"] == doc["doc_id"] and r["origin"] == "outline")
        assert got <= expected
        if expected:
            assert got >= 0.8 * expected, doc["doc_id"]  # bookmarks on TOC/index pages are left out
    first = (coll / STRUCTURE_FILE).read_bytes()
    again = build_structure(coll, pdf_dir=small_pdf_dir, rebuild=True)
    assert (coll / STRUCTURE_FILE).read_bytes() == first and again.rows == summary.rows


def test_resume_after_a_killed_build(small_collection: Path, tmp_path: Path) -> None:
    coll = Path(shutil.copytree(small_collection, tmp_path / "coll"))
    reference = build_structure(coll, pdf_dir=tmp_path / "no-pdfs", batch_docs=4)
    expected = (coll / STRUCTURE_FILE).read_bytes()
    (coll / STRUCTURE_FILE).unlink()
    done = []

    def kill(n: int) -> None:
        done.append(n)
        if len(done) == 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_structure(coll, pdf_dir=tmp_path / "no-pdfs", batch_docs=4, tick=kill)
    assert not (coll / STRUCTURE_FILE).exists()
    resumed = build_structure(coll, pdf_dir=tmp_path / "no-pdfs", batch_docs=4)
    assert resumed.resumed_batches == 1 and resumed.rows == reference.rows
    assert (coll / STRUCTURE_FILE).read_bytes() == expected
    assert build_structure(coll, pdf_dir=tmp_path / "no-pdfs", batch_docs=4).reused


def test_stale_and_damaged_structure_is_refused(cli, small_collection: Path, tmp_path: Path) -> None:
    coll = Path(shutil.copytree(small_collection, tmp_path / "coll"))
    build_structure(coll, StructureParams(fonts="off"))
    assert open_structure(coll).role.shape == (444,)
    table = pq.read_table(coll / PAGES_FILE)
    rows = table.to_pylist()
    rows[0]["text"], rows[1]["text"] = rows[1]["text"], rows[0]["text"]
    write_table_atomic(coll / PAGES_FILE, table.from_pylist(rows, schema=table.schema))
    meta = json.loads((coll / META_FILE).read_text())
    write_json(coll / META_FILE, {**meta, "pages": pages_record(coll)})
    with pytest.raises(NclueError, match=r"stale .*nclue structure .* --rebuild"):
        open_structure(coll)
    (coll / STRUCTURE_FILE).write_bytes((coll / STRUCTURE_FILE).read_bytes()[:100])
    with pytest.raises(NclueError, match="damaged"):
        open_structure(coll)
    result = cli("structure", str(coll), "--fonts", "off", "--no-headings", "--rebuild")
    assert result.exit_code == 0, result.output
    assert open_structure(coll).meta["params"]["fonts"] == "off"


def test_cli_help_and_missing_collection(cli, tmp_path: Path) -> None:
    result = cli("structure", "--help")
    assert result.exit_code == 0 and "Example: nclue structure" in result.output
    missing = cli("structure", str(tmp_path / "nope"), "--no-headings")
    assert missing.exit_code == 2 and "nclue ingest" in missing.output


def test_cli_enums_match_the_library() -> None:
    from nclue.bench.construction_params import CONDITIONS
    from nclue.cli.bench import Conditions
    from nclue.cli.structure import Fonts
    from nclue.corpus.structure import FONT_MODES

    assert {m.value for m in Fonts} == set(FONT_MODES)
    assert {m.value for m in Conditions} == set(CONDITIONS)
