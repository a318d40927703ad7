"""Builders of small collections and releases for the coverage-selection tests."""

from __future__ import annotations

import hashlib
from pathlib import Path


def write_collection(root: Path, docs: dict[str, list[str]]) -> Path:
    """A page store of ``docs`` (doc_id → page texts) with its lexical index."""
    import pyarrow as pa

    from nclue.corpus.store import DOCS_SCHEMA, PAGES_SCHEMA, write_table_atomic
    from nclue.index.lexical import build_lexical_index

    root.mkdir(parents=True, exist_ok=True)
    doc_rows = [
        dict(doc_id=d, path=f"{d}.pdf", sha256=hashlib.sha256(d.encode()).hexdigest(), n_pages=len(pages),
             n_bytes=1, source="t", status="ok", error=None)
        for d, pages in sorted(docs.items())
    ]  # fmt: skip
    page_rows = [
        dict(doc_id=d, page=i, text=t, n_chars=len(t), method="text")
        for d, pages in sorted(docs.items())
        for i, t in enumerate(pages, start=1)
    ]
    write_table_atomic(root / "docs.parquet", pa.Table.from_pylist(doc_rows, schema=DOCS_SCHEMA))
    write_table_atomic(root / "pages.parquet", pa.Table.from_pylist(page_rows, schema=PAGES_SCHEMA))
    build_lexical_index(root)
    return root


def write_release(root: Path, queries: list[tuple[str, list[str]]], qrels: list[tuple[str, str, dict]], ids) -> Path:
    """A release: ``queries`` (qid, conditions), ``qrels`` (qid, doc_id, {condition: pages}), corpus ``ids``."""
    import json

    root.mkdir(parents=True, exist_ok=True)
    rows = {"queries.jsonl": [], "qrels.jsonl": [], "corpus.jsonl": []}
    conditions = dict(queries)
    for qid, conds in queries:
        rows["queries.jsonl"].append({"qid": qid, "conditions": conds})
    for qid, doc, pages in qrels:
        grade = sum(bool(p) for p in pages.values())
        label = "gold" if grade == len(conditions[qid]) else "partial"
        rows["qrels.jsonl"].append({"qid": qid, "doc_id": doc, "grade": grade, "label": label, "pages": pages})
    rows["corpus.jsonl"] = [{"doc_id": d} for d in ids]
    for name, items in rows.items():
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return root


PHRASES = ("alpha beta", "gamma delta", "iota kappa", "sigma tau")  # folds 0, 1, 0, 1
