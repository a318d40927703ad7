"""The dense index is checked like the lexical one: stale pages, damaged files, full verification."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from nclue.corpus.store import DOCS_FILE, PAGES_FILE, write_table_atomic
from tests.robustness.robust_helpers import assert_clean, swap_two_documents

QUERY = '"regression model"; "data frame"'
SYSTEM = "dense.decompose(min)"


@pytest.fixture(scope="module")
def dense_source(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three documents of the fixture collection with an ONNX dense index (first window per page)."""
    from nclue.index.dense import build_dense_index

    root = tmp_path_factory.mktemp("robust-dense") / "coll"
    root.mkdir()
    docs = pq.read_table(small_collection / DOCS_FILE)
    keep = pa.array(sorted(docs.column("doc_id").to_pylist())[:3])
    for name, table in ((DOCS_FILE, docs), (PAGES_FILE, pq.read_table(small_collection / PAGES_FILE))):
        write_table_atomic(root / name, table.filter(pc.is_in(table.column("doc_id"), value_set=keep)))
    build_dense_index(root, backend="onnx", max_chunks_per_page=1)
    return root


@pytest.fixture
def dense(dense_source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "coll"
    shutil.copytree(dense_source, target)
    return target


def vector_file(collection: Path) -> Path:
    return next((collection / "index" / "dense").glob("*/vectors.npy"))


@pytest.mark.slow
def test_a_stale_dense_index_is_refused(cli, dense: Path) -> None:
    assert cli("search", dense, QUERY, "-s", SYSTEM).exit_code == 0
    swap_two_documents(dense)
    assert_clean(cli("search", dense, QUERY, "-s", SYSTEM), 2, "pages changed", "--rebuild")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["vectors.npy", "chunks.npz"])
@pytest.mark.parametrize("cut", ["half", "empty"])
def test_truncated_dense_files_are_named(cli, dense: Path, name: str, cut: str) -> None:
    path = vector_file(dense).parent / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if cut == "half" else b"")
    assert_clean(cli("search", dense, QUERY, "-s", SYSTEM), 2, str(path), "damaged", "--rebuild")


@pytest.mark.slow
def test_a_damaged_dense_manifest_is_named(cli, dense: Path) -> None:
    manifest = vector_file(dense).parent / "manifest.json"
    manifest.write_text('{"complete": tru')
    assert_clean(cli("search", dense, QUERY, "-s", SYSTEM), 2, str(manifest), "--rebuild")


@pytest.mark.slow
def test_verify_finds_a_changed_vector(cli, dense: Path) -> None:
    path = vector_file(dense)
    data = bytearray(path.read_bytes())
    data[200] ^= 0x01  # inside the head: caught by the quick check too
    path.write_bytes(bytes(data))
    out = assert_clean(cli("index", dense, "--verify"), 1, "vectors.npy")
    assert "✗ dense/" in out
    assert_clean(cli("search", dense, QUERY, "-s", SYSTEM), 2, "vectors.npy", "damaged")
