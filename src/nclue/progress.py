"""One progress protocol for every long job, and the one terminal renderer of it.

A stage-aware job takes ``progress: Progress`` and calls ``progress(stage, advance, total)``:
``stage`` names the unit of work (``"mine"``, ``"pools"``), ``advance`` is how many units were
finished since the last call (0 to announce), ``total`` the stage's size when it becomes known
(``None``: unchanged or unknown). An inner loop that works within one stage takes an
:data:`Advance` — ``advance(n)`` — made by :func:`stage_advance`. Those jobs never draw: the CLI
passes :func:`progress_bars`' callback, a test passes a list's ``append`` or :func:`quiet`.

Not yet on this protocol: the index builds, ``ingest`` and ``run_systems`` take ``progress: bool``
(draw their own rich bars on stderr when true), as the public API (:mod:`nclue.api`) does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

Advance = Callable[[int], None]
"""``advance(n)``: ``n`` more units of the current stage are done."""


class Progress(Protocol):
    """``progress(stage, advance, total)``; see the module docstring."""

    def __call__(self, stage: str, advance: int, total: int | None) -> None: ...


def quiet(stage: str, advance: int, total: int | None) -> None:
    """The progress callback that reports nothing (the default of every job)."""


def stage_advance(progress: Progress, stage: str) -> Advance:
    """``advance(n)`` for one stage of ``progress`` (what inner loops are given)."""
    return lambda n: progress(stage, n, None)


@contextmanager
def progress_bars(transient: bool = False) -> Iterator[Progress]:
    """A rich bar per stage on stderr (description, bar, done/total, elapsed); yields the callback."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bars

    with Bars(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=transient,
    ) as bars:
        tasks: dict[str, int] = {}

        def report(stage: str, advance: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bars.add_task(stage, total=total)
            elif total is not None:
                bars.update(tasks[stage], total=total)
            if advance:
                bars.advance(tasks[stage], advance)

        yield report
