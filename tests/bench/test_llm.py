"""The LLM judge against a local HTTP server that replays recorded chat-completion responses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nclue.bench.compose import evaluate
from nclue.bench.inventory import Condition, Inventory
from nclue.bench.llm import LLMConfig, LLMGate, ResponseCache
from nclue.bench.prompts.verify_item import parse
from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from tests.fixtures.chat_replay import ReplayServer, closed_port_url

DOCS = {
    "a/gold": [
        "1 Footnotes\nFootnotes are notes at the foot of the page. Footnotes carry references.",
        "2 Bibliography\nThe bibliography lists every cited work; bibliography styles vary.",
    ],
    "a/subset": ["1 Footnotes\nFootnotes here, footnotes there.", "Nothing else."],
}


@pytest.fixture
def setup(make_collection):
    store = PageStore.open(make_collection(DOCS))
    inv = Inventory(
        doc_ids=store.doc_ids.tolist(),
        n_pages=np.array([2, 2]),
        conditions=[
            Condition(name="bibliography", aliases=("bibliography",), key=("bibliography",), heading_df=1),
            Condition(name="footnotes", aliases=("footnote", "footnotes"), key=("footnote",), heading_df=1),
        ],
        pages=[{0: (2,)}, {0: (1,), 1: (1,)}],
    )
    item = evaluate(inv, (0, 1), max_golds=5)
    assert item is not None and item.golds == (0,)
    return store, inv, item


def _recorded(gate: LLMGate, item, verdict: bool = True, quote: str | None = None) -> dict[str, str]:
    prompt, names, excerpts = gate.prompt(item, item.golds[0])
    entries = []
    for name in names:
        page, text = next(iter(excerpts[name].items()))
        entries.append({"condition": name, "established": verdict, "page": page, "quote": quote or text.split(".")[0]})
    return {prompt: json.dumps({"conditions": entries})}


def test_llm_gate_calls_once_then_reads_cache(setup, tmp_path: Path) -> None:
    store, inv, item = setup
    cache_path = tmp_path / "judge" / "llm_cache.jsonl"
    probe = LLMGate(inv, store, LLMConfig(url="x", model="m"), ResponseCache(cache_path))
    server = ReplayServer(_recorded(probe, item).__getitem__)
    try:
        gate = LLMGate(inv, store, LLMConfig(url=server.url, model="m", key="k"), ResponseCache(cache_path))
        assert gate(item) is True
        assert len(server.requests) == 1
        assert server.requests[0]["path"] == "/v1/chat/completions"
        assert server.requests[0]["auth"] == "Bearer k" and server.requests[0]["model"] == "m"
        gate.cache.save()
    finally:
        server.close()
    rows = [json.loads(line) for line in cache_path.read_text().splitlines()]
    assert len(rows) == 1 and len(rows[0]["prompt_sha256"]) == 64
    # rebuild: the endpoint is gone, the frozen answer is used and nothing is called
    again = LLMGate(inv, store, LLMConfig(url=closed_port_url(), model="m"), ResponseCache(cache_path))
    assert again(item) is True
    assert again.cached_answers == 1 and again.fresh_answers == 0


def test_unreachable_endpoint_is_a_clear_error(setup, tmp_path: Path) -> None:
    store, inv, item = setup
    gate = LLMGate(inv, store, LLMConfig(url=closed_port_url(), model="m"), ResponseCache(tmp_path / "c.jsonl"))
    with pytest.raises(NclueError, match="unreachable.*answers were read from the cache"):
        gate(item)
    unset = LLMGate(inv, store, LLMConfig(url=None, model=None), ResponseCache(tmp_path / "d.jsonl"))
    with pytest.raises(NclueError, match="NCLUE_LLM_URL"):
        unset(item)


def test_negative_and_malformed_answers_reject_the_item_and_are_frozen(setup, tmp_path: Path) -> None:
    store, inv, item = setup
    probe = LLMGate(inv, store, LLMConfig(url="x", model="m"), ResponseCache(tmp_path / "p.jsonl"))
    for responses, malformed in (
        (_recorded(probe, item, verdict=False), 0),
        (_recorded(probe, item, quote="invented text"), 1),
    ):
        cache_path = tmp_path / f"{malformed}.jsonl"
        server = ReplayServer(responses.__getitem__)
        try:
            gate = LLMGate(inv, store, LLMConfig(url=server.url, model="m"), ResponseCache(cache_path))
            assert gate(item) is False
            assert gate.malformed == malformed
            assert len(gate.cache.entries) == 1  # the rejected reply is frozen too
            gate.cache.save()
        finally:
            server.close()
        # offline, the frozen reply decides again, the same way, without calling anything
        again = LLMGate(inv, store, LLMConfig(url=closed_port_url(), model="m"), ResponseCache(cache_path))
        assert again(item) is False and again.malformed == malformed and again.fresh_answers == 0


def test_parser_accepts_fenced_json_and_checks_quotes() -> None:
    excerpts = {"a": {3: "Alpha is the first letter."}}
    ok = '```json\n{"conditions": [{"condition": "a", "established": true, "page": 3, "quote": "alpha is  the first"}]}\n```'
    assert parse(ok, ["a"], excerpts) == {"a": True}
    with pytest.raises(ValueError, match="not one of the offered pages"):
        parse('{"conditions": [{"condition": "a", "established": true, "page": 4, "quote": "Alpha"}]}', ["a"], excerpts)
    with pytest.raises(ValueError, match="expected 1"):
        parse('{"conditions": []}', ["a"], excerpts)
