"""Hand-written collections and model folders for the prompt and page-spanning tests.

``write_collection`` writes ``docs.parquet`` / ``pages.parquet`` from ``{doc_id: [page texts]}``
(pages in order), so tests know every page's text and token count. ``e5_like`` copies the bundled
MiniLM and declares E5's prompts in ``config_sentence_transformers.json``, as E5 checkpoints do.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa

from nclue.corpus.store import DOCS_FILE, DOCS_SCHEMA, PAGES_FILE, PAGES_SCHEMA, write_table_atomic
from nclue.models.identity import bundled_model_path

E5_PROMPTS = {"query": "query: ", "passage": "passage: "}


def write_collection(target: Path, documents: dict[str, list[str]]) -> Path:
    """A collection whose documents (sorted by id) hold exactly the given page texts."""
    target.mkdir(parents=True)
    rows = [(d, n, text) for d in sorted(documents) for n, text in enumerate(documents[d], start=1)]
    pages = {
        "doc_id": [r[0] for r in rows],
        "page": pa.array([r[1] for r in rows], pa.int32()),
        "text": [r[2] for r in rows],
        "n_chars": pa.array([len(r[2]) for r in rows], pa.int32()),
        "method": ["text"] * len(rows),
    }
    ids = sorted(documents)
    docs = {
        "doc_id": ids,
        "path": ids,
        "sha256": ["0" * 64] * len(ids),
        "n_pages": pa.array([len(documents[d]) for d in ids], pa.int32()),
        "n_bytes": pa.array([1] * len(ids), pa.int64()),
        "source": ["t"] * len(ids),
        "status": ["ok"] * len(ids),
        "error": [None] * len(ids),
    }
    write_table_atomic(target / PAGES_FILE, pa.table(pages, schema=PAGES_SCHEMA))
    write_table_atomic(target / DOCS_FILE, pa.table(docs, schema=DOCS_SCHEMA))
    return target


def model_copy(target: Path, **config: object) -> Path:
    """The bundled MiniLM copied to ``target`` with ``config`` merged into its ``config_sentence_transformers.json``."""
    shutil.copytree(bundled_model_path(), target)
    path = target / "config_sentence_transformers.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **config}, indent=2))
    return target


def e5_like(target: Path) -> Path:
    """A model folder laid out like E5: MiniLM weights, ``"prompts": {"query": "query: ", "passage": "passage: "}``."""
    return model_copy(target, prompts=E5_PROMPTS)
