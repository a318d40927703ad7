"""Run files get shell-safe names and carry the system name (issue 24, item 7)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from nclue.runfile import file_stem, run_name, run_path
from nclue.types import RankedDoc, Run

NAMES = [
    "bm25.and",
    "bm25.and@paraphrase",
    "bm25.decompose(distinct)",
    "bm25.decompose(distinct)@raw",
    "rrf(bm25.and, dense.joint(ptop3))",
    "rrf(bm25.and, dense.joint(max))",
    "rerank(bm25.joint, minilm-cross, pool=100)",
    "dense:e5.joint(ptop3)",
    "struct.cover",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_stem_needs_no_quoting_in_a_shell(name: str) -> None:
    stem = file_stem(name)
    assert shlex.quote(stem) == stem  # the standard library's own test of "safe as one shell word"
    assert not stem.startswith(("-", "."))
    assert re.fullmatch(r"[A-Za-z0-9._+@-]+", stem)


def test_safe_names_keep_their_spelling_and_others_are_distinct() -> None:
    assert file_stem("bm25.and") == "bm25.and" and file_stem("bm25.and@paraphrase") == "bm25.and@paraphrase"
    stems = [file_stem(n) for n in NAMES]
    assert len(set(stems)) == len(stems)
    # two names that differ only in punctuation the slug drops still get two files
    assert file_stem("a(b)") != file_stem("a_b") and file_stem("x(y, z)") != file_stem("x(y,z)(")


def _run(name: str, page_aware: bool) -> Run:
    docs = [RankedDoc("doc-a", 2.0, ((3, 1.0),), {"c": (3,)}), RankedDoc("doc-b", 1.0, ((1, 0.5),), {})]
    return Run(name, {"q1": docs, "q2": docs[:1]}, page_aware)


@pytest.mark.parametrize("name", NAMES)
def test_both_files_give_back_the_system_name(name: str, tmp_path: Path) -> None:
    trec, jsonl = _run(name, page_aware=True).write(tmp_path)
    assert trec == run_path(tmp_path, name, ".trec") and jsonl == run_path(tmp_path, name)
    assert Run.read(jsonl).name == name and run_name(jsonl) == name
    assert Run.read(trec).name == name  # the TREC tag, spaces restored
    assert trec.read_text().split("\n")[0].split()[5] == name.replace(" ", "")


def test_a_users_trec_file_keeps_its_stem_as_its_name(tmp_path: Path) -> None:
    path = tmp_path / "my_run.trec"
    path.write_text("q1 Q0 doc-a 1 2.0 BM25\n")
    assert Run.read(path).name == "my_run"


def test_a_jsonl_file_with_two_run_names_is_refused(tmp_path: Path) -> None:
    from nclue.errors import NclueError

    path = tmp_path / "mixed.jsonl"
    path.write_text(
        '{"qid": "q1", "run": "a", "docs": [{"doc_id": "d", "score": 1}]}\n'
        '{"qid": "q2", "run": "b", "docs": [{"doc_id": "d", "score": 1}]}\n'
    )
    with pytest.raises(NclueError, match=r"mixed.jsonl:2: run name 'b' differs from 'a' on line 1"):
        Run.read(path)


def test_an_unquoted_shell_line_reads_the_file(tmp_path: Path) -> None:
    """The reviewer's complaint, literally: ``wc -l runs/<file>`` typed without quotes."""
    name = "rrf(bm25.and, dense.joint(ptop3))"
    _, jsonl = _run(name, page_aware=False).write(tmp_path)
    done = subprocess.run(f"cd {tmp_path} && wc -l {jsonl.name}", shell=True, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.split()[0] == "2", done.stderr
