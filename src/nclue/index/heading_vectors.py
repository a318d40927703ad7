"""Heading vectors: every distinct heading title of ``structure.parquet``, embedded once.

The ``struct`` systems (:mod:`nclue.systems.structural`) compare a condition with the headings
that start on each page. The titles are embedded with the collection's dense model and stored
in ``COLLECTION/index/structure/`` (``docs/formats.md#structureparquet``), with checksums and the
SHA-256 of the structure file they follow; ``nclue index COLL --all`` builds them after the dense
index (:mod:`nclue.index.builders`).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from nclue.corpus.store import PageStore
from nclue.corpus.structure import STRUCTURE_FILE, open_structure
from nclue.errors import NclueError
from nclue.index.integrity import record_files
from nclue.io import atomic_write_bytes, exclusive_lock, read_json_record, sha256_file, write_json

HEADINGS_DIR = Path("index") / "structure"
HEADINGS_FILE = "headings.npy"
HEADINGS_MANIFEST = "manifest.json"


def _dense_index(collection: Path):  # noqa: ANN202 - nclue.index.dense.DenseIndex
    """The collection's dense index (the plain ``dense`` backbone's; none, or several and no default → NclueError)."""
    from nclue.index.dense import build_command, default_dense_index, list_dense_indexes, open_index_dir

    chosen = default_dense_index(collection)
    if chosen is None:
        found = list_dense_indexes(collection)
        raise NclueError(
            f"{collection}: heading vectors follow the collection's dense index, found "
            f"{len(found)} ({', '.join(d.name for d in found) or 'none'}) and none is the default; build or adopt "
            f"one with `{build_command(collection)}`"
        )
    return open_index_dir(collection, chosen)


def build_heading_vectors(collection: str | os.PathLike[str]) -> Path:
    """Embed every distinct heading title of ``structure.parquet`` with the collection's dense model.

    Writes ``COLLECTION/index/structure/headings.npy`` (one L2-normalised row per distinct
    title, sorted) and ``manifest.json`` (titles, the structure file's SHA-256, the dense index
    it follows, file checksums). Unchanged inputs → nothing is recomputed.
    """
    base = Path(collection)
    store = PageStore.open(base)
    structure = open_structure(base, store)
    dense = _dense_index(base)
    out = base / HEADINGS_DIR
    out.mkdir(parents=True, exist_ok=True)
    stamp = {"structure_sha256": sha256_file(base / STRUCTURE_FILE), "dense": dense.key}
    with exclusive_lock(out, "heading vectors"):
        manifest = read_json_record(out / HEADINGS_MANIFEST)
        if manifest is not None and {k: manifest.get(k) for k in stamp} == stamp:
            return out
        titles = sorted(set(structure.titles))
        encoder = dense.load_encoder(batch_size=64)
        vectors = encoder.encode(titles).astype(np.float32) if titles else np.zeros((0, 384), np.float32)
        buffer = io.BytesIO()
        np.save(buffer, vectors, allow_pickle=False)
        atomic_write_bytes(out / HEADINGS_FILE, buffer.getvalue())
        write_json(out / HEADINGS_MANIFEST, {**stamp, "titles": titles, "files": record_files(out, [HEADINGS_FILE])})
    return out


def headings_current(collection: str | os.PathLike[str]) -> bool:
    """Whether ``structure.parquet`` is fresh and its heading vectors match it and the dense index."""
    base = Path(collection)
    try:
        open_structure(base)
        dense = _dense_index(base)
    except NclueError:
        return False
    manifest = read_json_record(base / HEADINGS_DIR / HEADINGS_MANIFEST) or {}
    return (
        manifest.get("structure_sha256") == sha256_file(base / STRUCTURE_FILE)
        and manifest.get("dense") == dense.key
        and (base / HEADINGS_DIR / HEADINGS_FILE).is_file()
    )
