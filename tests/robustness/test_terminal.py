"""Escape sequences from PDFs and folder names never reach the terminal (issue 28, cause 6)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nclue.tables import Table, render, terminal_text

OSC_TITLE = "\x1b]0;pwned\x07"
CSI_RED = "\x1b[31m"
OSC_LINK = "\x1b]8;;https://evil.example\x1b\\"


def test_terminal_text_replaces_every_control_that_starts_a_sequence() -> None:
    text = f"a{OSC_TITLE}b{CSI_RED}c\x9bd\te\nf\x7f"
    safe = terminal_text(text)
    assert not any(ch in safe for ch in "\x1b\x07\x9b\x7f") and "\te\nf" in safe
    assert "\x1b" not in render(Table(("x",), ((text,),), caption=OSC_TITLE), "table")


def _poison(coll: Path) -> str:
    """Put escape sequences into one page's text and into every document's source name; return the page's doc."""
    from nclue.corpus.store import DOCS_FILE, PAGES_FILE, write_table_atomic
    from nclue.index.lexical import build_lexical_index

    pages = pq.read_table(coll / PAGES_FILE)
    texts = pages.column("text").to_pylist()
    row = next(i for i, t in enumerate(texts) if "footnote" in t.lower())
    texts[row] = f"footnotes {OSC_TITLE}{CSI_RED}{OSC_LINK} line numbering " + texts[row]
    pages = pages.set_column(pages.schema.get_field_index("text"), "text", pa.array(texts))
    write_table_atomic(coll / PAGES_FILE, pages)
    docs = pq.read_table(coll / DOCS_FILE)
    sources = pc.binary_join_element_wise(docs.column("source"), pa.scalar(OSC_TITLE), "")
    write_table_atomic(coll / DOCS_FILE, docs.set_column(docs.schema.get_field_index("source"), "source", sources))
    build_lexical_index(coll)
    return pages.column("doc_id")[row].as_py()


def test_search_and_collection_info_print_no_escape_sequence(cli, indexed: Path) -> None:  # noqa: ANN001
    _poison(indexed)
    search = cli("search", indexed, '"footnotes"; "line numbering"', "-k", "20")
    assert search.exit_code == 0, search.output
    assert "footnotes" in search.output and "\x1b" not in search.output and "\x07" not in search.output
    info = cli("collection", "info", indexed)
    assert info.exit_code == 0, info.output
    assert "\x1b" not in info.output and "\x07" not in info.output
