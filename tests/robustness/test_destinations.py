"""Unwritable destinations and concurrent writers get one clear line, never a traceback or a silent race."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from nclue.io import exclusive_lock
from tests.robustness.robust_helpers import assert_clean

ENTRY = "from nclue.cli import main; main()"


@pytest.fixture
def shared_dir():  # noqa: ANN201 - yields a Path
    """A root-owned folder other users can read but not write (pytest's own tmp dirs are private)."""
    root = Path("/tmp") / f"nclue-robust-{uuid.uuid4().hex[:8]}"
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", sys.executable]
NOBODY_ENV = {**os.environ, "HOME": "/tmp", "NCLUE_CACHE": "/tmp/nclue-nobody-cache"}


@functools.cache
def nobody_can_import_nclue() -> bool:
    """Whether user ``nobody`` can run this checkout's interpreter and import nclue: a checkout
    inside a private folder (``mktemp -d`` is mode 700) hides the virtual environment from it."""
    probe = subprocess.run([*NOBODY, "-c", "import nclue.cli"], capture_output=True, env=NOBODY_ENV)
    return probe.returncode == 0


def as_nobody(*args: object) -> subprocess.CompletedProcess[str]:
    """Run the real ``nclue`` entry point as user ``nobody`` (skips unless the tests run as root)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a command as an unprivileged user")
    if not nobody_can_import_nclue():
        pytest.skip(f"user nobody cannot read this checkout's environment ({sys.prefix}); clone into a readable folder")
    command = [*NOBODY, "-c", ENTRY]
    return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, env=NOBODY_ENV)


def check_refused(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("error:") == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def test_ingest_into_a_folder_without_write_permission(shared_dir: Path) -> None:
    pdfs = shared_dir / "pdfs"
    pdfs.mkdir(mode=0o755)
    (pdfs / "a.pdf").write_bytes(b"%PDF-1.4 not really")
    os.chmod(pdfs / "a.pdf", 0o644)
    check_refused(
        as_nobody("ingest", pdfs, shared_dir / "coll", "--ocr", "off"), str(shared_dir / "coll"), "cannot write"
    )


def test_index_into_a_collection_without_write_permission(indexed: Path, shared_dir: Path) -> None:
    coll = shared_dir / "coll"
    shutil.copytree(indexed, coll)
    for path in [coll, *coll.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    check_refused(as_nobody("index", coll, "--lexical"), "cannot write the index")
    search = as_nobody("search", coll, '"regression model"; "data frame"', "--format", "json")
    assert search.returncode == 0, search.stderr  # reading is fine


def test_ingest_onto_a_read_only_file_system(shared_dir: Path) -> None:
    """A private mount namespace with a read-only tmpfs (skipped where unshare is not allowed)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("user/mount namespaces are not allowed here")
    pdfs = shared_dir / "pdfs"
    pdfs.mkdir()
    (pdfs / "a.pdf").write_bytes(b"%PDF-1.4 not really")
    ro = shared_dir / "ro"
    ro.mkdir()
    script = f"mount -t tmpfs -o ro tmpfs {ro} && exec {sys.executable} -c '{ENTRY}' ingest {pdfs} {ro}/coll --ocr off"
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    check_refused(proc, f"{ro}/coll", "read-only")


def test_evaluate_output_that_is_a_folder(cli, release: Path, run_file: Path, tmp_path: Path) -> None:
    assert_clean(cli("evaluate", release, run_file, "-o", tmp_path), 2, "is a directory", "--output")


def test_a_second_ingest_into_a_busy_collection_is_refused(cli, indexed: Path, tmp_path: Path) -> None:
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "pdfs" / "a.pdf").write_bytes(b"%PDF-1.4 not really")
    with exclusive_lock(indexed, "collection"):
        assert_clean(
            cli("ingest", tmp_path / "pdfs", indexed, "--ocr", "off"), 2, "another nclue job", f"pid {os.getpid()}"
        )
        assert_clean(cli("index", indexed, "--lexical"), 2, "another nclue job")
    assert_clean(cli("index", indexed, "--lexical"), 0)


def test_a_second_build_into_a_busy_release_folder_is_refused(cli, indexed: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    with exclusive_lock(out, "benchmark release"):
        assert_clean(cli("build", indexed, "-o", out), 2, "another nclue job", "benchmark release")
