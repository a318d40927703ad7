"""Hangs and pool deaths (issue 28, cause 8): a FIFO named ``*.pdf`` is never opened by ingest, an
unreachable ``--ray-address`` fails within seconds, and a
killed pool worker ends the command with one line that says how to resume."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import time
from pathlib import Path

import pytest

from nclue.corpus.ingest import ingest, scan_pdf_dir
from nclue.engine import LocalEngine
from nclue.errors import NclueError
from tests.fixtures.small_collection import SMALL_DOCS
from tests.robustness.robust_helpers import assert_clean


def square_or_die(x: int) -> int:
    """``x * x``, except that the worker given 3 kills itself (as the OOM killer would)."""
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x * x


@pytest.mark.timeout(120)
def test_a_killed_pool_worker_is_one_clear_error() -> None:
    engine = LocalEngine(2)
    try:
        with pytest.raises(NclueError, match="worker process of the local engine died.*rerun the same command"):
            dict(engine.imap(square_or_die, [(i,) for i in range(8)]))
        assert sorted(engine.imap(square_or_die, [(i,) for i in (1, 2, 4)])) == [(0, 1), (1, 4), (2, 16)]
    finally:
        engine.close()


@pytest.mark.timeout(120)
def test_a_fifo_named_pdf_is_stored_unreadable_not_opened(debian_pdf_dir: Path, tmp_path: Path) -> None:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    shutil.copy(debian_pdf_dir / SMALL_DOCS[0], pdfs / "real.pdf")
    os.mkfifo(pdfs / "x.pdf")
    scanned = {f.doc_id: f for f in scan_pdf_dir(pdfs)}
    assert scanned["x"].sha256 == "" and scanned["real"].sha256
    ingest(pdfs, tmp_path / "coll")
    import pyarrow.parquet as pq

    docs = {r["doc_id"]: r for r in pq.read_table(tmp_path / "coll" / "docs.parquet").to_pylist()}
    assert docs["x"]["status"] == "unreadable" and docs["real"]["status"] == "ok"


def closed_port() -> int:
    """A local TCP port nothing listens on: bound, then released."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.timeout(60)
def test_an_unreachable_ray_address_fails_fast_instead_of_retrying_for_ever(
    cli, debian_pdf_dir: Path, tmp_path: Path
) -> None:
    pytest.importorskip("ray")
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    shutil.copy(debian_pdf_dir / SMALL_DOCS[0], pdfs / "real.pdf")
    address = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    result = cli("ingest", pdfs, tmp_path / "coll", "--engine", "ray", "--ray-address", address)
    assert_clean(result, 2, f"--ray-address {address}: cannot reach a Ray cluster there", "ray status")
    assert time.monotonic() - started < 30
    assert not (tmp_path / "coll" / "docs.parquet").exists()


@pytest.mark.parametrize("address", ["6379", "head-node", "ray://:6379", "10.0.0.5:99999"])
def test_a_malformed_ray_address_names_the_accepted_forms(
    cli, debian_pdf_dir: Path, tmp_path: Path, address: str
) -> None:
    pytest.importorskip("ray")
    shutil.copy(debian_pdf_dir / SMALL_DOCS[0], tmp_path / "real.pdf")
    result = cli("ingest", tmp_path, tmp_path / "coll", "--engine", "ray", "--ray-address", address)
    assert_clean(result, 2, "expected HOST:PORT (e.g. 10.0.0.5:6379), ray://HOST:PORT or auto")
