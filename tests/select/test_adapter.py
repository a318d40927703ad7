"""The nclue-benchmark adapter on a tiny release and page store written here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nclue.corpus.store import DOCS_SCHEMA, PAGES_SCHEMA, write_table_atomic
from nclue.errors import NclueError
from nclue.index.lexical import build_lexical_index
from nclue.select.adapter import adapt_release
from nclue.select.tasks import check_pool_sizes, load_docs, load_judgments, load_tasks


def jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def release(tmp_path: Path) -> tuple[Path, Path]:
    coll = tmp_path / "coll"
    coll.mkdir()
    ids = [f"pkg/doc{i}.pdf" for i in range(9)]
    pages = [(d, p, f"Page {p} of {d}.  Text   about\ttopic {i % 3}.") for i, d in enumerate(ids) for p in (1, 2, 3)]
    write_table_atomic(
        coll / "pages.parquet",
        pa.table(
            {
                "doc_id": [r[0] for r in pages],
                "page": pa.array([r[1] for r in pages], pa.int32()),
                "text": [r[2] for r in pages],
                "n_chars": pa.array([len(r[2]) for r in pages], pa.int32()),
                "method": ["text"] * len(pages),
            },
            schema=PAGES_SCHEMA,
        ),
    )
    write_table_atomic(
        coll / "docs.parquet",
        pa.table(
            {
                "doc_id": ids,
                "path": ids,
                "sha256": ["0" * 64] * 9,
                "n_pages": pa.array([3] * 9, pa.int32()),
                "n_bytes": pa.array([1] * 9, pa.int64()),
                "source": ["t"] * 9,
                "status": ["ok"] * 9,
                "error": [None] * 9,
            },
            schema=DOCS_SCHEMA,
        ),
    )
    bench = tmp_path / "bench"
    bench.mkdir()
    jsonl(
        bench / "corpus.jsonl",
        [{"doc_id": d, "path": d, "source": "t", "sha256": "0" * 64, "n_pages": 3, "n_bytes": 1} for d in ids],
    )
    jsonl(
        bench / "queries.jsonl",
        [
            {
                "qid": "q1",
                "conditions": ["Alpha", "Beta"],
                "aliases": {},
                "forms": {
                    "raw": "Alpha Beta",
                    "clean_v2": '"Alpha"; "Beta"',
                    "natural": 'Find the document that discusses "Alpha" and "Beta".',
                },
            },
            {"qid": "q2", "conditions": ["Gamma", "Delta", "Eps"], "aliases": {}, "forms": {}},
        ],
    )
    q1 = [
        ("pkg/doc0.pdf", {"Alpha": [1], "Beta": [2]}),
        ("pkg/doc1.pdf", {"Alpha": [3]}),
        ("pkg/doc2.pdf", {"Beta": [1]}),
        ("pkg/doc3.pdf", {"Alpha": [2], "Beta": []}),
        ("pkg/doc4.pdf", {"Beta": [3]}),
        ("pkg/doc5.pdf", {"Alpha": [1], "Beta": [3]}),
    ]
    rows = [
        {
            "qid": "q1",
            "doc_id": d,
            "grade": sum(bool(v) for v in p.values()),
            "label": "gold" if all(p.get(c) for c in ("Alpha", "Beta")) else "partial",
            "pages": p,
        }
        for d, p in q1
    ]
    rows += [{"qid": "q2", "doc_id": "pkg/doc6.pdf", "grade": 1, "label": "partial", "pages": {"Gamma": [1]}}]
    jsonl(bench / "qrels.jsonl", rows)
    return bench, coll


def test_adapter_maps_queries_to_tasks(release, tmp_path):
    bench, coll = release
    report = adapt_release(bench, coll, tmp_path / "tasks", max_chars=60, pool="qrels")
    assert report["skipped_small_pools"] == [{"qid": "q2", "pool": 1}]
    assert report["pool"]["kind"] == "qrels-oracle" and "oracle pool" in report["pool"]["rule"]
    tasks = load_tasks(tmp_path / "tasks")
    assert [t.task_id for t in tasks] == ["q1"]
    (task,) = tasks
    assert task.question == 'Find the document that discusses "Alpha" and "Beta".'
    assert task.requirements == ("Alpha", "Beta") and task.splits == ("n2",)
    assert list(task.pool) == sorted(task.pool) and len(task.pool) == 6
    docs = load_docs(tmp_path / "tasks", tasks)
    text = docs["pkg/doc0.pdf"].text
    assert text.startswith("Page 1 of pkg/doc0.pdf. Text about topic 0. Page 2") and len(text) <= 60
    lab = load_judgments(tmp_path / "tasks" / "judgments.jsonl", tasks)["q1"]
    pos = {d: i for i, d in enumerate(task.pool)}
    assert lab.grade[pos["pkg/doc0.pdf"]] == 2 and lab.agreed[pos["pkg/doc0.pdf"]].tolist() == [True, True]
    assert lab.agreed[pos["pkg/doc3.pdf"]].tolist() == [True, False]


def test_adapter_distractors_are_seeded_and_drawn_without_the_labels(release, tmp_path):
    bench, coll = release
    adapt_release(bench, coll, tmp_path / "a", distractors=2, seed=5, pool="qrels")
    adapt_release(bench, coll, tmp_path / "b", distractors=2, seed=5, pool="qrels")
    assert (tmp_path / "a" / "tasks.jsonl").read_bytes() == (tmp_path / "b" / "tasks.jsonl").read_bytes()
    tasks = load_tasks(tmp_path / "a")
    check_pool_sizes(tasks, 5)
    q1 = tasks[0]
    assert len(q1.pool) == 8
    lab = load_judgments(tmp_path / "a" / "judgments.jsonl", tasks)["q1"]
    assert int((lab.grade == 0).sum()) == 2  # q1's six judged documents are all in its oracle pool
    # a judged pool of two documents: the draw over the other seven ignores the labels, so over
    # seeds it reaches q1's judged documents too, and those keep their grades
    reading = [{"qid": "q1", "judged": ["pkg/doc0.pdf", "pkg/doc8.pdf"]}, {"qid": "q2", "judged": ["pkg/doc6.pdf"]}]
    jsonl(bench / "reading.jsonl", reading)
    drawn_grades = set()
    for seed in range(12):
        adapt_release(bench, coll, tmp_path / f"s{seed}", distractors=3, seed=seed, pool="judged", k=2)
        tasks = load_tasks(tmp_path / f"s{seed}")
        lab = load_judgments(tmp_path / f"s{seed}" / "judgments.jsonl", tasks)["q1"]
        extra = [i for i, d in enumerate(tasks[0].pool) if d not in ("pkg/doc0.pdf", "pkg/doc8.pdf")]
        drawn_grades |= {int(lab.grade[i]) for i in extra}
    assert drawn_grades == {0, 1, 2}


def test_judged_pool_keeps_grade_zero_documents(release, tmp_path):
    bench, coll = release
    with pytest.raises(NclueError, match="no reading.jsonl.*--judge reader"):
        adapt_release(bench, coll, tmp_path / "t", pool="judged")
    jsonl(bench / "reading.jsonl", [{"qid": "q1", "judged": ["pkg/doc0.pdf", "pkg/doc1.pdf", "pkg/doc7.pdf"]}])
    report = adapt_release(bench, coll, tmp_path / "t", pool="judged", k=3)
    assert report["pool"]["kind"] == "judged" and report["unread_pool_documents"] == 0
    (task,) = load_tasks(tmp_path / "t")
    assert task.pool == ("pkg/doc0.pdf", "pkg/doc1.pdf", "pkg/doc7.pdf")
    grades = load_judgments(tmp_path / "t" / "judgments.jsonl", [task])["q1"].grade.tolist()
    assert grades == [2, 1, 0]  # doc7 was judged and established nothing: grade 0, in the pool
    assert report["pool"]["typed"].startswith("absent: struct.decompose(hmean) cannot run")
    assert task.typed_scores is None


def test_adapter_refuses_inconsistent_grade(release, tmp_path):
    bench, coll = release
    rows = [json.loads(line) for line in (bench / "qrels.jsonl").read_text().splitlines()]
    rows[0]["grade"] = 1
    jsonl(bench / "qrels.jsonl", rows)
    with pytest.raises(NclueError, match="qrels.jsonl:1: grade 1 but 2 conditions"):
        adapt_release(bench, coll, tmp_path / "t", pool="qrels")


def test_pool_from_a_run_file_is_judged_by_the_qrels_only(release, tmp_path):
    bench, coll = release
    run = tmp_path / "run.trec"
    ranked = ["pkg/doc8.pdf", "pkg/doc0.pdf", "pkg/doc7.pdf", "pkg/doc2.pdf", "pkg/doc6.pdf", "pkg/doc1.pdf"]
    run.write_text("".join(f"q1 Q0 {d} {r} {10 - r} sys\n" for r, d in enumerate(ranked, start=1)))
    report = adapt_release(bench, coll, tmp_path / "t", pool=str(run), depth=5)
    assert report["pool"]["kind"] == "run" and report["pool"]["depth"] == 5
    assert report["pool"]["run_sha256"] == hashlib.sha256(run.read_bytes()).hexdigest()
    assert report["skipped_small_pools"] == [{"qid": "q2", "pool": 0}]
    (task,) = load_tasks(tmp_path / "t")
    assert list(task.pool) == sorted(ranked[:5])  # the run's five best, sorted by ID
    assert dict(zip(task.pool, task.pool_scores)) == {d: 10 - r for r, d in enumerate(ranked[:5], start=1)}
    lab = load_judgments(tmp_path / "t" / "judgments.jsonl", [task])["q1"]
    grades = dict(zip(task.pool, lab.grade.tolist()))
    # doc8, doc7 and doc6 (q2's document) have no q1 qrels row: grade 0; doc0 is q1's gold
    assert grades == {"pkg/doc0.pdf": 2, "pkg/doc2.pdf": 1, "pkg/doc6.pdf": 0, "pkg/doc7.pdf": 0, "pkg/doc8.pdf": 0}


def test_pool_from_a_system_is_what_the_words_on_the_pages_retrieve(release, tmp_path):
    """Pages mentioning Alpha or Beta (written here) are the only ones BM25 can retrieve."""
    bench, coll = release
    mention = {("pkg/doc0.pdf", 1): "Alpha", ("pkg/doc3.pdf", 2): "Beta", ("pkg/doc7.pdf", 3): "Alpha", ("pkg/doc7.pdf", 1): "Beta",
               ("pkg/doc4.pdf", 1): "Alpha", ("pkg/doc8.pdf", 2): "Beta"}  # fmt: skip
    table = pq.read_table(coll / "pages.parquet").to_pylist()
    for row in table:
        row["text"] += " " + mention.get((row["doc_id"], row["page"]), "")
    write_table_atomic(coll / "pages.parquet", pa.Table.from_pylist(table, schema=PAGES_SCHEMA))
    build_lexical_index(coll)
    report = adapt_release(bench, coll, tmp_path / "t", pool="bm25.decompose(distinct)", depth=30, k=5)
    assert report["pool"]["kind"] == "retrieval" and report["pool"]["system"] == "bm25.decompose(distinct)"
    (task,) = load_tasks(tmp_path / "t")
    assert set(task.pool) == {d for d, _ in mention}
    best = max(zip(task.pool_scores, task.pool))[1]
    assert best == "pkg/doc7.pdf"  # the only document with both conditions, on distinct pages


def test_adapter_json_feeds_the_freeze_manifest(release, tmp_path, encoder):
    from nclue.select.freeze import freeze

    bench, coll = release
    adapt_release(bench, coll, tmp_path / "t", pool="qrels")
    result = freeze(tmp_path / "t", tmp_path / "frz", encoder=encoder, selectors=["dense", "gated"])
    assert result.manifest["pool"]["kind"] == "qrels-oracle"
    assert "adapter.json" in result.manifest["inputs"]
    assert str(bench / "qrels.jsonl") in result.manifest["barrier"]["protected"]
    import hashlib

    digest = hashlib.sha256((tmp_path / "t" / "judgments.jsonl").read_bytes()).hexdigest()
    assert result.manifest["judgments"]["sha256"] == digest  # recorded by adapt, never read by the freeze
