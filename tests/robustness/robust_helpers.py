"""Checks shared by the robustness probes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from nclue.corpus.store import META_FILE, PAGES_FILE, pages_record, write_table_atomic
from nclue.io import write_json


def assert_clean(result, code: int, *fragments: str) -> str:  # noqa: ANN001 - click Result
    """The command failed (or not) the way a user should see it: exit ``code``, no traceback,
    every fragment in the output, and at most one ``error:`` line. Returns the output."""
    out = result.output
    assert result.exit_code == code, out
    assert "Traceback" not in out, out
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert out.count("error:") <= 1, out
    for fragment in fragments:
        assert fragment in out, f"{fragment!r} not in {out!r}"
    return out


def swap_two_documents(collection: Path) -> None:
    """Re-ingest different content of the same size: two documents exchange their page texts
    (as when two PDFs swap names), and ``collection.json`` is rewritten as ingest does."""
    table = pq.read_table(collection / PAGES_FILE)
    rows = table.to_pylist()
    ids = sorted({r["doc_id"] for r in rows})
    first, second = ids[0], ids[1]
    texts = {d: [r for r in rows if r["doc_id"] == d] for d in (first, second)}
    n = min(len(texts[first]), len(texts[second]))
    for i in range(n):
        a, b = texts[first][i], texts[second][i]
        a["text"], b["text"] = b["text"], a["text"]
        a["n_chars"], b["n_chars"] = b["n_chars"], a["n_chars"]
    write_table_atomic(collection / PAGES_FILE, table.from_pylist(rows, schema=table.schema))
    meta = json.loads((collection / META_FILE).read_text()) if (collection / META_FILE).is_file() else {}
    write_json(collection / META_FILE, {**meta, "pages": pages_record(collection)})
