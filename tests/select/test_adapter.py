"""The nclue-benchmark adapter on a tiny release and page store written here."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from nclue.corpus.store import DOCS_SCHEMA, PAGES_SCHEMA, write_table_atomic
from nclue.errors import NclueError
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
    report = adapt_release(bench, coll, tmp_path / "tasks", max_chars=60)
    assert report["skipped_small_pools"] == [{"qid": "q2", "pool": 1}]
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


def test_adapter_distractors_are_grade_zero_and_seeded(release, tmp_path):
    bench, coll = release
    adapt_release(bench, coll, tmp_path / "a", distractors=2, seed=5)
    adapt_release(bench, coll, tmp_path / "b", distractors=2, seed=5)
    assert (tmp_path / "a" / "tasks.jsonl").read_bytes() == (tmp_path / "b" / "tasks.jsonl").read_bytes()
    tasks = load_tasks(tmp_path / "a")
    check_pool_sizes(tasks, 5)
    q1 = tasks[0]
    assert len(q1.pool) == 8
    lab = load_judgments(tmp_path / "a" / "judgments.jsonl", tasks)["q1"]
    assert int((lab.grade == 0).sum()) == 2


def test_adapter_refuses_inconsistent_grade(release, tmp_path):
    bench, coll = release
    rows = [json.loads(line) for line in (bench / "qrels.jsonl").read_text().splitlines()]
    rows[0]["grade"] = 1
    jsonl(bench / "qrels.jsonl", rows)
    with pytest.raises(NclueError, match="qrels.jsonl:1: grade 1 but 2 conditions"):
        adapt_release(bench, coll, tmp_path / "t")
