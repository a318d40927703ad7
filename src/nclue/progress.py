"""One progress protocol for every long job, and the one terminal renderer of it.

A stage-aware job takes ``progress: Progress`` and calls ``progress(stage, advance, total)``:
``stage`` names the unit of work (``"documents"``, ``"dense chunks"``, ``"queries: bm25.and"``),
``advance`` is how many units were finished since the last call (0 to announce), ``total`` the
stage's size when it becomes known (``None``: unchanged or unknown). An inner loop that works
within one stage takes an :data:`Advance` — ``advance(n)`` — made by :func:`stage_advance`. Those
jobs never draw: the CLI passes :func:`progress_bars`' callback, a test collects the events
with ``lambda *event: events.append(event)``, or passes :func:`quiet`.

The public API (:mod:`nclue.api`) once took ``progress: bool``; :func:`as_progress` still turns
``True``/``False`` into bars or quiet, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Protocol

from nclue.api_args import is_bool, refuse

Advance = Callable[[int], None]
"""``advance(n)``: ``n`` more units of the current stage are done."""


class Progress(Protocol):
    """``progress(stage, advance, total)``; see the module docstring."""

    def __call__(self, stage: str, advance: int, total: int | None) -> None: ...


def quiet(stage: str, advance: int, total: int | None) -> None:
    """The progress callback that reports nothing (the default of every job)."""


def stage_advance(progress: Progress, stage: str, total: int | None = None) -> Advance:
    """``advance(n)`` for one stage of ``progress`` (what inner loops are given); announces
    the stage with its ``total`` first when one is given.

    Every job reports through here, so a job handed the old ``progress=True``/``False`` gets
    :func:`quiet` and a :class:`DeprecationWarning` (bars need :func:`progress_bars`), and
    anything else that is not callable an :class:`~nclue.errors.NclueError` — never a bare
    ``TypeError`` from deep inside the job."""
    if is_bool(progress):
        warnings.warn(
            f"progress={bool(progress)} is deprecated and draws nothing: pass a progress callback, e.g. "
            "`with nclue.progress.progress_bars() as bar: job(..., progress=bar)`, or leave it out",
            DeprecationWarning,
            stacklevel=3,
        )
        progress = quiet
    elif not callable(progress):
        raise refuse(
            "progress", "a progress callback progress(stage, advance, total)", progress, "nclue.progress.quiet"
        )
    if total is not None:
        progress(stage, 0, total)
    return lambda n: progress(stage, n, None)


@contextmanager
def progress_bars(transient: bool = False, enabled: bool = True) -> Iterator[Progress]:
    """A rich bar per stage on stderr (description, bar, done/total, elapsed); yields the callback.

    Nothing is drawn until the first stage is reported (a job that fails first prints only its
    error); ``enabled=False`` yields :func:`quiet` and draws nothing (a CLI's ``--no-progress``).
    """
    if not enabled:
        yield quiet
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bars

    bars = Bars(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=transient,
    )
    tasks: dict[str, int] = {}

    def report(stage: str, advance: int, total: int | None) -> None:
        if stage not in tasks and total == 0 and not advance:
            return  # nothing to do in this stage (a resumed job): no 0/0 bar
        if not tasks:
            bars.start()
        if stage not in tasks:
            tasks[stage] = bars.add_task(stage, total=total)
        elif total is not None:
            bars.update(tasks[stage], total=total)
        if advance:
            bars.advance(tasks[stage], advance)

    try:
        yield report
    finally:
        if tasks:
            bars.stop()


def as_progress(value: object, caller: str) -> AbstractContextManager[Progress]:
    """A public function's ``progress`` argument as a context manager that yields a :class:`Progress`.

    A callback is yielded as given. ``True``/``False`` — the old ``progress: bool`` — still mean
    bars on stderr (:func:`progress_bars`) or :func:`quiet`, with a :class:`DeprecationWarning`
    pointing at ``caller``'s caller. Anything else is an :class:`~nclue.errors.NclueError` naming
    ``progress``.
    """
    if is_bool(value):
        warnings.warn(
            f"{caller}(progress={bool(value)}) is deprecated: pass a progress callback, e.g. "
            f"`from nclue.progress import progress_bars`, `with progress_bars() as bar: {caller}(..., progress=bar)`, "
            "or leave it out for quiet",
            DeprecationWarning,
            stacklevel=3,
        )
        return progress_bars(enabled=bool(value))
    if callable(value):
        return nullcontext(value)
    raise refuse("progress", "a progress callback progress(stage, advance, total)", value, "nclue.progress.quiet")
