"""Ingest on real Debian PDFs: exact text, bad input, duplicates, determinism, resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nclue.corpus.ingest import WORK_DIR, ingest, make_doc_id, scan_pdf_dir
from nclue.corpus.store import DOCS_SCHEMA, PAGES_SCHEMA, PageStore
from nclue.errors import NclueError

from .conftest import stored_pages

STORE_FILES = ("docs.parquet", "pages.parquet", "collection.json")


def store_bytes(collection: Path) -> dict[str, bytes]:
    return {name: (collection / name).read_bytes() for name in STORE_FILES}


def test_small_collection_is_the_bare_pypdfium2_text_normalised(small_collection: Path, small_pdf_dir: Path) -> None:
    store = PageStore.open(small_collection)
    assert store.docs.schema.equals(DOCS_SCHEMA) and store.pages.schema.equals(PAGES_SCHEMA)
    docs = store.docs.to_pylist()
    assert len(docs) == 12 and all(d["status"] == "ok" and d["error"] is None for d in docs)
    assert store.n_pages == 444
    for doc in docs:
        reference = stored_pages(small_pdf_dir / doc["path"])
        i = store.doc_index[doc["doc_id"]]
        rows = slice(int(store.doc_offsets[i]), int(store.doc_offsets[i + 1]))
        assert doc["n_pages"] == len(reference)
        assert store.page_number[rows].tolist() == list(range(1, len(reference) + 1))
        assert store.texts[rows] == reference
        assert doc["doc_id"] == doc["path"][: -len(".pdf")]
        assert doc["source"] == doc["path"].split("/")[0]
    pages = store.pages.to_pylist()
    assert all(p["n_chars"] == len(p["text"]) for p in pages)
    assert {p["method"] for p in pages} == {"text"}
    keys = [(p["doc_id"], p["page"]) for p in pages]
    assert keys == sorted(keys)


def test_doc_ids_are_readable_and_unique(tmp_path: Path, small_pdf_dir: Path) -> None:
    assert make_doc_id("texlive-science-doc/texlive-doc/latex/functan/functan.pdf") == (
        "texlive-science-doc/texlive-doc/latex/functan/functan"
    )
    assert make_doc_id("a/b c(1).PDF") == "a/b_c_1_"
    (tmp_path / "x y.pdf").write_bytes(b"1")
    (tmp_path / "x_y.pdf").write_bytes(b"2")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "skip.pdf").write_bytes(b"3")
    ids = [f.doc_id for f in scan_pdf_dir(tmp_path)]
    assert ids == ["x_y", "x_y~2"]


def test_bad_inputs_are_recorded_and_the_run_goes_on(bad_pdf_dir: Path, tmp_path: Path) -> None:
    summary = ingest(bad_pdf_dir, tmp_path / "coll", workers=1, ocr="auto")
    assert summary.failures == {"corrupt": 1, "empty": 1, "encrypted": 1, "not_pdf": 1, "truncated": 1}
    assert summary.duplicates == [("good/functan_copy", "good/functan")]
    assert summary.n_files == 8 and summary.n_docs == 2
    store = PageStore.open(tmp_path / "coll")
    status = {d["doc_id"]: (d["status"], d["error"]) for d in store.docs.to_pylist()}
    assert status["bad/truncated"][0] == "truncated"
    assert status["bad/corrupt"][0] == "corrupt"
    assert status["bad/locked"][0] == "encrypted"
    assert status["bad/zero-pages"][0] == "empty"
    assert status["bad/notes"][0] == "not_pdf"
    assert status["good/functan_copy"] == ("duplicate", "same SHA-256 as good/functan")
    assert all(error for s, error in status.values() if s != "ok")
    assert set(store.doc_ids.tolist()) == {"good/algorithms", "good/functan"}
    assert store.texts[: int(store.doc_offsets[2])] == stored_pages(bad_pdf_dir / "good/algorithms.pdf") + stored_pages(
        bad_pdf_dir / "good/functan.pdf"
    )


def test_nothing_ingested_and_wrong_arguments_raise(tmp_path: Path, bad_pdf_dir: Path) -> None:
    with pytest.raises(NclueError) as missing:
        ingest(tmp_path / "nope", tmp_path / "c1")
    assert missing.value.exit_code == 2
    (tmp_path / "empty").mkdir()
    with pytest.raises(NclueError, match="no \\*.pdf files"):
        ingest(tmp_path / "empty", tmp_path / "c2")
    with pytest.raises(NclueError, match="--ocr"):
        ingest(bad_pdf_dir, tmp_path / "c3", ocr="sometimes")
    with pytest.raises(NclueError) as nothing:
        ingest(bad_pdf_dir / "bad", tmp_path / "c4", ocr="off")
    assert nothing.value.exit_code == 1
    assert "1 truncated" in str(nothing.value)
    assert len(pq.read_table(tmp_path / "c4" / "docs.parquet")) == 5


def test_rerun_reuses_everything_and_is_byte_identical(
    small_pdf_dir: Path, small_collection: Path, tmp_path: Path
) -> None:
    before = store_bytes(small_collection)
    summary = ingest(small_pdf_dir, small_collection, workers=1, ocr="auto")
    assert summary.n_extracted == 0 and summary.n_reused == 12
    assert store_bytes(small_collection) == before
    assert not (small_collection / WORK_DIR).exists()


def test_committed_fixture_collection_is_what_ingest_writes(small_collection: Path) -> None:
    from tests.fixtures.small_collection import FIXTURE_COLLECTION

    for name in ("docs.parquet", "pages.parquet"):
        assert (small_collection / name).read_bytes() == (FIXTURE_COLLECTION / name).read_bytes(), (
            f"tests/fixtures/collection/{name} is stale: run `python -m tests.fixtures.small_collection`"
        )


@pytest.mark.slow
def test_two_workers_write_the_same_bytes(small_pdf_dir: Path, small_collection: Path, tmp_path: Path) -> None:
    ingest(small_pdf_dir, tmp_path / "w2", workers=2, ocr="auto")
    assert store_bytes(tmp_path / "w2") == store_bytes(small_collection)


@pytest.mark.slow
def test_sigkill_then_rerun_gives_the_uninterrupted_store(
    small_pdf_dir: Path, small_collection: Path, tmp_path: Path
) -> None:
    collection = tmp_path / "killed"
    script = (
        "import sys, time, nclue.corpus.ingest as m\n"
        "m.FLUSH_PAGES = 1\n"
        "flush = m.ShardWriter.flush\n"
        "m.ShardWriter.flush = lambda self: (flush(self), time.sleep(0.2))\n"
        "m.ingest(sys.argv[1], sys.argv[2], workers=1, ocr='auto')\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(small_pdf_dir), str(collection)])
    work = collection / WORK_DIR
    deadline = time.monotonic() + 60
    while len(list(work.glob("shard-*.arrow"))) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "ingest finished before it could be killed"
    assert not (collection / "pages.parquet").exists()
    shards = len(list(work.glob("shard-*.arrow")))
    assert 4 <= shards < 12
    summary = ingest(small_pdf_dir, collection, workers=1, ocr="auto")
    assert summary.n_reused >= 4 and summary.n_extracted == 12 - summary.n_reused
    assert store_bytes(collection) == store_bytes(small_collection)


@pytest.mark.slow
def test_full_debian_corpus(debian_pdf_dir: Path, tmp_path: Path) -> None:
    summary = ingest(debian_pdf_dir, tmp_path / "full", workers=2, ocr="auto")
    assert summary.n_files == 487 and summary.n_docs == 479 and summary.n_pages == 14517
    assert summary.failures == {}
    assert len(summary.duplicates) == 8
    assert all(dup.startswith("r-doc-pdf/r-doc-pdf/manual/") for dup, _ in summary.duplicates)
    store = PageStore.open(tmp_path / "full")
    docs = store.docs.to_pylist()
    assert sum(d["n_pages"] for d in docs) == 17609
    assert summary.n_ocr_pages == store.pages.column("method").to_pylist().count("ocr")
    methods = store.pages.column("method").to_pylist()
    for doc in docs[::10]:
        if doc["status"] != "ok":
            continue
        i = store.doc_index[doc["doc_id"]]
        lo, hi = int(store.doc_offsets[i]), int(store.doc_offsets[i + 1])
        reference = stored_pages(debian_pdf_dir / doc["path"])
        assert hi - lo == doc["n_pages"] == len(reference)
        for text, method, expected in zip(store.texts[lo:hi], methods[lo:hi], reference, strict=True):
            assert text == expected if method != "ocr" else expected == ""


def test_unexpected_exception_is_recorded_not_raised(
    bad_pdf_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nclue.corpus.ingest as module

    real = module.extract_pdf

    def flaky(path: str, ocr: str = "auto"):
        if path.endswith("algorithms.pdf"):
            raise ValueError("boom")
        return real(path, ocr=ocr)

    monkeypatch.setattr(module, "extract_pdf", flaky)
    summary = ingest(bad_pdf_dir / "good", tmp_path / "c", ocr="off")
    assert summary.failures == {"error": 1} and summary.n_docs == 1
    rows = {d["doc_id"]: d for d in PageStore.open(tmp_path / "c").docs.to_pylist()}
    assert rows["algorithms"]["error"] == "ValueError: boom"


def test_progress_hears_the_documents_and_pages_left_to_extract(small_pdf_dir: Path, tmp_path: Path) -> None:
    events: list[tuple[str, int, int | None]] = []
    summary = ingest(
        small_pdf_dir / "r-doc-pdf", tmp_path / "c", ocr="off", progress=lambda *event: events.append(event)
    )
    assert events[0] == ("documents", 0, 3)
    assert sum(n for stage, n, _ in events if stage == "documents") == 3 == summary.n_extracted
    assert sum(n for stage, n, _ in events if stage == "pages") == 162 == summary.extracted_pages
    assert {stage for stage, _, _ in events} == {"documents", "pages"}
    assert all(total is None for _, _, total in events[1:])
    again: list[tuple[str, int, int | None]] = []
    ingest(small_pdf_dir / "r-doc-pdf", tmp_path / "c", ocr="off", progress=lambda *event: again.append(event))
    assert again == [("documents", 0, 0)]


def test_ingest_draws_nothing_unless_given_the_bars(
    bad_pdf_dir: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from nclue.progress import progress_bars

    ingest(bad_pdf_dir / "good", tmp_path / "c", ocr="off")
    assert capfd.readouterr().err == ""
    with progress_bars() as bar:
        ingest(bad_pdf_dir / "good", tmp_path / "d", ocr="off", progress=bar)
    err = capfd.readouterr().err
    assert "documents" in err and "2/2" in err and "pages" in err


def test_the_public_ingest_still_takes_a_bool(
    bad_pdf_dir: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import nclue

    with pytest.warns(DeprecationWarning, match=r"nclue.ingest\(progress=True\) is deprecated"):
        summary = nclue.ingest(bad_pdf_dir / "good", tmp_path / "c", ocr="off", progress=True)
    assert summary.n_docs == 2 and "2/2" in capfd.readouterr().err


def test_collection_inside_the_pdf_folder_is_not_scanned(bad_pdf_dir: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "pdfs"
    shutil.copytree(bad_pdf_dir / "good", root)
    (root / "coll").mkdir()
    (root / "coll" / "stray.pdf").write_bytes((root / "functan.pdf").read_bytes())
    summary = ingest(root, root / "coll", ocr="off")
    assert summary.n_files == 3 and summary.n_docs == 2


def test_added_and_removed_files_update_incrementally(bad_pdf_dir: Path, small_pdf_dir: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "pdfs"
    shutil.copytree(bad_pdf_dir / "good", root)
    first = ingest(root, tmp_path / "c", ocr="off")
    assert (first.n_extracted, first.n_docs) == (2, 2)
    shutil.copyfile(small_pdf_dir / "r-doc-pdf/R/doc/manual/R-data.pdf", root / "R-data.pdf")
    (root / "algorithms.pdf").unlink()
    second = ingest(root, tmp_path / "c", ocr="off")
    assert (second.n_extracted, second.n_reused, second.n_docs) == (1, 1, 2)
    assert PageStore.open(tmp_path / "c").doc_ids.tolist() == ["R-data", "functan"]


def test_torn_shards_and_other_ocr_modes_are_not_reused(bad_pdf_dir: Path, tmp_path: Path) -> None:
    collection = tmp_path / "c"
    (collection / WORK_DIR).mkdir(parents=True)
    (collection / WORK_DIR / "shard-000001.arrow").write_bytes(b"torn write")
    first = ingest(bad_pdf_dir / "good", collection, ocr="off")
    assert (first.n_extracted, first.n_reused) == (2, 0)
    again = ingest(bad_pdf_dir / "good", collection, ocr="auto")
    assert (again.n_extracted, again.n_reused) == (2, 0)
    assert ingest(bad_pdf_dir / "good", collection, ocr="auto").n_reused == 2
