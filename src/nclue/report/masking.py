"""Condition masking (the seed's Table S5a; ``docs/report.md#condition-masking``).

Does every condition position carry retrieval signal? For position ``i`` (1-based), every
query with at least ``i`` conditions is re-asked without its ``i``-th condition (the other
conditions, their aliases and the default-form rendering of what is left; a two-condition
query becomes a one-condition request), through :func:`nclue.systems.run.run_systems` on a
derived in-memory :class:`~nclue.release.Release`. The masked run is scored against the
*original* qrels, so the change in Gold-NDCG@10 (and Gold Hit@10) is what dropping the
condition costs in finding the documents that cover all of them.

:func:`run_masking` writes the masked runs (``MASKING_DIR/SYSTEM@drop{i}.jsonl`` and ``.trec``;
``nclue report`` uses ``OUT/masking``, never the run folder it reads) with a ``masking.json`` manifest, skipping runs whose inputs are unchanged;
:func:`masking_study` reads them back with the unmasked runs of the matrix and reports, per
system and position, the mean paired difference masked − full over the queries that have
that position, with its exact-family bootstrap interval (families restricted to those
queries). A ``*`` marks an interval that excludes zero.

Systems: every fair default-form run of the matrix whose system is a single lexical
(``bm25.*``) or dense bi-encoder (``dense.*``) operation. Fusion and reranking combine
these; late interaction (``maxsim``) costs minutes per run and is left out.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from nclue.io import dumps_canonical, json_safe, sha256_bytes, sha256_file, write_json
from nclue.progress import Progress, quiet, stage_advance
from nclue.runfile import run_path
from nclue.tables import Table, Tabular, fmt_ci, fmt_pp

if TYPE_CHECKING:
    from nclue.release import Release
    from nclue.scoring import Benchmark, Scores
    from nclue.systems.registry import Workspace

MASK_DIR = "masking"
"""The masked runs' folder inside a report folder (``nclue report --collection``)."""
MANIFEST = "masking.json"
POSITIONS = (1, 2, 3)
BACKBONES = ("bm25", "dense")


def eligible(system: str) -> bool:
    """Whether ``system`` is a single lexical or dense bi-encoder operation (see the module docstring)."""
    from nclue.systems.names import Op, parse_name

    spec = parse_name(system)
    return isinstance(spec, Op) and spec.family in BACKBONES


def mask_name(system: str, position: int) -> str:
    """Run name of ``system`` with condition ``position`` dropped: ``SYSTEM@drop{position}``."""
    return f"{system}@drop{position}"


def masked_release(release: Release, position: int) -> Release:
    """The queries of ``release`` with at least ``position`` conditions, condition ``position`` dropped.

    Built with the :class:`~nclue.release.Release` constructor (a masked two-condition query
    keeps one condition, which a release file may not hold); renderings are re-derived from
    the remaining conditions.
    """
    from nclue.release import Release
    from nclue.types import Query

    queries = []
    for q in release.queries:
        if q.n < position:
            continue
        kept = tuple(c for i, c in enumerate(q.conditions, start=1) if i != position)
        queries.append(Query(q.qid, kept, {}, {c: a for c, a in q.aliases.items() if c in kept}))
    return Release(release.root, tuple(queries), (), release.corpus, {})


