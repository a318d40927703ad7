"""``nclue structure COLLECTION``: document structure (outline, headings, page roles) → ``structure.parquet``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.errors import NclueError


class Fonts(str, Enum):
    """Which pages PDFium reloads to read font size and weight (``nclue.corpus.structure.FONT_MODES``)."""

    auto = "auto"
    all = "all"
    off = "off"


def structure(
    collection: Path = typer.Argument(..., help="Collection directory (from `nclue ingest`)."),
    pdf_dir: Path = typer.Option(None, "--pdf-dir", help="Where the PDFs are (default: collection.json's pdf_dir)."),
    fonts: Fonts = typer.Option(
        Fonts.auto, "--fonts", help="auto: pages with Title-Case candidates | all pages | off (text layer only)."
    ),
    rebuild: bool = typer.Option(False, "--rebuild", help="Discard finished batches and extract again."),
    headings: bool = typer.Option(
        True, "--headings/--no-headings", help="Also embed every heading title (for the `struct` systems)."
    ),
) -> None:
    """Extract each document's structure into COLLECTION/structure.parquet (resumable).

    PDF bookmarks, heading lines of the text layer (numbering, font size/weight, Title-Case),
    running headers/footers left out, table-of-contents and index pages marked; then the
    heading titles are embedded with the bundled MiniLM for the `struct.*` systems.

    Example: nclue structure ./coll --fonts auto
    """
    from rich.console import Console

    from nclue.corpus.store import PageStore
    from nclue.corpus.structure import StructureParams, build_structure
    from nclue.progress import progress_bars, stage_advance

    console = Console(stderr=True)
    n_docs = len(PageStore.open(collection).doc_ids)
    with progress_bars() as bar:
        summary = build_structure(
            collection,
            StructureParams(fonts=fonts.value),
            pdf_dir=pdf_dir,
            rebuild=rebuild,
            tick=stage_advance(bar, "structure", n_docs),
        )
    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items())
    console.print(
        f"wrote {summary.path}: {summary.rows} rows from {summary.documents} documents ({counts})"
        + (f"; {summary.pdf_missing} PDFs missing or changed (text layer only)" if summary.pdf_missing else "")
        + (f"; {summary.resumed_batches} batches resumed" if summary.resumed_batches else "")
        + ("; up to date, nothing extracted (--rebuild to extract again)" if summary.reused else ""),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if headings:
        try:
            from nclue.index.heading_vectors import build_heading_vectors
        except ModuleNotFoundError as exc:
            raise NclueError(
                f"heading vectors need the neural extras ({exc.name} missing): pip install 'nclue[neural]'"
            ) from None
        with console.status("embedding heading titles"):
            path = build_heading_vectors(collection)
        console.print(f"wrote {path}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``structure``."""
    app.command("structure")(structure)
