"""Table S1i decomposes the gold-only NDCG@10 gap by default (the seed's "+.1718"), n-Clue on request.

Four queries with one gold each (so the ideal DCG is 1 and Gold-NDCG = 1/log2(rank + 1)); gold
g1 answers q1 and q2, g2 answers q3, g3 answers q4. Unjudged fillers never block a gold.

=====  ===================  ======================  ==========  ===========
query  base gold rank       variant gold rank       ΔGold-NDCG  Δn-Clue
=====  ===================  ======================  ==========  ===========
q1     1 (1.0)              3 (0.5)                 −0.5        0
q2     2 (1/log2 3)         1 (1.0)                 +0.36907    0
q3     absent (0)           1 (1.0)                 +1.0        +1
q4     1 (1.0)              1 (1.0)                 0           0
=====  ===================  ======================  ==========  ===========

Mean ΔGold-NDCG = (−0.5 + 0.369070 + 1) / 4 = 0.217267 → +21.73 pp; mean Δn-Clue = +25.00 pp.
Leaving out each gold document: without g1 → mean(1, 0) = 0.5; without g2 → mean(−0.5, 0.369070,
0) = −0.043643; without g3 → mean(−0.5, 0.369070, 1) = 0.289690. Range [−4.36, +50.00] pp.
"""

from __future__ import annotations

import math

import pytest

from nclue.release import Release
from nclue.report.clustered import S1I_METRIC, component_column, components_table
from nclue.scoring import Benchmark, from_records, score_runs
from nclue.types import Judgment, RankedDoc, Run

QUERIES = {q: ("Alpha topic", "Beta topic") for q in ("q1", "q2", "q3", "q4")}
GOLD = {"q1": "g1", "q2": "g1", "q3": "g2", "q4": "g3"}
BASE = {"q1": ["g1", "x1", "x2"], "q2": ["x1", "g1"], "q3": ["x1"], "q4": ["g3"]}
VARIANT = {"q1": ["x1", "x2", "g1"], "q2": ["g1"], "q3": ["g2"], "q4": ["g3"]}


def _scored():
    from nclue.types import Query

    release = Release.from_records(
        [Query(q, c) for q, c in QUERIES.items()], [Judgment(q, d, 2, "gold") for q, d in GOLD.items()]
    )
    bench = Benchmark.from_release(release)

    def run(name: str, ranking: dict[str, list[str]]) -> Run:
        return Run(name, {q: [RankedDoc(d, 10.0 - i) for i, d in enumerate(docs)] for q, docs in ranking.items()})

    runs = [from_records(run("base", BASE), bench), from_records(run("variant", VARIANT), bench)]
    return bench, score_runs(bench, runs, k=10)


def test_s1i_is_the_gold_ndcg_gap_by_default() -> None:
    bench, scores = _scored()
    column = component_column("dev", bench, scores, "base", "variant", n_boot=200, seed=3)
    assert S1I_METRIC == "gold_ndcg" and column.metric == "gold_ndcg"
    expected = (-0.5 + (1 - 1 / math.log2(3)) + 1.0) / 4
    assert column.observed == pytest.approx(100 * expected, abs=1e-9)
    assert column.leave_one_gold_doc == pytest.approx((100 * (-0.5 + 1 - 1 / math.log2(3)) / 3, 50.0), abs=1e-9)
    assert column.remove_top20_gold["queries"] == 0  # three gold documents, all removed
    assert (column.queries, column.gold_documents, column.gold_components, column.gold_largest) == (4, 3, 3, 2)
    table = components_table([column])
    assert "Gold-NDCG" in table.caption and table.rows[2] == ("Observed gap", "+21.73")


def test_s1i_on_n_clue_when_asked() -> None:
    bench, scores = _scored()
    column = component_column("dev", bench, scores, "base", "variant", n_boot=200, seed=3, metric="n_clue_score")
    assert column.observed == pytest.approx(25.0)
    assert column.leave_one_gold_doc == pytest.approx((0.0, 50.0))


def test_positional_bootstrap_arguments_are_refused() -> None:
    """n_boot and seed are keywords: an old positional call (with n_draws) cannot pass a draw count as a seed."""
    bench, scores = _scored()
    with pytest.raises(TypeError):
        component_column("dev", bench, scores, "base", "variant", 200, 10_000, 3)  # type: ignore[misc]
