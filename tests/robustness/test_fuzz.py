"""Fuzzing the readers: random bytes and random mutations of valid run and qrels files give a
result or an :class:`NclueError` — never another exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nclue.errors import NclueError
from nclue.release import Release
from nclue.types import Run

QUERIES = [
    {"qid": "q1", "conditions": ["alpha", "beta"]},
    {"qid": "q2", "conditions": ["alpha", "gamma", "delta"]},
]
VALID = {
    "run.jsonl": "".join(
        json.dumps(r) + "\n"
        for r in [
            {
                "qid": "q1",
                "docs": [
                    {"doc_id": "d1", "score": 2.5, "pages": [[3, 1.0], [7, 0.5]], "evidence": {"alpha": [3]}},
                    {"doc_id": "d2", "score": 1.0},
                ],
            },
            {"qid": "q2", "docs": [{"doc_id": "d3", "score": 0.25}]},
        ]
    ),
    "run.trec": "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 0.25 r\n",
    "qrels.jsonl": "".join(
        json.dumps(r) + "\n"
        for r in [
            {"qid": "q1", "doc_id": "d1", "grade": 2, "label": "gold", "pages": {"alpha": [3], "beta": [9]}},
            {"qid": "q1", "doc_id": "d2", "grade": 1, "label": "partial", "pages": {"beta": [2]}},
            {"qid": "q2", "doc_id": "d3", "grade": 3},
        ]
    ),
    "test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td3\t1\n",
    "qrels.txt": "q1 0 d1 2\nq2 0 d3 3\n",
}
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def read(name: str, data: bytes) -> None:
    """Parse ``data`` as the file ``name``; anything but NclueError propagates (and fails the test)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / name
        path.write_bytes(data)
        try:
            if name.startswith("run"):
                Run.read(path)
            else:
                (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
                Release.open(root, qrels=path)
        except NclueError:
            pass


def mutate(data: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    """Apply (kind, position, byte) edits: 0 replace, 1 insert, 2 delete."""
    out = bytearray(data)
    for kind, pos, byte in edits:
        i = pos % (len(out) + 1)
        if kind == 0 and out:
            out[i % len(out)] = byte
        elif kind == 1:
            out.insert(i, byte)
        elif out:
            del out[i % len(out)]
    return bytes(out)


EDITS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=8)


@FUZZ
@given(name=st.sampled_from(sorted(VALID)), data=st.binary(max_size=600))
def test_random_bytes(name: str, data: bytes) -> None:
    read(name, data)


@FUZZ
@given(name=st.sampled_from(sorted(VALID)), edits=EDITS)
def test_random_mutations_of_valid_files(name: str, edits: list[tuple[int, int, int]]) -> None:
    read(name, mutate(VALID[name].encode(), edits))


@FUZZ
@given(
    name=st.sampled_from(["run.jsonl", "qrels.jsonl"]),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=10,
    ),
    field=st.sampled_from(["qid", "docs", "doc_id", "score", "pages", "evidence", "grade", "label"]),
)
def test_wrong_json_types_in_every_field(name: str, value: object, field: str) -> None:
    rows = [json.loads(line) for line in VALID[name].splitlines()]
    target = (
        rows[0]["docs"][0] if name == "run.jsonl" and field in ("doc_id", "score", "pages", "evidence") else rows[0]
    )
    target[field] = value
    read(name, "".join(json.dumps(r, allow_nan=True) + "\n" for r in rows).encode())


def test_the_valid_files_read() -> None:
    """The seeds of the fuzzing are themselves valid (so mutations start from real input)."""
    for name, text in VALID.items():
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / name
            path.write_text(text)
            if name.startswith("run"):
                assert Run.read(path).rankings["q1"][0].doc_id == "d1"
            else:
                (Path(tmp) / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
                assert Release.open(tmp, qrels=path).judgments[0].doc_id == "d1"
