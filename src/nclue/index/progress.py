"""The progress bar of index builds: chunks done out of chunks to do (quiet unless asked)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from nclue.progress import Advance


@contextmanager
def chunk_progress(kind: str, label: str, total: int, progress: bool) -> Iterator[Advance]:
    """Yield ``advance(n)``; a rich bar ``<kind> <label> ▕███▏ done/total chunks`` when ``progress``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn(f"[bold]{kind}[/] {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("chunks"),
        TimeRemainingColumn(),
        disable=not progress,
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)
