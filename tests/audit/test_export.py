"""Exports read back: every refusal names the file, the item and the condition; duplicates collapse."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from nclue.audit.audit_params import SampleParams
from nclue.audit.export import read_export, read_exports
from nclue.audit.packet import build_packet
from nclue.audit.sample import sample
from nclue.audit.store import AuditDir
from nclue.errors import NclueError
from tests.audit.simulate import answers, payload_of, write_export


@pytest.fixture
def setup(audited: dict) -> tuple[AuditDir, dict, list[dict]]:
    audit = AuditDir.open(audited["audit"])
    payload = payload_of(audited["audit"], audited["packet"].packet_id)
    return audit, payload, answers(payload)


def _first_positive(items: list[dict]) -> tuple[int, int]:
    return next((i, j) for i, it in enumerate(items) for j, c in enumerate(it["conditions"]) if c["answer"])


def _first_negative(items: list[dict]) -> tuple[int, int]:
    return next((i, j) for i, it in enumerate(items) for j, c in enumerate(it["conditions"]) if not c["answer"])


def test_a_valid_export_reads_back(setup, tmp_path: Path) -> None:
    audit, payload, items = setup
    items[0]["status"] = "draft"
    export = read_export(write_export(tmp_path / "a.json", payload, "A", items), audit)
    assert export.evaluator == "A" and len(export.items) == 11 and export.incomplete == (payload["items"][0]["id"],)
    positives = sum(c["answer"] for it in items[1:] for c in it["conditions"])
    assert sum(r.answer for conds in export.items.values() for r in conds.values()) == positives


def test_truncated_and_foreign_exports_are_refused(setup, audited: dict, tmp_path: Path) -> None:
    audit, payload, items = setup
    good = write_export(tmp_path / "a.json", payload, "A", items)
    cut = tmp_path / "cut.json"
    cut.write_text(good.read_text()[: len(good.read_text()) // 2])
    with pytest.raises(NclueError, match=r"cut\.json: not a complete JSON export .* truncated"):
        read_export(cut, audit)
    other_root = tmp_path / "other"
    sample(audited["bench"], other_root, SampleParams(pairs=5, seed=99))
    other = build_packet(other_root, audited["coll"], tmp_path / "other.html")
    foreign = write_export(tmp_path / "foreign.json", payload_of(other_root, other.packet_id), "A", [])
    with pytest.raises(NclueError, match=rf"belongs to packet '{other.packet_id}', which is not a packet of the audit"):
        read_export(foreign, audit)


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("quote_elsewhere", r"condition \d \(“.+”\): page \d+: the quote is not on the page"),
        ("no_page", r"condition \d \(“.+”\): answered Established but no page is selected"),
        ("short_quote", r"condition \d \(“.+”\): page \d+: the quote has 5 characters"),
        ("negative_with_page", r"condition \d \(“.+”\): answered Not established but page\(s\) \d+ are selected"),
        ("page_not_shown", r"condition \d \(“.+”\): page 9999 is not one of this condition's pages"),
        ("unanswered", r"condition \d \(“.+”\): answer Established or Not established"),
    ],
)
def test_invalid_accepted_items_are_refused_naming_the_item(setup, tmp_path: Path, breakage: str, message: str) -> None:
    audit, payload, items = setup
    items = copy.deepcopy(items)
    i, j = _first_negative(items) if breakage == "negative_with_page" else _first_positive(items)
    cond = items[i]["conditions"][j]
    shown = payload["items"][i]["conditions"][j]["pages"]
    if breakage == "quote_elsewhere":
        cond["evidence"][0]["quote"] = "this sentence is certainly not on that page"
    elif breakage == "no_page":
        cond["evidence"] = []
    elif breakage == "short_quote":
        cond["evidence"][0]["quote"] = "Zzzzz"
    elif breakage == "negative_with_page":
        cond["evidence"] = [{"page": shown[0]["page"], "quote": shown[0]["text"][:40]}]
    elif breakage == "page_not_shown":
        cond["evidence"][0]["page"] = 9999
    else:
        cond["answer"] = None
    path = write_export(tmp_path / "bad.json", payload, "A", items)
    with pytest.raises(NclueError, match=rf"bad\.json: item {i + 1} \({items[i]['id']}\), {message}"):
        read_export(path, audit)


def test_a_hand_edited_export_is_refused(setup, tmp_path: Path) -> None:
    audit, payload, items = setup
    path = write_export(tmp_path / "a.json", payload, "A", items)
    obj = json.loads(path.read_text())
    i, j = _first_positive(obj["items"])
    obj["items"][i]["conditions"][j]["answer"] = False
    obj["items"][i]["conditions"][j]["evidence"] = []
    path.write_text(json.dumps(obj))
    with pytest.raises(NclueError, match="edited after export .*tampered or hand-edited exports are refused"):
        read_export(path, audit)


def test_duplicate_streams_collapse_and_one_label_gives_one_export(setup, tmp_path: Path) -> None:
    audit, payload, items = setup
    a = write_export(tmp_path / "a.json", payload, "A", items)
    b = write_export(tmp_path / "b.json", payload, "B", items)
    batch = read_exports([a, b], audit)
    assert batch.evaluators == ("A",) and [e.evaluator for e in batch.collapsed] == ["B"]
    assert "identical to A" in batch.notes[0] and "counted once" in batch.notes[0]
    changed = copy.deepcopy(items)
    i, j = _first_positive(changed)
    changed[i]["conditions"][j] = {"id": changed[i]["conditions"][j]["id"], "answer": False, "evidence": []}
    again = write_export(tmp_path / "a2.json", payload, "A", changed)
    with pytest.raises(NclueError, match="a second, different export from evaluator 'A'"):
        read_exports([a, again], audit)
