"""Real PDFs, real processes: orphaned workers, honest ingest summaries, the swapped-PDFs repro."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from nclue.corpus.ingest import ingest
from tests.fixtures.small_collection import SMALL_DOCS
from tests.robustness.robust_helpers import assert_clean


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose environment carries ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_workers_exit_when_ingest_is_killed(debian_pdf_dir: Path, tmp_path: Path) -> None:
    """SIGKILL of ``ingest --workers 2`` leaves neither spawned workers nor the resource tracker."""
    marker = f"NCLUE_TEST_{uuid.uuid4().hex}"
    env = {**os.environ, marker: "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from nclue.cli import main; main()",
            "ingest",
            str(debian_pdf_dir),
            str(tmp_path / "coll"),
            "--workers",
            "2",
            "--ocr",
            "off",
            "--no-progress",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(processes_with(marker)) < 3 and time.monotonic() < deadline:  # parent + 2 workers (+ tracker)
        time.sleep(0.2)
    assert len(processes_with(marker)) >= 3, "the workers never started"
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 20
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_with(marker) == []


def test_a_first_ingest_does_not_call_unreadable_files_reused(debian_pdf_dir: Path, tmp_path: Path) -> None:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    shutil.copyfile(debian_pdf_dir / SMALL_DOCS[0], pdfs / "good.pdf")
    (pdfs / "gone.pdf").symlink_to(tmp_path / "missing.pdf")
    summary = ingest(pdfs, tmp_path / "coll", ocr="off")
    assert (summary.n_reused, summary.n_extracted) == (0, 1)
    assert summary.failures == {"unreadable": 1}
    again = ingest(pdfs, tmp_path / "coll", ocr="off")
    assert (again.n_reused, again.n_extracted) == (1, 0)


def test_swapped_pdfs_make_the_index_stale(cli, debian_pdf_dir: Path, tmp_path: Path) -> None:
    """The reported repro: two PDFs exchange names, ingest again, and search must not answer from the old index."""
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    a, b = debian_pdf_dir / SMALL_DOCS[0], debian_pdf_dir / SMALL_DOCS[1]
    shutil.copyfile(a, pdfs / "first.pdf")
    shutil.copyfile(b, pdfs / "second.pdf")
    coll = tmp_path / "coll"
    assert cli("ingest", pdfs, coll, "--ocr", "off").exit_code == 0
    assert cli("index", coll, "--lexical").exit_code == 0
    query = '"regression"; "data frame"'
    before = cli("search", coll, query, "--format", "json")
    assert before.exit_code == 0
    shutil.copyfile(b, pdfs / "first.pdf")
    shutil.copyfile(a, pdfs / "second.pdf")
    assert cli("ingest", pdfs, coll, "--ocr", "off").exit_code == 0
    assert_clean(cli("search", coll, query), 2, "stale", f"nclue index {coll} --lexical")
    assert cli("index", coll, "--lexical").exit_code == 0
    after = cli("search", coll, query, "--format", "json")
    assert after.exit_code == 0 and after.output != before.output
