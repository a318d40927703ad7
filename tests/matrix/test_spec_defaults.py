"""The shipped matrices rank the raw form (the paper's CrossPage runs); ``baselines`` places the query-blind controls.

``form`` is the spec's default rendering — its runs are named by their system alone and ranked —
and ``baselines`` (``ranked`` | ``apart``) says whether the report ranks ``baseline.random`` and
``baseline.frequency_prior`` in Table S1 or lists them in S1d. ``nclue run --matrix`` records both
in ``matrix.json`` and :class:`~nclue.matrix.runset.RunSet` reads them back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.matrix.runset import MANIFEST, RunSet
from nclue.matrix.spec import BASELINES_APART, BASELINES_RANKED, load_matrix
from nclue.types import DEFAULT_FORM

FUSION = "rrf(bm25.and, dense.joint(ptop3))"
OFF_FORM_SYSTEMS = ("bm25.joint", "dense.joint(ptop3)", "bm25.decompose(distinct)", FUSION, "bm25.and")
"""The systems of ``default.toml`` that list ``forms = ["raw", "clean_v2", "natural"]``."""


def test_the_shipped_matrices_rank_the_raw_form() -> None:
    for name in (None, "shift"):
        spec = load_matrix(name)
        assert (spec.form, spec.baselines) == ("raw", BASELINES_RANKED), name
        for run in spec.runs:
            assert ("@" not in run.name) == (run.form == "raw"), run.name
            assert run.category == "QF" or run.form == "raw", run.name
        assert spec.headline == ("bm25.and", FUSION), name  # both raw-form runs, named without a form
    assert DEFAULT_FORM == "clean_v2"  # a single `nclue run` keeps its own default


def test_the_default_matrix_names_its_off_form_runs_by_form() -> None:
    names = load_matrix().run_names
    off_form = {n for n in names if "@" in n}
    assert off_form == {f"{s}@{f}" for s in OFF_FORM_SYSTEMS for f in ("clean_v2", "natural")}
    assert {"bm25.joint", "bm25.page_max", "struct.cover", "bm25.or"} <= set(names)
    assert not any(n.endswith("@raw") for n in names)


def test_the_shift_matrix_runs_every_system_on_three_forms() -> None:
    spec = load_matrix("shift")
    systems = {r.system for r in spec.runs}
    assert len(systems) == 10
    assert set(spec.run_names) == {s + suffix for s in systems for suffix in ("", "@clean_v2", "@natural")}


def _spec(tmp_path: Path, head: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(f'{head}\n[[run]]\nsystem = "bm25.and"\nforms = ["raw", "clean_v2"]\n', encoding="utf-8")
    return path


def test_a_spec_names_its_form_and_layout(tmp_path: Path) -> None:
    spec = load_matrix(_spec(tmp_path, 'form = "clean_v2"\nbaselines = "apart"'))
    assert (spec.form, spec.baselines) == ("clean_v2", BASELINES_APART)
    assert spec.run_names == ["bm25.and@raw", "bm25.and"]
    bare = load_matrix(_spec(tmp_path, ""))
    assert (bare.form, bare.baselines) == (DEFAULT_FORM, BASELINES_RANKED)


@pytest.mark.parametrize(
    ("head", "message"),
    [
        ('baselines = "hidden"', "baselines 'hidden' is not one of ranked, apart"),
        ("baselines = true", "'baselines' must be a string, got True (bool)"),
        ('baseline = "apart"', "unknown top-level keys ['baseline']; allowed: depth, k, form, baselines,"),
    ],
)
def test_a_bad_layout_is_refused_naming_the_file(tmp_path: Path, head: str, message: str) -> None:
    path = _spec(tmp_path, head)
    with pytest.raises(NclueError) as err:
        load_matrix(path)
    assert str(path) in str(err.value) and message in str(err.value)


def _folder(tmp_path: Path, spec: dict) -> Path:
    """A run folder whose ``matrix.json`` records ``spec`` and one run."""
    root = tmp_path / "runs"
    root.mkdir()
    manifest = {"spec": spec, "runs": {"bm25.and": {"system": "bm25.and", "form": "raw"}}}
    (root / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return root


@pytest.mark.parametrize("layout", [BASELINES_RANKED, BASELINES_APART])
def test_the_run_folder_reads_the_recorded_layout(tmp_path: Path, layout: str) -> None:
    runset = RunSet.open(_folder(tmp_path, {"form": "raw", "k": 10, "baselines": layout}))
    assert (runset.form, runset.baselines, runset.fair()) == ("raw", layout, ["bm25.and"])


def test_a_manifest_from_before_the_key_keeps_its_reported_layout(tmp_path: Path) -> None:
    assert RunSet.open(_folder(tmp_path, {"form": "clean_v2", "k": 10})).baselines == BASELINES_APART


def test_a_folder_without_a_manifest_ranks_the_baselines(tmp_path: Path) -> None:
    (tmp_path / "bm25.and.jsonl").write_text("", encoding="utf-8")
    assert RunSet.open(tmp_path).baselines == BASELINES_RANKED


@pytest.mark.slow
def test_the_matrix_records_the_layout_and_the_report_ranks_the_baselines(frozen_runs: Path) -> None:
    assert json.loads((frozen_runs / MANIFEST).read_text())["spec"]["baselines"] == BASELINES_RANKED
    report = frozen_runs.parent / "report"
    controls = json.loads((report / "report.json").read_text())["controls"]
    baselines = {n: row for n, row in controls.items() if n.startswith("baseline.")}
    assert set(baselines) == {"baseline.random", "baseline.frequency_prior"}
    assert all(row["category"] == "BL" and row["rank"] >= 1 for row in baselines.values())
    assert not any("rank" in row for n, row in controls.items() if n.startswith("oracle."))
    s1, s1d = ((report / f"{stem}.md").read_text() for stem in ("table_s1_scorecard", "table_s1d_controls"))
    for name, row in baselines.items():
        assert f"| {row['rank']} | {name} | BL |" in s1 and name not in s1d
    assert "oracle.surface_and" in s1d and "oracle." not in s1
