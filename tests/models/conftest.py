"""Fixtures for model tests: real page texts and a session ONNX export of the bundled MiniLM."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def page_texts(small_collection: Path) -> list[str]:
    """Twenty real page texts of mixed lengths (every 20th page of the small collection)."""
    from nclue.corpus.store import PageStore

    texts = PageStore.open(small_collection).texts
    return [t for t in texts[::20] if t.strip()][:20]


@pytest.fixture(scope="session")
def st_model():
    """The bundled MiniLM as a bare ``SentenceTransformer`` (the reference)."""
    from sentence_transformers import SentenceTransformer

    from nclue.models.identity import bundled_model_path

    return SentenceTransformer(str(bundled_model_path()), device="cpu")


@pytest.fixture(scope="session")
def onnx_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """fp32 and int8 exports of the bundled MiniLM into a fresh cache directory."""
    from nclue.models.identity import bundled_model_path
    from nclue.models.onnx_export import export_onnx

    out = tmp_path_factory.mktemp("onnx")
    fp32 = export_onnx(bundled_model_path(), out)
    int8 = export_onnx(bundled_model_path(), out, quantize_int8=True)
    return fp32, int8
