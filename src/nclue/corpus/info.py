"""``nclue collection info``: what a page store holds, and the extraction quality gate.

The gate (``docs/construction.md#extraction-gate``): per ``source``, the share of pages with *usable text* — at
least ``min_chars`` non-whitespace characters (default 10, about two words; blank pages
and pages holding only a page number fall below it) — must reach ``threshold``
(default 0.98). A file that failed to ingest has no page rows, but it stays in its
source's denominator: it counts as ``max(n_pages, 1)`` unusable pages (its page count
when PDFium could read one, else one page), so a source cannot pass by losing its
unreadable files. :func:`extraction_gate` computes the gate; ``nclue build`` enforces it
(``docs/construction.md#extraction-gate``).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import numpy as np

from nclue.corpus.store import PageStore, collection_record, require_consistent

DEFAULT_THRESHOLD = 0.98
DEFAULT_MIN_CHARS = 10


def non_space_chars(texts: list[str]) -> np.ndarray:
    """int64 count of non-whitespace characters of each text."""
    return np.fromiter((len("".join(t.split())) for t in texts), dtype=np.int64, count=len(texts))


def extraction_gate(
    store: PageStore, threshold: float = DEFAULT_THRESHOLD, min_chars: int = DEFAULT_MIN_CHARS
) -> dict[str, Any]:
    """The per-source extraction gate of an opened page store.

    Returns ``threshold``, ``min_chars``, ``passed`` (every source passed) and ``sources``:
    per source (sorted) ``documents`` (status ok), ``failed_files``, ``pages`` (extracted
    page rows), ``failed_pages`` (``Σ max(n_pages, 1)`` over its failed files), ``usable_pages``,
    ``usable_share = usable_pages / (pages + failed_pages)`` and ``passed``
    (``usable_share ≥ threshold`` with a non-zero denominator). Duplicates are not counted:
    their content is ingested once, under the original.
    """
    docs = store.docs.to_pydict()
    rows = list(zip(docs["doc_id"], docs["source"], docs["status"], docs["n_pages"], strict=True))
    doc_source = {doc_id: source for doc_id, source, status, _ in rows if status == "ok"}
    failed = Counter(source for _, source, status, _ in rows if status not in ("ok", "duplicate"))
    failed_pages: Counter[str] = Counter()
    for _, source, status, n_pages in rows:
        if status not in ("ok", "duplicate"):
            failed_pages[source] += max(int(n_pages or 0), 1)
    usable = non_space_chars(store.texts) >= min_chars
    page_source = np.array([doc_source[d] for d in store.pages.column("doc_id").to_pylist()], dtype=object)
    sources = []
    for source in sorted(set(doc_source.values()) | set(failed)):
        mask = page_source == source
        n_pages = int(mask.sum())
        n_usable = int(usable[mask].sum())
        denominator = n_pages + failed_pages.get(source, 0)
        share = n_usable / denominator if denominator else 0.0
        sources.append(
            {
                "source": source,
                "documents": sum(1 for s in doc_source.values() if s == source),
                "failed_files": failed.get(source, 0),
                "pages": n_pages,
                "failed_pages": failed_pages.get(source, 0),
                "usable_pages": n_usable,
                "usable_share": round(share, 6),
                "passed": bool(denominator and share >= threshold),
            }
        )
    return {
        "threshold": threshold,
        "min_chars": min_chars,
        "passed": bool(sources) and all(s["passed"] for s in sources),
        "sources": sources,
    }


def collection_info(
    collection_dir: str | os.PathLike[str],
    threshold: float = DEFAULT_THRESHOLD,
    min_chars: int = DEFAULT_MIN_CHARS,
) -> dict[str, Any]:
    """Counts, failures by reason, page methods and the per-source gate of a collection.

    Keys: ``collection``, ``files`` (rows of docs.parquet), ``documents`` (status ok),
    ``pages``, ``characters``, ``methods`` (pages per extraction method), ``duplicates``,
    ``failures`` (reason → files), ``gate`` (:func:`extraction_gate`). A collection whose
    ``docs.parquet`` and ``pages.parquet`` disagree is refused (:func:`require_consistent`).
    """
    require_consistent(collection_dir)
    store = PageStore.open(collection_dir)
    statuses = Counter(store.docs.column("status").to_pylist())
    meta = collection_record(collection_dir, strict=True)
    return {
        "collection": str(collection_dir),
        "ocr": meta.get("ocr"),
        "files": store.docs.num_rows,
        "documents": statuses.get("ok", 0),
        "pages": store.n_pages,
        "characters": int(np.asarray(store.pages.column("n_chars").to_numpy(), dtype=np.int64).sum()),
        "methods": dict(sorted(Counter(store.pages.column("method").to_pylist()).items())),
        "duplicates": statuses.get("duplicate", 0),
        "failures": dict(sorted((k, v) for k, v in statuses.items() if k not in ("ok", "duplicate"))),
        "gate": extraction_gate(store, threshold, min_chars),
    }


def render_info(info: dict[str, Any]) -> Any:
    """A Rich renderable (summary table + gate table) for :func:`collection_info`'s dict."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from nclue.tables import terminal_text

    summary = Table(title=Text(terminal_text(f"collection {info['collection']}")), show_header=False)
    summary.add_column("what")
    summary.add_column("value", justify="right")
    summary.add_row("files", f"{info['files']:,}")
    summary.add_row("documents (ok)", f"{info['documents']:,}")
    summary.add_row("pages", f"{info['pages']:,}")
    summary.add_row("characters", f"{info['characters']:,}")
    for method, count in info["methods"].items():
        summary.add_row(f"pages by {method}", f"{count:,}")
    summary.add_row("duplicates (ingested once)", f"{info['duplicates']:,}")
    for reason, count in info["failures"].items():
        summary.add_row(Text(terminal_text(f"failed: {reason}")), f"{count:,}")
    gate = info["gate"]
    table = Table(
        title=f"extraction gate: ≥ {gate['threshold']:.0%} of pages with ≥ {gate['min_chars']} non-space chars"
    )
    for name in ("source", "documents", "failed", "pages", "failed pages", "usable", "share", "gate"):
        table.add_column(name, justify="left" if name == "source" else "right")
    for row in gate["sources"]:
        table.add_row(
            Text(terminal_text(row["source"])),
            f"{row['documents']:,}",
            f"{row['failed_files']:,}",
            f"{row['pages']:,}",
            f"{row['failed_pages']:,}",
            f"{row['usable_pages']:,}",
            f"{row['usable_share']:.2%}",
            "[green]pass[/]" if row["passed"] else "[red]FAIL[/]",
        )
    return Group(summary, table)
