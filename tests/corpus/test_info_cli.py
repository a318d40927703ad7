"""`nclue collection info`, and the three corpus commands end to end through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from nclue.corpus.info import collection_info, non_space_chars
from nclue.corpus.ingest import ingest


def nclue(*args: object) -> subprocess.CompletedProcess[str]:
    """Run the real console entry point (``nclue.cli:main``) in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-c", "from nclue.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_info_counts_and_gate(small_collection: Path) -> None:
    info = collection_info(small_collection)
    assert info["files"] == 12 and info["documents"] == 12 and info["pages"] == 444
    assert info["characters"] > 500_000 and info["methods"] == {"text": 444}
    assert info["failures"] == {} and info["duplicates"] == 0 and info["ocr"] == "auto"
    gate = info["gate"]
    assert gate["threshold"] == 0.98 and gate["passed"]
    assert [s["source"] for s in gate["sources"]] == ["r-doc-pdf", "texlive-humanities-doc", "texlive-science-doc"]
    assert sum(s["pages"] for s in gate["sources"]) == 444
    assert [s["documents"] for s in gate["sources"]] == [3, 3, 6]
    strict = collection_info(small_collection, min_chars=10**6)
    assert not strict["gate"]["passed"] and all(s["usable_share"] == 0 for s in strict["gate"]["sources"])


def test_non_space_chars() -> None:
    assert non_space_chars(["a b\n c", "", " \t"]).tolist() == [3, 0, 0]


def test_info_reports_failures_by_reason(bad_pdf_dir: Path, tmp_path: Path) -> None:
    ingest(bad_pdf_dir, tmp_path / "coll", ocr="off")
    info = collection_info(tmp_path / "coll")
    assert info["files"] == 8 and info["documents"] == 2 and info["duplicates"] == 1
    assert info["failures"] == {"corrupt": 1, "empty": 1, "encrypted": 1, "not_pdf": 1, "truncated": 1}
    gate = {s["source"]: s for s in info["gate"]["sources"]}
    assert gate["bad"]["failed_files"] == 5 and gate["bad"]["pages"] == 0 and not gate["bad"]["passed"]
    assert gate["good"]["documents"] == 2 and gate["good"]["passed"] and not info["gate"]["passed"]


def test_cli_ingest_and_info(bad_pdf_dir: Path, tmp_path: Path, debian_pdf_dir: Path) -> None:
    done = nclue("ingest", bad_pdf_dir, tmp_path / "coll", "--workers", "1", "--ocr", "off", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "2 documents" in done.stdout and "1 truncated" in done.stdout
    shown = nclue("ingest", bad_pdf_dir / "good", tmp_path / "shown", "--ocr", "off")
    assert shown.returncode == 0 and "documents" in shown.stderr and "2/2" in shown.stderr
    assert "duplicate: good/functan_copy = good/functan" in done.stdout
    as_json = nclue("collection", "info", tmp_path / "coll", "--format", "json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["failures"]["not_pdf"] == 1
    table = nclue("collection", "info", tmp_path / "coll")
    assert table.returncode == 0 and "extraction gate" in table.stdout
    assert "pass" in table.stdout and "FAIL" in table.stdout
    cached = nclue("corpus", "fetch", "debian-docs", debian_pdf_dir)
    assert cached.returncode == 0 and "487 PDFs" in cached.stdout and "all cached" in cached.stdout


def test_cli_errors_are_one_line_with_exit_codes(bad_pdf_dir: Path, tmp_path: Path) -> None:
    missing = nclue("ingest", tmp_path / "no-such-dir", tmp_path / "coll")
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "PDF folder not found" in missing.stderr
    nothing = nclue("ingest", bad_pdf_dir / "bad", tmp_path / "c2", "--ocr", "off", "--no-progress")
    assert nothing.returncode == 1 and "no document could be ingested" in nothing.stderr
    not_collection = nclue("collection", "info", tmp_path)
    assert not_collection.returncode == 2 and "not a collection" in not_collection.stderr
    bad_format = nclue("collection", "info", tmp_path / "c2", "--format", "xml")
    assert bad_format.returncode == 2
    unknown = nclue("corpus", "fetch", "nope", tmp_path / "d")
    assert unknown.returncode == 2 and "unknown corpus recipe" in unknown.stderr
