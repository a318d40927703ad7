"""``nclue model info|export-onnx|distill`` through Typer's runner."""

from __future__ import annotations

from typer.testing import CliRunner

from nclue.cli import app as nclue_app
from nclue.models.identity import bundled_model_path, model_identity


def app():  # noqa: ANN201 - the real nclue Typer app
    return nclue_app


def test_info_of_bundled_model():
    result = CliRunner().invoke(app(), ["model", "info", "minilm"])
    assert result.exit_code == 0, result.output
    rows = dict(line.split("\t", 1) for line in result.output.strip().splitlines())
    assert rows["sha256"] == model_identity(bundled_model_path()).sha256
    assert (rows["pooling"], rows["max_seq_length"]) == ("mean", "256")


def test_export_is_cached(onnx_dirs):
    fp32, _ = onnx_dirs
    result = CliRunner().invoke(app(), ["model", "export-onnx", "minilm", "--out", str(fp32.parent)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(fp32)


def test_bad_model_path(tmp_path):
    result = CliRunner().invoke(app(), ["model", "info", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "model path not found" in result.output
