"""The studies' cores on opened, scored objects against their path-taking wrappers, and the S1i pair
following the spec's ``headline`` through ``matrix.json`` (on the mini matrix run on the small benchmark)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from nclue.matrix.runset import MANIFEST, RunSet
from nclue.report.paper import CONTROL_DIR, PaperReport, compute_report, report_from_scores
from nclue.report.scored import score_run_folder
from nclue.report.shift import compute_shift, shift_from_scores
from nclue.runfile import run_path

pytestmark = pytest.mark.slow

BOOT, DRAWS, SEED = 50, 200, 5
FUSION = "rrf(bm25.and, dense.joint(ptop3))"


def _pair(report: PaperReport) -> tuple[str, str]:
    """The development benchmark's S1i pair of ``report``."""
    column = report.components[0]
    return column.base, column.variant


def test_shift_core_on_the_scored_folder_equals_compute_shift(frozen_runs: Path, small_bench: Path) -> None:
    folder = score_run_folder(small_bench, frozen_runs)
    plain = shift_from_scores(folder.bench, folder.scores, folder.runset, folder.release, BOOT, DRAWS, SEED)
    dev = {  # development Δs of the other sign: reversals between benchmarks
        (c.base, c.variant): -c.forms[plain.default_form].delta for c in plain.contrasts
    }
    core = shift_from_scores(folder.bench, folder.scores, folder.runset, folder.release, BOOT, DRAWS, SEED, dev)
    wrapped = compute_shift(small_bench, frozen_runs, BOOT, DRAWS, SEED, dev)
    assert core.to_json() == wrapped.to_json()
    assert core.sources and core.contrasts and core.source_deltas and core.metric_ordering.runs >= 2
    assert any(r.kind == "benchmarks" for r in core.reversal_records)
    assert list(core.to_json()["contrasts"][0]) == ["name", "base", "variant", "forms"]


def test_report_core_on_the_scored_objects_equals_compute_report(frozen_runs: Path, small_bench: Path) -> None:
    controls = sorted((small_bench / CONTROL_DIR).glob("*.jsonl"))
    folder = score_run_folder(small_bench, frozen_runs, control_paths=controls)
    shift = score_run_folder(small_bench, frozen_runs)
    core = report_from_scores(
        folder.bench,
        folder.scores,
        folder.runset,
        folder.release,
        BOOT,
        DRAWS,
        SEED,
        controls=folder.controls,
        shift=shift,
    )
    wrapped = compute_report(small_bench, frozen_runs, BOOT, DRAWS, SEED, shift=(small_bench, frozen_runs))
    assert core.inputs == {} and wrapped.inputs and core.shift is not None and len(core.components) == 2
    assert replace(core, inputs=wrapped.inputs, shift_paths=wrapped.shift_paths).to_json() == wrapped.to_json()


def _rerun_with_headline(
    frozen_runs: Path, small_bench: Path, collection: Path, root: Path, pair: tuple[str, str]
) -> Path:
    """A copy of the frozen runs whose ``matrix.json`` the runner rewrote from the mini spec with ``[headline]`` ``pair``."""
    from nclue.matrix.runner import run_matrix
    from nclue.matrix.spec import load_matrix
    from tests.matrix.conftest import MINI_MATRIX

    runs = root / "runs"
    shutil.copytree(frozen_runs, runs)
    spec = root / "headline.toml"
    table = f'[headline]\nbase = "{pair[0]}"\nvariant = "{pair[1]}"\n'
    spec.write_text(MINI_MATRIX.replace("[[run]]", table + "\n[[run]]", 1), encoding="utf-8")
    result = run_matrix(load_matrix(spec), small_bench, collection, runs)
    assert result.ran == []  # only the manifest changed
    return runs


def test_the_spec_headline_chooses_the_s1i_pair(
    frozen_runs: Path, small_bench: Path, indexed_collection: Path, tmp_path: Path
) -> None:
    first = compute_report(small_bench, frozen_runs, BOOT, DRAWS, SEED)
    assert json.loads((frozen_runs / MANIFEST).read_text())["headline"] is None
    assert _pair(first) == (first.contrasts["Lexical composition"].base, first.contrasts["Lexical composition"].variant)
    pair = ("bm25.joint", "rrf(bm25.and, bm25.decompose(distinct))")  # no declared contrast
    runs = _rerun_with_headline(frozen_runs, small_bench, indexed_collection, tmp_path, pair)
    assert json.loads((runs / MANIFEST).read_text())["headline"] == {"base": pair[0], "variant": pair[1]}
    assert RunSet.open(runs).headline == pair
    chosen = compute_report(small_bench, runs, BOOT, DRAWS, SEED)
    assert _pair(chosen) == pair
    assert chosen.to_json()["contrasts"] == first.to_json()["contrasts"]  # only the S1i pair moved


def test_an_old_manifest_keeps_fusion_minus_bm25_when_both_ran(
    frozen_runs: Path, small_bench: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(frozen_runs, runs)
    manifest = json.loads((runs / MANIFEST).read_text())
    del manifest["headline"]  # as written before specs had one
    (runs / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    old = compute_report(small_bench, runs, BOOT, DRAWS, SEED)  # fusion did not run: the first contrast
    assert _pair(old) == (old.contrasts["Lexical composition"].base, old.contrasts["Lexical composition"].variant)

    rows = [json.loads(line) for line in run_path(runs, "bm25.joint").read_text().splitlines()]
    run_path(runs, FUSION).write_text("".join(json.dumps(r | {"run": FUSION}) + "\n" for r in rows))
    manifest["runs"][FUSION] = {"system": FUSION, "block": "fusion", "category": "FUS"}
    (runs / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    report = compute_report(small_bench, runs, BOOT, DRAWS, SEED, check_inputs=False)
    assert _pair(report) == ("bm25.and", FUSION) and FUSION not in {c.variant for c in report.contrasts.values()}
