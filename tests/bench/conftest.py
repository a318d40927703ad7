"""Helpers for bench tests: tiny hand-written collections in the page-store schema."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pytest

from nclue.corpus.store import DOCS_SCHEMA, PAGES_SCHEMA, write_table_atomic


def write_collection(root: Path, docs: dict[str, list[str]]) -> Path:
    """Write ``docs`` (doc_id → page texts) as a collection directory and return it."""
    doc_rows, page_rows = [], []
    for doc_id in sorted(docs):
        pages = docs[doc_id]
        digest = hashlib.sha256("\f".join(pages).encode()).hexdigest()
        doc_rows.append(
            dict(
                doc_id=doc_id,
                path=f"{doc_id}.pdf",
                sha256=digest,
                n_pages=len(pages),
                n_bytes=100,
                source=doc_id.split("/")[0],
                status="ok",
                error=None,
            )
        )
        for i, text in enumerate(pages, start=1):
            page_rows.append(dict(doc_id=doc_id, page=i, text=text, n_chars=len(text), method="text"))
    root.mkdir(parents=True, exist_ok=True)
    write_table_atomic(root / "docs.parquet", pa.Table.from_pylist(doc_rows, schema=DOCS_SCHEMA))
    write_table_atomic(root / "pages.parquet", pa.Table.from_pylist(page_rows, schema=PAGES_SCHEMA))
    return root


@pytest.fixture
def make_collection(tmp_path: Path):
    """Factory fixture: ``make_collection(docs)`` → collection path under ``tmp_path``."""
    counter = iter(range(1000))

    def factory(docs: dict[str, list[str]]) -> Path:
        return write_collection(tmp_path / f"coll{next(counter)}", docs)

    return factory
