"""The matrix spec and runner: parsing errors, skip-if-unchanged, rerun-if-changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.matrix.runner import MANIFEST, run_matrix
from nclue.matrix.spec import load_matrix
from nclue.runfile import run_path


def test_default_matrix_covers_every_block() -> None:
    spec = load_matrix()
    blocks = {r.block for r in spec.runs}
    assert {"standalone", "decomposition", "fusion", "reranking", "baseline"} <= blocks
    assert len({r.system for r in spec.runs}) >= 12
    assert {r.form for r in spec.runs} == {"raw", "clean_v2", "natural"}
    assert all(r.category == "QF" for r in spec.runs if r.form != spec.form)
    for contrast in spec.contrasts:
        assert contrast.base in spec.run_names and set(contrast.variants) <= set(spec.run_names)


def test_default_matrix_names_parse_and_round_trip() -> None:
    from nclue.systems.names import canonical

    for run in load_matrix().runs:
        assert canonical(run.system) == run.system


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('form = "fancy"\n', "form 'fancy'"),
        ('[[run]]\nsystem = "bm25.joint"\nblock = "magic"\n', "block 'magic'"),
        ('[[run]]\nsystem = "bm25.joint"\n[[run]]\nsystem = "bm25.joint"\n', "listed twice"),
        (
            '[[run]]\nsystem = "bm25.joint"\n[[contrast]]\nname = "x"\nbase = "bm25.joint"\nvariants = ["bm25.and"]\n',
            "bm25.and not among the matrix runs",
        ),
        ("depth = [\n", "not valid TOML"),
        ("[[run]]\nsystem = 42\n", "[[run]] #1: 'system' must be a string, got 42 (int)"),
        ('[[run]]\nsystem = "rrf(bm25.joint"\n', "[[run]] #1: system name 'rrf(bm25.joint'"),
        ('[[run]]\nsystem = "bm25.joint"\nforms = "raw"\n', "'forms' must be a list of strings, e.g. forms = ['raw']"),
        ('depth = "100"\n', "'depth' must be an integer, got '100' (str)"),
        ("k = true\n", "'k' must be an integer, got True (bool)"),
        ("run = 5\n", "'run' must be an array of tables ([[run]] sections)"),
        (
            '[[run]]\nsystem = "bm25.joint"\n[[contrast]]\nname = "x"\nbase = "bm25.joint"\nvariants = "bm25.joint"\n',
            "'variants' must be a list of strings",
        ),
    ],
)
def test_bad_specs_name_file_and_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(NclueError) as err:
        load_matrix(path)
    assert str(path) in str(err.value) and message in str(err.value)


@pytest.mark.slow
def test_unchanged_runs_are_skipped_and_changed_ones_rerun(
    small_bench: Path, indexed_collection: Path, mini_matrix: Path, tmp_path: Path
) -> None:
    spec = load_matrix(mini_matrix)
    out = tmp_path / "runs"
    events: list[tuple[str, int, int | None]] = []
    first = run_matrix(spec, small_bench, indexed_collection, out, progress=lambda *event: events.append(event))
    assert sorted(first.ran) == sorted(spec.run_names) and not first.skipped
    assert events[0] == ("runs", 0, len(spec.run_names)) and sum(n for _, n, _ in events) == len(spec.run_names)
    manifest = json.loads((out / MANIFEST).read_text())
    for name in spec.run_names:
        entry = manifest["runs"][name]
        assert entry["spec_hash"] and entry["versions"]["nclue"] and entry["seconds"] >= 0
        assert run_path(out, name).is_file() and run_path(out, name, ".trec").is_file()

    events.clear()
    second = run_matrix(spec, small_bench, indexed_collection, out, progress=lambda *event: events.append(event))
    assert second.ran == [] and sorted(second.skipped) == sorted(spec.run_names)
    assert events == [("runs", 0, 0)]

    changed = mini_matrix.read_text().replace('system = "bm25.joint"', 'system = "bm25.page_max"')
    mini_matrix.write_text(changed)
    third = run_matrix(load_matrix(mini_matrix), small_bench, indexed_collection, out)
    assert third.ran == ["bm25.page_max"]
    assert "bm25.joint" not in json.loads((out / MANIFEST).read_text())["runs"]

    (out / "bm25.and.jsonl").write_text("{}\n")
    fourth = run_matrix(load_matrix(mini_matrix), small_bench, indexed_collection, out)
    assert fourth.ran == ["bm25.and"]

    bench_copy = tmp_path / "bench"
    shutil.copytree(small_bench, bench_copy)
    queries = (bench_copy / "queries.jsonl").read_text().splitlines()
    (bench_copy / "queries.jsonl").write_text("\n".join(queries[:-1]) + "\n")
    fifth = run_matrix(load_matrix(mini_matrix), bench_copy, indexed_collection, out)
    assert sorted(fifth.ran) == sorted(load_matrix(mini_matrix).run_names)

    qids = [json.loads(line)["qid"] for line in queries[:-1]]
    for text, expected in (("a paraphrase", "ran"), ("another paraphrase", "ran"), ("another paraphrase", "skipped")):
        rows = "".join(json.dumps({"qid": q, "text": f"{text} {i}"}) + "\n" for i, q in enumerate(qids))
        (bench_copy / "paraphrases.jsonl").write_text(rows)  # a filled, then refilled paraphrase cache
        result = run_matrix(load_matrix(mini_matrix), bench_copy, indexed_collection, out)
        assert sorted(getattr(result, expected)) == sorted(load_matrix(mini_matrix).run_names), text


PARALLEL_MATRIX = """
depth = 100
k = 10
form = "clean_v2"

