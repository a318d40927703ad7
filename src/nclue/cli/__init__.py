"""The ``nclue`` command line: thin, one command → one library call.

Each command is a module-level function in this package that parses its options (choices
are enums, defaults come from the library's parameter dataclasses) and makes one library
call; heavy imports (torch, bm25s, scipy) happen inside the command bodies so ``nclue --help``
stays fast. Usage errors (a wrong option, a missing argument, a value out of range) print
typer's usage message and exit 2. A :class:`~nclue.errors.NclueError` prints one line on
stderr — the message as written, never interpreted as markup — and exits with its code,
never a traceback. A :class:`~nclue.llm.cache.BatchPending` (prompts written to a batch file, waiting
for answers) prints one ``pending:`` line and exits 3.
"""

from __future__ import annotations

import typer
from typer.core import TyperGroup

from nclue._version import __version__
from nclue.cli import (
    audit,
    bench,
    corpus,
    coverage,
    demo,
    evidence,
    index,
    models,
    report,
    retrieval,
    scoring,
    structure,
)
from nclue.errors import NclueError


def print_error(message: str, label: str = "error") -> None:
    """One red ``error:`` line (or a yellow ``pending:`` line) on stderr; ``message`` is printed literally."""
    from rich.console import Console
    from rich.markup import escape

    from nclue.tables import terminal_text

    style = "bold yellow" if label == "pending" else "bold red"
    Console(stderr=True).print(
        f"[{style}]{label}:[/] {escape(terminal_text(message))}", highlight=False, soft_wrap=True
    )


class NclueGroup(TyperGroup):
    """The root command group: a :class:`NclueError` anywhere below becomes one line and its exit code."""

    def invoke(self, ctx):  # noqa: ANN001, ANN201 - click's Context and return value
        try:
            return super().invoke(ctx)
        except NclueError as exc:
            from nclue.llm.cache import BatchPending

            print_error(str(exc), "pending" if isinstance(exc, BatchPending) else "error")
            ctx.exit(exc.exit_code)


app = typer.Typer(
    cls=NclueGroup,
    name="nclue",
    help=(
        "Conjunctive cross-page retrieval over long PDFs: build benchmarks, run retrievers, "
        "score them honestly.\n\n"
        "Example: nclue corpus fetch debian-docs ./pdfs && nclue ingest ./pdfs ./coll"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nclue {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """nclue — find the document that covers every condition."""


for module in (corpus, index, structure, models, retrieval, bench, scoring, report, evidence, coverage, audit, demo):
    module.register(app)


def main() -> None:
    """Console-script entry point: typer's standalone mode (usage errors exit 2, NclueError one line)."""
    app()
