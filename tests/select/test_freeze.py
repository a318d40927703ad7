"""The pre-outcome freeze: a real barrier on judgment files, and refusal of changed freezes."""

from __future__ import annotations

import json
import os

import pytest

from nclue.errors import NclueError
from nclue.io import sha256_file
from nclue.select.evaluate import evaluate
from nclue.select.freeze import MANIFEST_FILE, RANKINGS_FILE, freeze, judgment_barrier


def test_barrier_refuses_judgment_opens_only_while_active(task_dir):
    path = task_dir / "judgments.jsonl"
    with judgment_barrier():
        with pytest.raises(PermissionError, match="freeze in progress"):
            open(path, encoding="utf-8")
        with pytest.raises(PermissionError):
            os.open(path, os.O_RDONLY)
        with pytest.raises(PermissionError):
            (task_dir / "QRELS.jsonl").write_text("x")
        (task_dir / "tasks.jsonl").read_text()  # other files stay readable
    assert path.read_text(encoding="utf-8")


def test_freeze_cannot_read_judgments(task_dir, tmp_path, encoder):
    class Peeking(type(encoder)):
        def encode(self, texts):
            (task_dir / "judgments.jsonl").read_text()
            return super().encode(texts)

    with pytest.raises(PermissionError):
        freeze(task_dir, tmp_path / "frz", encoder=Peeking())
    assert not (tmp_path / "frz" / MANIFEST_FILE).exists()


def test_freeze_is_deterministic_and_evaluate_scores_it(task_dir, tmp_path, encoder):
    m1 = freeze(task_dir, tmp_path / "f1", encoder=encoder)
    m2 = freeze(task_dir, tmp_path / "f2", encoder=encoder)
    assert m1 == m2
    assert set(m1["outputs"]) == {"vectors.npz", "rankings.jsonl", "method.json"}
    assert {"select/selectors.py", "select/objective.py"} <= set(m1["code"])
    summary = evaluate(task_dir, tmp_path / "f1", task_dir / "judgments.jsonl", tmp_path / "out").to_json()
    assert set(summary["splits"]) == {"all", "operations", "policy"}
    assert set(summary["splits"]["all"]["effects"]) == {
        "coverage-minus-dense",
        "gated-minus-dense",
        "gated-minus-coverage",
    }
    oracle = summary["splits"]["all"]["methods"]["oracle"]
    for name in ("dense", "coverage", "gated"):
        assert summary["splits"]["all"]["methods"][name]["coverage"] <= oracle["coverage"] + 1e-12
    for name in ("results.md", "results.tex", "cases.md", "cases.tex", "scores.jsonl", "summary.json"):
        assert (tmp_path / "out" / name).is_file()
    assert "Labeled oracle — diagnostic" in (tmp_path / "out" / "results.md").read_text()


def test_evaluate_refuses_missing_or_changed_freeze(task_dir, tmp_path, encoder):
    missing_judgments = tmp_path / "never-opened.jsonl"
    with pytest.raises(NclueError, match="no freeze found"):
        evaluate(task_dir, tmp_path / "nothing", missing_judgments, tmp_path / "out")
    frz = tmp_path / "frz"
    freeze(task_dir, frz, encoder=encoder)
    rankings = (frz / RANKINGS_FILE).read_text()
    rows = [json.loads(line) for line in rankings.splitlines()]
    rows[0]["ranking"] = rows[0]["ranking"][::-1]
    (frz / RANKINGS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(NclueError, match="freeze has changed .*output rankings.jsonl"):
        evaluate(task_dir, frz, missing_judgments, tmp_path / "out")
    # even with the manifest hash updated, a ranking that does not re-derive is refused
    manifest = json.loads((frz / MANIFEST_FILE).read_text())
    manifest["outputs"][RANKINGS_FILE] = sha256_file(frz / RANKINGS_FILE)
    (frz / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(NclueError, match="do not re-derive"):
        evaluate(task_dir, frz, missing_judgments, tmp_path / "out")
    (frz / RANKINGS_FILE).write_text(rankings)
    manifest["outputs"][RANKINGS_FILE] = sha256_file(frz / RANKINGS_FILE)
    (frz / MANIFEST_FILE).write_text(json.dumps(manifest))
    with open(task_dir / "tasks.jsonl", "a", encoding="utf-8") as handle:
        handle.write("\n")
    with pytest.raises(NclueError, match="input tasks.jsonl"):
        evaluate(task_dir, frz, missing_judgments, tmp_path / "out")


def test_freeze_refuses_small_pools_before_encoding(task_dir, tmp_path, encoder):
    with pytest.raises(NclueError, match="smaller than k=10"):
        freeze(task_dir, tmp_path / "frz", encoder=encoder, k=10)
    assert encoder.calls == 0
