"""Table S1 ranks the query-blind baselines with the fair systems (the paper's S1a–S1c); S1d keeps the oracles.

Four two-condition queries, each with one gold ``gN`` and one judged subset ``sN``. A run *wins*
query ``qN`` when it ranks ``gN`` first, and otherwise ranks ``sN`` above ``gN`` (subset first);
``baseline.random`` returns an unjudged document only (a miss). n-Clue Score = 25 per win:

=====================================  ====  ======  ====  ========================
run                                    wins  n-Clue  Cat.  ranked (default) / apart
=====================================  ====  ======  ====  ========================
rrf(bm25.and, dense.joint(ptop3))      4     100     FUS   1 / 1
bm25.and                               3     75      BL    2 / 2
baseline.frequency_prior               2     50      BL    3 / S1d
dense.joint(ptop3)                     1     25      RET   4 / 3
baseline.random                        0     0       BL    5 / S1d
oracle.surface_and                     4     100     –     S1d / S1d
bm25.and@clean_v2 (off the raw form)   2     50      QF    S2b only
=====================================  ====  ======  ====  ========================
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.matrix.runset import RunEntry, RunSet
from nclue.matrix.spec import BASELINES_APART, BASELINES_RANKED
from nclue.release import Release
from nclue.report.paper import PaperReport, headline_pair, report_from_scores
from nclue.report.reproduce import Tolerances, compare_cells
from nclue.scoring import Benchmark, Block, from_records, score_runs
from nclue.types import Judgment, Query, RankedDoc, Run

QIDS = ("q1", "q2", "q3", "q4")
FUSION = "rrf(bm25.and, dense.joint(ptop3))"
DENSE = "dense.joint(ptop3)"
WINS = {
    FUSION: QIDS,
    "bm25.and": ("q1", "q2", "q3"),
    "bm25.and@clean_v2": ("q1", "q2"),
    DENSE: ("q1",),
    "oracle.surface_and": QIDS,
    "baseline.frequency_prior": ("q1", "q2"),
}
CONTROLS = ("oracle.surface_and", "baseline.frequency_prior", "baseline.random")
ENTRIES = {
    FUSION: RunEntry(FUSION, FUSION, "raw", "fusion", "FUS"),
    "bm25.and": RunEntry("bm25.and", "bm25.and", "raw", "baseline", "BL"),
    "bm25.and@clean_v2": RunEntry("bm25.and@clean_v2", "bm25.and", "clean_v2", "baseline", "QF"),
    DENSE: RunEntry(DENSE, DENSE, "raw", "standalone", "RET"),
}
RANKED_S1 = [  # (rank, system, category, n-Clue Score), by hand from the docstring's table
    ("1", FUSION, "FUS", "100.0"),
    ("2", "bm25.and", "BL", "75.0"),
    ("3", "baseline.frequency_prior", "BL", "50.0"),
    ("4", DENSE, "RET", "25.0"),
    ("5", "baseline.random", "BL", "0.0"),
]
APART_S1 = [("1", FUSION, "FUS", "100.0"), ("2", "bm25.and", "BL", "75.0"), ("3", DENSE, "RET", "25.0")]


def _ranking(name: str) -> dict[str, list[RankedDoc]]:
    """``name``'s ranking: the gold first on the queries it wins, the subset first on the others."""
    if name == "baseline.random":
        return {q: [RankedDoc("unjudged", 1.0)] for q in QIDS}
    won = WINS[name]
    docs = {q: [f"g{q[1]}"] if q in won else [f"s{q[1]}", f"g{q[1]}"] for q in QIDS}
    return {q: [RankedDoc(d, 10.0 - i) for i, d in enumerate(ds)] for q, ds in docs.items()}


