"""A run's coverage of the benchmark: missing queries, unknown ids and documents, pages out of range —
said on every output, refused with --strict, and by default in compare when runs answer different queries."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from nclue.errors import NclueError
from tests.scoring.nclue_eval_helpers import write_trec

GOLD = "world_bank_34454344"


@pytest.fixture
def app():  # noqa: ANN201 - the real nclue Typer app
    from nclue.cli import app

    return app


def test_half_a_run_is_scored_as_misses_and_said(app, s6_release, tmp_path):
    full = write_trec(tmp_path / "full.trec", {"nclue_0000": [(GOLD, 1)], "q2": [("g1", 1)]})
    half = write_trec(tmp_path / "half.trec", {"nclue_0000": [(GOLD, 1)]})
    result = CliRunner().invoke(app, ["evaluate", str(s6_release), str(full), str(half), "--format", "json"])
    assert result.exit_code == 0, result.output
    card = json.loads(result.stdout)
    # by hand: both answer nclue_0000 with its gold first; only full answers q2 (g1 is a gold): 100 vs 50
    assert card["runs"]["full"]["n_clue_score"] == 100.0 and card["runs"]["half"]["n_clue_score"] == 50.0
    assert card["coverage"]["half"] == {
        "queries": 2,
        "answered": 1,
        "missing": 1,
        "unknown_qids": 0,
        "ranked": 1,
        "unknown_docs": 0,
        "cited_pages": 0,
        "pages_out_of_range": 0,
    }
    assert card["coverage"]["full"]["missing"] == 0
    assert "run half: answers 1 of 2 queries; the 1 it does not answer are scored as misses" in result.stderr
    assert "run full" not in result.stderr
    table = CliRunner().invoke(app, ["evaluate", str(s6_release), str(full), str(half), "--format", "markdown"])
    assert "Run coverage" in table.stdout and "| half | 1/2 |" in table.stdout
    strict = CliRunner().invoke(app, ["evaluate", str(s6_release), str(full), str(half), "--strict"])
    assert strict.exit_code != 0 and strict.exception is not None
    assert "answers 1 of 2 queries" in strict.output and "drop --strict" in strict.output
    assert CliRunner().invoke(app, ["evaluate", str(s6_release), str(full), "--strict"]).exit_code == 0


def test_a_run_of_another_collection_is_named(app, s6_release, tmp_path):
    other = write_trec(tmp_path / "other.trec", {"nclue_0000": [("x1", 2), ("x2", 1)], "q2": [("x3", 1)]})
    result = CliRunner().invoke(app, ["evaluate", str(s6_release), str(other), "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["coverage"]["other"]["unknown_docs"] == 3
    assert "3 of 3 ranked documents (100%) are not in the benchmark's corpus" in result.stderr
    assert "another benchmark or collection" in result.stderr


def test_pages_past_the_document_are_counted(s6_release):
    import nclue
    from nclue.types import RankedDoc, Run

    # s1 has 4 pages (corpus.jsonl): page 9 is past its end; g1 has 20, so 3 and 20 are fine
    run = Run(
        "paged",
        {
            "nclue_0000": [RankedDoc(GOLD, 1.0, ((2, 1.0),))],
            "q2": [RankedDoc("s1", 2.0, ((3, 1.0), (9, 0.5))), RankedDoc("g1", 1.0, ((3, 1.0), (20, 0.2)))],
        },
    )
    card = nclue.evaluate(s6_release, [run])
    cov = card.coverage["paged"]
    assert (cov.cited_pages, cov.pages_out_of_range) == (5, 1)
    assert card.problems == [
        "run paged: 1 of 5 cited pages are outside their document's pages (below 1 or past its page count); "
        "they can support nothing"
    ]
    with pytest.raises(NclueError, match="1 of 5 cited pages"):
        nclue.evaluate(s6_release, [run], strict=True)


def test_compare_refuses_runs_that_answer_different_queries(app, s6_release, tmp_path):
    base = write_trec(tmp_path / "base.trec", {"nclue_0000": [(GOLD, 1)], "q2": [("s1", 1)]})
    half = write_trec(tmp_path / "half.trec", {"nclue_0000": [(GOLD, 1)]})
    same = write_trec(tmp_path / "same.trec", {"nclue_0000": [(GOLD, 1)], "q2": [("g1", 1)], "ghost": [("g1", 1)]})
    refused = CliRunner().invoke(app, ["compare", str(s6_release), str(base), str(half)])
    assert refused.exit_code != 0
    assert "answer different queries (answered of 2: base 2, half 1)" in refused.output
    assert "--no-strict" in refused.output
    loose = CliRunner().invoke(
        app, ["compare", str(s6_release), str(base), str(half), "--no-strict", "--format", "json"]
    )
    assert loose.exit_code == 0, loose.output
    assert json.loads(loose.stdout)["coverage"]["half"]["missing"] == 1
    assert "run half: answers 1 of 2 queries" in loose.stderr
    # the same queries answered: compared by default; an unknown query id is only a warning
    fine = CliRunner().invoke(app, ["compare", str(s6_release), str(base), str(same), "--format", "json"])
    assert fine.exit_code == 0, fine.output
    assert "1 query ids are not in the benchmark ('ghost')" in fine.stderr
    strict = CliRunner().invoke(app, ["compare", str(s6_release), str(base), str(same), "--strict"])
    assert strict.exit_code != 0 and "'ghost'" in strict.output
