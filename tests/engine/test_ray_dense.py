"""Dense and token shards encoded on the Ray cluster equal a local build — also after a killed worker or an interrupt."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from nclue.engine import RayEngine

pytestmark = pytest.mark.slow

SHARD = 16  # chunks per shard: several tasks per worker on the ~85-page subset


def build(collection: Path, engine: RayEngine | None = None, **kwargs) -> Path:  # noqa: ANN003
    from nclue.index.dense import build_dense_index

    return build_dense_index(
        collection, max_chunks_per_page=1, shard_size=SHARD, tokens=True, workers=2, engine=engine, **kwargs
    )


def index_arrays(collection: Path) -> dict[str, np.ndarray]:
    """Every array of the collection's dense and token indexes, keyed by relative path and field."""
    out: dict[str, np.ndarray] = {}
    for path in sorted((collection / "index").rglob("*.np[yz]")):
        name = path.relative_to(collection / "index").as_posix()
        if path.suffix == ".npy":
            out[name] = np.load(path)
        else:
            with np.load(path) as data:
                out.update({f"{name}:{key}": data[key] for key in data.files})
    return out


@pytest.fixture(scope="module")
def subset_collection(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four short real documents (~85 pages) of the fixture collection."""
    from tests.dense.conftest import SUBSET, cut_collection

    return cut_collection(small_collection, tmp_path_factory.mktemp("subset") / "coll", SUBSET)


@pytest.fixture(scope="module")
def local_build(subset_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The subset's first-window dense + token index, built by two local encoder processes (one thread each)."""
    coll = tmp_path_factory.mktemp("local") / "coll"
    shutil.copytree(subset_collection, coll)
    build(coll)
    return coll


def copy_store(source: Path, target: Path) -> Path:
    target.mkdir(parents=True)
    for name in ("docs.parquet", "pages.parquet"):
        shutil.copy2(source / name, target / name)
    return target


def assert_same_index(left: Path, right: Path) -> None:
    a, b = index_arrays(left), index_arrays(right)
    assert len(a) >= 5 and sorted(a) == sorted(b)  # chunks, vectors, token codes, scales, lengths
    for name in a:
        assert np.array_equal(a[name], b[name]), name  # one thread per encoder on both sides: bit-identical


def test_ray_dense_and_token_index_equal_the_local_build(
    ray_cluster: str, local_build: Path, subset_collection: Path, tmp_path: Path
) -> None:
    coll = copy_store(subset_collection, tmp_path / "ray")
    engine = RayEngine(address=ray_cluster)
    try:
        build(coll, engine)
    finally:
        engine.close()
    assert_same_index(local_build, coll)


def _encoding_workers() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"ray::encode_shard" in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_a_worker_killed_mid_embedding_is_retried_without_losing_a_chunk(
    ray_cluster: str, local_build: Path, subset_collection: Path, tmp_path: Path
) -> None:
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline:
            for pid in _encoding_workers():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.05)

    coll = copy_store(subset_collection, tmp_path / "ray")
    thread = threading.Thread(target=killer)
    thread.start()
    engine = RayEngine(address=ray_cluster)
    try:
        build(coll, engine)
    finally:
        engine.close()
        thread.join()
    assert killed, "no encoding worker was seen to kill"
    assert_same_index(local_build, coll)


def test_an_interrupted_ray_build_resumes_with_the_missing_shards_only(
    ray_cluster: str, local_build: Path, subset_collection: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nclue.index import dense as module

    coll = copy_store(subset_collection, tmp_path / "ray")
    real = module._save_npy
    saved: list[str] = []

    def interrupted(path: Path, array: np.ndarray) -> None:
        if path.name.startswith("shard-") and len(saved) == 2:
            raise KeyboardInterrupt
        saved.append(path.name)
        real(path, array)

    engine = RayEngine(address=ray_cluster)
    try:
        monkeypatch.setattr(module, "_save_npy", interrupted)
        with pytest.raises(KeyboardInterrupt):
            build(coll, engine)
        resumed: list[str] = []
        monkeypatch.setattr(module, "_save_npy", lambda path, array: (resumed.append(path.name), real(path, array)))
        build(coll, engine)
    finally:
        engine.close()
    shards = [name for name in resumed if name.startswith("shard-")]
    assert shards and not set(shards) & set(saved)  # the two finished shards were kept, the rest encoded once
    assert len(shards) == len(set(shards))
    assert_same_index(local_build, coll)
