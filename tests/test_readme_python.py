"""The README's Python section runs as written, against a real (small) collection and benchmark."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.fixtures.small_collection import build_small_release

README = Path(__file__).resolve().parents[1] / "README.md"


def python_section(block: int = 0) -> str:
    """The ``block``-th ```python block of the ``## Python`` section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)[block]


@pytest.fixture(scope="module")
def workdir(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``coll`` (fixture collection + lexical index) and ``bench`` built from it."""
    return build_small_release(small_collection, tmp_path_factory.mktemp("readme"))


def test_readme_python_section_runs(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workdir)
    out = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(python_section(), str(README), "exec"), namespace)  # noqa: S102 - the documented example
    card = namespace["card"]
    printed = out.getvalue()
    assert "| System |" in printed and "bm25.cover" in printed
    # the Run written to disk scores the same as the in-memory one, by a plain reading of the files
    qrels = [json.loads(line) for line in (workdir / "bench" / "qrels.jsonl").read_text().splitlines()]
    gold = {(r["qid"], r["doc_id"]) for r in qrels if r["label"] == "gold"}
    judged = {(r["qid"], r["doc_id"]) for r in qrels}
    rows = [json.loads(line) for line in (workdir / "runs" / "bm25.and.jsonl").read_text().splitlines()]
    wins = 0
    for row in rows:
        top = [d["doc_id"] for d in sorted(row["docs"], key=lambda d: -d["score"])][:10]
        first = next((d for d in top if (row["qid"], d) in judged), None)
        wins += first is not None and (row["qid"], first) in gold
    n_queries = len((workdir / "bench" / "queries.jsonl").read_text().splitlines())
    assert card["bm25.and"].n_clue_score == pytest.approx(100.0 * wins / n_queries)
    assert os.path.isfile(workdir / "runs" / "bm25.and.trec")
    # the same run handed over as a DataFrame scores exactly as the Run object
    mixed = namespace["mixed"]
    assert mixed["run2"].n_clue_score == card["bm25.and"].n_clue_score
    assert mixed.to_pandas().loc["run2", "nDCG@10"] == mixed.measures["run2"]["nDCG@10"]
    # the release's grades handed over as a dict score the run like the release itself
    assert namespace["same"]["bm25.and"].n_clue_score == card["bm25.and"].n_clue_score


@pytest.fixture(scope="module")
def dense_workdir(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``coll``: the fixture collection with lexical and dense (MiniLM) indexes."""
    from nclue.index.dense import build_dense_index
    from nclue.index.lexical import build_lexical_index

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    root = tmp_path_factory.mktemp("readme-coverage")
    shutil.copytree(small_collection, root / "coll")
    build_lexical_index(root / "coll")
    build_dense_index(root / "coll", backend="onnx", max_chunks_per_page=1)
    return root


@pytest.mark.slow
def test_readme_coverage_example_runs_and_cites_pages_that_hold_the_requirement(
    dense_workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nclue.corpus.store import PageStore

    monkeypatch.chdir(dense_workdir)
    out = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(python_section(1), str(README), "exec"), namespace)  # noqa: S102 - the documented example
    sel = namespace["sel"]
    assert [doc.rank for doc in sel.selected] == [1, 2, 3, 4, 5]
    assert "not covered:" in out.getvalue()
    store = PageStore.open(dense_workdir / "coll")
    cited = 0
    for doc in sel.selected:
        for requirement, pages in doc.covers.items():
            stem = requirement.split()[-1].rstrip("s").lower()  # numbering, apparatu, footnote
            for page in pages:
                cited += 1
                assert stem[:6] in store.page_text(doc.doc_id, page).lower(), (doc.doc_id, page, requirement)
    assert cited > 0
    assert set(sel.uncovered) <= {"line numbering", "critical apparatus", "footnotes"}
