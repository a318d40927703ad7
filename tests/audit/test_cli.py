"""``nclue audit …`` end to end through the real command line; errors are one line naming the item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.audit import audit_params as params
from nclue.cli import audit as cli_audit
from tests.audit.simulate import answers, payload_of, write_export


@pytest.mark.parametrize(
    ("enum", "values"),
    [(cli_audit.Allocation, params.ALLOCATIONS), (cli_audit.Metric, params.CHALLENGE_METRICS)],
)
def test_cli_choices_are_the_library_choices(enum: type, values: tuple[str, ...]) -> None:
    assert {m.value for m in enum} == set(values)


def test_every_command_has_an_example(cli) -> None:
    for command in ("sample", "packet", "score", "repair", "adjudicate", "challenge", "impact", "machine"):
        result = cli("audit", command, "--help")
        assert result.exit_code == 0 and "Example: nclue audit " + command in " ".join(result.output.split())


def test_the_workflow_from_the_command_line(audited: dict, tmp_path: Path, cli) -> None:
    audit = tmp_path / "audit"
    out = cli("audit", "sample", audited["bench"], "-o", audit, "--pairs", 12, "--format", "markdown")
    assert out.exit_code == 0, out.output
    population = len((audited["bench"] / "qrels.jsonl").read_text().splitlines())  # every judged pair
    assert f"| All |  |  | {population} | 12 |" in out.output
    out = cli(
        "audit", "packet", audit, audited["coll"], "-o", tmp_path / "p.html", "--evaluator", "A", "--format", "json"
    )
    assert out.exit_code == 0, out.output
    packet = json.loads(out.output)
    assert packet["items"] == 12 and packet["pages_per_condition"]["max"] == 3
    assert '"evaluator":"A"' in (tmp_path / "p.html").read_text()
    payload = payload_of(audit, packet["packet_id"])
    a = write_export(tmp_path / "A.json", payload, "A", answers(payload))
    e = write_export(tmp_path / "E.json", payload, "E", answers(payload, {(0, 0), (3, 1)}))
    out = cli("audit", "score", audit, a, e, "--format", "latex")
    assert out.exit_code == 0 and r"\begin{tabular}" in out.output and "Linearly weighted grade" in out.output
    out = cli("audit", "repair", audit, audited["coll"], a, e, "-o", tmp_path / "poll.html", "--format", "json")
    assert out.exit_code == 0, out.output
    poll = payload_of(audit, json.loads(out.output)["poll"]["packet_id"])
    votes = [write_export(tmp_path / f"{n}.json", poll, n, answers(poll)) for n in ("F", "G", "H")]
    out = cli("audit", "adjudicate", audit, *votes, "--format", "markdown")
    assert out.exit_code == 0, out.output
    assert "| Grade transition | Count | Labels |" in out.output and (audit / "qrels.v2.jsonl").is_file()
    run = audited["bench"] / "controls" / "oracle.surface_and.jsonl"
    other = audited["bench"] / "controls" / "baseline.frequency_prior.jsonl"
    out = cli(
        "audit", "impact", audited["bench"], run, other,
        "--qrels", audited["bench"] / "qrels.jsonl", "--qrels", audit / "qrels.v2.jsonl", "--draws", 200,
        "--contrast", "oracle.surface_and vs baseline.frequency_prior",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "oracle.surface_and − baseline.frequency_prior" in out.output


def test_bad_input_is_one_line_naming_the_item(audited: dict, tmp_path: Path, cli) -> None:
    payload = payload_of(audited["audit"], audited["packet"].packet_id)
    items = answers(payload)
    i, j = next((i, j) for i, it in enumerate(items) for j, c in enumerate(it["conditions"]) if c["answer"])
    items[i]["conditions"][j]["evidence"] = []
    bad = write_export(tmp_path / "bad.json", payload, "A", items)
    out = cli("audit", "score", audited["audit"], bad)
    assert out.exit_code == 2
    assert f"item {i + 1} ({items[i]['id']}), condition {j + 1}" in out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1
    q = audited["bench"] / "qrels.jsonl"
    out = cli("audit", "impact", audited["bench"], tmp_path / "empty", "--qrels", q)
    assert out.exit_code == 2 and "give at least two qrels versions" in out.output
    (tmp_path / "empty").mkdir()
    out = cli("audit", "impact", audited["bench"], tmp_path / "empty", "--qrels", q, "--qrels", q)
    assert out.exit_code == 2 and "no run files" in out.output
    out = cli("audit", "impact", audited["bench"], audited["bench"] / "controls", "--qrels", "x", "--contrast", "a, b")
    assert out.exit_code == 2 and 'write "VARIANT vs BASE"' in out.output
