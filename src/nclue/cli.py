"""The ``nclue`` command line: thin, one command → one library call.

Each package contributes its commands through a ``register(app)`` function in its
``commands`` module; heavy imports (torch, bm25s) happen inside the command bodies so
``nclue --help`` stays fast. A :class:`~nclue.errors.NclueError` becomes one red line
on stderr and its exit code, never a traceback.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from nclue import __version__
from nclue.errors import NclueError

app = typer.Typer(
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


COMMAND_MODULES = (
    "nclue.corpus.commands",
    "nclue.index.commands",
    "nclue.models.commands",
    "nclue.systems.commands",
    "nclue.bench.commands",
    "nclue.evaluate.commands",
    "nclue.report.commands",
    "nclue.select.commands",
)


def _register_all() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


_register_all()


def main() -> None:
    """Console-script entry point: run the app, turning NclueError into a one-line message."""
    try:
        app(standalone_mode=False)
    except NclueError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        Console(stderr=True).print("aborted")
        sys.exit(130)
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
