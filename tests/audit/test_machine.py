"""The machine evaluator against a local chat-completions server that replays recorded replies."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from nclue.audit.machine import machine, prompt_for
from nclue.audit.score import score
from nclue.errors import NclueError
from tests.audit.simulate import answers, payload_of, write_export


class Replay:
    """Serves ``POST /v1/chat/completions`` from ``replies`` (prompt → content), recording requests."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                data = json.dumps(
                    {
                        "choices": [
                            {"message": {"role": "assistant", "content": outer.replies[body["messages"][0]["content"]]}}
                        ]
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


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
    server = Replay(recorded(payload))
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
    again = machine(audited["audit"], _closed_port_url(), "judge-model", out=tmp_path / "M2.json", cache=cache)
    assert again.cached == 12 and again.fresh == 0
    assert (tmp_path / "M.json").read_text() == (tmp_path / "M2.json").read_text()
    person = write_export(tmp_path / "A.json", payload, "A", answers(payload))
    report = score(audited["audit"], [person, tmp_path / "M.json"]).to_json()
    pair = report["pairs"][0]
    assert pair["evaluators"] == ["A", "M"] and pair["items"] == 10
    assert pair["condition_agreement"]["hits"] == pair["condition_agreement"]["n"]  # same answers where accepted
    with pytest.raises(NclueError, match="unreachable.*0 of 12 items answered"):
        machine(audited["audit"], _closed_port_url(), "other-model", out=tmp_path / "M3.json", cache=cache)
