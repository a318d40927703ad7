"""``PageStore.page_text`` against the page table read independently with pyarrow, on the fixture collection."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from nclue.corpus.store import PageStore

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "collection"


def test_every_page_text_matches_the_parquet_row():
    rows = pq.read_table(FIXTURE / "pages.parquet", columns=["doc_id", "page", "text"]).to_pylist()
    store = PageStore.open(FIXTURE)
    for row in rows:  # one cell at a time (texts not loaded)
        assert store.page_text(row["doc_id"], row["page"]) == (row["text"] or "")
    assert "texts" not in store.__dict__
    store.texts  # noqa: B018 - loads every text; page_text then reads from it
    assert all(store.page_text(r["doc_id"], r["page"]) == (r["text"] or "") for r in rows)
