"""SourceShift's stress path on document-level labels: challenge → blind answers → tie-break → final copy.

The release is built with ``--labels document`` (qrels without evidence pages); the challenge must
still display pages per condition, and adjudication must write a final qrels copy that the scorer
and ``nclue report --shift-qrels`` read.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import nclue
from nclue.audit.adjudicate import adjudicate
from nclue.audit.audit_params import ChallengeParams
from nclue.audit.challenge import challenge
from nclue.audit.packet import build_packet
from tests.audit.simulate import answers, payload_of, read_jsonl, write_export

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def document_release(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from dataclasses import replace

    from nclue.bench.pipeline import build
    from tests.fixtures.small_collection import small_build_options

    root = tmp_path_factory.mktemp("doc-release")
    shutil.copytree(release_dir / "coll", root / "coll")
    options = small_build_options(30)
    build(root / "coll", root / "bench", replace(options, compose=replace(options.compose, labels="document")))
    return root


def test_the_stress_path_writes_a_final_copy_of_document_labels(document_release: Path, tmp_path: Path) -> None:
    bench, coll = document_release / "bench", document_release / "coll"
    qrels = read_jsonl(bench / "qrels.jsonl")
    assert qrels and not any("pages" in r for r in qrels)  # document-level labels carry no pages
    runs = {}
    for system in ("bm25.and", "bm25.decompose(distinct)"):
        run = nclue.run_system(bench, coll, system)
        runs[system] = next(p for p in run.write(tmp_path / "runs") if p.suffix == ".jsonl")
    root = tmp_path / "challenge"
    ch = challenge(bench, runs["bm25.and"], runs["bm25.decompose(distinct)"], root, ChallengeParams(controls=3))
    assert ch.targets, "the contrast has targets to challenge"
    packet = build_packet(root, coll, tmp_path / "challenge.html")
    payload = payload_of(root, packet.packet_id)
    assert all(c["pages"] for item in payload["items"] for c in item["conditions"])  # pages found without qrels pages
    x = write_export(tmp_path / "X.json", payload, "X", answers(payload))
    z = write_export(tmp_path / "Z.json", payload, "Z", answers(payload, {(0, 0)}))
    tied = adjudicate(root, [x, z])
    assert tied.tiebreak is not None and tied.unresolved >= 1
    tie = payload_of(root, tied.tiebreak.packet_id)
    w = write_export(tmp_path / "W.json", tie, "W", answers(tie))
    final = adjudicate(root, [x, z, w])
    assert final.unresolved == 0 and final.qrels is not None and final.qrels.is_file()
    card = nclue.evaluate(bench, list(runs.values()), ci="none", qrels=final.qrels)
    assert set(card.runs) == {"bm25.and", "bm25.decompose(distinct)"}
    final_rows = {(r["qid"], r["doc_id"]): r for r in map(json.loads, final.qrels.read_text().splitlines())}
    assert final.transitions
    for t in final.transitions:  # every reviewed pair carries its adjudicated grade into the final copy
        grade = t.new[0]
        row = final_rows.get((t.qid, t.doc_id))
        assert (row is None) if grade == 0 else (row is not None and row["grade"] == grade)
