"""A byte-order mark at the start of a file does not cost its first record (issue 28, cause 4)."""

from __future__ import annotations

import codecs
from pathlib import Path

import nclue
from nclue.io import iter_jsonl, iter_text_lines


def test_a_bom_is_dropped_from_the_first_line_only(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(codecs.BOM_UTF8 + b'{"qid": "q1"}\n{"qid": "\xef\xbb\xbfq2"}\n')
    assert [obj["qid"] for _, obj in iter_jsonl(path)] == ["q1", "\ufeffq2"]  # a BOM inside the file is data
    assert next(iter_text_lines(path))[1].startswith('{"qid"')


def test_a_run_saved_with_a_bom_scores_like_the_same_run_without(release: Path, run_file: Path, tmp_path: Path) -> None:
    trec = run_file.with_suffix(".trec")
    with_bom = tmp_path / "with-bom.trec"
    with_bom.write_bytes(codecs.BOM_UTF8 + trec.read_bytes())
    jsonl_bom = tmp_path / "with-bom-json.jsonl"
    jsonl_bom.write_bytes(codecs.BOM_UTF8 + run_file.read_bytes())
    card = nclue.evaluate(release, [trec, with_bom], ci="none")
    plain = card[nclue.load_run(trec).name]
    from_json = nclue.evaluate(release, [jsonl_bom], ci="none")
    for got in (card["with-bom"], next(iter(from_json.runs.values()))):
        assert got.n_clue_score == plain.n_clue_score and got.gold_hit == plain.gold_hit
    assert not card.problems and not from_json.problems
