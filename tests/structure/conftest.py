"""A small real collection with every index the ``struct`` systems read (lexical, dense, structure, headings)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SUBSET = ("latex/algorithms/algorithms", "latex/functan/functan", "latex/jura/jura", "latex/verse/verse")
HAND_WEIGHTS = {
    "format": 4,
    "signals": ["head", "head_high", "head_level", "dense", "bm25", "phrase", "role"],
    "model": {"page": [-6.0, 4.0, 3.0, 1.0, 1.0, 2.0, 1.5, -3.0], "doc": [0.0, 1.0]},
    "provenance": {"by": "hand (tests)"},
}


@pytest.fixture(scope="session")
def struct_collection(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four short real documents (~85 pages) indexed for ``struct:test.*`` (hand-set calibration)."""
    from nclue.corpus.structure import StructureParams, build_structure
    from nclue.index.dense import build_dense_index
    from nclue.index.heading_vectors import build_heading_vectors
    from nclue.index.lexical import build_lexical_index
    from nclue.io import write_json
    from tests.dense.conftest import cut_collection

    coll = cut_collection(small_collection, tmp_path_factory.mktemp("struct") / "coll", SUBSET)
    build_lexical_index(coll)
    build_dense_index(coll)
    build_structure(coll, StructureParams(fonts="off"))
    build_heading_vectors(coll)
    write_json(coll / "calibration" / "test.json", HAND_WEIGHTS)
    return coll