[[run]]
system = "bm25.decompose(distinct)"
forms = ["raw", "clean_v2"]

[[run]]
system = "dense.joint(ptop3)"
forms = ["natural", "clean_v2"]

[[run]]
system = "dense.decompose(min)"

[[run]]
system = "maxsim.joint(ptop3)"

[[run]]
system = "rrf(bm25.and, dense.joint(ptop3))"
block = "fusion"
"""


@pytest.mark.slow
def test_parallel_runs_write_the_same_files_as_a_serial_run(
    small_bench: Path, indexed_collection: Path, tmp_path: Path
) -> None:
    """Two worker processes against one in-process worker: byte-identical run files (lexical, dense, MaxSim, RRF)."""
    from nclue.index.dense import build_dense_index

    coll = Path(shutil.copytree(indexed_collection, tmp_path / "coll"))
    build_dense_index(coll, backend="onnx", max_chunks_per_page=1, tokens=True)
    path = tmp_path / "parallel.toml"
    path.write_text(PARALLEL_MATRIX, encoding="utf-8")
    spec = load_matrix(path)
    serial = run_matrix(spec, small_bench, coll, tmp_path / "serial", workers=1)
    parallel = run_matrix(spec, small_bench, coll, tmp_path / "parallel", workers=2)
    assert sorted(serial.ran) == sorted(parallel.ran) == sorted(spec.run_names) and not serial.failed
    files = sorted(p.name for p in (tmp_path / "serial").glob("*.*") if p.suffix in (".trec", ".jsonl"))
    assert len(files) == 2 * len(spec.run_names)
    for name in files:
        assert (tmp_path / "serial" / name).read_bytes() == (tmp_path / "parallel" / name).read_bytes(), name
    entries = json.loads((tmp_path / "parallel" / MANIFEST).read_text())["runs"]
    assert {n: e["files"] for n, e in entries.items()} == {
        n: e["files"] for n, e in json.loads((tmp_path / "serial" / MANIFEST).read_text())["runs"].items()
    }
    again = run_matrix(spec, small_bench, coll, tmp_path / "parallel", workers=2)
    assert again.ran == [] and sorted(again.skipped) == sorted(spec.run_names)
    with pytest.raises(NclueError, match="workers must be at least 1"):
        run_matrix(spec, small_bench, coll, tmp_path / "none", workers=0)