def _report(baselines: str = BASELINES_RANKED) -> PaperReport:
    """The report of the four matrix runs (one contrast) and the three controls, in layout ``baselines``."""
    release = Release.from_records(
        [Query(q, ("Alpha topic", "Beta topic")) for q in QIDS],
        [j for q in QIDS for j in (Judgment(q, f"g{q[1]}", 2, "gold"), Judgment(q, f"s{q[1]}", 1, "partial"))],
    )
    bench = Benchmark.from_release(release)
    names = [*ENTRIES, *CONTROLS]
    runs = [from_records(Run(n, _ranking(n)), bench) for n in names]
    contrast = Block("Complementarity", DENSE, (FUSION, "bm25.and"))
    runset = RunSet(Path("runs"), ENTRIES, form="raw", contrasts=(contrast,), baselines=baselines)
    scores = score_runs(bench, runs, k=10)
    return report_from_scores(bench, scores, runset, release, n_boot=50, n_draws=200, seed=1, controls=CONTROLS)


def _rows(report: PaperReport, key: str) -> list[tuple[str, ...]]:
    """The rows of section ``key`` (file stem) of ``report``."""
    return [table.rows for k, _, table in report.sections() if k == key][0]


def test_baselines_are_ranked_with_the_fair_systems_by_default() -> None:
    report = _report()
    assert report.baselines == BASELINES_RANKED
    assert [row[:3] + row[3:4] for row in _rows(report, "table_s1_scorecard")] == RANKED_S1
    assert [row[0] for row in _rows(report, "table_s1d_controls")] == ["oracle.surface_and"]  # oracles only, unranked
    caption = report.tables()[0].caption
    assert "Fair systems of form raw and the query-blind baselines" in caption


def test_the_json_freezes_the_s1_ranks() -> None:
    data = _report().to_json()
    assert data["baselines"] == BASELINES_RANKED
    assert {n: row["rank"] for n, row in data["scorecard"].items()} == {FUSION: 1, "bm25.and": 2, DENSE: 4}
    controls = data["controls"]
    assert (controls["baseline.frequency_prior"]["rank"], controls["baseline.random"]["rank"]) == (3, 5)
    assert controls["baseline.random"]["category"] == "BL" and "rank" not in controls["oracle.surface_and"]


def test_a_ranked_baseline_is_nothing_but_a_row_of_table_s1() -> None:
    report = _report()
    assert report.fair == (FUSION, "bm25.and", DENSE)  # the figure, strata, page support and studies
    assert [row[0] for row in _rows(report, "table_s1j_strata")] == list(report.fair)
    contrast = report.contrasts["Complementarity"]
    assert (contrast.base, contrast.variant) == (DENSE, FUSION) and set(contrast.tried) == {FUSION, "bm25.and"}
    assert headline_pair(RunSet(Path("runs"), ENTRIES, contrasts=()), report.contrasts) == (DENSE, FUSION)


def test_apart_restores_the_spec_layout() -> None:
    report = _report(BASELINES_APART)
    assert [row[:4] for row in _rows(report, "table_s1_scorecard")] == APART_S1
    assert [row[0] for row in _rows(report, "table_s1d_controls")] == [
        "oracle.surface_and",
        "baseline.frequency_prior",
        "baseline.random",
    ]
    assert "Rank" not in report.tables()[1].headers
    data = report.to_json()
    assert data["scorecard"][DENSE]["rank"] == 3 and not any("rank" in row for row in data["controls"].values())
    assert replace(_report(), baselines=BASELINES_APART).to_json() == data  # no number depends on the layout


def test_reproduce_flags_a_changed_layout() -> None:
    frozen, fresh = _report(BASELINES_APART).to_json(), _report().to_json()
    failures, _ = compare_cells(frozen, fresh, Tolerances())
    assert "baselines: frozen 'apart', recomputed 'ranked'" in failures
    assert any(f.startswith(f"scorecard › {DENSE} › rank: frozen 3, recomputed 4") for f in failures)


def test_a_bad_layout_in_a_manifest_is_refused(tmp_path: Path) -> None:
    (tmp_path / "matrix.json").write_text('{"spec": {"form": "raw", "baselines": "mixed"}, "runs": {}}')
    with pytest.raises(NclueError, match="spec baselines 'mixed' is not one of ranked, apart"):
        RunSet.open(tmp_path)