def run_masking(
    bench_dir: str | os.PathLike[str],
    collection_dir: str | os.PathLike[str],
    masking_dir: str | os.PathLike[str],
    systems: Sequence[str],
    form: str,
    depth: int = 100,
    progress: Progress = quiet,
    tick: Callable[[str], None] | None = None,
) -> list[str]:
    """Write every masked run of ``systems`` into ``masking_dir``; return the names produced (not skipped).

    ``masking_dir`` is a folder of its own (``nclue report`` uses ``OUT/masking``): the run
    folder the masked runs are compared with is only read. ``progress`` (:mod:`nclue.progress`)
    hears ``"masked runs"`` (total: the runs to produce); ``tick(name)`` is called as each starts.
    """
    from nclue.corpus.store import pages_fingerprint
    from nclue.io import exclusive_lock, writable_dir
    from nclue.matrix.runner import code_fingerprint, tree_fingerprint
    from nclue.release import Release
    from nclue.systems.registry import Workspace

    release = Release.open(bench_dir, with_qrels=False)
    coll = Path(collection_dir)
    out = writable_dir(Path(masking_dir), "masking run folder")
    inputs = {
        **{f"bench/{k}": v for k, v in release.hashes.items()},
        "collection/pages": pages_fingerprint(coll),
        "collection/index": tree_fingerprint(coll / "index"),
        "collection/calibration": tree_fingerprint(coll / "calibration"),
        "nclue/code": code_fingerprint(),
    }
    with exclusive_lock(out, "masking run folder"):
        spec = {"form": form, "depth": depth, "inputs": inputs}
        manifest = _read(out)
        manifest.update(spec)
        entries = manifest.setdefault("runs", {})
        todo = _changed(release, systems, spec, entries, out)
        done = stage_advance(progress, "masked runs", len(todo))
        workspace = Workspace(coll) if todo else None
        for name, system, position, masked, digest in todo:
            if tick is not None:
                tick(name)
            run = _masked_run(masked, workspace, system, name, form, depth, out)
            entries[name] = {"position": position, "spec_hash": digest, **run}
            write_json(out / MANIFEST, manifest)
            done(1)
        write_json(out / MANIFEST, manifest)
    return [name for name, *_ in todo]


def _changed(release: Release, systems: Sequence[str], spec: dict, entries: dict, out: Path) -> list[tuple]:
    """``(name, system, position, masked release, spec hash)`` of every masked run whose spec hash
    changed or whose files are missing or altered, in position then system order."""
    todo = []
    for position in POSITIONS:
        masked = masked_release(release, position)
        if not masked.queries:
            continue
        for system in systems:
            name = mask_name(system, position)
            digest = sha256_bytes(dumps_canonical({"system": system, "position": position, **spec}).encode())
            entry = entries.get(name)
            if not (
                entry
                and entry.get("spec_hash") == digest
                and all((out / f).is_file() and sha256_file(out / f) == h for f, h in entry.get("files", {}).items())
            ):
                todo.append((name, system, position, masked, digest))
    return todo


def _masked_run(
    masked: Release, workspace: Workspace, system: str, name: str, form: str, depth: int, out: Path
) -> dict:
    """Run ``system`` on the ``masked`` release, write it as ``name`` into ``out``; its manifest entry."""
    from nclue.systems.run import run_systems

    started = time.perf_counter()
    report = run_systems(masked, workspace, [system], form=form, depth=depth, default_form=form)
    files = replace(report.runs[system], name=name).write(out)
    return {
        "system": system,
        "queries": len(masked.queries),
        "seconds": round(time.perf_counter() - started, 3),
        "files": {p.name: sha256_file(p) for p in files},
    }


