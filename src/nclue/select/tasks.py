"""Task-set files for coverage selection (``docs/coverage.md``) and their validation.

A *task set* is a directory with three JSON Lines files (see ``docs/coverage.md``):

* ``tasks.jsonl``  ``{"task_id", "question", "requirements": [str, ...], "pool": [doc_id, ...],
  "splits": [tag, ...], "pool_scores": [number, ...], "typed_scores": [number, ...]}`` (``splits``,
  ``pool_scores`` — the retrieval score of each pool document, aligned with ``pool`` — and
  ``typed_scores`` — the typed comparator's score of each, likewise — optional) — label-free; this is
  all the freeze may read besides documents. Any other field is ignored with a warning (a
  per-pool grade written here would be a label inside the frozen inputs).
* ``docs.jsonl``   ``{"doc_id", "title", "text"}``.
* ``judgments.jsonl`` ``{"task_id", "doc_id", "judge", "grade", "requirements": [int, ...]}`` with
  one-based requirement numbers. Read only by :func:`load_judgments`, after the freeze.

Label semantics: a document's grade is the mean of its judges' grades; a requirement
is *agreed* for a document when every judge of the set marked it (with two judges: both).
An nclue benchmark converted by :mod:`nclue.select.adapter` has one judge, whose marks are
agreed by definition.

Document IDs are strings. "Smaller ID" (every tie rule of the protocol) uses :func:`id_key`: IDs
made only of digits compare as integers and sort before any other ID, which compare as
strings — so ``"9" < "10"`` as in the seed's numeric IDs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from nclue.errors import NclueError, where
from nclue.io import iter_jsonl, require_finite

TASKS_FILE = "tasks.jsonl"
DOCS_FILE = "docs.jsonl"
JUDGMENTS_FILE = "judgments.jsonl"
ALL_SPLIT = "all"
TASK_FIELDS: tuple[str, ...] = ("task_id", "question", "requirements", "pool", "splits", "pool_scores", "typed_scores")

MissingPolicy = Literal["error", "zero"]


def id_key(doc_id: str) -> tuple[int, int, str]:
    """Sort key for document IDs: all-digit IDs numerically first, then the rest as strings."""
    return (0, int(doc_id), "") if doc_id.isdigit() else (1, 0, doc_id)


@dataclass(frozen=True)
class Task:
    """One selection task: a question, its m written requirements and the judged pool."""

    task_id: str
    question: str
    requirements: tuple[str, ...]
    pool: tuple[str, ...]
    splits: tuple[str, ...] = ()
    pool_scores: tuple[float, ...] | None = None
    typed_scores: tuple[float, ...] | None = None

    @property
    def m(self) -> int:
        """Number of written requirements."""
        return len(self.requirements)


@dataclass(frozen=True)
class Doc:
    """A pool document: its ID, a short title and its text."""

    doc_id: str
    title: str
    text: str

    @property
    def encode_text(self) -> str:
        """The text the encoder sees: ``title`` + newline + ``text`` (title omitted when empty)."""
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True)
class JudgmentRow:
    """One judge's label of one pool document for one task."""

    task_id: str
    doc_id: str
    judge: str
    grade: float
    requirements: tuple[int, ...]


@dataclass(frozen=True)
class TaskLabels:
    """Labels of one task aligned with ``task.pool``.

    ``grade[i]`` is the judges' mean grade of ``pool[i]``; ``agreed[i, r]`` is True when every
    judge marked requirement ``r + 1`` on it; ``missing`` counts (doc, judge) pairs filled in
    under the ``zero`` policy.
    """

    grade: np.ndarray
    agreed: np.ndarray
    missing: int = 0


