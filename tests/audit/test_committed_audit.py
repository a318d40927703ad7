"""The committed audit of the development benchmark reproduces from its replies (``data/debian-docs/audit``).

The release is rebuilt from the real corpus with the options ``nclue demo`` uses and must be the
audited one (the same queries, qrels and corpus); the blind packet, both evaluators' exports, the
repair queue, the poll's three votes and the repaired qrels are then regenerated from the
committed replies alone, through the product's batch import, and compared with the committed files.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "debian-docs" / "audit"
POLL = "423b179718c05f02"


def _items(path: Path) -> list:
    return json.loads(path.read_text())["items"]


@pytest.mark.slow
def test_the_committed_audit_reproduces(debian_pdf_dir: Path, tmp_path: Path) -> None:
    from nclue.audit.adjudicate import adjudicate
    from nclue.audit.machine import machine
    from nclue.audit.packet import build_packet
    from nclue.audit.repair import repair
    from nclue.bench.construction_params import BuildOptions
    from nclue.bench.pipeline import build
    from nclue.corpus.ingest import ingest
    from nclue.demo import audited_qrels
    from nclue.index.lexical import build_lexical_index

    coll, bench, audit = tmp_path / "coll", tmp_path / "bench", tmp_path / "audit"
    ingest(debian_pdf_dir, coll, workers=2, ocr="auto")
    build_lexical_index(coll)
    build(coll, bench, BuildOptions(judge="embedding", compose=replace(BuildOptions().compose, n_queries=1000)))
    repaired, note = audited_qrels(bench, DATA)
    assert repaired is not None, note
    audit.mkdir()
    for name in ("audit.json", "key.jsonl"):
        shutil.copyfile(DATA / name, audit / name)
    build_packet(audit, coll, tmp_path / "packet.html")
    exports = []
    for ev in ("A", "E"):
        out = tmp_path / f"export-{ev}.json"
        machine(audit, model=f"reader-{ev}", evaluator=ev, batch_in=DATA / "replies" / f"replies-{ev}.jsonl", out=out)
        assert _items(out) == _items(DATA / f"export-{ev}.json")
        exports.append(out)
    summary = repair(audit, exports, coll, tmp_path / "poll.html")
    assert summary.to_json()["poll"]["packet_id"] == POLL
    polls = []
    for voter in ("P1", "P2", "P3"):
        out = tmp_path / f"poll-{voter}.json"
        replies = DATA / "replies" / f"poll-replies-{voter}.jsonl"
        machine(audit, model=f"reader-{voter}", packet_id=POLL, evaluator=voter, batch_in=replies, out=out)
        assert _items(out) == _items(DATA / f"poll-{voter}.json")
        polls.append(out)
    adjudicate(audit, polls, bench=bench)
    assert (audit / "qrels.v2.jsonl").read_bytes() == (DATA / "qrels.v2.jsonl").read_bytes()
