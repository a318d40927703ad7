"""The chunk windows' version is part of a whole-page index's settings: an index whose chunks could
exceed the window (chunking 1) is never resumed or silently reused by the new chunker."""

from __future__ import annotations

import json

import pytest

from nclue.errors import NclueError
from nclue.index.dense import CHUNKING, MANIFEST, build_dense_index, dense_settings
from nclue.index.options import DenseOptions
from tests.dense.handmade import write_collection

DOCS = {"a.pdf": ["alpha beta gamma delta epsilon zeta eta theta", "kappa lambda"]}


def test_whole_page_indexes_record_the_chunking(tmp_path):
    collection = write_collection(tmp_path / "coll", DOCS)
    assert dense_settings(collection, DenseOptions())["settings"]["chunking"] == CHUNKING
    assert "chunking" not in dense_settings(collection, DenseOptions(max_chunks_per_page=1))["settings"]


def test_an_index_of_the_old_chunker_is_refused_not_reused(tmp_path):
    collection = write_collection(tmp_path / "coll", DOCS)
    options = DenseOptions(backend="torch", window=4, overlap=1)
    path = build_dense_index(collection, options)
    manifest = json.loads((path / MANIFEST).read_text())
    del manifest["chunking"]  # as the chunker before version 2 wrote it
    (path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(NclueError, match="chunking.*--rebuild"):
        build_dense_index(collection, options)
    assert build_dense_index(collection, options, rebuild=True) == path
    assert json.loads((path / MANIFEST).read_text())["chunking"] == CHUNKING
