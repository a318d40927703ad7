"""Readers: release directories, qrels forms, run forms, and the bad-input errors."""

from __future__ import annotations

import pytest

from nclue.errors import NclueError
from nclue.scoring import Benchmark, load_run_matrix, score_runs
from nclue.scoring.benchmark import GOLD, PARTIAL
from nclue.scoring.runs import OUTSIDE, PAD
from tests.scoring.nclue_eval_helpers import S6_QRELS, S6_QUERY, make_release, write_jsonl, write_trec


def test_release_arrays_and_families(tmp_path):
    queries = [
        {"qid": "a", "conditions": ["x", "y"]},
        {"qid": "b", "conditions": ["x", "z"]},
        {"qid": "c", "conditions": ["y", "z"]},
    ]
    qrels = [
        {"qid": "a", "doc_id": "g", "grade": 2, "label": "gold"},
        {"qid": "b", "doc_id": "g", "grade": 2, "label": "gold"},
        {"qid": "c", "doc_id": "g", "grade": 2, "label": "gold"},
        {"qid": "c", "doc_id": "h", "grade": 2, "label": "gold"},
        {"qid": "a", "doc_id": "p", "grade": 1, "label": "partial"},
        {"qid": "a", "doc_id": "zero", "grade": 0, "label": "partial"},
    ]
    bench = Benchmark.open(make_release(tmp_path / "b", queries, qrels))
    assert bench.n_queries == 3 and bench.n.tolist() == [2, 2, 2]
    assert bench.family[0] == bench.family[1] != bench.family[2]
    assert bench.n_families == 2
    assert bench.n_gold.tolist() == [1, 1, 2]
    assert bench.d_plus.tolist() == [2, 1, 2]  # grade-0 row dropped
    assert "zero" not in bench.doc_index


def test_beir_and_trec_qrels_derive_labels_from_grade(tmp_path):
    root = make_release(tmp_path / "b", [S6_QUERY, {"qid": "q2", "conditions": ["A", "B"]}], [])
    (root / "qrels.jsonl").unlink()
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nnclue_0000\tg\t3\nnclue_0000\ts\t2\nq2\tt\t2\n"
    )
    bench = Benchmark.open(root)
    labels = {
        (bench.qids[q], bench.doc_ids[d]): int(lab) for q, d, lab in zip(bench.j_query, bench.j_doc, bench.j_label)
    }
    assert labels == {("nclue_0000", "g"): GOLD, ("nclue_0000", "s"): PARTIAL, ("q2", "t"): GOLD}
    trec = tmp_path / "qrels.txt"
    trec.write_text("nclue_0000 0 g 3\nq2 0 t 1\n")
    bench = Benchmark.open(root, trec)
    assert sorted(bench.j_label.tolist()) == [PARTIAL, GOLD]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"qid": "nclue_0000", "doc_id": "d", "grade": 4, "label": "partial"}, "grade 4 out of range 0..3"),
        ({"qid": "nclue_0000", "doc_id": "d", "grade": 2, "label": "gold"}, "label 'gold' needs grade == n == 3"),
        ({"qid": "nclue_0000", "doc_id": "d", "grade": 1, "label": "relevant"}, "must be 'gold' or 'partial'"),
        ({"qid": "nope", "doc_id": "d", "grade": 1, "label": "partial"}, "not in queries.jsonl"),
        ({"qid": "nclue_0000", "doc_id": "d", "grade": 1.5, "label": "partial"}, "is not an integer"),
        (
            {"qid": "nclue_0000", "doc_id": "d", "grade": 1, "label": "partial", "pages": {"Other": [1]}},
            "not among the query's conditions",
        ),
    ],
)
def test_bad_qrels_rows_name_file_and_line(tmp_path, row, message):
    root = make_release(tmp_path / "b", [S6_QUERY], [S6_QRELS[0], row])
    with pytest.raises(NclueError, match=message) as err:
        Benchmark.open(root)
    assert "qrels.jsonl:2" in str(err.value)


