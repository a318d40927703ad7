"""An LLM-judged release rebuilds byte for byte from its frozen cache with the endpoint gone.

The endpoint is a local replay server that answers every prompt deterministically: a valid,
quote-backed verdict for some prompts and an unparseable reply for the others, so the frozen
cache must hold rejected replies as well as accepted ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from nclue.bench.pipeline import build
from tests.fixtures.chat_replay import closed_port_url
from tests.fixtures.small_collection import small_build_options

pytestmark = pytest.mark.slow

_CONDITION = re.compile(r'^Condition "(.+)" \(surface forms', re.MULTILINE)
_PAGE = re.compile(r"^  page (\d+): (.*)$", re.MULTILINE)


def answer(prompt: str) -> str:
    """Accept (quoting four words of the first excerpt) or reply with prose, by the prompt's hash."""
    if int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 3 == 0:
        return "I am not able to judge these excerpts."
    entries = []
    for block in prompt.split("\n\n"):
        name = _CONDITION.search(block)
        page = _PAGE.search(block)
        if name and page:
            quote = " ".join(page.group(2).split()[:4])
            entries.append(
                {"condition": name.group(1), "established": True, "page": int(page.group(1)), "quote": quote}
            )
    return json.dumps({"conditions": entries})


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_offline_rebuild_is_byte_identical(small_collection: Path, tmp_path: Path, replay_server) -> None:
    server = replay_server(answer)
    options = small_build_options(25, judge="llm", llm_url=server.url, llm_model="replay")
    out = tmp_path / "bench"
    summary = build(small_collection, out, options)
    assert summary.problems == [] and summary.manifest["counts"]["queries"] > 0
    cache = [json.loads(line) for line in (out / "judge" / "llm_cache.jsonl").read_text().splitlines()]
    rejected = [row for row in cache if not row["response"].startswith("{")]
    assert rejected and len(rejected) < len(cache)  # both kinds of reply were frozen
    assert len(cache) == len(server.requests)
    before = _files(out)
    server.close()

    rebuilt = build(small_collection, out, replace(options, llm_url=closed_port_url()))
    assert rebuilt.problems == []
    assert _files(out) == before
