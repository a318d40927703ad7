"""Checks that a report's inputs belong together: the run files, the benchmark and the collection.

``nclue run --matrix`` records in ``matrix.json``, for every run, the SHA-256 of the files it
wrote and of everything it read (``bench/queries.jsonl``, ``bench/corpus.jsonl``,
``collection/pages.parquet``, …). A report is only meaningful on exactly those inputs, so
before any number is computed:

* every recorded run file must still have its recorded hash (a run overwritten by
  ``nclue run -s … --depth 3 -o RUN_DIR`` is refused, not scored);
* the benchmark must be the one the runs read (same ``queries.jsonl`` and ``corpus.jsonl``);
* a collection given to ``nclue report --collection`` (the masking study reruns systems on it)
  must be the one the runs searched, and masked runs read from a folder must come from it too.

A run folder without ``matrix.json`` records nothing, so nothing can be checked there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import sha256_file
from nclue.matrix.runset import RunSet
from nclue.release import CORPUS_FILE, QUERIES_FILE

PAGES_INPUT = "collection/pages.parquet"
BENCH_INPUTS = (QUERIES_FILE, CORPUS_FILE)


def changed_run_files(runs: RunSet) -> list[str]:
    """Names of the run files whose SHA-256 differs from the one ``matrix.json`` recorded."""
    changed = []
    for entry in runs.entries.values():
        for name, digest in sorted(entry.files.items()):
            path = runs.directory / name
            if path.is_file() and sha256_file(path) != digest:
                changed.append(name)
    return changed


def check_run_files(runs: RunSet) -> None:
    """Refuse run files changed since ``nclue run --matrix`` wrote them."""
    run_dir = runs.directory
    changed = changed_run_files(runs)
    if changed:
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        raise NclueError(
            f"{run_dir}: {shown} changed since `nclue run --matrix` recorded {'it' if len(changed) == 1 else 'them'} "
            f"in matrix.json (overwritten by a single `nclue run -s … -o {run_dir}`?); rerun `nclue run --matrix` "
            "on this folder to redo them, and write single runs to another folder"
        )


def check_bench(bench_dir: Path, runs: RunSet, release_hashes: Mapping[str, str]) -> None:
    """Refuse a benchmark whose queries or corpus differ from those the runs read."""
    run_dir = runs.directory
    for run, entry in sorted(runs.entries.items()):
        inputs = entry.inputs
        for name in BENCH_INPUTS:
            recorded, present = inputs.get(f"bench/{name}"), release_hashes.get(name, "absent")
            if recorded is not None and recorded != present:
                raise NclueError(
                    f"{bench_dir}: {name} is not the one the runs in {run_dir} read (run {run}: recorded SHA-256 "
                    f"{recorded[:12]}…, this benchmark {present[:12]}…); give the benchmark the runs were made on, "
                    "or rerun `nclue run --matrix` on this one"
                )


def runs_pages_fingerprint(runs: RunSet) -> str | None:
    """The ``pages.parquet`` SHA-256 every run of ``matrix.json`` searched (``None``: nothing recorded).

    Runs that searched different collections are refused: no table can compare them.
    """
    seen = {entry.inputs[PAGES_INPUT] for entry in runs.entries.values() if PAGES_INPUT in entry.inputs}
    if len(seen) > 1:
        raise NclueError(
            f"{runs.directory}: the runs searched {len(seen)} different collections (pages.parquet changed between "
            "runs); rerun `nclue run --matrix` on one collection"
        )
    return next(iter(seen), None)


def check_collection(collection: str | os.PathLike[str], runs: RunSet) -> None:
    """Refuse ``collection`` unless it is the collection the runs of ``runs`` searched."""
    from nclue.corpus.store import pages_fingerprint

    run_dir = runs.directory
    expected = runs_pages_fingerprint(runs)
    if expected is None:
        return
    present = pages_fingerprint(collection)
    if present != expected:
        raise NclueError(
            f"{collection}: not the collection the runs in {run_dir} searched (pages.parquet SHA-256 "
            f"{present[:12]}…, matrix.json records {expected[:12]}…); pass the collection given to "
            "`nclue run --matrix`"
        )


def check_masked_collection(masking_dir: Path, made_from: Mapping[str, str], expected: str | None) -> None:
    """Refuse masked runs made on another collection than the full runs they are compared with."""
    recorded = made_from.get("collection/pages")
    if expected is not None and recorded is not None and recorded != expected:
        raise NclueError(
            f"{masking_dir}: the masked runs were made on another collection than the runs they are compared with "
            "(pages.parquet differs); rerun `nclue report BENCH RUN_DIR -o OUT --collection COLL` with the "
            "collection the runs searched"
        )
