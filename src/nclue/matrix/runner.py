"""Run every system of a matrix spec, skipping runs whose spec and inputs are unchanged.

Each run's *spec hash* is the SHA-256 of its canonical description: system name, query
form, depth, nclue version, and the fingerprints of its inputs (the release's
``queries.jsonl`` and ``corpus.jsonl``, the collection's page store, its index files (heading
vectors included), its document structure and calibrations, and nclue's own code and shipped
calibrations, :func:`code_fingerprint` — a changed system implementation reruns its runs even
when the version string did not move). ``RUN_DIR/matrix.json`` records, per run, that hash, the inputs, the library
versions and the wall time; a run is skipped when its hash is unchanged and its files
still carry the recorded SHA-256. Anything else — a changed system, form, depth, query
file, collection or index — reruns it.

Runs are independent, so they run in parallel: ``workers`` processes (default: one per
CPU; :mod:`nclue.engine`'s spawn pool, workers die with their parent) each open the
collection once — the indexes are memory-mapped, so the processes share their pages in
the OS page cache — and take runs longest first (by the recorded seconds of the previous
matrix). Each worker uses ``CPUs / workers`` threads. Only this process writes the
manifest and holds the run folder's lock. Run files are identical to a serial run's
(``tests/matrix/test_matrix.py``): a system's output depends on its own queries only —
encoders and MaxSim compute each text alone (no padded batch shared with other texts)
and thread counts do not change the kernels' results.
"""

from __future__ import annotations

import importlib.metadata
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nclue._version import __version__
from nclue.engine import Engine, LocalEngine, cap_threads
from nclue.errors import NclueError
from nclue.io import dumps_canonical, exclusive_lock, sha256_bytes, sha256_file, writable_dir, write_json
from nclue.matrix.runset import MANIFEST, read_manifest
from nclue.matrix.spec import MatrixSpec, RunSpec
from nclue.progress import Progress, quiet, stage_advance
from nclue.release import CORPUS_FILE, PARAPHRASES_FILE, QUERIES_FILE, Release
from nclue.systems.preflight import require_indexes

_VERSIONED = ("numpy", "scipy", "bm25s", "pypdfium2", "torch", "sentence-transformers", "onnxruntime")


def versions() -> dict[str, str]:
    """Installed versions of nclue and the libraries that shape a ranking."""
    out = {"nclue": __version__}
    for dist in _VERSIONED:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def tree_fingerprint(root: Path) -> str:
    """SHA-256 over ``(relative path, size, mtime_ns)`` of every file below ``root``.

    Cheap enough for multi-GB indexes; a rebuilt index changes mtimes and therefore
    reruns dependent runs (the safe direction).
    """
    if not root.exists():
        return "absent"
    entries = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        stat = path.stat()
        entries.append(f"{path.relative_to(root).as_posix()}\t{stat.st_size}\t{stat.st_mtime_ns}")
    return sha256_bytes("\n".join(entries).encode())


def code_fingerprint() -> str:
    """SHA-256 over ``(relative path, SHA-256)`` of every ``.py`` and ``.json`` file of the nclue package."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json") and p.is_file())
    return sha256_bytes("\n".join(f"{p.relative_to(root).as_posix()}\t{sha256_file(p)}" for p in files).encode())


def input_fingerprints(release: Release, collection_dir: Path) -> dict[str, str]:
    """Fingerprints of everything a run reads: the release's queries and corpus, the collection."""
    hashes = release.hashes
    out = {f"bench/{name}": hashes.get(name, "absent") for name in (QUERIES_FILE, CORPUS_FILE)}
    if PARAPHRASES_FILE in hashes:  # a refilled paraphrase cache reruns the runs (only present when filled)
        out[f"bench/{PARAPHRASES_FILE}"] = hashes[PARAPHRASES_FILE]
    for name in ("docs.parquet", "pages.parquet"):
        out[f"collection/{name}"] = sha256_file(collection_dir / name)
    out["collection/index"] = tree_fingerprint(collection_dir / "index")
    structure = collection_dir / "structure.parquet"
    out["collection/structure.parquet"] = sha256_file(structure) if structure.is_file() else "absent"
    out["collection/calibration"] = tree_fingerprint(collection_dir / "calibration")
    out["nclue/code"] = code_fingerprint()
    return out


def spec_hash(run: RunSpec, depth: int, inputs: dict[str, str]) -> str:
    """SHA-256 of the canonical run description plus its inputs."""
    desc = {"system": run.system, "form": run.form, "depth": depth, "nclue": __version__, "inputs": inputs}
    return sha256_bytes(dumps_canonical(desc).encode())


@dataclass
class MatrixResult:
    """What :func:`run_matrix` did."""

    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _unchanged(entry: dict | None, digest: str, out: Path) -> bool:
    if not entry or entry.get("spec_hash") != digest:
        return False
    files = entry.get("files", {})
    return bool(files) and all((out / f).is_file() and sha256_file(out / f) == h for f, h in files.items())


