"""Reference rankings inside a release: the runs behind published numbers, their scores and model revisions.

``nclue bench reference BENCH RUN.jsonl ... --collection COLL`` writes::

    BENCH/reference/<run>.jsonl.gz   each run, gzip-compressed with mtime 0 (byte-stable)
    BENCH/reference/scores.json      {run: {"nclue@10", "gold_hit@10"}} from nclue's scorer
    BENCH/reference/models.json      {"indexes": {index: its record},
                                      "runs": {run: {"system": name, "backbones": [tokens]}}}

and rewrites ``SHA256SUMS``. ``indexes`` holds every index record of the collection the runs were
made on (``index/*/manifest.json``, ``index/*/*/manifest.json``, ``index/lexical/nclue.json``):
model name and weights SHA-256, backend, window, overlap, BM25 parameters, the pages fingerprint —
with file listings and machine paths (keys ending in ``_path``) left out. ``verify_release.py``
rescores every reference run with the standard library and compares it with ``scores.json``, so a
reader can check published values without nclue, a GPU or the models.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Sequence
from pathlib import Path

from nclue.bench.notices import copy_scripts
from nclue.bench.verify import file_scores, write_sums
from nclue.errors import NclueError
from nclue.io import atomic_write_bytes, atomic_write_text
from nclue.release import Release
from nclue.systems.names import Call, Op, parse_name

REFERENCE_DIR = "reference"


def _backbones(name: str) -> list[str]:
    """The backbone tokens a system name uses (``rrf(bm25.and, dense.joint)`` → ``["bm25", "dense"]``)."""
    try:
        spec = parse_name(name.split("@", 1)[0])
    except NclueError:
        return []
    out: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, Op):
            out.append(node.backbone)
        elif isinstance(node, Call):
            for arg in node.args:
                walk(arg)

    walk(spec)
    return sorted(set(out))


def _system_name(path: Path) -> str:
    """The run's system name: the ``run`` field of its first line, else the file stem."""
    with open(path, encoding="utf-8") as handle:
        first = handle.readline()
    try:
        name = json.loads(first).get("run") if first.strip() else None
    except ValueError:
        raise NclueError(f"{path}:1: not JSON; pass nclue JSONL run files") from None
    return name if isinstance(name, str) and name else path.stem


def index_records(collection: str | os.PathLike[str]) -> dict[str, dict]:
    """Every index record of ``collection`` (module docstring), keyed by its folder under ``index/``."""
    root = Path(collection) / "index"
    if not root.is_dir():
        raise NclueError(f"{root}: no indexes; give the collection the runs were made on (`nclue index COLL`)")
    found = sorted([*root.glob("*/manifest.json"), *root.glob("*/*/manifest.json"), *root.glob("lexical/nclue.json")])
    records = {}
    for path in found:
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            raise NclueError(f"{path}: damaged index record; rebuild the index with `nclue index`") from None
        records[path.parent.relative_to(root).as_posix()] = {
            k: v for k, v in body.items() if k != "files" and not k.endswith("_path")
        }
    return records


def write_reference(
    bench: str | os.PathLike[str], runs: Sequence[str | os.PathLike[str]], collection: str | os.PathLike[str]
) -> dict[str, dict[str, float]]:
    """Copy ``runs`` (JSONL) into ``bench/reference/`` with scores and model records; return the scores."""
    root = Path(bench)
    release = Release.open(root, require_qrels=True)
    paths = [Path(p) for p in runs]
    for path in paths:
        if path.suffix != ".jsonl" or not path.is_file():
            raise NclueError(f"{path}: reference runs are nclue JSONL run files (RUN.jsonl); pass those")
    names = [p.stem for p in paths]
    if len(set(names)) != len(names):
        raise NclueError("two reference runs share a name; pass each run once")
    out = root / REFERENCE_DIR
    out.mkdir(exist_ok=True)
    for stale in out.glob("*.jsonl.gz"):
        stale.unlink()
    scores = file_scores(root, paths, release)
    for path in paths:
        atomic_write_bytes(out / f"{path.stem}.jsonl.gz", gzip.compress(path.read_bytes(), mtime=0))
    atomic_write_text(out / "scores.json", json.dumps(scores, indent=2, sort_keys=True) + "\n")
    systems = {path.stem: _system_name(path) for path in paths}
    runs_record = {stem: {"system": name, "backbones": _backbones(name)} for stem, name in systems.items()}
    models = {"indexes": index_records(collection), "runs": runs_record}
    atomic_write_text(out / "models.json", json.dumps(models, indent=2, sort_keys=True) + "\n")
    copy_scripts(root)  # a release built before reference rankings existed gets the verifier that reads them
    write_sums(root)
    return scores
