"""Stratified sampling on a real release: allocation, determinism, the administrator key."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from nclue.audit.audit_params import SampleParams
from nclue.audit.sample import allocate, sample
from nclue.errors import NclueError
from tests.audit.simulate import read_jsonl


def test_allocation_hand_cases() -> None:
    # equal: 30 over sizes (5, 100, 100, 2): the small strata are taken whole, the rest split evenly
    assert allocate([5, 100, 100, 2], 30) == [5, 12, 11, 2]
    assert allocate([3, 3], 10) == [3, 3]
    assert allocate([10, 10, 10], 4) == [2, 1, 1]
    # proportional, largest remainder: 30 · (5, 100, 100, 2) / 207 = (0.72, 14.5, 14.5, 0.29)
    assert allocate([5, 100, 100, 2], 30, "proportional") == [1, 15, 14, 0]
    with pytest.raises(NclueError, match="allocation"):
        allocate([1], 1, "random")


def test_sample_matches_an_independent_stratification(audited: dict) -> None:
    bench = audited["bench"]
    qrels = read_jsonl(bench / "qrels.jsonl")
    n_of = {q["qid"]: len(q["conditions"]) for q in read_jsonl(bench / "queries.jsonl")}
    source = {d["doc_id"]: d["source"] for d in read_jsonl(bench / "corpus.jsonl")}
    population = Counter((source[r["doc_id"]], r["label"], str(n_of[r["qid"]])) for r in qrels)
    names = sorted(population)
    expected = dict(zip(names, allocate([population[k] for k in names], 12)))
    key = read_jsonl(audited["audit"] / "key.jsonl")
    got = Counter(tuple(r["stratum"][f] for f in ("source", "label", "n")) for r in key)
    assert {k: v for k, v in expected.items() if v} == dict(got)
    assert sum(got.values()) == 12 == audited["sample"].sampled
    # the key carries the benchmark's own judgment of every sampled pair
    by_pair = {(r["qid"], r["doc_id"]): r for r in qrels}
    for row in key:
        judged = by_pair[(row["qid"], row["doc_id"])]
        assert (row["grade"], row["label"], row["pages"]) == (judged["grade"], judged["label"], judged["pages"])
    table = audited["sample"].to_markdown()
    assert "| All |" in table and "Population" in table


def test_sample_is_deterministic_and_seeded(audited: dict, tmp_path: Path) -> None:
    again = sample(audited["bench"], tmp_path / "a", SampleParams(pairs=12))
    assert again.audit_id == audited["sample"].audit_id
    assert (tmp_path / "a" / "key.jsonl").read_bytes() == (audited["audit"] / "key.jsonl").read_bytes()
    other = sample(audited["bench"], tmp_path / "b", SampleParams(pairs=12, seed=12))
    assert other.audit_id != again.audit_id
    manifest = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert manifest["qrels_version"] == 1 and len(manifest["qrels_sha256"]) == 64


def test_bad_parameters_are_refused(audited: dict, tmp_path: Path) -> None:
    with pytest.raises(NclueError, match="distinct fields among source, label, n, grade"):
        sample(audited["bench"], tmp_path / "x", SampleParams(strata=("source", "colour")))
    with pytest.raises(NclueError, match="not an audit directory"):
        from nclue.audit.store import AuditDir

        AuditDir.open(tmp_path)
