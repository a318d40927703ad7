"""Task-set validation and label aggregation, including the bad-input cases of R03."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.select.tasks import check_pool_sizes, load_docs, load_judgments, load_tasks


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def rewrite(path: Path, edit) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    write(path, edit(rows))


def test_example_set_loads_with_two_judges(task_dir):
    tasks = load_tasks(task_dir)
    docs = load_docs(task_dir, tasks)
    labels = load_judgments(task_dir / "judgments.jsonl", tasks)
    assert len(tasks) == 7 and all(8 <= len(t.pool) <= 12 for t in tasks)
    assert set(docs) >= {d for t in tasks for d in t.pool}
    # agreement requires both judges; grades are means
    backup = tasks[[t.task_id for t in tasks].index("backup")]
    lab = labels["backup"]
    assert lab.agreed.shape == (len(backup.pool), 4)
    assert np.any(lab.grade % 1 == 0.5)


def test_agreed_means_every_judge(tmp_path):
    write(tmp_path / "tasks.jsonl", [{"task_id": "t", "question": "q", "requirements": ["a", "b"], "pool": ["1", "2"]}])
    write(
        tmp_path / "j.jsonl",
        [
            {"task_id": "t", "doc_id": "1", "judge": "A", "grade": 3, "requirements": [1, 2]},
            {"task_id": "t", "doc_id": "1", "judge": "B", "grade": 2, "requirements": [2]},
            {"task_id": "t", "doc_id": "2", "judge": "A", "grade": 0, "requirements": []},
            {"task_id": "t", "doc_id": "2", "judge": "B", "grade": 1, "requirements": [1]},
        ],
    )
    lab = load_judgments(tmp_path / "j.jsonl", load_tasks(tmp_path))["t"]
    assert lab.grade.tolist() == [2.5, 0.5]
    assert lab.agreed.tolist() == [[False, True], [False, False]]


def test_pool_smaller_than_k_is_refused(task_dir):
    tasks = load_tasks(task_dir)
    with pytest.raises(NclueError, match="pools smaller than k=10: cycling"):
        check_pool_sizes(tasks, 10)


def test_empty_requirements_refused(task_dir):
    rewrite(task_dir / "tasks.jsonl", lambda rows: [{**rows[0], "requirements": []}, *rows[1:]])
    with pytest.raises(NclueError, match=r"tasks.jsonl:1: .* no \(or an empty\) requirement"):
        load_tasks(task_dir)


def test_unknown_doc_in_judgments_refused(task_dir):
    rewrite(task_dir / "judgments.jsonl", lambda rows: [*rows, {**rows[0], "doc_id": "zz99", "judge": "C"}])
    with pytest.raises(NclueError, match="'zz99' is not in the pool"):
        load_judgments(task_dir / "judgments.jsonl", load_tasks(task_dir))


def test_unknown_task_and_bad_requirement_refused(task_dir):
    tasks = load_tasks(task_dir)
    rewrite(task_dir / "judgments.jsonl", lambda rows: [{**rows[0], "task_id": "nope"}])
    with pytest.raises(NclueError, match="unknown task_id 'nope'"):
        load_judgments(task_dir / "judgments.jsonl", tasks)
    rewrite(task_dir / "judgments.jsonl", lambda rows: [{**rows[0], "task_id": "backup", "requirements": [5]}])
    with pytest.raises(NclueError, match=r"outside 1..4"):
        load_judgments(task_dir / "judgments.jsonl", tasks)


def test_missing_judge_is_an_error_or_reported_zero(task_dir):
    tasks = load_tasks(task_dir)
    rewrite(task_dir / "judgments.jsonl", lambda rows: rows[1:])  # drop judge A for one pair
    with pytest.raises(NclueError, match="has no judgment for task"):
        load_judgments(task_dir / "judgments.jsonl", tasks)
    labels = load_judgments(task_dir / "judgments.jsonl", tasks, on_missing="zero")
    assert sum(lab.missing for lab in labels.values()) == 1


def test_pool_doc_missing_from_docs_refused(task_dir):
    rewrite(task_dir / "docs.jsonl", lambda rows: rows[1:])
    with pytest.raises(NclueError, match="missing from docs.jsonl"):
        load_docs(task_dir, load_tasks(task_dir))