def run_matrix(
    spec: MatrixSpec,
    bench_dir: str | os.PathLike[str],
    collection_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    progress: Progress = quiet,
    force: bool = False,
    workers: int | None = None,
    engine: Engine | None = None,
) -> MatrixResult:
    """Produce every run of ``spec`` in ``out_dir`` (TREC + JSONL each), skipping unchanged ones.

    ``workers``: processes running runs in parallel (``None`` = one per CPU, ``1`` = this
    process); ``engine`` (e.g. a ``nclue.engine.RayEngine``, left open for the caller) runs
    them instead — each worker opens the release and collection by path, so on a cluster they
    must be on a filesystem every node mounts. The manifest is rewritten atomically after every finished run, so an
    interrupted matrix resumes where it stopped. ``progress`` (:mod:`nclue.progress`) hears
    ``"runs"`` (total: the runs to produce; unchanged ones are skipped before it starts).
    """
    coll = Path(collection_dir)
    release = Release.open(bench_dir, with_qrels=False)
    out = writable_dir(out_dir, "run folder")
    count = workers if workers is not None else (os.cpu_count() or 1)
    if count < 1:
        raise NclueError(f"matrix workers must be at least 1, got {count}")
    with exclusive_lock(out, "run folder"):
        return _run(spec, release, Path(bench_dir), coll, out, progress, force, count, engine)


def _run(
    spec: MatrixSpec,
    release: Release,
    bench: Path,
    coll: Path,
    out: Path,
    progress: Progress,
    force: bool,
    workers: int,
    given: Engine | None,
) -> MatrixResult:
    """:func:`run_matrix` while holding the run folder's lock."""
    manifest = read_manifest(out, damaged_ok=True)
    inputs = input_fingerprints(release, coll)
    previous = {name: entry.get("seconds", 0.0) for name, entry in manifest.get("runs", {}).items()}
    manifest["spec"] = {
        "source": spec.source,
        "sha256": spec.sha256,
        "depth": spec.depth,
        "k": spec.k,
        "form": spec.form,
        "baselines": spec.baselines,
    }
    manifest["contrasts"] = [{"name": c.name, "base": c.base, "variants": list(c.variants)} for c in spec.contrasts]
    manifest["headline"] = None if spec.headline is None else dict(zip(("base", "variant"), spec.headline))
    runs = manifest.setdefault("runs", {})
    for stale in set(runs) - set(spec.run_names):
        del runs[stale]
    result = MatrixResult()
    todo: list[tuple[RunSpec, str]] = []
    for run in spec.runs:
        digest = spec_hash(run, spec.depth, inputs)
        if not force and _unchanged(runs.get(run.name), digest, out):
            result.skipped.append(run.name)
        else:
            todo.append((run, digest))
    require_indexes(coll, [run.system for run, _ in todo], f"the matrix {spec.source}")
    todo.sort(key=lambda item: -float(previous.get(item[0].name) or 0.0))  # longest first; stable otherwise
    count = max(1, min(given.workers if given is not None else workers, len(todo)))
    if given is not None and given.name == "ray":
        threads = 1  # one CPU per Ray task
    else:
        threads = max(1, (os.cpu_count() or 1) // count) if count > 1 else None
    engine = given if given is not None else LocalEngine(count)
    args = [(str(bench), str(coll), str(out), run.system, run.form, spec.depth, spec.form, threads) for run, _ in todo]
    done = stage_advance(progress, "runs", len(todo))
    try:
        for position, outcome in engine.imap(_produce, args):
            run, digest = todo[position]
            if outcome["error"]:
                result.failed[run.name] = outcome["error"]
            runs[run.name] = {
                "system": run.system,
                "form": run.form,
                "block": run.block,
                "category": run.category,
                "spec_hash": digest,
                "inputs": inputs,
                "versions": versions(),
                "seconds": outcome["seconds"],
                "queries_without_ranking": outcome["failed_queries"],
                "files": outcome["files"],
            }
            result.notes.append(outcome["summary"])
            result.ran.append(run.name)
            write_json(out / MANIFEST, manifest)
            done(1)
    finally:
        if given is None:
            engine.close()
        _WORKSPACES.clear()
    write_json(out / MANIFEST, manifest)
    return result


_WORKSPACES: dict[tuple[str, str], Any] = {}
"""Per process: the opened release and workspace of the matrix being run (reused across its runs)."""


def _produce(
    bench: str, coll: str, out: str, system: str, form: str, depth: int, default_form: str, threads: int | None
) -> dict[str, Any]:
    """Produce one run (in a worker process or this one); return what the manifest records."""
    from nclue.systems.registry import Workspace
    from nclue.systems.run import run_systems

    key = (bench, coll)
    if key not in _WORKSPACES:
        if threads is not None:  # a pool or Ray worker: its share of the CPUs, before torch and ONNX Runtime load
            cap_threads(threads)
        _WORKSPACES.clear()
        _WORKSPACES[key] = (Release.open(bench, with_qrels=False), Workspace(coll))
    release, workspace = _WORKSPACES[key]
    started = time.perf_counter()
    report = run_systems(release, workspace, [system], form=form, out_dir=out, depth=depth, default_form=default_form)
    seconds = time.perf_counter() - started
    errors = next(iter(report.failed.values()), {})
    return {
        "seconds": round(seconds, 3),
        "failed_queries": len(errors),
        "error": f"{len(errors)} queries without a ranking (e.g. {next(iter(errors.values()))})" if errors else "",
        "files": {p.name: sha256_file(p) for p in report.files},
        "summary": report.summary(),
    }
