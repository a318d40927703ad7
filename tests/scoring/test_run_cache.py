"""The columnar run cache (:mod:`nclue.scoring.run_cache`) and the array encoder behind ``load_run_matrix``.

Expected matrices are written out by hand from the run files below; every read is checked with
the cache off, cold and warm, so a cache hit that encoded anything differently would fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.scoring import benchmark_from_judgments
from nclue.scoring.run_cache import FORMAT, cache_root
from nclue.scoring.runs import OUTSIDE, PAD, load_run_matrix
from nclue.types import Judgment

# Benchmark doc ids sort to indices a=0, b=1, c=2, g=3.
BENCH_DOCS = {"a": 5, "b": 5, "c": 5, "g": 5}

# q2's lines come before q1's, q1 is interleaved with q2, "zz" is unknown to the benchmark, "x" is
# no benchmark document, and b/c tie at 3.0 on q1 (file order keeps b first).
TREC = """q2 Q0 c 1 9.0 t
q1 Q0 g 1 5.0 t
q2 Q0 a 2 1.0 t
q1 Q0 b 2 3.0 t
q1 Q0 x 3 4.0 t
q1 Q0 c 4 3.0 t
zz Q0 a 1 1.0 t
"""


@pytest.fixture
def bench():
    rows = [Judgment("q1", "g", 2, "gold"), Judgment("q2", "a", 1, "partial"), Judgment("q3", "b", 1, "partial")]
    return benchmark_from_judgments(None, ["q1", "q2", "q3"], [("A", "B"), ("A", "B"), ("A", "B")], rows, BENCH_DOCS)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NCLUE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("NCLUE_RUN_CACHE", raising=False)
    return tmp_path / "cache" / "runs"


def _reads(path: Path, bench, monkeypatch: pytest.MonkeyPatch):
    """The run read with the cache off, then cold, then warm."""
    monkeypatch.setenv("NCLUE_RUN_CACHE", "off")
    off = load_run_matrix(path, bench)
    monkeypatch.delenv("NCLUE_RUN_CACHE")
    return off, load_run_matrix(path, bench), load_run_matrix(path, bench)


def test_trec_run_encodes_to_the_hand_matrix(tmp_path, bench, cache, monkeypatch):
    path = tmp_path / "t.trec"
    path.write_text(TREC, encoding="utf-8")
    expected_docs = np.array([[3, OUTSIDE, 1, 2], [2, 0, PAD, PAD], [PAD, PAD, PAD, PAD]])
    expected_scores = np.array([[5.0, 4.0, 3.0, 3.0], [9.0, 1.0, -np.inf, -np.inf], [-np.inf] * 4])
    for run in _reads(path, bench, monkeypatch):
        assert run.docs.tolist() == expected_docs.tolist()
        assert run.scores.tolist() == expected_scores.tolist()
        assert run.pages is None and run.unknown_qids == ("zz",)
        assert run.answered.tolist() == [True, True, False]
    assert len(list(cache.glob(f"*-trec-{FORMAT}.*.arrow"))) == 1


def test_page_aware_jsonl_keeps_three_best_distinct_pages(tmp_path, bench, cache, monkeypatch):
    lines = [
        {"qid": "q1", "docs": [{"doc_id": "g", "score": 2.0, "pages": [[4, 0.1], [9, 0.9], [2, 0.5], [7, 0.7]]}]},
        {"qid": "q2", "docs": []},  # listed, answered with nothing
        {"qid": "q3", "docs": [{"doc_id": "b", "score": 1.0}, {"doc_id": "a", "score": 1.5, "pages": [[3, 1.0]]}]},
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    for run in _reads(path, bench, monkeypatch):
        assert run.docs.tolist() == [[3, PAD], [PAD, PAD], [0, 1]]
        assert run.pages.tolist() == [
            [[9, 7, 2], [-1, -1, -1]],
            [[-1, -1, -1], [-1, -1, -1]],
            [[3, -1, -1], [-1, -1, -1]],
        ]


def test_a_warm_read_does_not_parse(tmp_path, bench, cache, monkeypatch):
    import nclue.runfile

    path = tmp_path / "t.trec"
    path.write_text(TREC, encoding="utf-8")
    calls = []
    real = nclue.runfile.parse_run
    monkeypatch.setattr(nclue.runfile, "parse_run", lambda p: calls.append(p) or real(p))
    load_run_matrix(path, bench)
    load_run_matrix(path, bench)
    copy = tmp_path / "elsewhere.trec"  # the same bytes under another name: the same entry
    copy.write_bytes(path.read_bytes())
    load_run_matrix(copy, bench)
    assert calls == [path]


def test_an_edited_file_is_parsed_again(tmp_path, bench, cache, monkeypatch):
    path = tmp_path / "t.trec"
    path.write_text(TREC, encoding="utf-8")
    assert load_run_matrix(path, bench).docs[0, 0] == 3
    path.write_text(TREC.replace("q1 Q0 g 1 5.0", "q1 Q0 g 1 0.5"), encoding="utf-8")
    assert load_run_matrix(path, bench).docs[0].tolist() == [OUTSIDE, 1, 2, 3]


def test_a_damaged_entry_is_parsed_and_replaced(tmp_path, bench, cache, monkeypatch):
    path = tmp_path / "t.trec"
    path.write_text(TREC, encoding="utf-8")
    load_run_matrix(path, bench)
    (entry,) = cache.glob("*.arrow")
    entry.write_bytes(entry.read_bytes()[:40])
    assert load_run_matrix(path, bench).docs[0].tolist() == [3, OUTSIDE, 1, 2]
    assert len(entry.read_bytes()) > 40


def test_an_unwritable_cache_still_reads(tmp_path, bench, monkeypatch):
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("NCLUE_CACHE", str(blocker))
    path = tmp_path / "t.trec"
    path.write_text(TREC, encoding="utf-8")
    assert load_run_matrix(path, bench).docs[1].tolist() == [2, 0, PAD, PAD]


def test_a_malformed_run_raises_the_parser_error_and_is_not_stored(tmp_path, bench, cache):
    path = tmp_path / "bad.trec"
    path.write_text("q1 Q0 g 1 5.0 t\nq1 Q0 g 2 4.0 t\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(NclueError, match="already ranked for query 'q1' on line 1"):
            load_run_matrix(path, bench)
    assert not cache.exists() or not list(cache.glob("*.arrow"))


def test_cache_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("NCLUE_RUN_CACHE", "off")
    assert cache_root() is None


def test_the_least_recently_used_entries_go_first(tmp_path, bench, cache, monkeypatch):
    import os

    import nclue.scoring.run_cache as run_cache

    paths = []
    for i in range(3):
        path = tmp_path / f"r{i}.trec"
        path.write_text(TREC.replace("9.0", f"{9 + i}.0"), encoding="utf-8")
        load_run_matrix(path, bench)
        paths.append(path)
    entries = sorted(cache.glob("*.arrow"), key=lambda e: e.stat().st_mtime_ns)
    size = entries[0].stat().st_size
    for age, entry in enumerate(entries):  # r0 oldest ... r2 newest, then r0 used again
        os.utime(entry, ns=(10**18 + age, 10**18 + age))
    load_run_matrix(paths[0], bench)
    monkeypatch.setattr(run_cache, "LIMIT_BYTES", 2 * size + size // 2)
    fresh = tmp_path / "r3.trec"
    fresh.write_text(TREC.replace("9.0", "20.0"), encoding="utf-8")
    load_run_matrix(fresh, bench)
    kept = {e.name.split("-")[0] for e in cache.glob("*.arrow")}
    assert kept == {run_cache._digest(paths[0]), run_cache._digest(fresh)}  # r1 and r2 were least recently used


def test_an_empty_run_reads_as_no_answers(tmp_path, bench, cache, monkeypatch):
    path = tmp_path / "empty.trec"
    path.write_text("\n", encoding="utf-8")
    for run in _reads(path, bench, monkeypatch):
        assert run.docs.shape == (3, 0) and run.answered.tolist() == [False, False, False]


def test_the_same_bytes_under_the_other_suffix_meet_the_other_parser(tmp_path, bench, cache):
    """The parser is chosen by suffix, so the key holds it: JSONL bytes cached as a run must still be
    refused as a TREC file (review finding: a hit used to skip the TREC parser's error)."""
    line = json.dumps({"qid": "q1", "docs": [{"doc_id": "g", "score": 1.0}]}) + "\n"
    (tmp_path / "r.jsonl").write_text(line, encoding="utf-8")
    assert load_run_matrix(tmp_path / "r.jsonl", bench).docs[0].tolist() == [3]
    (tmp_path / "r.trec").write_text(line, encoding="utf-8")
    with pytest.raises(NclueError, match="TREC run lines need 6 columns"):
        load_run_matrix(tmp_path / "r.trec", bench)


def test_a_file_rewritten_while_parsed_is_not_stored_under_its_old_digest(tmp_path, bench, cache, monkeypatch):
    import nclue.runfile

    path = tmp_path / "t.trec"
    path.write_text(TREC, encoding="utf-8")
    real = nclue.runfile.parse_run

    def rewritten_first(p):
        path.write_text(TREC.replace("q1 Q0 g 1 5.0", "q1 Q0 g 1 0.5"), encoding="utf-8")
        return real(p)

    monkeypatch.setattr(nclue.runfile, "parse_run", rewritten_first)
    load_run_matrix(path, bench)
    monkeypatch.setattr(nclue.runfile, "parse_run", real)
    path.write_text(TREC, encoding="utf-8")  # the first bytes again: parsed, never the rewrite's columns
    assert load_run_matrix(path, bench).docs[0].tolist() == [3, OUTSIDE, 1, 2]


def test_unknown_queries_are_named_when_no_query_has_documents(tmp_path, bench, cache, monkeypatch):
    path = tmp_path / "u.jsonl"
    path.write_text('{"qid": "q1", "docs": []}\n{"qid": "zz", "docs": []}\n', encoding="utf-8")
    for run in _reads(path, bench, monkeypatch):
        assert run.unknown_qids == ("zz",) and run.docs.shape == (3, 0)
