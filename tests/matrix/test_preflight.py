"""A matrix, a run or a freeze checks every index its systems read before any work (issue 24, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.systems.preflight import backbone_tokens, index_problems


def test_backbone_tokens_walk_fusion_and_reranking() -> None:
    names = [
        "bm25.and",
        "rrf(bm25.and, dense:onnx.joint(ptop3))",
        "rerank(bm25.joint, minilm-cross, pool=100)@natural",
        "rrf(maxsim.joint(ptop3), rrf(struct.cover, bm25.cover))",
    ]
    assert backbone_tokens(names) == ["bm25", "dense:onnx", "maxsim", "struct"]


def test_every_missing_index_is_named_at_once(small_collection: Path, tmp_path: Path) -> None:
    """The small real collection's pages alone: each backbone's index is reported, with its build command."""
    import shutil

    pages_only = tmp_path / "coll"  # other tests may have indexed the shared fixture: copy the page store only
    pages_only.mkdir()
    for name in ("collection.json", "docs.parquet", "pages.parquet"):
        shutil.copyfile(small_collection / name, pages_only / name)
    problems = index_problems(pages_only, ["bm25.and", "dense.joint(ptop3)", "maxsim.joint", "struct.cover"])
    text = "\n".join(problems)
    assert "no lexical index; build it with `nclue index" in text
    assert "no dense vectors; build them with `nclue index" in text
    assert "no document structure" in text
    assert len(problems) == len(set(problems)) == 3  # maxsim's and struct's dense problem is said once


def test_a_matrix_with_a_missing_index_writes_no_run(
    small_bench: Path, indexed_collection: Path, tmp_path: Path
) -> None:
    from nclue.matrix.runner import run_matrix
    from nclue.matrix.spec import load_matrix

    spec = tmp_path / "m.toml"
    spec.write_text(
        'depth = 20\nk = 10\nform = "clean_v2"\n\n[[run]]\nsystem = "bm25.and"\n\n'
        '[[run]]\nsystem = "dense.joint(ptop3)"\n\n[[run]]\nsystem = "maxsim.joint(ptop3)"\n'
    )
    out = tmp_path / "runs"
    with pytest.raises(NclueError, match=r"(?s)needs indexes the collection does not have; nothing was run.*no dense"):
        run_matrix(load_matrix(spec), small_bench, indexed_collection, out)
    assert not list(out.glob("*.jsonl")) and not list(out.glob("*.trec"))


def test_nclue_run_lists_every_missing_index_before_any_run(
    small_bench: Path, indexed_collection: Path, tmp_path: Path, cli
) -> None:  # noqa: ANN001
    out = tmp_path / "runs"
    done = cli("run", small_bench, indexed_collection, "-s", "bm25.and", "-s", "dense.joint(ptop3)", "-o", out)
    assert done.exit_code != 0 and "nothing was run" in done.output and "no dense vectors" in done.output
    assert not out.exists() or not list(out.glob("*.jsonl"))
