"""The pre-outcome freeze: a real barrier on judgment files, and refusal of changed freezes."""

from __future__ import annotations

import json
import os

import pytest

from nclue.errors import NclueError
from nclue.io import sha256_file
from nclue.select.barrier import judgment_barrier
from nclue.select.evaluate import evaluate, verify_report
from nclue.select.freeze import MANIFEST_FILE, RANKINGS_FILE, freeze, resolve_freeze, scoring_code_sha256
from nclue.select.results import BootstrapPlan


def test_barrier_refuses_label_opens_only_while_active(task_dir):
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
    r1 = freeze(task_dir, tmp_path / "f1", encoder=encoder)
    r2 = freeze(task_dir, tmp_path / "f2", encoder=encoder)
    assert r1.manifest == r2.manifest
    for name in r1.manifest["outputs"]:
        assert (r1.path / name).read_bytes() == (r2.path / name).read_bytes()
    assert set(r1.manifest["outputs"]) == {
        "vectors.npz",
        "evidence.npz",
        "rankings.jsonl",
        "method.json",
        "near_duplicates.json",
    }
    assert {"select/selectors.py", "select/diversify.py", "select/coverage_evidence.py"} <= set(r1.manifest["code"])
    assert r1.manifest["pool"]["kind"] == "given"
    summary = evaluate(task_dir, tmp_path / "f1", task_dir / "judgments.jsonl", tmp_path / "out").to_json()
    assert set(summary["splits"]) == {"all", "operations", "policy"}
    assert {"coverage-minus-dense", "gated-minus-dense", "gated-minus-coverage", "expected-minus-dense"} <= set(
        summary["splits"]["all"]["effects"]
    )
    assert "retriever-minus-dense" not in summary["splits"]["all"]["effects"]  # no pool scores, not frozen
    oracle = summary["splits"]["all"]["methods"]["oracle"]
    for name in ("dense", "coverage", "gated", "expected", "xquad", "pm2", "mmr", "facility", "evidence"):
        assert summary["splits"]["all"]["methods"][name]["coverage"] <= oracle["coverage"] + 1e-12
    for name in ("results.md", "results.tex", "cases.md", "cases.tex", "scores.jsonl", "summary.json"):
        assert (tmp_path / "out" / name).is_file()
    assert "Labeled oracle — diagnostic" in (tmp_path / "out" / "results.md").read_text()