def _str_id(value: object, path: Path, line: int, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise NclueError(f"{where(path, line)}: field '{field}' must be a string ID, got {value!r}")
    text = str(value).strip()
    if not text:
        raise NclueError(f"{where(path, line)}: field '{field}' is empty; give a non-empty ID")
    return text


def _str_list(value: object, path: Path, line: int, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise NclueError(f"{where(path, line)}: field '{field}' must be a list of strings")
    return [v.strip() for v in value]


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=3)


def _aligned_scores(row: dict, field: str, size: int, task_id: str, path: Path, line: int) -> tuple[float, ...] | None:
    """``row[field]`` as one finite number per pool document, or ``None`` when absent."""
    scores = row.get(field)
    if scores is None:
        return None
    if not isinstance(scores, list) or len(scores) != size:
        raise NclueError(f"{where(path, line)}: task {task_id!r}: {field!r} must list one number per pool document")
    return tuple(require_finite(v, path, line, field) for v in scores)


def load_tasks(task_dir: str | Path, warn: Callable[[str], None] | None = None) -> list[Task]:
    """Read and validate ``tasks.jsonl``: unique IDs, non-empty question and requirements,
    a non-empty pool without duplicates, ``pool_scores`` (when present) one finite number per
    pool document. Tasks are returned in file order.

    Fields outside :data:`TASK_FIELDS` are ignored; each distinct unknown field is reported once
    through ``warn`` (default: :func:`warnings.warn`) with the first line it appears on.
    """
    path = Path(task_dir) / TASKS_FILE
    report = warn if warn is not None else _warn
    tasks: list[Task] = []
    seen: set[str] = set()
    unknown: dict[str, int] = {}
    for line, row in iter_jsonl(path):
        for extra in row:
            if extra not in TASK_FIELDS and extra not in unknown:
                unknown[extra] = line
        for field in ("task_id", "question", "requirements", "pool"):
            if field not in row:
                raise NclueError(f"{where(path, line)}: missing field '{field}'")
        task_id = _str_id(row["task_id"], path, line, "task_id")
        if task_id in seen:
            raise NclueError(f"{where(path, line)}: duplicate task_id {task_id!r}; task IDs must be unique")
        seen.add(task_id)
        question = row["question"]
        if not isinstance(question, str) or not question.strip():
            raise NclueError(f"{where(path, line)}: task {task_id!r} has an empty question")
        requirements = _str_list(row["requirements"], path, line, "requirements")
        if not requirements or not all(requirements):
            raise NclueError(
                f"{where(path, line)}: task {task_id!r} has no (or an empty) requirement; "
                "coverage needs at least one written requirement — add them or drop the task"
            )
        if not isinstance(row["pool"], list) or not row["pool"]:
            raise NclueError(f"{where(path, line)}: task {task_id!r} has an empty pool")
        pool = [_str_id(v, path, line, "pool") for v in row["pool"]]
        if len(set(pool)) != len(pool):
            dup = sorted({p for p in pool if pool.count(p) > 1}, key=id_key)
            raise NclueError(f"{where(path, line)}: task {task_id!r} lists pool documents twice: {dup}")
        splits = _str_list(row.get("splits", []), path, line, "splits")
        scores = _aligned_scores(row, "pool_scores", len(pool), task_id, path, line)
        typed = _aligned_scores(row, "typed_scores", len(pool), task_id, path, line)
        tasks.append(Task(task_id, question.strip(), tuple(requirements), tuple(pool), tuple(splits), scores, typed))
    if not tasks:
        raise NclueError(f"{path}: no tasks; write one JSON object per task")
    for extra, line in unknown.items():
        report(
            f"{where(path, line)}: unknown task field {extra!r} is ignored "
            f"(task fields: {', '.join(TASK_FIELDS)}; labels belong in {JUDGMENTS_FILE})"
        )
    return tasks


def load_docs(task_dir: str | Path, tasks: list[Task] | None = None) -> dict[str, Doc]:
    """Read ``docs.jsonl``; when ``tasks`` is given, every pool member must be present."""
    path = Path(task_dir) / DOCS_FILE
    docs: dict[str, Doc] = {}
    for line, row in iter_jsonl(path):
        doc_id = _str_id(row.get("doc_id"), path, line, "doc_id")
        if doc_id in docs:
            raise NclueError(f"{where(path, line)}: duplicate doc_id {doc_id!r}")
        title, text = row.get("title", ""), row.get("text")
        if not isinstance(title, str) or not isinstance(text, str):
            raise NclueError(f"{where(path, line)}: 'title' and 'text' must be strings")
        if not (title.strip() or text.strip()):
            raise NclueError(f"{where(path, line)}: document {doc_id!r} has no title and no text")
        docs[doc_id] = Doc(doc_id, title.strip(), text.strip())
    if tasks is not None:
        for task in tasks:
            absent = [d for d in task.pool if d not in docs]
            if absent:
                raise NclueError(
                    f"{path}: task {task.task_id!r} pools documents missing from {DOCS_FILE}: "
                    f"{sorted(absent, key=id_key)[:5]}; add them or remove them from the pool"
                )
    return docs


def check_pool_sizes(tasks: list[Task], k: int) -> None:
    """Refuse tasks whose pool has fewer than ``k`` documents (a k-selection is impossible)."""
    small = [(t.task_id, len(t.pool)) for t in tasks if len(t.pool) < k]
    if small:
        listed = ", ".join(f"{tid} ({n} docs)" for tid, n in small[:5])
        raise NclueError(
            f"{len(small)} task(s) have pools smaller than k={k}: {listed}; "
            "add documents to those pools, drop the tasks, or lower --k"
        )


def load_judgment_rows(path: str | Path, tasks: list[Task]) -> list[JudgmentRow]:
    """Read and validate a judgments file against the tasks.

    Errors: unknown task, a document outside the task's pool (unknown ID), a requirement
    number outside ``1..m``, a negative or non-finite grade, a repeated (task, doc, judge).
    """
    file = Path(path)
    by_id = {t.task_id: t for t in tasks}
    pools = {t.task_id: set(t.pool) for t in tasks}
    rows: list[JudgmentRow] = []
    seen: set[tuple[str, str, str]] = set()
    for line, row in iter_jsonl(file):
        for field in ("task_id", "doc_id", "judge", "grade"):
            if field not in row:
                raise NclueError(f"{where(file, line)}: missing field '{field}'")
        task_id = _str_id(row["task_id"], file, line, "task_id")
        doc_id = _str_id(row["doc_id"], file, line, "doc_id")
        judge = _str_id(row["judge"], file, line, "judge")
        task = by_id.get(task_id)
        if task is None:
            raise NclueError(f"{where(file, line)}: unknown task_id {task_id!r} (not in {TASKS_FILE})")
        if doc_id not in pools[task_id]:
            raise NclueError(
                f"{where(file, line)}: document {doc_id!r} is not in the pool of task {task_id!r}; "
                "judgments may only label pool documents"
            )
        grade = row["grade"]
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not math.isfinite(grade) or grade < 0:
            raise NclueError(f"{where(file, line)}: grade must be a finite number >= 0, got {grade!r}")
        reqs = row.get("requirements", [])
        if not isinstance(reqs, list) or not all(isinstance(r, int) and not isinstance(r, bool) for r in reqs):
            raise NclueError(f"{where(file, line)}: 'requirements' must be a list of one-based integers")
        bad = [r for r in reqs if not 1 <= r <= task.m]
        if bad:
            raise NclueError(
                f"{where(file, line)}: requirement number(s) {bad} outside 1..{task.m} for task {task_id!r}"
            )
        key = (task_id, doc_id, judge)
        if key in seen:
            raise NclueError(f"{where(file, line)}: judge {judge!r} labels ({task_id}, {doc_id}) twice")
        seen.add(key)
        rows.append(JudgmentRow(task_id, doc_id, judge, float(grade), tuple(sorted(set(reqs)))))
    if not rows:
        raise NclueError(f"{file}: no judgments")
    return rows


def build_labels(
    rows: list[JudgmentRow], tasks: list[Task], on_missing: MissingPolicy = "error"
) -> dict[str, TaskLabels]:
    """Aggregate judgment rows into per-task mean grades and agreed requirement masks.

    The judges are every judge appearing in ``rows``. A (pool document, judge) pair without
    a row is an error under ``on_missing="error"``; under ``"zero"`` it counts as grade 0
    with no requirements (so nothing on that document is agreed) and is counted in
    :attr:`TaskLabels.missing`.
    """
    judges = sorted({r.judge for r in rows})
    index = {(r.task_id, r.doc_id, r.judge): r for r in rows}
    labels: dict[str, TaskLabels] = {}
    for task in tasks:
        n, m, J = len(task.pool), task.m, len(judges)
        grades = np.zeros((n, J), dtype=np.float64)
        marks = np.zeros((n, J, m), dtype=bool)
        missing = 0
        for i, doc_id in enumerate(task.pool):
            for j, judge in enumerate(judges):
                row = index.get((task.task_id, doc_id, judge))
                if row is None:
                    if on_missing == "error":
                        raise NclueError(
                            f"judge {judge!r} has no judgment for task {task.task_id!r}, document {doc_id!r}; "
                            "add the row, or pass --on-missing zero to count it as grade 0 with no requirements"
                        )
                    missing += 1
                    continue
                grades[i, j] = row.grade
                marks[i, j, [r - 1 for r in row.requirements]] = True
        labels[task.task_id] = TaskLabels(grades.mean(axis=1), marks.all(axis=1), missing)
    return labels


def load_judgments(path: str | Path, tasks: list[Task], on_missing: MissingPolicy = "error") -> dict[str, TaskLabels]:
    """Read a judgments file and aggregate it (see :func:`build_labels`)."""
    return build_labels(load_judgment_rows(path, tasks), tasks, on_missing)


def split_names(tasks: list[Task]) -> list[str]:
    """``"all"`` followed by every split tag in first-seen order."""
    names = [ALL_SPLIT]
    for task in tasks:
        for tag in task.splits:
            if tag not in names:
                names.append(tag)
    return names
