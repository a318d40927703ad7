"""``nclue evidence …``: fit the page-evidence model on reader judgments, and score a fitted one
on another corpus's judgments."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.evidence.evidence_defaults import DEFAULT_SIGNALS
from nclue.tables import Format

evidence_app = typer.Typer(
    help=(
        "The page-evidence model that struct and coverage selection read: fit it on blind-reader "
        "judgments (fit), score it on another corpus's judgments (score).\n\n"
        "Example: nclue evidence fit nclue-demo/bench-shift-reader nclue-demo/shift-collection -o shift.json"
    ),
    no_args_is_help=True,
)


class LabelKind(str, Enum):
    """Which labels to fit on."""

    reader = "reader"
    qrels = "qrels"


def fit(
    bench: Path = typer.Argument(
        ..., help="Reader-judged release (judgments.jsonl), or any release with --labels qrels."
    ),
    collection: Path = typer.Argument(..., help="The release's collection, with lexical, dense and structure indexes."),
    out: Path = typer.Option(..., "-o", "--out", help="Calibration file to write (JSON)."),
    labels: LabelKind = typer.Option(
        LabelKind.reader, "--labels", help="reader: blind-reader judgments; qrels: the qrels evidence pages."
    ),
    signal: list[str] = typer.Option(list(DEFAULT_SIGNALS), "--signal", help="Evidence signal (repeatable)."),
    fmt: Format = typer.Option(Format.table, "--format", help="table, markdown, latex or json."),
) -> None:
    """Fit the evidence model (page model + document Platt scaling) with cross-fitting folds; print
    the weights and the held-out Brier, ECE and log-loss.

    Use it on the judgments of a corpus other than the one you will score (struct:NAME reads
    COLLECTION/calibration/NAME.json).

    Example: nclue evidence fit nclue-demo/bench-reader nclue-demo/collection -o dev.json
    """
    from nclue.evidence.fit import fit as run_fit
    from nclue.systems.registry import Workspace

    report = run_fit(bench, Workspace(collection), out, tuple(signal), labels.value)
    typer.echo(report.render(fmt), nl=False)


def score(
    calibration: str = typer.Argument(
        ..., help="Calibration file, or a shipped one: reader-debian-docs, reader-debian-docs-shift."
    ),
    bench: Path = typer.Argument(..., help="Reader-judged release whose judgments to score on."),
    collection: Path = typer.Argument(..., help="That release's collection."),
    labels: LabelKind = typer.Option(LabelKind.reader, "--labels", help="reader or qrels labels."),
    fmt: Format = typer.Option(Format.table, "--format", help="table, markdown, latex or json."),
) -> None:
    """Brier, ECE and log-loss of a calibration on the judgments of a release (the transfer check).

    Example: nclue evidence score reader-debian-docs-shift nclue-demo/bench-reader nclue-demo/collection
    """
    from nclue.evidence.fit import score as run_score
    from nclue.evidence.model import SHIPPED, Calibration
    from nclue.systems.registry import Workspace

    if calibration not in SHIPPED and not Path(calibration).is_file():
        from nclue.errors import NclueError

        raise NclueError(
            f"{calibration}: neither a calibration file nor a shipped calibration ({', '.join(SHIPPED)}); "
            "write one with `nclue evidence fit BENCH COLLECTION -o FILE`"
        )
    cal = Calibration.shipped(calibration) if calibration in SHIPPED else Calibration.load(Path(calibration))
    report = run_score(cal, bench, Workspace(collection), labels.value, name=calibration)
    typer.echo(report.render(fmt), nl=False)


evidence_app.command("fit")(fit)
evidence_app.command("score")(score)


def register(app: typer.Typer) -> None:
    """Add the ``evidence`` group."""
    app.add_typer(evidence_app, name="evidence")