def test_duplicate_qrels_row_and_malformed_line(tmp_path):
    root = make_release(tmp_path / "b", [S6_QUERY], [S6_QRELS[0], S6_QRELS[0]])
    with pytest.raises(NclueError, match=r"qrels.jsonl:2: .*already judged at .*qrels.jsonl:1"):
        Benchmark.open(root)
    (root / "qrels.jsonl").write_text('{"qid": "nclue_0000"\n')
    with pytest.raises(NclueError, match=r"qrels.jsonl:1: malformed JSON"):
        Benchmark.open(root)
    with pytest.raises(NclueError, match="not a benchmark release"):
        Benchmark.open(tmp_path)


def test_trec_run_errors_name_file_and_line(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    bad = tmp_path / "bad.trec"
    bad.write_text("q2 Q0 g1 1 1.0 bad\nq2 Q0 g2 2 nan bad\n")
    with pytest.raises(NclueError, match=r"bad.trec:2: field 'score' is 'nan'"):
        load_run_matrix(bad, bench)
    bad.write_text("q2 Q0 g1 1 inf bad\n")
    with pytest.raises(NclueError, match=r"bad.trec:1: .*finite"):
        load_run_matrix(bad, bench)
    bad.write_text("q2 Q0 g1 1 1.0 bad\nq2 Q0 g1 2 0.5 bad\n")
    with pytest.raises(NclueError, match=r"bad.trec:2: 'g1' already ranked for query 'q2' on line 1"):
        load_run_matrix(bad, bench)
    bad.write_text("q2 Q0 g1 1 1.0\n")
    with pytest.raises(NclueError, match=r"bad.trec:1: TREC run lines need 6 columns"):
        load_run_matrix(bad, bench)


def test_jsonl_run_errors(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    path = write_jsonl(
        tmp_path / "r.jsonl", [{"qid": "q2", "docs": [{"doc_id": "g1", "score": 1}, {"doc_id": "g1", "score": 0}]}]
    )
    with pytest.raises(NclueError, match=r"r.jsonl:1: 'g1' listed twice"):
        load_run_matrix(path, bench)
    path.write_text('{"qid": "q2", "docs": [{"doc_id": "g1", "score": NaN}]}\n')
    with pytest.raises(NclueError, match=r"r.jsonl:1: malformed JSON"):
        load_run_matrix(path, bench)
    write_jsonl(path, [{"qid": "q2", "docs": []}, {"qid": "q2", "docs": []}])
    with pytest.raises(NclueError, match=r"r.jsonl:2: query 'q2' already ranked on line 1"):
        load_run_matrix(path, bench)
    write_jsonl(path, [{"qid": "q2", "docs": [{"doc_id": "g1", "score": 1, "pages": [[1]]}]}])
    with pytest.raises(NclueError, match=r"r.jsonl:1: 'pages' of 'g1'"):
        load_run_matrix(path, bench)
    write_jsonl(path, [{"qid": "q2", "docs": [{"doc_id": "g1", "score": 1, "evidence": {"A": "p1"}}]}])
    with pytest.raises(NclueError, match=r"r.jsonl:1: 'evidence' of 'g1'"):
        load_run_matrix(path, bench)


def test_unknown_qids_are_counted_and_unknown_docs_are_zero(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    path = write_trec(
        tmp_path / "my-run.v2.trec", {"zz": [("g1", 1)], "q2": [("never_seen", 3), ("g1", 2)], "yy": [("g1", 1)]}
    )
    run = load_run_matrix(path, bench)
    assert run.name == "my-run.v2"
    assert run.unknown_qids == ("yy", "zz")
    q = bench.qid_index["q2"]
    assert run.docs[q, 0] == OUTSIDE and run.docs[bench.qid_index["nclue_0000"], 0] == PAD
    assert score_runs(bench, [run]).outcome[0, q] == 2
