"""End to end: ``nclue build`` on the real small collection, determinism, verify, controls, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from nclue.bench.commands import register
from nclue.bench.compose import ComposeParams
from nclue.bench.inventory import MineParams
from nclue.bench.pipeline import BuildOptions, build
from nclue.bench.release import verify
from nclue.errors import NclueError
from nclue.query import render_forms

SMALL = BuildOptions(mine=MineParams(min_df=2, max_df_frac=0.34, min_heading_df=1), compose=ComposeParams(n_queries=40))
SMALL_FLAGS = ["--min-df", "2", "--max-df-frac", "0.34", "--queries", "40"]


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """test root"""

    register(app)
    return app


@pytest.fixture(scope="module")
def small_bench(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "bench"
    build(small_collection, out, SMALL)
    return out


@pytest.mark.slow
def test_release_is_valid_and_deterministic(small_collection: Path, small_bench: Path, tmp_path: Path) -> None:
    problems, validation, scores = verify(small_bench)
    assert problems == []
    assert validation.counts["queries"] > 0
    assert validation.counts["qrel_rows"] == validation.counts["union_total"]
    assert validation.counts["single_page_solvable_golds"] == 0
    assert scores["oracle.surface_and"]["nclue@10"] == 100.0
    assert scores["oracle.single_page_and"]["nclue@10"] == 0.0
    for name in ("corpus.jsonl", "queries.jsonl", "qrels.jsonl", "qrels/test.tsv", "inventory.jsonl", "MANIFEST.json", "README.md"):
        assert (small_bench / name).is_file()
    assert (small_bench / "qrels" / "test.tsv").read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"
    query = json.loads((small_bench / "queries.jsonl").read_text().splitlines()[0])
    assert query["forms"] == render_forms(query["conditions"])
    assert "Ten example queries" in (small_bench / "README.md").read_text()
    again = tmp_path / "again"
    build(small_collection, again, SMALL)
    assert (again / "SHA256SUMS").read_text() == (small_bench / "SHA256SUMS").read_text()


@pytest.mark.slow
def test_verify_catches_tampering(small_bench: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(small_bench, copy)
    lines = (copy / "qrels.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    row["label"] = "partial" if row["label"] == "gold" else "gold"
    lines[0] = json.dumps(row, sort_keys=True)
    (copy / "qrels.jsonl").write_text("\n".join(lines) + "\n")
    problems, _, _ = verify(copy)
    assert any("SHA-256 mismatch" in p for p in problems)
    assert any("re-derived" in p for p in problems)
    result = CliRunner().invoke(_app(), ["bench", "verify", str(copy)])
    assert isinstance(result.exception, NclueError) and result.exception.exit_code == 1


@pytest.mark.slow
def test_cli_build_and_verify(small_collection: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli-bench"
    runner = CliRunner()
    result = runner.invoke(_app(), ["build", str(small_collection), "-o", str(out), *SMALL_FLAGS, "--seed", "5"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["seed"] == 5 and manifest["parameters"]["compose"]["n_queries"] == 40
    result = runner.invoke(_app(), ["bench", "verify", str(out)])
    assert result.exit_code == 0 and "ok" in result.output


def test_bad_input(tmp_path: Path, make_collection) -> None:
    runner = CliRunner()
    missing = runner.invoke(_app(), ["build", str(tmp_path / "nope"), "-o", str(tmp_path / "b")])
    assert isinstance(missing.exception, NclueError) and "nclue ingest" in str(missing.exception)
    empty = make_collection({})
    result = runner.invoke(_app(), ["build", str(empty), "-o", str(tmp_path / "b")])
    assert isinstance(result.exception, NclueError) and "no pages" in str(result.exception)
    tiny = make_collection({"s/one": ["Only a short page about nothing in particular."], "s/two": ["Another page."]})
    result = runner.invoke(_app(), ["build", str(tiny), "-o", str(tmp_path / "b")])
    assert isinstance(result.exception, NclueError)
    assert "2 documents" in str(result.exception) and "--min-df" in str(result.exception)
    assert result.exception.exit_code == 2
    with pytest.raises(NclueError, match="unknown judge"):
        build(tiny, tmp_path / "b", BuildOptions(judge="oracle"))
    with pytest.raises(NclueError, match="not found"):
        verify(tmp_path / "absent")
    with pytest.raises(NclueError, match="not found"):
        verify(tmp_path / "absent")
