"""The machine evaluator against a local chat-completions server that replays recorded replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.audit.machine import machine, prompt_for
from nclue.audit.score import score
from nclue.errors import NclueError
from tests.audit.simulate import answers, payload_of, write_export
from tests.fixtures.chat_replay import ReplayServer, closed_port_url


def recorded(payload: dict) -> dict[str, str]:
    """Replies a careful model would give (the simulated evaluator's answers), one invented quote, one non-JSON."""
    replies = {}
    for i, (item, answer) in enumerate(zip(payload["items"], answers(payload))):
        entries = [
            {
                "condition": cond["name"],
                "established": a["answer"],
                "evidence": [dict(e) for e in a["evidence"]],
            }
            for cond, a in zip(item["conditions"], answer["conditions"])
        ]
        if i == 1:
            positive = next(e for e in entries if e["established"])
            positive["evidence"][0]["quote"] = "a sentence the page never contained"
        text = "```json\n" + json.dumps({"conditions": entries}) + "\n```"
        replies[prompt_for(item)] = "I cannot answer that." if i == 2 else text
    return replies


def test_machine_export_is_validated_cached_and_scored_like_a_person(audited: dict, tmp_path: Path) -> None:
    payload = payload_of(audited["audit"], audited["packet"].packet_id)
    cache = tmp_path / "cache.jsonl"
    server = ReplayServer(recorded(payload).__getitem__)
    try:
        first = machine(audited["audit"], server.url, "judge-model", "k", out=tmp_path / "M.json", cache=cache)
        assert len(server.requests) == 12
        assert server.requests[0]["path"] == "/v1/chat/completions" and server.requests[0]["auth"] == "Bearer k"
        assert server.requests[0]["model"] == "judge-model"
        assert (first.accepted, first.rejected, first.malformed, first.fresh) == (10, 1, 1, 12)
        assert "item 2" in first.reasons[0] and "the quote is not on the page" in first.reasons[0]
        assert "item 3" in first.reasons[1] and "reply not used (no JSON object" in first.reasons[1]
        assert len(cache.read_text().splitlines()) == 12  # every reply is frozen, usable or not
    finally:
        server.close()
    # rerun with the endpoint gone: every decision is read back from the cache
    again = machine(audited["audit"], closed_port_url(), "judge-model", out=tmp_path / "M2.json", cache=cache)
    assert again.cached == 12 and again.fresh == 0
    assert (tmp_path / "M.json").read_text() == (tmp_path / "M2.json").read_text()
    person = write_export(tmp_path / "A.json", payload, "A", answers(payload))
    report = score(audited["audit"], [person, tmp_path / "M.json"]).to_json()
    pair = report["pairs"][0]
    assert pair["evaluators"] == ["A", "M"] and pair["items"] == 10
    assert pair["condition_agreement"]["hits"] == pair["condition_agreement"]["n"]  # same answers where accepted
    with pytest.raises(NclueError, match="unreachable.*0 replies so far are frozen"):
        machine(audited["audit"], closed_port_url(), "other-model", out=tmp_path / "M3.json", cache=cache)
