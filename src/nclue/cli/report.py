"""``nclue report`` (paper-style tables, studies, plots, HTML) and ``nclue reproduce --verify``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.errors import NclueError
from nclue.types import DEFAULT_SEED

_TOLERANCES = {"points": 0.05, "p": 0.001, "rho": 0.001}


class StudyMetric(str, Enum):
    """The per-query metric of Table S1i and the SourceShift per-source deltas."""

    gold_ndcg = "gold_ndcg"
    n_clue_score = "n_clue_score"


def report(
    bench: Path = typer.Argument(..., help="Benchmark release directory (queries.jsonl, qrels.jsonl)."),
    run_dir: Path = typer.Argument(..., help="Run directory written by `nclue run --matrix`."),
    out: Path = typer.Option(..., "-o", "--out", help="Report directory to write."),
    collection: Path | None = typer.Option(
        None,
        "--collection",
        help="Collection the runs searched: runs the condition-masking study (Table S5a) into OUT/masking "
        "(or --masking) and renders the label figure from the PDFs.",
    ),
    masking: Path | None = typer.Option(
        None,
        "--masking",
        help="Folder of masked runs (Table S5a) to read, and with --collection to write; default OUT/masking.",
    ),
    shift: tuple[Path, Path] | None = typer.Option(
        None, "--shift", help="SourceShift release and run directory (Tables S3–S4, S1i's second column)."
    ),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=1, max=100_000, help="Exact-family bootstrap replicates."),
    draws: int = typer.Option(10000, "--draws", min=1, max=1_000_000, help="Randomization draws for the paired tests."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", min=0, help="Seed of every random step."),
    qrels: Path | None = typer.Option(
        None,
        "--qrels",
        help="Score every table on this qrels version (e.g. audit/qrels.v2.jsonl) instead of BENCH's own.",
    ),
    shift_qrels: Path | None = typer.Option(
        None,
        "--shift-qrels",
        help="Score the SourceShift tables on this qrels copy (the final copy of its challenge and tie-breaks).",
    ),
    study_metric: StudyMetric = typer.Option(
        StudyMetric.gold_ndcg,
        "--study-metric",
        help="Per-query metric of Table S1i and the SourceShift per-source deltas (the seed's: gold_ndcg).",
    ),
    keep_zero_gold: bool = typer.Option(
        False,
        "--keep-zero-gold",
        help="With --qrels/--shift-qrels: keep queries the version leaves without a gold, scored as misses "
        "(default: dropped with their rows, as after the supplement's repair and in `nclue audit impact`).",
    ),
) -> None:
    """Write the paper-style report: scorecard, controls, forms, contrasts, strata, studies, plots, index.html.

    Everything is written under OUT (with the masked runs in OUT/masking and the freeze in
    OUT/frozen.json); BENCH and RUN_DIR are only read.

    Example: nclue report bench/ runs/ -o report/ --collection coll/ --shift shift-bench/ shift-runs/

    Example (the same tables on repaired labels): nclue report bench/ runs/ -o report-v2/ --qrels audit/qrels.v2.jsonl

    Example (SourceShift on its final qrels copy): nclue report bench/ runs/ -o report/ --shift shift-bench/ shift-runs/
    --shift-qrels shift-challenge/qrels.v3.jsonl
    """
    from rich.console import Console

    from nclue.matrix.runset import RunSet
    from nclue.progress import progress_bars
    from nclue.report.masking import MASK_DIR
    from nclue.report.paper import compute_report, frozen_name, write_report

    console = Console(stderr=True)
    masking_dir = masking if masking is not None else out / MASK_DIR
    if collection is not None:
        from nclue.report.masking import run_masking, systems_to_mask
        from nclue.report.provenance import check_collection, check_run_files

        runset = RunSet.open(run_dir)
        check_collection(collection, runset)
        check_run_files(runset)
        form, fair = runset.form, runset.fair()
        with progress_bars(transient=True) as bar:
            produced = run_masking(bench, collection, masking_dir, systems_to_mask(fair), form, progress=bar)
        console.print(f"masking: {len(produced)} masked run(s) written to {masking_dir}", markup=False)
    if shift_qrels is not None and shift is None:
        raise NclueError("--shift-qrels scores the SourceShift tables: give the release and runs with --shift too")
    data = compute_report(
        bench,
        run_dir,
        n_boot=bootstrap,
        n_draws=draws,
        seed=seed,
        shift=shift,
        qrels=qrels,
        masking_dir=masking_dir,
        shift_qrels=shift_qrels,
        study_metric=study_metric.value,
        keep_zero_gold=keep_zero_gold,
    )
    write_report(data, out, collection)
    typer.echo(
        f"report written: {out / 'index.html'} and {out / 'index.md'} (numbers frozen in {out / frozen_name(qrels)})"
    )
    for line in data.skipped():
        console.print(f"not computed: {line}", markup=False, highlight=False)


def reproduce(
    bench: Path = typer.Argument(..., help="Benchmark release directory."),
    run_dir: Path = typer.Argument(..., help="Run directory the report read."),
    report_dir: Path | None = typer.Argument(
        None, help="Report directory holding frozen.json (`nclue report -o`); omitted: a freeze in RUN_DIR."
    ),
    verify_flag: bool = typer.Option(False, "--verify", help="Check every file hash and every table cell."),
    tolerance: float = typer.Option(
        _TOLERANCES["points"], "--tolerance", min=0.0, help="Allowed drift of a percentage-point value."
    ),
    p_tolerance: float = typer.Option(_TOLERANCES["p"], "--p-tolerance", min=0.0, help="Allowed drift of a p-value."),
    rho_tolerance: float = typer.Option(
        _TOLERANCES["rho"], "--rho-tolerance", min=0.0, help="Allowed drift of ρ, an AUC, a share or a coefficient."
    ),
    out: Path | None = typer.Option(None, "-o", "--out", help="Also write the recomputed report here."),
    coverage: Path | None = typer.Option(
        None, "--coverage", help="Also verify a coverage study (the folder `nclue demo` writes as OUT/coverage)."
    ),
    qrels: Path | None = typer.Option(None, "--qrels", help="Check the report frozen on this qrels version."),
) -> None:
    """Recompute every table from the frozen runs and qrels; with --verify fail on any drift.

    Counts must match exactly; every file the release lists (SHA256SUMS) and every run file must keep its hash.

    Example: nclue reproduce bench/ runs/ report/ --verify

    Example: nclue reproduce nclue-demo/bench nclue-demo/runs nclue-demo/report --verify --coverage nclue-demo/coverage
    """
    from rich.console import Console

    from nclue.report.paper import write_report
    from nclue.report.reproduce import Tolerances, verify

    if not verify_flag and out is None:
        raise NclueError("nothing to do: pass --verify to check the frozen report, or -o DIR to rewrite it")
    limits = Tolerances(points=tolerance, p=p_tolerance, rho=rho_tolerance)
    result = verify(bench, run_dir, report_dir, limits, coverage, qrels)
    console = Console()
    if out is not None and result.recomputed is not None:
        write_report(result.recomputed, out)
    for line in result.hash_failures + result.cell_failures:
        console.print(f"✗ {line}", style="red", markup=False, highlight=False)
    if verify_flag and not result.ok:
        raise NclueError(
            f"reproduce failed: {len(result.hash_failures)} file problem(s) and {len(result.cell_failures)} "
            f"of {result.cells_checked} cells differ",
            exit_code=1,
        )
    console.print(
        f"✓ reproduced: {result.cells_checked} cells (points within {limits.points}, p-values within {limits.p}, "
        f"ρ/AUC/coefficients within {limits.rho}, counts exact); {result.files_checked} input files keep their "
        "SHA-256 and the release's SHA256SUMS holds",
        style="green",
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``report`` and ``reproduce``."""
    app.command("report")(report)
    app.command("reproduce")(reproduce)
