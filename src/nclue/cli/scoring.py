"""``nclue evaluate`` (scorecard with intervals) and ``nclue compare`` (paired contrasts)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.tables import Format
from nclue.types import DEFAULT_SEED


class CiKind(str, Enum):
    """Bootstrap unit of the scorecard intervals (``docs/statistics.md``)."""

    family = "family"
    query = "query"
    none = "none"


def _warn(messages: list[str]) -> None:
    from rich.console import Console

    console = Console(stderr=True)
    for message in messages:
        console.print(f"warning: {message}", style="yellow", markup=False, highlight=False, soft_wrap=True)


def _emit(text: str, output: Path | None) -> None:
    from nclue.errors import NclueError
    from nclue.io import atomic_write_text

    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    if output.is_dir():
        raise NclueError(f"{output}: is a directory; give a file name for --output, e.g. {output / 'scorecard.md'}")
    try:
        atomic_write_text(output, text)
    except OSError as exc:
        raise NclueError(f"{output}: cannot write ({exc.strerror or exc}); choose a writable location") from None


def evaluate(
    bench: Path = typer.Argument(..., help="Benchmark release directory (queries.jsonl + qrels)."),
    runs: list[Path] = typer.Argument(..., help="Run files: TREC six-column or nclue JSONL (.jsonl)."),
    k: int = typer.Option(10, "-k", "--k", min=1, max=1000, help="Rank cutoff."),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
    ci: CiKind = typer.Option(CiKind.family, "--ci", help="Bootstrap unit."),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=1, max=100_000, help="Bootstrap replicates."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", min=0, help="Seed of every random step."),
    per_query: Path | None = typer.Option(None, "--per-query", help="Write per-query outcomes (JSONL) here."),
    qrels: Path | None = typer.Option(
        None, "--qrels", help="Qrels file to use instead of BENCH's (JSONL, BEIR .tsv, TREC)."
    ),
    with_strata: bool = typer.Option(False, "--strata", help="Add task-factor strata (n, L_min, |D+|)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
    plot: Path | None = typer.Option(
        None, "--plot", help="Write the ranked scorecard figure to PLOT.png and PLOT.pdf."
    ),
    measure: list[str] = typer.Option(
        [],
        "--measure",
        "-m",
        help="A standard IR measure by its ir_measures name, next to the n-Clue metrics (repeatable): "
        "nDCG@10, AP, RR, P@5, R@100, AP(rel=3) for golds only.",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Refuse a run that does not answer every query, names unknown query ids or documents, "
        "or cites pages a document lacks (without it: a warning, and a run-coverage table).",
    ),
) -> None:
    """Score runs: n-Clue Score, Gold Hit, Gold-NDCG, graded NDCG, M/P/G (percentage points).

    A run that answers only some queries is scored with the others as misses, and said so (stderr,
    and a run-coverage table in the report); --strict refuses it instead.

    Example: nclue evaluate ./bench runs/bm25.trec runs/fusion.jsonl --format markdown --strata

    Example: nclue evaluate ./bench runs/bm25.trec -m nDCG@10 -m AP -m R@100
    """
    from nclue.api import evaluate as run_evaluate

    card = run_evaluate(
        bench,
        runs,
        k=k,
        ci=ci.value,
        bootstrap=bootstrap,
        seed=seed,
        strata=with_strata,
        qrels=qrels,
        per_query=per_query,
        strict=strict,
        measures=measure,
    )
    _warn(list(card.warnings) + card.problems)
    if plot is not None:
        from nclue.report.plots import scorecard_plot

        scorecard_plot(card.runs, plot, label=f"n-Clue Score@{k} (pp)")
    _emit(card.render(fmt), output)


def compare(
    bench: Path = typer.Argument(..., help="Benchmark release directory."),
    base: Path = typer.Argument(..., help="The base run file."),
    variants: list[Path] = typer.Argument(..., help="Variant run files, each contrasted with BASE."),
    blocks: Path | None = typer.Option(
        None, "--blocks", help='JSON {"blocks": [{"name", "endpoints": [run, ...], "base"?, "display"?}]} for max-|T|.'
    ),
    k: int = typer.Option(10, "-k", "--k", min=1, max=1000, help="Rank cutoff."),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=1, max=100_000, help="Bootstrap replicates (family and crossed)."
    ),
    draws: int = typer.Option(10000, "--draws", min=1, max=1_000_000, help="Randomization draws."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", min=0, help="Seed of every random step."),
    qrels: Path | None = typer.Option(None, "--qrels", help="Qrels file to use instead of BENCH's."),
    sensitivity: bool = typer.Option(
        True, "--sensitivity/--no-sensitivity", help="Shared-document sensitivity analyses."
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
    plot: Path | None = typer.Option(None, "--plot", help="Write the Gold-Hit vs n-Clue delta plane to PLOT.png/.pdf."),
    strict: bool | None = typer.Option(
        None,
        "--strict/--no-strict",
        help="--strict: refuse any run that falls short of the benchmark; --no-strict: contrast runs as "
        "written. Default: refuse only runs that answer different queries.",
        show_default=False,
    ),
) -> None:
    """Paired contrasts VARIANT − BASE with family CIs, randomization tests, Holm, sensitivity.

    Runs that answer different sets of queries are refused (a contrast would set one run's answers
    against the other's misses) unless --no-strict is given.

    Example: nclue compare ./bench runs/bm25.trec runs/bm25.min.trec runs/bm25.distinct.trec --blocks blocks.json
    """
    from nclue.api import compare as run_compare

    result = run_compare(
        bench,
        base,
        variants,
        k=k,
        bootstrap=bootstrap,
        draws=draws,
        seed=seed,
        sensitivity=sensitivity,
        blocks=blocks,
        qrels=qrels,
        strict=strict,
    )
    _warn(list(result.warnings) + result.problems)
    if plot is not None:
        from nclue.report.plots import delta_plane_plot

        delta_plane_plot(result.contrasts, plot)
    _emit(result.render(fmt), output)


def register(app: typer.Typer) -> None:
    """Add ``evaluate`` and ``compare``."""
    app.command("evaluate")(evaluate)
    app.command("compare")(compare)