def test_evaluate_refuses_missing_or_changed_freeze(task_dir, tmp_path, encoder):
    missing_judgments = tmp_path / "never-opened.jsonl"
    with pytest.raises(NclueError, match="no freeze found"):
        evaluate(task_dir, tmp_path / "nothing", missing_judgments, tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(NclueError, match="no freeze found"):
        evaluate(task_dir, tmp_path / "empty", missing_judgments, tmp_path / "out")
    frz = freeze(task_dir, tmp_path / "frz", encoder=encoder, selectors=["dense", "coverage", "gated"]).path
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


# --- the barrier: each bypass of the former basename filter -------------------------------------


def test_symlink_with_an_innocent_name_is_refused(task_dir, tmp_path):
    link = tmp_path / "notes.txt"
    link.symlink_to(task_dir / "judgments.jsonl")
    with judgment_barrier():
        with pytest.raises(PermissionError, match="matches '\\*judgment\\*'"):
            link.read_text()
    assert link.read_text()


def test_file_in_a_folder_named_qrels_is_refused(tmp_path):
    folder = tmp_path / "qrels"
    folder.mkdir()
    (folder / "test.tsv").write_text("q1\td1\t1\n")
    with judgment_barrier():
        with pytest.raises(PermissionError, match="path component 'qrels'"):
            (folder / "test.tsv").read_text()


def test_hard_link_under_another_name_is_refused_when_protected(task_dir, tmp_path):
    other = tmp_path / "grades.jsonl"
    os.link(task_dir / "judgments.jsonl", other)
    with judgment_barrier():
        assert other.read_text()  # a name the patterns do not know
    with judgment_barrier(protect=[task_dir / "judgments.jsonl"]):
        with pytest.raises(PermissionError, match="same file under another name"):
            other.read_text()


def test_user_patterns_refuse_a_copy_under_another_name(task_dir, tmp_path):
    copy = tmp_path / "labels-v2.jsonl"
    copy.write_bytes((task_dir / "judgments.jsonl").read_bytes())
    with judgment_barrier(patterns=("*judgment*", "*qrels*", "*labels*")):
        with pytest.raises(PermissionError, match="'\\*labels\\*'"):
            copy.read_text()


def test_freeze_refuses_a_hard_link_to_the_task_sets_judgments(task_dir, tmp_path, encoder):
    other = tmp_path / "grades.jsonl"
    os.link(task_dir / "judgments.jsonl", other)

    class Peeking(type(encoder)):
        def encode(self, texts):
            other.read_text()
            return super().encode(texts)

    with pytest.raises(PermissionError, match="same file under another name"):
        freeze(task_dir, tmp_path / "frz", encoder=Peeking(), selectors=["dense"])
    assert not list((tmp_path / "frz").glob("*/manifest.json"))


# --- inputs, history, verification --------------------------------------------------------------


def test_unknown_task_fields_warn_and_are_recorded(task_dir, tmp_path, encoder):
    rows = [json.loads(line) for line in (task_dir / "tasks.jsonl").read_text().splitlines()]
    rows[2]["grades"] = [3] * len(rows[2]["pool"])
    (task_dir / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.warns(UserWarning, match="tasks.jsonl:3: unknown task field 'grades' is ignored"):
        from nclue.select.tasks import load_tasks

        load_tasks(task_dir)
    result = freeze(task_dir, tmp_path / "frz", encoder=encoder, selectors=["dense"])
    assert len(result.warnings) == 1 and "'grades'" in result.warnings[0]
    assert result.manifest["warnings"] == list(result.warnings)


def test_every_freeze_is_kept_and_the_latest_is_used(task_dir, tmp_path, encoder):
    first = freeze(task_dir, tmp_path / "frz", encoder=encoder, selectors=["dense", "gated"])
    second = freeze(task_dir, tmp_path / "frz", encoder=encoder, selectors=["dense", "coverage"])
    assert first.path != second.path and first.path.parent == second.path.parent
    assert (first.path / MANIFEST_FILE).is_file() and (second.path / MANIFEST_FILE).is_file()
    assert resolve_freeze(tmp_path / "frz") == second.path
    assert resolve_freeze(tmp_path / "frz", first.path.name) == first.path
    judgments = task_dir / "judgments.jsonl"
    latest = evaluate(task_dir, tmp_path / "frz", judgments, tmp_path / "o2")
    assert latest.freeze == second.path.name and "coverage" in latest["all"].methods
    older = evaluate(task_dir, tmp_path / "frz", judgments, tmp_path / "o1", freeze_id=first.path.name)
    assert "gated" in older["all"].methods and "coverage" not in older["all"].methods
    with pytest.raises(NclueError, match="no freeze 'nope'"):
        resolve_freeze(tmp_path / "frz", "nope")


def test_verify_report_reproduces_and_names_a_changed_cell(task_dir, tmp_path, encoder):
    frz = freeze(task_dir, tmp_path / "frz", encoder=encoder).path.parent
    judgments = task_dir / "judgments.jsonl"
    evaluate(task_dir, frz, judgments, tmp_path / "out")
    check = verify_report(task_dir, frz, judgments, tmp_path / "out")
    assert check.ok and check.cells_checked > 500
    evaluate(task_dir, frz, judgments, tmp_path / "out")  # a second evaluation is recorded, not overwritten
    ledger = verify_report(task_dir, frz, judgments, tmp_path / "out").ledger
    assert len(ledger) == 2 and ledger[0]["freeze"] == ledger[1]["freeze"] == check.report.freeze
    assert ledger[1]["judgments_sha256"] == sha256_file(judgments)
    assert ledger[1]["summary_sha256"] == sha256_file(tmp_path / "out" / "summary.json")
    assert len(ledger[1]["scoring_code_sha256"]) == 64
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    summary["splits"]["all"]["methods"]["expected"]["ndcg"] += 0.001
    (tmp_path / "out" / "summary.json").write_text(json.dumps(summary))
    check = verify_report(task_dir, frz, judgments, tmp_path / "out")
    assert check.failures == [
        f"splits/all/methods/expected/ndcg: recorded {summary['splits']['all']['methods']['expected']['ndcg']!r}, "
        f"recomputed {check.report['all'].methods['expected']['ndcg']!r}"
    ]


def test_verify_report_redraws_with_the_recorded_bootstrap_plan(task_dir, tmp_path, encoder):
    frz = freeze(task_dir, tmp_path / "frz", encoder=encoder).path.parent
    judgments = task_dir / "judgments.jsonl"
    plan = BootstrapPlan(draws=500, seed=3, level=0.9)
    report = evaluate(task_dir, frz, judgments, tmp_path / "out", bootstrap=plan)
    protocol = evaluate(task_dir, frz, judgments, tmp_path / "protocol")
    recorded = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert recorded["bootstrap"] == {"draws": 500, "seed": 3, "level": 0.9}
    assert report["all"].effects != protocol["all"].effects  # the plan reached the intervals
    assert verify_report(task_dir, frz, judgments, tmp_path / "out").ok
    recorded["bootstrap"]["level"] = 2
    (tmp_path / "out" / "summary.json").write_text(json.dumps(recorded))
    with pytest.raises(NclueError, match=r"summary\.json: BootstrapPlan: level must be a number"):
        verify_report(task_dir, frz, judgments, tmp_path / "out")


def test_the_freeze_fingerprints_the_judgments_without_opening_them(task_dir, tmp_path, encoder):
    judgments = task_dir / "judgments.jsonl"
    frz = freeze(task_dir, tmp_path / "frz", encoder=encoder, selectors=["dense"])
    recorded = frz.manifest["judgments"]
    assert recorded["bytes"] == judgments.stat().st_size and recorded["sha256"] is None  # hand-made: no adapter
    assert frz.manifest["scoring_code_sha256"] == scoring_code_sha256()
    report = evaluate(task_dir, frz.path, judgments, tmp_path / "out")
    assert report.judgments_as_frozen is True and report.scoring_code_as_frozen is True
    other = tmp_path / "other-judges.jsonl"
    other.write_text(judgments.read_text() + "\n")
    assert evaluate(task_dir, frz.path, other, tmp_path / "out").judgments_as_frozen is False
    ledger = verify_report(task_dir, frz.path, other, tmp_path / "out").ledger
    assert [row["judgments_as_frozen"] for row in ledger] == [True, False]
