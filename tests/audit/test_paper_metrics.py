"""The challenge and impact defaults of the n-Clue supplement, each on a benchmark small enough to compute by hand.

Two conditions per query, so a gold has grade 2 and a partial grade 1. With ``L = 1/log2(3)`` (the
discount of rank 2) and ``I(G) = Σ_{i≤G} 1/log2(i+1)`` the ideal DCG of ``G`` golds, a query's
Gold-NDCG@10 is the discounted count of its retrieved golds over ``I(G)``.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from nclue.audit.audit_params import IMPACT_METRICS, ChallengeParams
from nclue.audit.challenge import challenge
from nclue.audit.impact import impact
from nclue.cli import audit as cli_audit
from nclue.errors import NclueError
from tests.audit.simulate import read_jsonl
from tests.scoring.nclue_eval_helpers import make_release, write_jsonl

L = 1 / math.log2(3)
CONDITIONS = ["alpha", "beta"]


def _row(qid: str, doc: str, grade: int) -> dict:
    return {"qid": qid, "doc_id": doc, "grade": grade, "label": "gold" if grade == 2 else "partial"}


def _run(path: Path, name: str, rankings: dict[str, list[str]]) -> Path:
    """A JSONL run: documents in the order given (descending scores)."""
    rows = [
        {"qid": q, "run": name, "docs": [{"doc_id": d, "score": float(len(docs) - i)} for i, d in enumerate(docs)]}
        for q, docs in rankings.items()
    ]
    return write_jsonl(path, rows)


# --- impact ------------------------------------------------------------------------------------
#
# v1 (the release's own qrels)       v2 (a repair)
#   q1: gA gold, p1 partial            unchanged
#   q2: gA gold                        unchanged          (q1, q2 share the gold set {gA}: one family)
#   q3: g3 gold, p3 partial            p3 promoted to gold
#   q4: g4 gold, p4 partial            g4 demoted: q4 has no gold left → dropped with its 2 rows
#
# run A: q1 [gA, p1]  q2 [x, gA]  q3 [g3]      q4 [g4]
# run B: q1 [p1, gA]  q2 —        q3 [p3, g3]  q4 [x]
#
# Gold-NDCG per query      v1: A (1, L, 1, 1)   B (L, 0, L, 0)
#                          v2: A (1, L, 1/(1+L)) B (L, 0, 1)     (I(2) = 1 + L for q3)
V1_DIFFS = {"q1": 1 - L, "q2": L, "q3": 1 - L, "q4": 1.0}
V2_DIFFS = {"q1": 1 - L, "q2": L, "q3": 1 / (1 + L) - 1}
FAMILIES = {"v1": [["q1", "q2"], ["q3"], ["q4"]], "v2": [["q1", "q2"], ["q3"]]}
GOLD_MEMBERS = {"v2": {"q1": {"gA"}, "q2": {"gA"}, "q3": {"g3", "p3"}}}
JUDGED_MEMBERS = {"v2": {"q1": {"gA", "p1"}, "q2": {"gA"}, "q3": {"g3", "p3"}}}


@pytest.fixture(scope="module")
def hand(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hand")
    v1 = [_row("q1", "gA", 2), _row("q1", "p1", 1), _row("q2", "gA", 2), _row("q3", "g3", 2), _row("q3", "p3", 1)]
    v1 += [_row("q4", "g4", 2), _row("q4", "p4", 1)]
    v2 = [dict(r, grade=2, label="gold") if r["doc_id"] == "p3" else r for r in v1]
    v2 = [dict(r, grade=1, label="partial") if r["doc_id"] == "g4" else r for r in v2]
    bench = make_release(root / "bench", [{"qid": f"q{i}", "conditions": CONDITIONS} for i in range(1, 5)], v1)
    _run(root / "runs" / "A.jsonl", "A", {"q1": ["gA", "p1"], "q2": ["x", "gA"], "q3": ["g3"], "q4": ["g4"]})
    _run(root / "runs" / "B.jsonl", "B", {"q1": ["p1", "gA"], "q3": ["p3", "g3"], "q4": ["x"]})
    return {
        "bench": bench,
        "v1": bench / "qrels.jsonl",
        "v2": write_jsonl(root / "audit" / "qrels.v2.jsonl", v2),
        "runs": root / "runs",
    }


def exact_sign_flip_p(units: list[float]) -> float:
    """Two-sided p of ``|Σ_u ε_u s_u| ≥ |Σ_u s_u|`` over all ``2^U`` sign vectors (brute force)."""
    observed = abs(sum(units))
    flips = list(itertools.product((1, -1), repeat=len(units)))
    return sum(abs(sum(e * s for e, s in zip(signs, units))) >= observed - 1e-12 for signs in flips) / len(flips)


def crossed_by_definition(
    diffs: dict[str, float], members: dict[str, set[str]], rule: str, n: int, seed: int
) -> tuple[float, float, int]:
    """The crossed bootstrap of ``docs/statistics.md``, one replicate and one query at a time (pp).

    ``w_q, u_d ~ Poisson(1)`` drawn as ``nclue.stats`` draws them (queries, then the member
    documents in doc_id order); query weight ``w_q · Π u_d`` (product) or ``w_q · Σ u_d``
    (membership); replicates of zero total weight are dropped; percentile 95% interval.
    """
    qids, docs = list(diffs), sorted(set().union(*members.values()))
    rng = np.random.default_rng(seed)
    w = rng.poisson(1.0, size=(len(qids), n))
    u = rng.poisson(1.0, size=(len(docs), n))
    estimates = []
    for b in range(n):
        weights = []
        for i, q in enumerate(qids):
            doc_weights = [int(u[docs.index(d), b]) for d in sorted(members.get(q, ()))]
            factor = math.prod(doc_weights) if rule == "product" else (sum(doc_weights) if doc_weights else 1)
            weights.append(int(w[i, b]) * factor)
        if sum(weights):
            estimates.append(sum(wt * diffs[q] for wt, q in zip(weights, qids)) / sum(weights))
    lo, hi = np.quantile(estimates, [0.025, 0.975])
    return 100 * float(lo), 100 * float(hi), len(estimates)


def test_hand_expectations_are_what_brute_force_says() -> None:
    """The p values the impact test expects, by enumeration of every sign flip."""
    assert exact_sign_flip_p(list(V1_DIFFS.values())) == 2 / 16
    assert exact_sign_flip_p([sum(V1_DIFFS[q] for q in f) for f in FAMILIES["v1"]]) == 2 / 8
    assert exact_sign_flip_p(list(V2_DIFFS.values())) == 6 / 8
    assert exact_sign_flip_p([sum(V2_DIFFS[q] for q in f) for f in FAMILIES["v2"]]) == 1.0


def test_impact_defaults_follow_the_paper(hand: dict[str, Path]) -> None:
    """Gold-NDCG@10, query and family p, both crossed intervals, zero-gold query dropped on v2."""
    report = impact(hand["bench"], [hand["v1"], hand["v2"]], [hand["runs"]])
    js = report.to_json()
    assert (js["metric"], js["keep_zero_gold"], js["bootstrap"], js["draws"], js["seed"]) == (
        "gold_ndcg",
        False,
        1000,
        10000,
        11,
    )
    v1, v2 = js["versions"]
    assert v1["counts"] == {
        "queries": 4,
        "queries_with_gold": 4,
        "rows": 7,
        "gold": 4,
        "partial": 3,
        "lost_gold_queries": 0,
        "lost_gold_rows": 0,
    }
    assert v2["counts"] == {
        "queries": 3,
        "queries_with_gold": 3,
        "rows": 5,
        "gold": 4,
        "partial": 1,
        "lost_gold_queries": 1,
        "lost_gold_rows": 2,
    }
    assert v1["gold_ndcg"] == pytest.approx({"A": 100 * (3 + L) / 4, "B": 100 * 2 * L / 4})
    assert v2["gold_ndcg"] == pytest.approx({"A": 100 * (1 + L + 1 / (1 + L)) / 3, "B": 100 * (1 + L) / 3})
    assert v2["n_clue_score"] == pytest.approx({"A": 100.0, "B": 100 / 3})  # over q1–q3: q4 is gone
    c1, c2 = js["contrasts"]
    assert (c1["variant"], c1["base"], c1["version"], c2["version"]) == ("A", "B", "v1", "v2")
    assert c1["gap"] == pytest.approx(100 * sum(V1_DIFFS.values()) / 4)
    assert c2["gap"] == pytest.approx(100 * sum(V2_DIFFS.values()) / 3)
    for c, version, diffs in ((c1, "v1", V1_DIFFS), (c2, "v2", V2_DIFFS)):
        assert c["p_query"] == pytest.approx(exact_sign_flip_p(list(diffs.values())), abs=0.015)
        family_units = [sum(diffs[q] for q in f) for f in FAMILIES[version]]
        assert c["p_family"] == pytest.approx(exact_sign_flip_p(family_units), abs=0.015)
    for key, members, rule in (
        ("crossed_gold", GOLD_MEMBERS["v2"], "product"),
        ("crossed_judged", JUDGED_MEMBERS["v2"], "membership"),
    ):
        lo, hi, valid = crossed_by_definition(V2_DIFFS, members, rule, 1000, 11)
        assert c2[key] == pytest.approx([lo, hi]) and c2[f"{key}_valid_replicates"] == valid
        assert 100 * min(V2_DIFFS.values()) <= lo <= hi <= 100 * max(V2_DIFFS.values())
    with_q4 = crossed_by_definition({**V2_DIFFS, "q4": 0.0}, {**GOLD_MEMBERS["v2"], "q4": set()}, "product", 1000, 11)
    assert with_q4[2] != c2["crossed_gold_valid_replicates"]  # the interval is drawn over v2's remaining queries
    text = report.to_markdown()
    assert "Gold-NDCG@10 (pp) over each version's remaining queries" in text
    assert "| Queries that lost every gold / their qrels (dropped) | 0 / 0 | 1 / 2 |" in text
    assert "Paired test (query)" in text and "Paired test (gold family)" in text
    assert "Crossed query/gold-doc 95% CI" in text and "Crossed query/judged-doc 95% CI" in text


def test_impact_switches_back_to_n_clue_and_kept_zero_gold_queries(hand: dict[str, Path]) -> None:
    """``metric="n_clue_score"`` and ``keep_zero_gold=True`` give the earlier table: q4 stays, a miss for both runs."""
    js = impact(
        hand["bench"], [hand["v1"], hand["v2"]], [hand["runs"]], metric="n_clue_score", keep_zero_gold=True
    ).to_json()
    v2 = js["versions"][1]
    assert v2["counts"]["queries"] == 4 and v2["counts"]["lost_gold_queries"] == 1 and v2["counts"]["rows"] == 7
    # n-Clue: A succeeds on q1–q3 (q4's first judged is now the partial g4), B only on q3
    assert v2["n_clue_score"] == pytest.approx({"A": 75.0, "B": 25.0})
    assert v2["gold_ndcg"] == pytest.approx({"A": 100 * (1 + L + 1 / (1 + L)) / 4, "B": 100 * (1 + L) / 4})
    assert [c["gap"] for c in js["contrasts"]] == pytest.approx([100.0, 50.0])
    assert js["keep_zero_gold"] is True and "kept and scored as a miss" in js["scored_queries"]


def test_impact_reference_is_the_first_version_when_the_release_has_no_qrels(
    hand: dict[str, Path], tmp_path: Path
) -> None:
    bench = make_release(tmp_path / "bench", read_jsonl(hand["bench"] / "queries.jsonl"), [])
    (bench / "qrels.jsonl").unlink()
    v1 = write_jsonl(tmp_path / "qrels.v1.jsonl", read_jsonl(hand["v1"]))
    js = impact(bench, [v1, hand["v2"]], [hand["runs"]], draws=200, bootstrap=50).to_json()
    assert js["reference_qrels"] == str(v1) and [v["name"] for v in js["versions"]] == ["v1", "v2"]
    assert js["versions"][1]["counts"]["lost_gold_queries"] == 1 and js["versions"][1]["counts"]["queries"] == 3


def test_impact_refuses_a_version_where_every_query_lost_its_gold(hand: dict[str, Path], tmp_path: Path) -> None:
    demoted = write_jsonl(
        tmp_path / "qrels.v3.jsonl", [dict(r, grade=1, label="partial") for r in read_jsonl(hand["v1"])]
    )
    with pytest.raises(NclueError, match="every query lost its gold.*--keep-zero-gold"):
        impact(hand["bench"], [hand["v1"], demoted], [hand["runs"]], draws=200, bootstrap=50)
    kept = impact(hand["bench"], [hand["v1"], demoted], [hand["runs"]], draws=200, bootstrap=50, keep_zero_gold=True)
    assert kept.to_json()["versions"][1]["gold_ndcg"] == {"A": 0.0, "B": 0.0}


def test_impact_command_line_defaults_and_switches(hand: dict[str, Path], cli) -> None:
    assert {m.value for m in cli_audit.ImpactMetric} == set(IMPACT_METRICS)
    base = ("audit", "impact", hand["bench"], hand["runs"], "--qrels", hand["v1"], "--qrels", hand["v2"])
    out = cli(*base, "--draws", 200, "--bootstrap", 50, "--format", "json")
    assert out.exit_code == 0, out.output
    js = json.loads(out.output)
    assert js["metric"] == "gold_ndcg" and js["versions"][1]["counts"]["queries"] == 3
    assert (js["draws"], js["bootstrap"]) == (200, 50)
    out = cli(*base, "--metric", "n_clue_score", "--keep-zero-gold", "--contrast", "B vs A", "--format", "json")
    assert out.exit_code == 0, out.output
    js = json.loads(out.output)
    assert [c["gap"] for c in js["contrasts"]] == pytest.approx([-100.0, -50.0])
    out = cli(*base, "--contrast", "A vs A")
    assert out.exit_code == 2 and "sets a run against itself" in out.output


# --- challenge ---------------------------------------------------------------------------------
#
#   q1: g1 gold, p1 partial     A: [g1, x]   B: [g1, p1]
#   q2: g2 gold                 A: [g2]      B: [x]
#
# Gold-NDCG: q1 A 1, B 1; q2 A 1, B 0 → Δ = 0.5. Promoting p1 (in B's top 10) gives q1 two golds:
# A 1/(1+L), B (1+L)/(1+L) = 1, so Δ becomes (1/(1+L) − 1 + 1)/2 ≈ 0.307: a target.
# n-Clue: both runs rank the gold g1 first on q1 before and after, so Δ stays 0.5: p1 is neutral.


@pytest.fixture(scope="module")
def duel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("duel")
    qrels = [_row("q1", "g1", 2), _row("q1", "p1", 1), _row("q2", "g2", 2)]
    bench = make_release(root / "bench", [{"qid": q, "conditions": CONDITIONS} for q in ("q1", "q2")], qrels)
    return {
        "bench": bench,
        "a": _run(root / "A.jsonl", "A", {"q1": ["g1", "x"], "q2": ["g2"]}),
        "b": _run(root / "B.jsonl", "B", {"q1": ["g1", "p1"], "q2": ["x"]}),
    }


def test_challenge_selects_on_gold_ndcg_by_default(duel: dict[str, Path], tmp_path: Path) -> None:
    summary = challenge(duel["bench"], duel["a"], duel["b"], tmp_path / "ch", ChallengeParams(controls=1))
    assert ChallengeParams().metric == "gold_ndcg" and summary.metric == "gold_ndcg"
    assert summary.contrast == pytest.approx(0.5) and (summary.candidates, summary.targets) == (1, 1)
    promoted = (1 / (1 + L) - 1 + 1) / 2
    assert promoted < summary.contrast  # the promotion shrinks the contrast, by hand
    key = read_jsonl(tmp_path / "ch" / "key.jsonl")
    assert [(r["qid"], r["doc_id"], r["role"]) for r in key] == [("q1", "p1", "target")]


def test_challenge_on_n_clue_finds_the_same_subset_neutral(duel: dict[str, Path], tmp_path: Path, cli) -> None:
    params = ChallengeParams(controls=1, metric="n_clue_score")
    summary = challenge(duel["bench"], duel["a"], duel["b"], tmp_path / "ch", params)
    assert summary.contrast == pytest.approx(0.5) and (summary.candidates, summary.targets) == (1, 0)
    key = read_jsonl(tmp_path / "ch" / "key.jsonl")
    assert [(r["qid"], r["doc_id"], r["role"]) for r in key] == [("q1", "p1", "control")]
    out = cli("audit", "challenge", duel["bench"], duel["a"], duel["b"], "-o", tmp_path / "cli", "--format", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["metric"] == "gold_ndcg" and json.loads(out.output)["targets"] == 1
