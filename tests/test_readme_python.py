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

README = Path(__file__).resolve().parents[1] / "README.md"


def python_section() -> str:
    """The first ```python block after the ``## Python`` heading."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Python\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def workdir(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``coll`` (fixture collection + lexical index) and ``bench`` built from it."""
    from nclue.bench.params import BuildOptions, ComposeParams, MineParams
    from nclue.bench.pipeline import build
    from nclue.index.lexical import build_lexical_index

    root = tmp_path_factory.mktemp("readme")
    shutil.copytree(small_collection, root / "coll")
    build_lexical_index(root / "coll")
    options = BuildOptions(
        mine=MineParams(min_df=2, max_df_frac=0.34, min_heading_df=1), compose=ComposeParams(n_queries=30)
    )
    build(root / "coll", root / "bench", options)
    return root


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
