"""Running the declared ``bm25.and_tuned`` procedure (:mod:`nclue.systems.tuning` holds the split,
the grid and the record): every grid pair scored on the tuning queries, the chosen and the index's
own parameters on the held-out ones.

It sits above :mod:`nclue.scoring` because its objective is n-Clue Score@10 of real runs, which the
systems layer cannot import.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.index.options import BM25Params
from nclue.io import atomic_write_text, sha256_file
from nclue.progress import Progress, quiet, stage_advance
from nclue.release import Release
from nclue.scoring import Benchmark, score_runs
from nclue.scoring.runs import from_records
from nclue.scoring.summary import summarise
from nclue.systems.lexical import DocLevelSystem, doc_term_counts
from nclue.systems.registry import Workspace
from nclue.systems.run import check_form, map_documents, run_system
from nclue.systems.tuning import GRID, TUNING_FILE, TuningRecord, grid_pairs, tuning_split


def tune_bm25_and(
    release_dir: str | os.PathLike[str],
    collection_dir: str | os.PathLike[str],
    form: str = "raw",
    seed: int = 0,
    fraction: float = 0.5,
    grid: dict[str, tuple[float, ...]] | None = None,
    progress: Progress = quiet,
) -> TuningRecord:
    """Tune ``bm25.and`` on the release's tuning split, write the record into the collection, return it."""
    grid = {key: tuple(float(v) for v in values) for key, values in (grid or GRID).items()}
    if set(grid) != {"k1", "b"} or not all(grid.values()):
        raise NclueError("a tuning grid names non-empty 'k1' and 'b' value lists")
    release = Release.open(release_dir, require_qrels=True)
    check_form(release.queries, form)
    bench = Benchmark.from_release(release)
    qids = [q.qid for q in release.queries]
    tuning, heldout = tuning_split(qids, seed, fraction)
    ws = Workspace(collection_dir)
    backbone = ws.backbone("bm25")
    counts = doc_term_counts(ws, backbone)
    mapping = map_documents(release, ws)
    base = backbone.index.params
    pairs = grid_pairs(grid)
    for k1, b in pairs:
        BM25Params(k1=k1, b=b, method=base.method)  # refuses an out-of-range grid before any work
    by_qid = {q.qid: q for q in release.queries}
    masks = {
        name: np.isin(np.array(bench.qids), np.array(part)) for name, part in (("tuning", tuning), ("heldout", heldout))
    }

    def objective(params: BM25Params, part: tuple[str, ...], mask: str) -> float:
        system = DocLevelSystem("bm25.and_tuned", backbone, "and", params=params, counts=counts)
        run, _ = run_system(system, [by_qid[q] for q in part], form, mapping, "bm25.and_tuned")
        scores = score_runs(bench, [from_records(run, bench)], k=10)
        return float(summarise(scores, masks[mask], ("n_clue_score",))["bm25.and_tuned"]["n_clue_score"])

    tick = stage_advance(progress, "tuning bm25.and", len(pairs) + 2)
    table = []
    for k1, b in pairs:
        table.append({"k1": k1, "b": b, "score": round(objective(replace(base, k1=k1, b=b), tuning, "tuning"), 4)})
        tick(1)
    best = max(table, key=lambda row: row["score"])  # max keeps the first of equal rows: grid order
    chosen = {"k1": best["k1"], "b": best["b"]}
    held_tuned = objective(replace(base, **chosen), heldout, "heldout")
    tick(1)
    held_default = objective(base, heldout, "heldout")
    tick(1)
    record = TuningRecord(
        release=str(Path(release_dir)),
        qrels_sha256=sha256_file(release.files["qrels"]),
        pages_sha256=ws.store.fingerprint,
        form=form,
        seed=seed,
        fraction=fraction,
        tuning_qids=tuning,
        heldout_qids=heldout,
        grid=grid,
        method=base.method,
        table=tuple(table),
        chosen=chosen,
        default={"k1": base.k1, "b": base.b},
        heldout={"tuned": round(held_tuned, 4), "default": round(held_default, 4), "queries": len(heldout)},
    )
    path = Path(collection_dir) / TUNING_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, record.to_json())
    return record
