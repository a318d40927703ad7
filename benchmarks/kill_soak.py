"""SIGKILL soak: kill ``nclue index``, ``nclue build`` and ``nclue run --matrix`` at random moments,
rerun each until it finishes, and compare every output byte for byte with an uninterrupted run.

Usage::

    .venv/bin/python benchmarks/kill_soak.py COLLECTION --kills 20 --seed 7 [--index all] [--out soak.json]

COLLECTION is an ingested collection (e.g. ``tests/fixtures/collection``); it is copied, never
changed. Each stage first runs once uninterrupted (its wall time ``T``); then, ``kills`` times in
all (spread over the stages in turn), the stage's output folder is removed, a fresh attempt is
started and sent SIGKILL after a delay drawn uniformly from ``(0, T)``, and the same command is
rerun to completion. Every file the stage writes must then equal the reference's bytes, except
records of timing and place (``matrix.json`` is compared without ``seconds``, the spec's path and
the index fingerprints, which hash file mtimes by design so that a rebuilt index reruns its runs)
and the folder locks. A kill that comes after the command already finished is counted as missed.

The index stage is ``nclue index COLL --lexical`` by default (under a second) or, with ``--index
all``, ``nclue index COLL --all``: lexical, duplicates, dense vectors and the token index of the
late-interaction systems, so kills land inside the encoder pass and its shard writes. The rerun is
the same command without ``--rebuild``: it resumes from what the killed attempt left.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

NCLUE = [sys.executable, "-c", "from nclue.cli import main; main()"]
MATRIX = """depth = 50
k = 10
[[run]]
system = "bm25.joint"
[[run]]
system = "bm25.decompose(distinct)"
block = "decomposition"
[[run]]
system = "rrf(bm25.and, bm25.decompose(distinct))"
block = "fusion"
"""
BUILD_FLAGS = [
    "--queries",
    "20",
    "--min-df",
    "2",
    "--max-df-frac",
    "0.34",
    "--judge",
    "embedding",
    "--max-contested",
    "1000",
]


INDEX_MODES = ("lexical", "all")


def stages(root: Path, index: str = "lexical") -> list[tuple[str, list[str], Path]]:
    """``(name, argv, output folder)`` of the three stages, in the order they depend on each other."""
    coll, bench, runs = root / "coll", root / "bench", root / "runs"
    return [
        (f"index --{index}", [*NCLUE, "index", str(coll), f"--{index}"], coll / "index"),
        ("build", [*NCLUE, "build", str(coll), "-o", str(bench), *BUILD_FLAGS], bench),
        (
            "run --matrix",
            [*NCLUE, "run", str(bench), str(coll), "--matrix", str(root / "m.toml"), "-o", str(runs)],
            runs,
        ),
    ]


def comparable_manifest(data: bytes) -> dict:
    """``matrix.json`` without what differs between two runs by design: timings, the spec's path, the
    mtime-keyed index fingerprints and the run hash computed from them."""
    manifest = json.loads(data)
    manifest.get("spec", {}).pop("source", None)  # the spec's path: ref/ and test/ differ by design
    for entry in manifest.get("runs", {}).values():
        entry.pop("seconds", None)
        entry.pop("spec_hash", None)  # hashes the inputs below
        for mtime_based in ("collection/index", "collection/calibration"):
            entry.get("inputs", {}).pop(mtime_based, None)
    return manifest


def leaves(value, prefix: str = "") -> dict[str, object]:
    """Dotted path → scalar of every leaf of a JSON value (to name what differs between two manifests)."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in leaves(item, f"{prefix}{key}.").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in leaves(item, f"{prefix}{i}.").items()}
    return {prefix.rstrip("."): value}


def fingerprint(folder: Path) -> dict[str, str]:
    """Relative path → content digest of every output file (``matrix.json`` as :func:`comparable_manifest`)."""
    import hashlib

    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
        data = path.read_bytes()
        if path.name == "matrix.json":
            data = json.dumps(comparable_manifest(data), sort_keys=True).encode()
        out[path.relative_to(folder).as_posix()] = hashlib.sha256(data).hexdigest()
    return out


def manifest_differences(reference: Path, produced: Path) -> dict[str, list]:
    """Dotted path → ``[reference, produced]`` of every field where two ``matrix.json`` files differ."""
    if not (reference.is_file() and produced.is_file()):
        return {}
    ref = leaves(comparable_manifest(reference.read_bytes()))
    out = leaves(comparable_manifest(produced.read_bytes()))
    return {k: [ref.get(k), out.get(k)] for k in sorted(set(ref) | set(out)) if ref.get(k) != out.get(k)}


def prepare(collection: Path, root: Path) -> None:
    """A private copy of ``collection`` and the matrix spec under ``root``."""
    shutil.copytree(collection, root / "coll", ignore=shutil.ignore_patterns("index", ".nclue.lock"))
    (root / "m.toml").write_text(MATRIX, encoding="utf-8")


def run_to_end(argv: list[str]) -> float:
    """Run ``argv`` to completion; its wall time. Raises when it fails."""
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[3:])} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return time.perf_counter() - started


def kill_after(argv: list[str], delay: float) -> bool:
    """Start ``argv``, SIGKILL it after ``delay`` seconds; whether it was still running then."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


def soak(collection: Path, kills: int, seed: int, index: str = "lexical") -> dict:
    """The soak's record: per stage, reference time, kills that landed, and whether outputs matched."""
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="nclue-soak-") as tmp:
        ref, test = Path(tmp) / "ref", Path(tmp) / "test"
        prepare(collection, ref)
        prepare(collection, test)
        record, reference_out = {}, {}
        for name, argv, out in stages(ref, index):
            seconds = run_to_end(argv)
            record[name] = {"reference_seconds": round(seconds, 2), "kills": 0, "missed": 0, "delays": []}
            reference_out[name] = out
        order = [list(record)[i % len(record)] for i in range(kills)]
        for name, argv, out in stages(test, index):
            entry = record[name]
            for _ in range(order.count(name)):
                shutil.rmtree(out, ignore_errors=True)  # each kill interrupts real work, not a resume that skips it
                delay = float(rng.uniform(0.05, max(0.1, entry["reference_seconds"])))
                landed = kill_after(argv, delay)
                entry["kills" if landed else "missed"] += 1
                entry["delays"].append(round(delay, 2))
                run_to_end(argv)
            if not order.count(name):
                run_to_end(argv)
            reference = fingerprint(reference_out[name])
            produced = fingerprint(out)
            entry["files"] = len(reference)
            entry["identical"] = produced == reference
            entry["differing"] = sorted(
                k for k in set(reference) | set(produced) if reference.get(k) != produced.get(k)
            )
            if "matrix.json" in entry["differing"]:
                entry["matrix_differences"] = manifest_differences(
                    reference_out[name] / "matrix.json", out / "matrix.json"
                )
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("collection", type=Path)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--index", choices=INDEX_MODES, default="lexical", help="the index stage's flag")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from nclue.matrix.runner import code_fingerprint

    code = code_fingerprint()
    record = soak(args.collection, args.kills, args.seed, args.index)
    if code_fingerprint() != code:  # matrix.json records the code's hash: an edit mid-soak differs by design
        raise SystemExit("the nclue package's source changed during the soak; rerun it on a tree nobody edits")
    text = json.dumps(record, indent=2, sort_keys=True)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    if not all(entry["identical"] for entry in record.values()):
        raise SystemExit("outputs differ after SIGKILL and rerun")


if __name__ == "__main__":
    main()
