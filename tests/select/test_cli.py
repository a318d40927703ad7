"""The ``nclue coverage`` sub-app: help texts, refusals, and an end-to-end run with the real model."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner


@pytest.fixture
def app():  # noqa: ANN201 - the real nclue Typer app
    from nclue.cli import app

    return app


def test_help_has_examples(app):
    runner = CliRunner()
    for cmd in (
        ["coverage", "--help"],
        ["coverage", "select", "--help"],
        ["coverage", "freeze", "--help"],
        ["coverage", "evaluate", "--help"],
        ["coverage", "adapt", "--help"],
        ["evidence", "fit", "--help"],
        ["evidence", "score", "--help"],
        ["coverage", "verify", "--help"],
    ):
        result = runner.invoke(app, cmd)
        assert result.exit_code == 0 and "Example" in result.output


def test_evaluate_without_freeze_is_refused(app, task_dir, tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "coverage",
            "evaluate",
            str(task_dir),
            str(tmp_path / "none"),
            "--judgments",
            str(task_dir / "judgments.jsonl"),
            "-o",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2 and "no freeze found" in result.output


@pytest.mark.slow
def test_freeze_and_evaluate_with_onnx_and_st_cross_check(app, task_dir, tmp_path):
    """Real MiniLM through ONNX Runtime; the sentence-transformers (torch) freeze gives the same rankings."""
    runner = CliRunner()
    for kind in ("onnx", "torch"):
        result = runner.invoke(
            app, ["coverage", "freeze", str(task_dir), "-o", str(tmp_path / kind), "--encoder", kind]
        )
        assert result.exit_code == 0, result.output
    from nclue.select.freeze import resolve_freeze

    onnx_rankings = (resolve_freeze(tmp_path / "onnx") / "rankings.jsonl").read_text()
    assert onnx_rankings == (resolve_freeze(tmp_path / "torch") / "rankings.jsonl").read_text()
    result = runner.invoke(
        app,
        [
            "coverage",
            "evaluate",
            str(task_dir),
            str(tmp_path / "onnx"),
            "--judgments",
            str(task_dir / "judgments.jsonl"),
            "-o",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["splits"]["all"]["tasks"] == 7
    assert summary["oracle"]["unreachable"] == 0


def test_verify_cli_passes_then_fails_on_a_changed_summary(cli, task_dir, tmp_path, encoder):
    from nclue.select.evaluate import evaluate
    from nclue.select.freeze import freeze

    frz = freeze(task_dir, tmp_path / "frz", encoder=encoder, selectors=["dense", "expected"]).path.parent
    judgments = task_dir / "judgments.jsonl"
    evaluate(task_dir, frz, judgments, tmp_path / "out")
    ok = cli("coverage", "verify", task_dir, frz, tmp_path / "out", "--judgments", judgments)
    assert ok.exit_code == 0 and ", 0 differ" in ok.output
    assert f"ledger: 1 evaluation(s) written to {tmp_path / 'out'} (freezes: " in ok.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    summary["splits"]["all"]["tasks"] = 8
    (tmp_path / "out" / "summary.json").write_text(json.dumps(summary))
    bad = cli("coverage", "verify", task_dir, frz, tmp_path / "out", "--judgments", judgments)
    assert bad.exit_code == 1 and "differs: splits/all/tasks: recorded 8, recomputed 7" in bad.output
