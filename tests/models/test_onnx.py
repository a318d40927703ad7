"""ONNX export and the ONNX Runtime mean-pooling encoder against bare sentence-transformers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.models.identity import bundled_model_path, model_identity
from nclue.models.onnx_encoder import OnnxMeanPoolEncoder
from nclue.models.onnx_export import META_FILE, MODEL_FILE, export_onnx


def test_export_layout_and_cache(onnx_dirs, tmp_path):
    fp32, int8 = onnx_dirs
    sha = model_identity(bundled_model_path()).sha256
    assert fp32.name.endswith(f"{sha[:12]}-fp32") and int8.name.endswith(f"{sha[:12]}-int8")
    meta = json.loads((fp32 / META_FILE).read_text())
    assert meta["model"]["sha256"] == sha and meta["pooling"] == "mean" and meta["max_length"] == 256
    assert json.loads((int8 / META_FILE).read_text())["quantized"] is True
    assert (int8 / MODEL_FILE).stat().st_size < (fp32 / MODEL_FILE).stat().st_size / 2
    stamp = (fp32 / MODEL_FILE).stat().st_mtime_ns
    assert export_onnx(bundled_model_path(), fp32.parent) == fp32  # cached: no re-export
    assert (fp32 / MODEL_FILE).stat().st_mtime_ns == stamp


def test_fp32_matches_sentence_transformers(onnx_dirs, st_model, page_texts):
    texts = [*page_texts, "", "Debian"]
    reference = st_model.encode(texts, batch_size=16, normalize_embeddings=True)
    vectors = OnnxMeanPoolEncoder(onnx_dirs[0], batch_size=4, intra_op_threads=2).encode(texts)
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (vectors * reference).sum(axis=1).min() > 0.9999


def test_int8_is_close(onnx_dirs, st_model, page_texts):
    reference = st_model.encode(page_texts, normalize_embeddings=True)
    vectors = OnnxMeanPoolEncoder(onnx_dirs[1], intra_op_threads=2).encode(page_texts)
    assert (vectors * reference).sum(axis=1).min() > 0.95


def test_order_is_input_order_whatever_the_batching(onnx_dirs, page_texts):
    encoder = OnnxMeanPoolEncoder(onnx_dirs[0], batch_size=3, intra_op_threads=2)
    texts = page_texts[:7]
    together = encoder.encode(texts)
    one_by_one = np.stack([encoder.encode([t])[0] for t in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    assert encoder.encode([]).shape == (0, 384)


def test_token_vectors_match_sentence_transformers(onnx_dirs, st_model, page_texts):
    texts = ["late interaction", max(page_texts, key=len)]
    ours = OnnxMeanPoolEncoder(onnx_dirs[0], intra_op_threads=2).token_vectors(texts)
    theirs = st_model.encode(texts, output_value="token_embeddings")
    for a, b in zip(ours, theirs):
        b = b.numpy()
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
        assert a.shape == b.shape
        assert (a * b).sum(axis=1).min() > 0.9999
    assert ours[1].shape[0] == 256  # truncated to the model's max_seq_length


def test_not_an_export(tmp_path):
    with pytest.raises(NclueError, match="not an nclue ONNX export"):
        OnnxMeanPoolEncoder(tmp_path)


def test_export_rejects_non_sentence_transformers(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(NclueError, match="not a sentence-transformers model"):
        export_onnx(tmp_path, tmp_path / "out")