def _read(out: Path) -> dict:
    import json

    path = out / MANIFEST
    if not path.is_file():
        return {"runs": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {"runs": {}}
    return data if isinstance(data, dict) else {"runs": {}}


@dataclass(frozen=True)
class MaskingStudy(Tabular):
    """Table S5a: per system and dropped position, Δ Gold-NDCG@10 and Δ Gold Hit@10 (pp) with intervals."""

    form: str
    bootstrap: int
    queries: Mapping[str, int]
    cells: Mapping[str, Mapping[str, Mapping[str, object]]]

    def sections(self) -> Iterator[tuple[str, str, Table]]:
        """``(file key, title, table)``."""
        yield "table_s5a_masking", "Condition masking (Table S5a)", self.table()

    def tables(self) -> list[Table]:
        return [self.table()]

    def table(self) -> Table:
        positions = [p for p in POSITIONS if f"c{p}" in self.queries]

        def cell(values: Mapping[str, object] | None) -> str:
            if values is None:
                return "–"
            lo, hi = values["gold_ndcg_ci"]  # type: ignore[misc]
            star = "*" if lo > 0 or hi < 0 else ""
            return f"{fmt_pp(values['gold_ndcg'], sign=True)}{star} {fmt_ci(values['gold_ndcg_ci'], 1, sign=True)}"  # type: ignore[arg-type]

        headers = ["System"] + [
            f"Drop c{p} ({self.queries[f'c{p}']} q.)" + (" (n=3)" if p == 3 else "") for p in positions
        ]
        rows = tuple((system, *(cell(by.get(f"c{p}")) for p in positions)) for system, by in self.cells.items())
        return Table(
            tuple(headers),
            rows,
            "l" + "r" * len(positions),
            f"Gold-NDCG@10 change (pp) after dropping one condition, masked − full on {self.form}, with "
            f"exact-family bootstrap 95% intervals ({self.bootstrap} replicates); * marks an interval excluding zero. "
            "c1/c2 use every query, c3 the three-condition queries.",
            number="S5a",
        )

    def to_json(self) -> dict:
        return json_safe(
            {"form": self.form, "bootstrap": self.bootstrap, "queries": dict(self.queries), "cells": self.cells}
        )


def masking_study(
    bench: Benchmark,
    scores: Scores,
    masking_dir: Path,
    full_runs: Mapping[str, str],
    n_boot: int,
    seed: int,
    release_hashes: Mapping[str, str],
    collection_pages: str | None = None,
) -> tuple[MaskingStudy | None, list[Path]]:
    """Table S5a from the masked runs in ``masking_dir`` (``None`` when none exists) and the files it read.

    ``full_runs`` maps each system to its unmasked run name in ``scores``; ``release_hashes``
    (:attr:`nclue.release.Release.hashes`) must match the release the masked runs were made from,
    and ``collection_pages`` (the full runs' ``pages.parquet`` SHA-256, ``None`` if unrecorded)
    the collection they searched.
    """
    from nclue.errors import NclueError
    from nclue.report.provenance import check_masked_collection
    from nclue.scoring import load_run_matrix, metric_matrix, score_runs
    from nclue.stats import bootstrap_ci

    manifest = _read(masking_dir)
    made_from = manifest.get("inputs", {})
    stale = [k for k, v in release_hashes.items() if made_from.get(f"bench/{k}", v) != v]
    if stale:
        raise NclueError(
            f"{masking_dir}: the masked runs were made from another release ({', '.join(stale)} changed); "
            "rerun `nclue report BENCH RUN_DIR -o OUT --collection COLL` to redo them"
        )
    check_masked_collection(masking_dir, made_from, collection_pages)
    entries = {n: e for n, e in manifest.get("runs", {}).items() if e.get("system") in full_runs}
    if not entries:
        return None, []
    names = sorted(entries)
    paths = [run_path(masking_dir, n) for n in names]
    masked = score_runs(bench, [load_run_matrix(p, bench, name=n) for p, n in zip(paths, names)], k=scores.k)
    cells: dict[str, dict[str, dict[str, object]]] = {}
    counts: dict[str, int] = {}
    for system in full_runs:
        for position in POSITIONS:
            name = mask_name(system, position)
            if name not in entries:
                continue
            has = bench.n >= position
            counts[f"c{position}"] = int(has.sum())
            row: dict[str, object] = {}
            for metric in ("gold_ndcg", "gold_hit"):
                diff = (
                    metric_matrix(masked, metric)[masked.index(name)]
                    - metric_matrix(scores, metric)[scores.index(full_runs[system])]
                )[has]
                ci = bootstrap_ci(diff[None, :], bench.family[has], n_boot, seed)[0]
                row[metric] = 100.0 * float(diff.mean())
                row[f"{metric}_ci"] = (100.0 * float(ci[0]), 100.0 * float(ci[1]))
            cells.setdefault(system, {})[f"c{position}"] = row
    study = MaskingStudy(form=str(manifest.get("form", "")), bootstrap=n_boot, queries=counts, cells=cells)
    return study, paths + [masking_dir / MANIFEST]


def systems_to_mask(names: Sequence[str]) -> list[str]:
    """The eligible systems among ``names`` (run names of the default form), in order."""
    return [n for n in names if eligible(n)]
