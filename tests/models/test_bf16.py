"""The bfloat16 encoder (the dense default) against bare sentence-transformers fp32, and one-pass tokens."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.models.encoder import describe, encode_with_tokens, load_encoder


@pytest.fixture(scope="module")
def bf16():
    return load_encoder(None, backend="torch-bf16", batch_size=4)


def test_bf16_embeddings_are_within_bf16_rounding_of_fp32(bf16, st_model, page_texts):
    texts = [*page_texts, "", "Debian"]
    reference = st_model.encode(texts, batch_size=16, normalize_embeddings=True)
    vectors = bf16.encode(texts)
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape == (len(texts), bf16.dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cos = (vectors * reference).sum(axis=1)
    assert cos.min() > 0.999 and cos.mean() > 0.9997
    assert not np.array_equal(vectors, reference)  # it really is another precision
    assert bf16.backend == "torch-bf16" and describe(bf16)["backend"] == "torch-bf16"


def test_bf16_token_vectors_match_sentence_transformers(bf16, st_model, page_texts):
    texts = ["late interaction", max(page_texts, key=len)]
    ours = bf16.token_vectors(texts)
    theirs = st_model.encode(texts, output_value="token_embeddings")
    for a, b in zip(ours, theirs):
        b = b.numpy() / np.linalg.norm(b.numpy(), axis=1, keepdims=True)
        assert a.shape == b.shape
        assert (a * b).sum(axis=1).min() > 0.99
    assert ours[1].shape[0] == 256


@pytest.mark.parametrize("backend", ["torch-bf16", "onnx", "torch"])
def test_one_pass_gives_the_same_vectors_as_two(backend, page_texts):
    encoder = load_encoder(None, backend=backend, batch_size=4)
    texts = page_texts[:6]
    pooled, tokens = encode_with_tokens(encoder, texts)
    np.testing.assert_allclose(pooled, encoder.encode(texts), atol=1e-6)
    for a, b in zip(tokens, encoder.token_vectors(texts)):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_bf16_refuses_other_pooling(tmp_path):
    import shutil

    from nclue.models.bf16_encoder import Bf16MeanPoolEncoder
    from nclue.models.identity import bundled_model_path

    model = tmp_path / "cls-model"
    shutil.copytree(bundled_model_path(), model)
    pooling = next(model.glob("*Pooling/config.json"))
    pooling.write_text('{"word_embedding_dimension": 384, "pooling_mode_cls_token": true}')
    with pytest.raises(NclueError, match="mean pooling only"):
        Bf16MeanPoolEncoder(model)


CPU_AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
CPU_SPR = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_tile amx_bf16\n"
CPU_ARM = "processor\t: 0\nFeatures\t: fp asimd bf16 i8mm\n"


def test_the_default_backend_follows_native_bfloat16() -> None:
    """bfloat16 only where the CPU multiplies it natively; it is emulated (6× slower than fp32) elsewhere."""
    from pathlib import Path

    from nclue.models.encoder import DEFAULT_BACKEND, default_backend, native_bf16

    assert (native_bf16(CPU_AVX2), native_bf16(CPU_SPR), native_bf16(CPU_ARM), native_bf16("")) == (
        False, True, False, False,
    )  # fmt: skip
    assert (default_backend(CPU_AVX2), default_backend(CPU_SPR)) == ("onnx", "torch-bf16")
    info = Path("/proc/cpuinfo")
    flags = set(info.read_text().split()) if info.is_file() else set()
    assert DEFAULT_BACKEND == ("torch-bf16" if flags & {"avx512_bf16", "amx_bf16"} else "onnx")
