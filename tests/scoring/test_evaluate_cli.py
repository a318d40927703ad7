"""``nclue evaluate`` / ``nclue compare`` end to end on a small hand-built release."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.scoring.nclue_eval_helpers import write_trec

GOLD = "world_bank_34454344"
SUB1 = "world_bank_34353633"


@pytest.fixture
def app():  # noqa: ANN201 - the real nclue Typer app
    from nclue.cli import app

    return app


@pytest.fixture
def runs(tmp_path):
    a = write_trec(
        tmp_path / "base.trec", {"nclue_0000": [(SUB1, 2), (GOLD, 1)], "q2": [("g1", 1)], "ghost": [("g1", 1)]}
    )
    b = write_trec(tmp_path / "var.trec", {"nclue_0000": [(GOLD, 2), (SUB1, 1)], "q2": [("s1", 2), ("g1", 1)]})
    c = write_trec(tmp_path / "var2.trec", {"nclue_0000": [(GOLD, 2)], "q2": [("g2", 2)]})
    return a, b, c


def test_evaluate_json_in_percentage_points(app, s6_release, runs, tmp_path):
    per_query = tmp_path / "pq.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(s6_release),
            *map(str, runs),
            "--format",
            "json",
            "--per-query",
            str(per_query),
            "--seed",
            "3",
        ],
    )
    assert result.exception is None, result.output
    card = json.loads(result.stdout)
    base = card["runs"]["base"]
    assert base["n_clue_score"] == 50.0 and base["gold_hit"] == 100.0
    assert base["miss"] == 0.0 and base["subset_first"] == 50.0 and base["gold_first"] == 50.0
    assert set(base["ci"]) == {"n_clue_score", "gold_hit", "gold_ndcg", "graded_ndcg"}
    assert card["runs"]["var2"]["n_clue_score"] == 100.0
    assert card["unknown_qids"] == {"base": 1}
    assert "1 query ids are not in the benchmark ('ghost') and were ignored" in result.stderr
    rows = [json.loads(line) for line in per_query.read_text().splitlines()]
    assert len(rows) == 6 and {r["outcome"] for r in rows} <= {"miss", "subset_first", "gold_first"}
    again = CliRunner().invoke(app, ["evaluate", str(s6_release), *map(str, runs), "--format", "json", "--seed", "3"])
    assert json.loads(again.stdout) == card


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_evaluate_text_formats_and_plot(app, s6_release, runs, tmp_path, fmt):
    stem = tmp_path / "card"
    result = CliRunner().invoke(
        app, ["evaluate", str(s6_release), *map(str, runs), "--format", fmt, "--strata", "--plot", str(stem)]
    )
    assert result.exception is None, result.output
    assert "var2" in result.stdout and "n-Clue Score" in result.stdout
    assert (tmp_path / "card.png").stat().st_size > 1000 and (tmp_path / "card.pdf").stat().st_size > 1000
    if fmt == "latex":
        assert r"\toprule" in result.stdout


def test_compare_with_blocks_json_and_plot(app, s6_release, runs, tmp_path):
    blocks = tmp_path / "blocks.json"
    blocks.write_text(json.dumps({"blocks": [{"name": "composition", "endpoints": ["var", "var2"]}]}))
    stem = tmp_path / "plane"
    args = [
        "compare",
        str(s6_release),
        *map(str, runs),
        "--blocks",
        str(blocks),
        "--format",
        "json",
        "--draws",
        "999",
        "--plot",
        str(stem),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exception is None, result.output
    out = json.loads(result.stdout)
    assert out["base"] == "base" and set(out["contrasts"]) == {"var", "var2"}
    var2 = out["contrasts"]["var2"]
    assert var2["delta"]["n_clue_score"] == 50.0
    assert var2["base_mpg"] == [0.0, 50.0, 50.0] and var2["variant_mpg"] == [0.0, 0.0, 100.0]
    assert out["blocks"]["composition"]["display"] == "var2"
    assert (tmp_path / "plane.png").exists() and (tmp_path / "plane.pdf").exists()
    text = CliRunner().invoke(
        app, ["compare", str(s6_release), *map(str, runs), "--blocks", str(blocks), "--draws", "99"]
    )
    assert "max-|T|" in text.stdout


def test_cli_errors_are_nclue_errors(app, s6_release, runs, tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("q2 Q0 g1 1 nan bad\n")
    result = CliRunner().invoke(app, ["evaluate", str(s6_release), str(bad)])
    assert result.exit_code == 2 and "bad.trec:1" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["evaluate", str(s6_release), str(runs[0]), "--format", "html"])
    assert result.exit_code == 2 and "Usage:" in result.output and "html" in result.output
    blocks = tmp_path / "blocks.json"
    blocks.write_text(json.dumps({"blocks": [{"name": "x", "endpoints": ["missing"]}]}))
    result = CliRunner().invoke(app, ["compare", str(s6_release), *map(str, runs), "--blocks", str(blocks)])
    assert result.exit_code == 2 and "'missing' is not loaded" in result.output


def test_compare_runs_blocks_only_api(s6_release, runs):
    from nclue.scoring import Benchmark, Block, compare_runs, load_run_matrix, score_runs

    bench = Benchmark.open(s6_release)
    scores = score_runs(bench, [load_run_matrix(p, bench) for p in runs])
    blocks = [Block("composition", "base", ("var", "var2"))]
    out = compare_runs(bench, scores, "base", [], blocks=blocks, n_draws=499, sensitivity=False)
    assert out.contrasts == {}
    block = out.blocks["composition"]
    assert block.display == "var2" and set(block.endpoints) == {"var", "var2"}
    assert 0 < block.p_block <= block.p_holm <= 1


@pytest.mark.parametrize("ci", ["query", "none"])
def test_evaluate_ci_kinds(app, s6_release, runs, ci):
    result = CliRunner().invoke(app, ["evaluate", str(s6_release), *map(str, runs), "--format", "json", "--ci", ci])
    card = json.loads(result.stdout)
    assert card["ci"] == ci
    assert ("ci" in card["runs"]["base"]) == (ci != "none")


def test_spearman_leaves_the_controls_out(s6_release, runs, tmp_path):
    """ρ over the three fair runs equals scipy's on their hand-scored means; an oracle run changes nothing."""
    from scipy.stats import spearmanr

    from nclue.scoring import Benchmark, load_run_matrix, score_runs, scorecard

    bench = Benchmark.open(s6_release)
    oracle = write_trec(tmp_path / "oracle.surface_and.trec", {"nclue_0000": [(GOLD, 1)], "q2": [("g1", 1)]})
    fair = [load_run_matrix(p, bench) for p in runs]
    card = scorecard(bench, score_runs(bench, [*fair, load_run_matrix(oracle, bench)]), "none")
    means = {r.name: card[r.name] for r in fair}
    expected = spearmanr([means[n].n_clue_score for n in means], [means[n].gold_ndcg for n in means]).statistic
    assert card.spearman["n_clue_score"]["gold_ndcg"] == pytest.approx(expected)
    without = scorecard(bench, score_runs(bench, fair), "none")
    assert card.to_json()["spearman"] == without.to_json()["spearman"]  # NaN (constant Gold Hit) becomes null
