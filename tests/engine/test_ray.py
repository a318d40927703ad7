"""Ray runs the same batch functions as a local run and writes the same bytes — also when a worker dies."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from nclue.corpus.ingest import ingest
from nclue.engine import RayEngine
from tests.fixtures.small_collection import build_small_release

pytestmark = pytest.mark.slow

STORE = ("docs.parquet", "pages.parquet", "collection.json")


def store_bytes(collection: Path) -> dict[str, bytes]:
    return {name: (collection / name).read_bytes() for name in STORE}


def test_ray_engine_runs_a_library_function_on_the_cluster(ray_cluster: str) -> None:
    from nclue.index.lexical import Analyzer, analyse_texts

    texts = [[f"Page {i} on regression models and data frames"] for i in range(30)]
    engine = RayEngine(address=ray_cluster)
    try:
        assert engine.workers == 2
        out = dict(engine.imap(analyse_texts, ((t,) for t in texts)))
    finally:
        engine.close()
    assert sorted(out) == list(range(30))
    assert all(out[i][2] == Analyzer().corpus(texts[i])[2] for i in out)


def test_ray_ingest_writes_the_local_bytes(ray_cluster: str, small_pdf_dir: Path, tmp_path: Path) -> None:
    ingest(small_pdf_dir, tmp_path / "local", workers=2, ocr="auto")
    ingest(small_pdf_dir, tmp_path / "ray", ocr="auto", engine="ray", ray_address=ray_cluster)
    local, ray = store_bytes(tmp_path / "local"), store_bytes(tmp_path / "ray")
    assert local["docs.parquet"] == ray["docs.parquet"] and local["pages.parquet"] == ray["pages.parquet"]


def test_ray_lexical_index_equals_the_single_process_index(
    ray_cluster: str, small_collection: Path, tmp_path: Path
) -> None:
    """Sharded analysis with global statistics: every file of the index is byte-identical."""
    import filecmp
    import shutil

    from nclue.index.lexical import build_lexical_index

    for name in ("one", "sharded"):
        shutil.copytree(small_collection, tmp_path / name)
    build_lexical_index(tmp_path / "one")
    engine = RayEngine(address=ray_cluster)
    try:
        build_lexical_index(tmp_path / "sharded", engine=engine, shard_pages=50)
    finally:
        engine.close()
    left, right = tmp_path / "one" / "index", tmp_path / "sharded" / "index"
    files = sorted(p.relative_to(left) for p in left.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(right) for p in right.rglob("*") if p.is_file())
    _, mismatch, errors = filecmp.cmpfiles(left, right, [str(f) for f in files], shallow=False)
    assert mismatch == [] and errors == []


def _extracting_workers() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"ray::_extract_task" in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_a_worker_killed_mid_ingest_is_retried_without_losing_a_page(
    ray_cluster: str, debian_pdf_dir: Path, small_collection: Path, tmp_path: Path
) -> None:
    """Kill one Ray worker while it extracts a PDF; the task is retried and the store equals a local one."""
    from tests.fixtures.small_collection import SMALL_DOCS

    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            for pid in _extracting_workers():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.05)

    pdfs = tmp_path / "pdfs"
    for rel in SMALL_DOCS:  # the 12 fixture PDFs plus bulk to keep workers busy
        (pdfs / rel).parent.mkdir(parents=True, exist_ok=True)
        (pdfs / rel).write_bytes((debian_pdf_dir / rel).read_bytes())
    thread = threading.Thread(target=killer)
    thread.start()
    summary = ingest(pdfs, tmp_path / "ray", ocr="off", engine="ray", ray_address=ray_cluster)
    thread.join()
    assert killed, "no extracting worker was seen to kill"
    ingest(pdfs, tmp_path / "local", ocr="off")
    assert store_bytes(tmp_path / "ray")["pages.parquet"] == store_bytes(tmp_path / "local")["pages.parquet"]
    assert summary.n_pages == 444


@pytest.fixture(scope="module")
def lexical_bench(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The fixture collection with its lexical index and a 40-query release built on it."""
    root = build_small_release(small_collection, tmp_path_factory.mktemp("lexical-bench"), n_queries=40)
    return root / "coll", root / "bench"


def run_files(folder: Path) -> dict[str, bytes]:
    """Every TREC and JSONL run file below ``folder`` (not the manifest, which records timings)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in (".trec", ".jsonl")}


def test_ray_runs_equal_local_runs(ray_cluster: str, lexical_bench: tuple[Path, Path], tmp_path: Path, cli) -> None:  # noqa: ANN001
    """The same systems ranked in query batches on the cluster write byte-identical run files."""
    coll, bench = lexical_bench
    systems = ["-s", "bm25.decompose(distinct)", "-s", "bm25.cover", "-s", "rrf(bm25.and, bm25.ptop3)"]
    assert cli("run", bench, coll, *systems, "-o", tmp_path / "local").exit_code == 0
    result = cli("run", bench, coll, *systems, "-o", tmp_path / "ray", "--engine", "ray", "--ray-address", ray_cluster)
    assert result.exit_code == 0, result.output
    names = sorted(run_files(tmp_path / "local"))
    assert len(names) == 6 and names == sorted(run_files(tmp_path / "ray"))
    for name in names:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes(), name


def test_ray_build_writes_the_local_release(ray_cluster: str, small_collection: Path, tmp_path: Path, cli) -> None:  # noqa: ANN001
    """Tokenisation and the embedding judge on the cluster: the same release, hash for hash."""
    flags = [
        "--min-df",
        "2",
        "--max-df-frac",
        "0.34",
        "--queries",
        "30",
        "--judge",
        "embedding",
        "--max-contested",
        "1000",
    ]
    assert cli("build", small_collection, "-o", tmp_path / "local", *flags).exit_code == 0
    result = cli(
        "build", small_collection, "-o", tmp_path / "ray", *flags, "--engine", "ray", "--ray-address", ray_cluster
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ray" / "SHA256SUMS").read_text() == (tmp_path / "local" / "SHA256SUMS").read_text()


MATRIX = """depth = 100
k = 10
form = "clean_v2"

[[run]]
system = "bm25.joint"
block = "standalone"
forms = ["raw", "clean_v2"]

[[run]]
system = "bm25.decompose(distinct)"
block = "decomposition"

[[run]]
system = "bm25.cover"
block = "decomposition"

[[contrast]]
name = "Coverage-first"
base = "bm25.joint"
variants = ["bm25.cover"]
"""


def test_a_matrix_on_ray_writes_the_local_run_files(
    ray_cluster: str,
    lexical_bench: tuple[Path, Path],
    tmp_path: Path,
    cli,  # noqa: ANN001
) -> None:
    """``nclue run --matrix --engine ray``: whole runs spread over the cluster's workers, the same files."""
    coll, bench = lexical_bench
    spec = tmp_path / "matrix.toml"
    spec.write_text(MATRIX)
    assert cli("run", bench, coll, "--matrix", spec, "-o", tmp_path / "local", "--workers", "1").exit_code == 0
    args = ("--engine", "ray", "--ray-address", ray_cluster)
    result = cli("run", bench, coll, "--matrix", spec, "-o", tmp_path / "ray", *args)
    assert result.exit_code == 0, result.output
    local, ray = run_files(tmp_path / "local"), run_files(tmp_path / "ray")
    assert len(local) == 8 and local == ray  # 4 runs × (TREC, JSONL)
