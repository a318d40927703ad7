"""``nclue report`` (paper-style tables and plots) and ``nclue reproduce --verify``."""

from __future__ import annotations

from pathlib import Path

import typer

from nclue.errors import NclueError
from nclue.types import DEFAULT_SEED


def report(
    bench: Path = typer.Argument(..., help="Benchmark release directory (queries.jsonl, qrels.jsonl)."),
    run_dir: Path = typer.Argument(..., help="Run directory written by `nclue run --matrix`."),
    out: Path = typer.Option(..., "-o", "--out", help="Report directory to write."),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=1, max=100_000, help="Exact-family bootstrap replicates."),
    draws: int = typer.Option(10000, "--draws", min=1, max=1_000_000, help="Randomization draws for the paired tests."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of every random step."),
) -> None:
    """Write the paper-style report: scorecard, controls, forms, contrasts, strata, plots.

    Example: nclue report bench/ runs/ -o report/
    """
    from nclue.report.paper import compute_report, write_report

    data = compute_report(bench, run_dir, n_boot=bootstrap, n_draws=draws, seed=seed)
    write_report(data, out, run_dir)
    typer.echo(f"report written: {out / 'index.md'} (numbers frozen in {run_dir / 'frozen.json'})")


def reproduce(
    bench: Path = typer.Argument(..., help="Benchmark release directory."),
    run_dir: Path = typer.Argument(..., help="Run directory holding frozen.json from `nclue report`."),
    verify_flag: bool = typer.Option(False, "--verify", help="Check every file hash and every table cell."),
    tolerance: float = typer.Option(0.05, "--tolerance", min=0.0, help="Allowed drift of an aggregate, in points."),
    out: Path | None = typer.Option(None, "-o", "--out", help="Also write the recomputed report here."),
) -> None:
    """Recompute every table from the frozen runs and qrels; with --verify fail on any drift.

    Example: nclue reproduce bench/ runs/ --verify
    """
    from rich.console import Console

    from nclue.report.paper import write_report
    from nclue.report.reproduce import verify

    if not verify_flag and out is None:
        raise NclueError("nothing to do: pass --verify to check the frozen report, or -o DIR to rewrite it")
    result = verify(bench, run_dir, tolerance)
    console = Console()
    if out is not None and result.recomputed is not None:
        write_report(result.recomputed, out, None)
    for line in result.hash_failures + result.cell_failures:
        console.print(f"✗ {line}", style="red", markup=False, highlight=False)
    if verify_flag and not result.ok:
        raise NclueError(
            f"reproduce failed: {len(result.hash_failures)} file hash(es) and {len(result.cell_failures)} "
            f"of {result.cells_checked} cells differ",
            exit_code=1,
        )
    console.print(
        f"✓ reproduced: {result.cells_checked} cells within {tolerance} points; every input hash matches",
        style="green",
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``report`` and ``reproduce``."""
    app.command("report")(report)
    app.command("reproduce")(reproduce)
