"""``nclue reproduce --verify``: recompute every table from the frozen runs and qrels and check them.

Two checks, both naming exactly what failed:

1. **Files** — every input recorded in ``REPORT_DIR/frozen.json`` (the folder ``nclue report``
   wrote; a report from before 0.1 froze into ``RUN_DIR``) must still have its SHA-256:
   every file the release lists in ``SHA256SUMS`` (queries, qrels, BEIR qrels, corpus,
   inventory, ``MANIFEST.json``, controls, paraphrases, judge caches) and ``SHA256SUMS``
   itself, every run file, the masked runs and, for SourceShift, its release and runs. The
   release's ``SHA256SUMS`` is also re-checked as a whole (:func:`nclue.bench.verify.check_sums`:
   changed, missing and unlisted files).
2. **Cells** — every table is recomputed with the frozen seed, bootstrap and draw counts and
   compared cell by cell with a tolerance per quantity (:class:`Tolerances`): integers
   (counts, ranks, seeds) exactly; p-values (keys ``p`` or ``p_*``) within ``p``;
   ρ, AUCs, regression coefficients, shares and other unit-scale statistics within ``rho``;
   every other number is in percentage points, within ``points``; text and labels (a
   block's displayed variant) must match.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nclue.errors import NclueError
from nclue.io import json_leaves, read_json_object, sha256_file
from nclue.report.masking import MASK_DIR
from nclue.report.paper import PaperReport, compute_report, frozen_name

LEGACY_STUDY_METRIC = "n_clue_score"
"""The metric of Table S1i and the per-source deltas in a freeze that does not record one (before the
seed's Gold-NDCG@10 became the default), so older reports still verify."""

_UNIT_SCALE = {
    "spearman",
    "rho",
    "auc",
    "auc_without_length",
    "beta",
    "se",
    "covariates",
    "usable_share",
    "metric_ordering",
}


@dataclass(frozen=True)
class Tolerances:
    """Allowed absolute drift per quantity: percentage points, p-values, unit-scale statistics."""

    points: float = 0.05
    p: float = 0.001
    rho: float = 0.001


@dataclass
class Verification:
    """Outcome of :func:`verify`: problems found (empty = reproduced) and what was checked."""

    hash_failures: list[str] = field(default_factory=list)
    cell_failures: list[str] = field(default_factory=list)
    cells_checked: int = 0
    files_checked: int = 0
    recomputed: PaperReport | None = None

    @property
    def ok(self) -> bool:
        """True when every hash and every cell reproduced."""
        return not self.hash_failures and not self.cell_failures


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


def quantity(path: tuple[str, ...]) -> str:
    """``p``, ``rho`` or ``points``: the tolerance class of a numeric cell, from its JSON path."""
    if any(part == "p" or part.startswith("p_") for part in path):
        return "p"
    if any(part in _UNIT_SCALE for part in path):
        return "rho"
    return "points"


def compare_cells(frozen: dict, fresh: dict, limits: Tolerances) -> tuple[list[str], int]:
    """Every leaf of ``frozen`` (except the input hashes) against ``fresh``; returns failures and count."""
    failures: list[str] = []
    checked = 0
    for path, expected in json_leaves({k: v for k, v in frozen.items() if k != "inputs"}, index=lambda i: f"[{i}]"):
        cell = " › ".join(path)
        found, actual = _lookup(fresh, path)
        checked += 1
        if not found:
            failures.append(f"{cell}: missing from the recomputed tables (frozen {expected!r})")
        elif isinstance(expected, bool) or not isinstance(expected, (int, float)):
            if actual != expected:
                failures.append(f"{cell}: frozen {expected!r}, recomputed {actual!r}")
        elif isinstance(actual, bool) or not isinstance(actual, (int, float)):
            failures.append(f"{cell}: frozen {expected!r}, recomputed {actual!r}")
        elif isinstance(expected, int):
            if actual != expected:
                failures.append(f"{cell}: frozen {expected}, recomputed {actual} (counts must match exactly)")
        else:
            kind = quantity(path)
            limit = {"p": limits.p, "rho": limits.rho, "points": limits.points}[kind]
            if abs(float(actual) - float(expected)) > limit:
                unit = {"p": "p-value", "rho": "unit-scale", "points": "points"}[kind]
                failures.append(
                    f"{cell}: frozen {expected:.4f}, recomputed {actual:.4f} "
                    f"(drift {actual - expected:+.4f} > {limit} {unit} tolerance)"
                )
    return failures, checked


def _resolve(
    key: str, bench: Path, runs: Path, shift: dict | None, qrels_dir: Path | None, masking: Path | None
) -> Path:
    prefix, _, rest = key.partition("/")
    roots = {"bench": bench, "runs": runs, **({"qrels": qrels_dir} if qrels_dir is not None else {})}
    if masking is not None:
        roots["masking"] = masking
    if shift:
        roots.update({"shift-bench": Path(shift["bench"]), "shift-runs": Path(shift["runs"])})
    if prefix not in roots:
        raise NclueError(f"frozen input {key!r} has an unknown root; rerun `nclue report` to freeze it again")
    return roots[prefix] / rest


def verify(
    bench_dir: str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    report_dir: str | os.PathLike[str] | None = None,
    limits: Tolerances = Tolerances(),
    coverage_dir: str | os.PathLike[str] | None = None,
    qrels: str | os.PathLike[str] | None = None,
) -> Verification:
    """Check the report frozen in ``report_dir`` against its inputs and a full recomputation.

    ``report_dir`` is the folder ``nclue report`` wrote (its ``frozen.json``); ``None`` reads a
    freeze left in ``run_dir`` by an older nclue. The masked runs are found where the freeze
    recorded them (``options.masking``, by default ``REPORT_DIR/masking``).

    ``coverage_dir`` (the folder :func:`nclue.select.pipeline.run_coverage` wrote) adds the
    coverage study: its freeze is re-verified (input, output and code hashes — a changed freeze
    raises :class:`NclueError` naming what changed) and every cell of its ``summary.json`` is
    recomputed exactly (tolerance 1e-9; the computation is deterministic). ``qrels`` checks the
    report frozen on that qrels version (``nclue report --qrels``).
    """
    from nclue.bench.verify import check_sums

    bench_path, runs_path = Path(bench_dir), Path(run_dir)
    frozen_path = (Path(report_dir) if report_dir is not None else runs_path) / frozen_name(qrels)
    if not frozen_path.is_file():
        raise NclueError(
            f"{frozen_path}: nothing frozen here; run `nclue report {bench_path} {runs_path} -o REPORT_DIR` and "
            "pass REPORT_DIR: `nclue reproduce BENCH RUN_DIR REPORT_DIR --verify`"
        )
    refreeze = "rerun `nclue report` to freeze the numbers again"
    frozen = read_json_object(frozen_path, refreeze, "frozen.json")
    try:
        inputs = dict(frozen["inputs"])
        options = frozen.get("options") or {}
        shift, masking = options.get("shift"), options.get("masking")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise NclueError(f"{frozen_path}: damaged ({type(exc).__name__}: {exc}); {refreeze}") from None
    for key, low, high in (("seed", 0, None), ("bootstrap", 1, 100_000), ("draws", 1, 1_000_000)):
        value = frozen.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            bound = f"{low}..{high:,}" if high is not None else f">= {low}"
            raise NclueError(
                f"{frozen_path}: {key!r} is {value!r}, not an integer {bound}; the freeze was edited — rerun "
                "`nclue report` to freeze the numbers again"
            )
    result = Verification()
    qrels_dir = Path(qrels).parent if qrels is not None else None
    masking_dir = Path(masking) if isinstance(masking, str) else None
    if masking_dir is not None and not masking_dir.is_dir() and (frozen_path.parent / MASK_DIR).is_dir():
        masking_dir = frozen_path.parent / MASK_DIR  # the report folder moved with its masked runs
    for key, expected in sorted(inputs.items()):
        file = _resolve(key, bench_path, runs_path, shift, qrels_dir, masking_dir)
        result.files_checked += 1
        if not file.is_file():
            result.hash_failures.append(f"{key}: file missing ({file})")
        elif sha256_file(file) != expected:
            result.hash_failures.append(
                f"{key}: SHA-256 changed (frozen {expected[:12]}…, now {sha256_file(file)[:12]}…)"
            )
    for root, label in [(bench_path, "bench")] + ([(Path(shift["bench"]), "shift-bench")] if shift else []):
        if (root / "SHA256SUMS").is_file():
            result.hash_failures += [f"{label}/{line}" for line in check_sums(root)]
    fresh = compute_report(
        bench_path,
        runs_path,
        n_boot=frozen["bootstrap"],
        n_draws=frozen["draws"],
        seed=frozen["seed"],
        shift=(shift["bench"], shift["runs"]) if shift else None,
        qrels=qrels,
        masking_dir=masking_dir,
        check_inputs=False,
        shift_qrels=shift.get("qrels") if shift else None,
        study_metric=frozen.get("study_metric", LEGACY_STUDY_METRIC),
        keep_zero_gold=_kept_zero_gold(frozen),
    )
    result.recomputed = fresh
    result.cell_failures, result.cells_checked = compare_cells(frozen, fresh.to_json(), limits)
    if coverage_dir is not None:
        from nclue.select.pipeline import verify_coverage

        check = verify_coverage(coverage_dir)
        result.cell_failures += [f"coverage: {failure}" for failure in check.failures]
        result.cells_checked += check.cells_checked
    return result


def _kept_zero_gold(frozen: dict) -> bool:
    """The frozen report's zero-gold rule: what ``options.zero_gold`` records; a freeze from before the
    rule existed kept such queries."""
    record = (frozen.get("options") or {}).get("zero_gold")
    return bool(record["keep"]) if isinstance(record, dict) and "keep" in record else True
