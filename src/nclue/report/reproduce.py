"""``nclue reproduce --verify``: recompute every table from the frozen runs and qrels and check them.

Two checks, both naming exactly what failed:

1. **Hashes** — every input recorded in ``RUN_DIR/frozen.json`` (queries, qrels, corpus,
   control runs, every run file) must still have its SHA-256.
2. **Aggregates** — every table is recomputed with the frozen seed, bootstrap and draw
   counts; each numeric cell must be within ``tolerance`` percentage points (default 0.05)
   of the frozen value, and every label cell (e.g. a block's displayed variant) must match.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nclue.errors import NclueError
from nclue.io import sha256_file
from nclue.report.paper import FROZEN, PaperReport, compute_report

# Structural counts that must match exactly, not within the tolerance.
_EXACT = {"queries", "families", "common_n", "rank", "k", "seed", "bootstrap", "draws"}


@dataclass
class Verification:
    """Outcome of :func:`verify`: problems found (empty = reproduced) and cells checked."""

    hash_failures: list[str] = field(default_factory=list)
    cell_failures: list[str] = field(default_factory=list)
    cells_checked: int = 0
    recomputed: PaperReport | None = None

    @property
    def ok(self) -> bool:
        """True when every hash and every cell reproduced."""
        return not self.hash_failures and not self.cell_failures


def _leaves(obj: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(obj, dict):
        for key in sorted(obj):
            yield from _leaves(obj[key], (*path, str(key)))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _leaves(value, (*path, f"[{i}]"))
    else:
        yield path, obj


def _lookup(obj: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    for key in path:
        if isinstance(obj, list) and key.startswith("[") and key.endswith("]"):
            i = int(key[1:-1])
            if i >= len(obj):
                return False, None
            obj = obj[i]
        elif isinstance(obj, dict) and key in obj:
            obj = obj[key]
        else:
            return False, None
    return True, obj


def compare_cells(frozen: dict, fresh: dict, tolerance: float) -> tuple[list[str], int]:
    """Every leaf of ``frozen`` (except the input hashes) against ``fresh``; returns failures and count."""
    failures: list[str] = []
    checked = 0
    for path, expected in _leaves({k: v for k, v in frozen.items() if k != "inputs"}):
        cell = " › ".join(path)
        found, actual = _lookup(fresh, path)
        checked += 1
        if not found:
            failures.append(f"{cell}: missing from the recomputed tables (frozen {expected!r})")
        elif isinstance(expected, bool) or not isinstance(expected, (int, float)) or expected is None:
            if actual != expected:
                failures.append(f"{cell}: frozen {expected!r}, recomputed {actual!r}")
        elif not isinstance(actual, (int, float)):
            failures.append(f"{cell}: frozen {expected!r}, recomputed {actual!r}")
        elif path[-1] in _EXACT:
            if actual != expected:
                failures.append(f"{cell}: frozen {expected}, recomputed {actual}")
        elif abs(float(actual) - float(expected)) > tolerance:
            failures.append(
                f"{cell}: frozen {expected:.4f}, recomputed {actual:.4f} (drift {actual - expected:+.4f} > {tolerance})"
            )
    return failures, checked


def verify(bench_dir: str | os.PathLike[str], run_dir: str | os.PathLike[str], tolerance: float = 0.05) -> Verification:
    """Check the frozen report of ``run_dir`` against its inputs and a full recomputation."""
    bench_path, runs_path = Path(bench_dir), Path(run_dir)
    frozen_path = runs_path / FROZEN
    if not frozen_path.is_file():
        raise NclueError(
            f"{frozen_path}: nothing frozen yet; run `nclue report {bench_path} {runs_path} -o REPORT_DIR` first"
        )
    try:
        frozen = json.loads(frozen_path.read_text(encoding="utf-8"))
        inputs = dict(frozen["inputs"])
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise NclueError(f"{frozen_path}: damaged ({exc}); rerun `nclue report` to freeze the numbers again") from None
    result = Verification()
    for key, expected in sorted(inputs.items()):
        file = bench_path / key[len("bench/") :] if key.startswith("bench/") else runs_path / key[len("runs/") :]
        if not file.is_file():
            result.hash_failures.append(f"{key}: file missing ({file})")
        elif sha256_file(file) != expected:
            result.hash_failures.append(
                f"{key}: SHA-256 changed (frozen {expected[:12]}…, now {sha256_file(file)[:12]}…)"
            )
    fresh = compute_report(
        bench_path, runs_path, n_boot=frozen["bootstrap"], n_draws=frozen["draws"], seed=frozen["seed"]
    )
    result.recomputed = fresh
    result.cell_failures, result.cells_checked = compare_cells(frozen, fresh.to_json(), tolerance)
    return result
