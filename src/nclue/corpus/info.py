"""``nclue collection info``: what a page store holds, and the extraction quality gate.

The gate (``docs/construction.md#extraction-gate``): per ``source``, the share of page rows with *usable text* — at
least ``min_chars`` non-whitespace characters (default 10, about two words; blank pages
and pages holding only a page number fall below it) — must reach ``threshold``
(default 0.98). Failed files do not contribute page rows; they are counted by reason.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from nclue.corpus.store import META_FILE, PageStore
from nclue.errors import NclueError

DEFAULT_THRESHOLD = 0.98
DEFAULT_MIN_CHARS = 10


def non_space_chars(texts: list[str]) -> np.ndarray:
    """int64 count of non-whitespace characters of each text."""
    return np.fromiter((len("".join(t.split())) for t in texts), dtype=np.int64, count=len(texts))


def collection_info(
    collection_dir: str | os.PathLike[str],
    threshold: float = DEFAULT_THRESHOLD,
    min_chars: int = DEFAULT_MIN_CHARS,
) -> dict[str, Any]:
    """Counts, failures by reason, page methods and the per-source gate of a collection.

    Keys: ``collection``, ``files`` (rows of docs.parquet), ``documents`` (status ok),
    ``pages``, ``characters``, ``methods`` (pages per extraction method), ``duplicates``,
    ``failures`` (reason → files), ``gate`` (``threshold``, ``min_chars``, ``passed`` and
    ``sources``: per source ``documents``, ``failed_files``, ``pages``, ``usable_pages``,
    ``usable_share``, ``passed``; a source whose files all failed has no pages and fails).
    """
    store = PageStore.open(collection_dir)
    docs = store.docs.to_pydict()
    statuses = Counter(docs["status"])
    rows = list(zip(docs["doc_id"], docs["source"], docs["status"], strict=True))
    doc_source = {doc_id: source for doc_id, source, status in rows if status == "ok"}
    failed = Counter(source for _, source, status in rows if status not in ("ok", "duplicate"))
    usable = non_space_chars(store.texts) >= min_chars
    page_source = np.array([doc_source[d] for d in store.pages.column("doc_id").to_pylist()], dtype=object)
    sources = []
    for source in sorted(set(doc_source.values()) | set(failed)):
        mask = page_source == source
        n_pages = int(mask.sum())
        n_usable = int(usable[mask].sum())
        share = n_usable / n_pages if n_pages else 0.0
        sources.append(
            {
                "source": source,
                "documents": sum(1 for s in doc_source.values() if s == source),
                "failed_files": failed.get(source, 0),
                "pages": n_pages,
                "usable_pages": n_usable,
                "usable_share": round(share, 6),
                "passed": bool(n_pages and share >= threshold),
            }
        )
    meta_path = Path(collection_dir) / META_FILE
    try:
        meta = json.loads(meta_path.read_text("utf-8")) if meta_path.is_file() else {}
    except (OSError, ValueError) as exc:
        raise NclueError(
            f"{meta_path}: damaged ({type(exc).__name__}); re-ingest with `nclue ingest PDF_DIR {collection_dir}` "
            "(unchanged PDFs are not extracted again)"
        ) from None
    if not isinstance(meta, dict):
        raise NclueError(f"{meta_path}: not a JSON object; re-ingest with `nclue ingest PDF_DIR {collection_dir}`")
    return {
        "collection": str(collection_dir),
        "ocr": meta.get("ocr"),
        "files": len(docs["doc_id"]),
        "documents": statuses.get("ok", 0),
        "pages": store.n_pages,
        "characters": int(np.asarray(store.pages.column("n_chars").to_numpy(), dtype=np.int64).sum()),
        "methods": dict(sorted(Counter(store.pages.column("method").to_pylist()).items())),
        "duplicates": statuses.get("duplicate", 0),
        "failures": dict(sorted((k, v) for k, v in statuses.items() if k not in ("ok", "duplicate"))),
        "gate": {
            "threshold": threshold,
            "min_chars": min_chars,
            "passed": bool(sources) and all(s["passed"] for s in sources),
            "sources": sources,
        },
    }


def render_info(info: dict[str, Any]) -> Any:
    """A Rich renderable (summary table + gate table) for :func:`collection_info`'s dict."""
    from rich.console import Group
    from rich.table import Table

    summary = Table(title=f"collection {info['collection']}", show_header=False)
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
        summary.add_row(f"failed: {reason}", f"{count:,}")
    gate = info["gate"]
    table = Table(
        title=f"extraction gate: ≥ {gate['threshold']:.0%} of pages with ≥ {gate['min_chars']} non-space chars"
    )
    for name in ("source", "documents", "failed", "pages", "usable", "share", "gate"):
        table.add_column(name, justify="left" if name == "source" else "right")
    for row in gate["sources"]:
        table.add_row(
            row["source"],
            f"{row['documents']:,}",
            f"{row['failed_files']:,}",
            f"{row['pages']:,}",
            f"{row['usable_pages']:,}",
            f"{row['usable_share']:.2%}",
            "[green]pass[/]" if row["passed"] else "[red]FAIL[/]",
        )
    return Group(summary, table)
