"""The opening every study shares: a run folder scored against its release, after the provenance checks.

:func:`score_run_folder` opens the :class:`~nclue.matrix.runset.RunSet`, refuses run files changed
since ``nclue run --matrix`` recorded them and a release the runs did not read
(:mod:`nclue.report.provenance`, unless ``check_inputs`` is off), and scores every run — plus the
given control runs — at the matrix's cut-off ``k``. On another qrels version (a repair's
``qrels.v2.jsonl``), a query that has a gold on the release's own qrels and none on the version is
dropped with its rows, as the supplement removes such queries after repair and as ``nclue audit
impact`` does; ``keep_zero_gold`` keeps it, scored as an unavoidable miss.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nclue.errors import NclueError
from nclue.matrix.runset import RunSet
from nclue.release import Release
from nclue.report.provenance import check_bench, check_run_files
from nclue.scoring import Benchmark, Scores, load_run_matrix, score_runs


@dataclass(frozen=True)
class ScoredFolder:
    """A run folder scored: its run set, the release and benchmark, the scores (runs, then controls)."""

    runset: RunSet
    release: Release
    bench: Benchmark
    scores: Scores
    controls: tuple[str, ...]
    dropped: tuple[str, ...] = ()
    """Queries left without a gold by the qrels version and dropped (sorted; empty when kept or none)."""


def score_run_folder(
    bench_dir: str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    qrels: str | os.PathLike[str] | None = None,
    control_paths: Sequence[Path] = (),
    check_inputs: bool = True,
    keep_zero_gold: bool = False,
) -> ScoredFolder:
    """Score every run of ``run_dir`` (and ``control_paths``) on ``bench_dir``'s release (``qrels`` overrides its
    qrels, less the queries it leaves without a gold unless ``keep_zero_gold``)."""
    runset = RunSet.open(run_dir)
    if check_inputs:
        check_run_files(runset)
    missing = [n for n in runset.names if not runset.path(n).is_file()]
    if missing:
        raise NclueError(f"{runset.directory}: run files missing for {', '.join(missing)}; rerun `nclue run --matrix`")
    release = Release.open(bench_dir, qrels=qrels, require_qrels=True)
    if check_inputs:
        check_bench(Path(bench_dir), runset, release.hashes)
    dropped: frozenset[str] = frozenset()
    if qrels is not None and not keep_zero_gold:
        from nclue.audit.impact import lost_gold, without_queries

        home = Release.open(bench_dir, require_qrels=True)
        dropped = lost_gold(release, frozenset(j.qid for j in home.judgments if j.label == "gold"))
        release = without_queries(release, dropped)
    bench = Benchmark.from_release(release)
    runs = [load_run_matrix(runset.path(n), bench, name=n) for n in runset.names]
    controls = [load_run_matrix(p, bench) for p in control_paths]
    scores = score_runs(bench, runs + controls, k=runset.k)
    return ScoredFolder(runset, release, bench, scores, tuple(c.name for c in controls), tuple(sorted(dropped)))
