"""The coverage study of one benchmark in one call, and its verification (``make demo``,
``nclue reproduce --verify``; ``docs/coverage.md#reproduce``).

:func:`run_coverage` writes, under ``OUT``:

* ``tasks/`` — :func:`nclue.select.adapter.adapt_release` with a retrieved pool (default
  ``bm25.decompose(distinct)`` at depth 30; the qrels only judge it);
* ``calibration.json`` — the evidence calibration the freeze applies: the shipped one fitted on
  blind-reader judgments of a corpus whose sources the collection does not share
  (:func:`nclue.evidence.model.for_sources`), never on the qrels being scored;
* ``freeze/<UTC time>/`` — :func:`nclue.select.freeze.freeze` with every selector and that
  evidence, reused when the latest freeze still verifies against the same inputs and calibration;
* ``results/`` — :func:`nclue.select.evaluate.evaluate`.

Every step is deterministic, so a rerun rewrites identical files. :func:`verify_coverage`
recomputes ``results/summary.json`` from the frozen rankings and the judgments.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from nclue.errors import NclueError
from nclue.evidence.model import Calibration
from nclue.io import write_json
from nclue.progress import Progress, quiet
from nclue.select.adapter import adapt_release
from nclue.select.evaluate import CoverageVerification, evaluate, verify_report
from nclue.select.freeze import freeze, verify_freeze
from nclue.select.results import CoverageReport
from nclue.select.selection_defaults import DEFAULT_DEPTH, DEFAULT_POOL
from nclue.select.tasks import JUDGMENTS_FILE

TASKS_DIR = "tasks"
CALIBRATION_FILE = "calibration.json"
FREEZE_DIR = "freeze"
RESULTS_DIR = "results"


def _reusable(tasks: Path, frozen: Path, calibration: Calibration) -> bool:
    """Whether the latest freeze verifies and was made with this calibration."""
    if not frozen.is_dir():
        return False
    try:
        _, method = verify_freeze(tasks, frozen)
    except NclueError:
        return False
    evidence = method.get("evidence") or {}
    return evidence.get("calibration_sha256") == calibration.sha256 and evidence.get("crossfit") is False


def run_coverage(
    bench_dir: str | os.PathLike[str],
    collection_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    pool: str = DEFAULT_POOL,
    depth: int = DEFAULT_DEPTH,
    k: int = 5,
    encoder_kind: str = "onnx",
    progress: Progress = quiet,
    log: Callable[[str], None] | None = None,
) -> CoverageReport:
    """Adapt, choose the calibration, freeze (or reuse the freeze) and evaluate (module docstring);
    ``progress`` (:mod:`nclue.progress`) hears the adapter's stages (:func:`~nclue.select.adapter.adapt_release`)."""
    out = Path(out_dir)
    say = log if log is not None else (lambda _: None)
    tasks, frozen, results = out / TASKS_DIR, out / FREEZE_DIR, out / RESULTS_DIR
    adapted = adapt_release(bench_dir, collection_dir, tasks, k=k, pool=pool, depth=depth, progress=progress)
    say(f"adapted {adapted['tasks']} tasks, {adapted['documents']} documents ({adapted['pool']['rule']})")
    from nclue.corpus.store import PageStore

    sources = set(PageStore.open(collection_dir).docs.column("source").to_pylist())
    calibration = Calibration.load(None, sources)
    write_json(out / CALIBRATION_FILE, calibration.to_json())
    say(
        f"evidence calibration: fitted on {calibration.provenance.get('release')} ({calibration.provenance.get('labels')})"
    )
    if _reusable(tasks, frozen, calibration):
        say(f"the latest freeze in {frozen} still verifies; reusing it")
    else:
        made = freeze(tasks, frozen, encoder_kind=encoder_kind, k=k, calibration=calibration, crossfit=False)
        say(f"froze {made.manifest['tasks']} tasks → {made.path}")
    scored = evaluate(tasks, frozen, tasks / JUDGMENTS_FILE, results)
    say(f"scored {scored['all'].tasks} tasks → {results / 'results.md'}")
    return scored


def verify_coverage(out_dir: str | os.PathLike[str], tolerance: float = 1e-9) -> CoverageVerification:
    """Recompute ``OUT/results/summary.json`` of :func:`run_coverage` and compare every cell."""
    out = Path(out_dir)
    tasks = out / TASKS_DIR
    return verify_report(tasks, out / FREEZE_DIR, tasks / JUDGMENTS_FILE, out / RESULTS_DIR, tolerance)
