"""Hostile inputs to the readers and the CLI: every one a single line naming the file, record and fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nclue.errors import NclueError
from tests.robustness.robust_helpers import assert_clean


def test_a_run_file_of_random_bytes(cli, release: Path, tmp_path: Path) -> None:
    bad = tmp_path / "noise.trec"
    bad.write_bytes(np.random.default_rng(7).integers(0, 256, 4000, dtype=np.uint8).tobytes())
    assert_clean(cli("evaluate", release, bad), 2, str(bad), "UTF-8")


def test_a_latin1_doc_id_in_a_trec_run(cli, release: Path, tmp_path: Path) -> None:
    bad = tmp_path / "latin.trec"
    bad.write_bytes(b"nclue_0000 Q0 good 1 2.0 r\n" + "nclue_0000 Q0 caf\xe9 2 1.0 r\n".encode("latin-1"))
    assert_clean(cli("evaluate", release, bad), 2, f"{bad}:2", "not UTF-8", "0xe9")


def test_a_page_number_beyond_int32(cli, release: Path, tmp_path: Path) -> None:
    bad = tmp_path / "big.jsonl"
    bad.write_text(
        json.dumps({"qid": "nclue_0000", "docs": [{"doc_id": "d", "score": 1.0, "pages": [[2**31, 1.0]]}]}) + "\n"
    )
    assert_clean(cli("evaluate", release, bad), 2, f"{bad}:1", "[page, score]", "2147483647")
    bad.write_text(
        json.dumps({"qid": "nclue_0000", "docs": [{"doc_id": "d", "score": 1.0, "evidence": {"A": [2**40]}}]}) + "\n"
    )
    assert_clean(cli("evaluate", release, bad), 2, f"{bad}:1", "'evidence'")


def test_empty_qrels_are_refused_not_scored_as_zero(cli, release: Path, run_file: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(release, bench)
    (bench / "qrels.jsonl").write_text("")
    assert_clean(cli("evaluate", bench, run_file), 2, "no judgments", "--qrels")
    empty_tsv = tmp_path / "empty.tsv"
    empty_tsv.write_text("query-id\tcorpus-id\tscore\n")
    assert_clean(cli("evaluate", release, run_file, "--qrels", empty_tsv), 2, "no judgments", str(empty_tsv))


def test_qrels_that_name_unknown_documents_or_lost_their_golds_warn(
    cli, release: Path, run_file: Path, tmp_path: Path
) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(release, bench)
    rows = [json.loads(line) for line in (bench / "qrels.jsonl").read_text().splitlines()]
    first = rows[0]["qid"]
    rows = [r for r in rows if not (r["qid"] == first and r["label"] == "gold")]
    rows[-1]["doc_id"] = "no/such/document"
    (bench / "qrels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = assert_clean(cli("evaluate", bench, run_file, "--ci", "none"), 0, "warning:", "no/such/document", "no gold")
    assert f"'{first}'" in out


def test_square_brackets_survive_in_messages(cli, tmp_path: Path) -> None:
    draft = tmp_path / "[draft]"
    draft.mkdir()
    assert_clean(cli("ingest", draft, tmp_path / "coll"), 2, f"{draft}: no *.pdf files found")


def test_deeply_nested_system_names_are_refused(cli, indexed: Path) -> None:
    name = "rrf(" * 400 + "bm25.and, bm25.or" + ")" * 400
    assert_clean(cli("search", indexed, '"a b"; "c d"', "-s", name), 2, "nested more than 16 deep")


def test_a_huge_bootstrap_is_refused_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    from nclue.stats import bootstrap_ci, crossed_weights, paired_randomization

    monkeypatch.setenv("NCLUE_MEMORY_BUDGET", str(64 << 20))
    values = np.zeros((8, 500))
    with pytest.raises(NclueError, match="fewer replicates"):
        bootstrap_ci(values, None, 10**7)
    with pytest.raises(NclueError, match="fewer draws"):
        paired_randomization(values, None, 10**7)
    import scipy.sparse as sp

    with pytest.raises(NclueError, match="crossed bootstrap"):
        crossed_weights(sp.identity(500, format="csr"), "product", 10**7)
    assert bootstrap_ci(values, None, 1000).shape == (8, 2)
