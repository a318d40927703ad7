"""End to end: ``nclue build`` on the real small collection, determinism, verify, controls, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nclue.bench.construction_params import BuildOptions
from nclue.bench.pipeline import build
from nclue.bench.verify import verify
from nclue.errors import NclueError
from nclue.query import render_forms
from tests.fixtures.small_collection import small_build_options

SMALL = small_build_options(40)
SMALL_FLAGS = ["--min-df", "2", "--max-df-frac", "0.34", "--queries", "40"]


@pytest.fixture(scope="module")
def small_bench(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "bench"
    build(small_collection, out, SMALL)
    return out


@pytest.mark.slow
def test_release_is_valid_and_deterministic(small_collection: Path, small_bench: Path, tmp_path: Path) -> None:
    problems, validation, scores = verify(small_bench)
    assert problems == []
    assert validation.counts["queries"] > 0
    assert validation.counts["qrel_rows"] == validation.counts["union_total"]
    assert validation.counts["single_page_solvable_golds"] == 0
    assert set(scores) == {
        "oracle.surface_and",
        "oracle.canonical_and",
        "oracle.single_page_and",
        "oracle.surface_form_count",
        "baseline.random",
        "baseline.frequency_prior",
    }
    for name in (
        "corpus.jsonl",
        "queries.jsonl",
        "qrels.jsonl",
        "qrels/test.tsv",
        "inventory.jsonl",
        "MANIFEST.json",
        "README.md",
    ):
        assert (small_bench / name).is_file()
    assert (small_bench / "qrels" / "test.tsv").read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"
    query = json.loads((small_bench / "queries.jsonl").read_text().splitlines()[0])
    assert query["forms"] == render_forms(query["conditions"])
    assert "Ten example queries" in (small_bench / "README.md").read_text()
    again = tmp_path / "again"
    build(small_collection, again, SMALL)
    assert (again / "SHA256SUMS").read_text() == (small_bench / "SHA256SUMS").read_text()


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_controls_match_an_independent_derivation_and_the_real_pages(small_collection: Path, small_bench: Path) -> None:
    """The oracle runs against facts derived here from inventory.jsonl, qrels.jsonl and the page text itself."""
    from nclue.corpus.store import PageStore

    queries = {q["qid"]: q for q in _rows(small_bench / "queries.jsonl")}
    pages: dict[tuple[str, str], set[int]] = {}
    for row in _rows(small_bench / "inventory.jsonl"):
        pages[(row["condition"], row["doc_id"])] = set(row["pages"])
    golds: dict[str, set[str]] = {q: set() for q in queries}
    for row in _rows(small_bench / "qrels.jsonl"):
        if row["label"] == "gold":
            golds[row["qid"]].add(row["doc_id"])
    docs = {d for _, d in pages}
    store = PageStore.open(small_collection)
    surface = {r["qid"]: r["docs"] for r in _rows(small_bench / "controls" / "oracle.surface_and.jsonl")}
    single = {r["qid"]: r["docs"] for r in _rows(small_bench / "controls" / "oracle.single_page_and.jsonl")}
    counted = {r["qid"]: r["docs"] for r in _rows(small_bench / "controls" / "oracle.surface_form_count.jsonl")}
    checked = 0
    for qid, q in queries.items():
        conds = q["conditions"]
        every = {d for d in docs if all(pages.get((c, d)) for c in conds)}
        one_page = {d for d in every if set.intersection(*(pages[(c, d)] for c in conds))}
        # surface_and returns exactly the documents establishing every condition, by doc_id, and they are the golds
        assert [e["doc_id"] for e in surface[qid]] == sorted(every) and every == golds[qid], qid
        assert [e["doc_id"] for e in single[qid]] == sorted(one_page) == [], qid
        # surface_form_count: every document with a clue, golds (from the qrels) first, then by clue count
        grade = {d: sum(1 for c in conds if pages.get((c, d))) for d in docs}
        key = {d: grade[d] + (0.5 if d in golds[qid] else 0.0) for d in docs if grade[d]}
        expected = sorted(key, key=lambda d: (-key[d], d))[:100]
        assert [e["doc_id"] for e in counted[qid]] == expected, qid
        assert [e["score"] for e in counted[qid]] == [key[d] for d in expected], qid
        for entry in surface[qid][:2]:
            for c in conds:
                page = entry["evidence"][c][0]
                text = " ".join(store.page_text(entry["doc_id"], page).lower().split())
                assert any(" ".join(a.lower().split()) in text for a in q["aliases"][c]), (qid, c, page)
                checked += 1
    assert checked > 20


@pytest.mark.slow
def test_verify_catches_tampering(small_bench: Path, tmp_path: Path, cli) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(small_bench, copy)
    lines = (copy / "qrels.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["label"] == "gold")
    row = json.loads(lines[at])
    row["label"] = "partial"  # a well-formed row (grade n may be partial) that the inventory contradicts
    lines[at] = json.dumps(row, sort_keys=True)
    (copy / "qrels.jsonl").write_text("\n".join(lines) + "\n")
    problems, _, _ = verify(copy)
    assert any("SHA-256 mismatch" in p for p in problems)
    assert any("re-derived" in p for p in problems)
    result = cli("bench", "verify", copy)
    assert result.exit_code == 1 and "problem(s)" in result.output


@pytest.mark.slow
def test_cli_build_and_verify(small_collection: Path, tmp_path: Path, cli) -> None:
    out = tmp_path / "cli-bench"
    result = cli("build", small_collection, "-o", out, *SMALL_FLAGS, "--seed", "5")
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["seed"] == 5 and manifest["parameters"]["compose"]["n_queries"] == 40
    result = cli("bench", "verify", out)
    assert result.exit_code == 0 and "ok" in result.output


@pytest.mark.slow
def test_cli_build_says_when_it_built_fewer_queries_than_asked(small_collection: Path, tmp_path: Path, cli) -> None:
    """The 12-document fixture supports far fewer than 400 queries: the summary must say so, not
    leave a user to count the lines of queries.jsonl (issue 28)."""
    out = tmp_path / "few"
    flags = [f if f != "40" else "400" for f in SMALL_FLAGS]
    result = cli("build", small_collection, "-o", out, *flags)
    assert result.exit_code == 0, result.output
    built = sum(1 for line in (out / "queries.jsonl").read_text().splitlines() if line.strip())
    assert 0 < built < 400
    assert f"asked for 400 queries; this collection gave {built} (" in " ".join(result.output.split())


def test_bad_input(tmp_path: Path, make_collection, cli) -> None:
    missing = cli("build", tmp_path / "nope", "-o", tmp_path / "b")
    assert missing.exit_code == 2 and "nclue ingest" in missing.output
    empty = make_collection({})
    result = cli("build", empty, "-o", tmp_path / "b")
    assert result.exit_code == 2 and "no pages" in result.output
    tiny = make_collection({"s/one": ["Only a short page about nothing in particular."], "s/two": ["Another page."]})
    result = cli("build", tiny, "-o", tmp_path / "b")
    assert result.exit_code == 2
    assert "2 documents" in result.output and "--min-df" in result.output
    with pytest.raises(NclueError, match="unknown judge"):
        build(tiny, tmp_path / "b", BuildOptions(judge="oracle"))
    with pytest.raises(NclueError, match="not found"):
        verify(tmp_path / "absent")


@pytest.mark.slow
def test_single_page_partial_keeps_j061_candidates_and_reports_them(
    small_collection: Path, tmp_path: Path, cli
) -> None:
    """--single-page partial: candidates with a one-page document survive, that document is a partial."""
    counts = {}
    for mode in ("drop", "partial"):
        out = tmp_path / mode
        result = cli("build", small_collection, "-o", out, *SMALL_FLAGS, "--queries", "400", "--single-page", mode)
        assert result.exit_code == 0, result.output
        manifest = json.loads((out / "MANIFEST.json").read_text())
        assert manifest["parameters"]["compose"]["single_page"] == mode
        counts[mode] = manifest["counts"]
        problems, _, scores = verify(out)
        assert problems == [], problems
        assert scores["oracle.surface_form_count"]["nclue@10"] == 100.0
        # independent re-derivation from the release files: one-page partial rows
        queries = {q["qid"]: q["conditions"] for q in _rows(out / "queries.jsonl")}
        pages = {(r["condition"], r["doc_id"]): set(r["pages"]) for r in _rows(out / "inventory.jsonl")}
        one_page = [
            r for r in _rows(out / "qrels.jsonl")
            if all(pages.get((c, r["doc_id"])) for c in queries[r["qid"]])
            and set.intersection(*(pages[(c, r["doc_id"])] for c in queries[r["qid"]]))
        ]  # fmt: skip
        assert all(r["label"] == "partial" for r in one_page)
        assert counts[mode]["single_page_partials"] == len(one_page)
        assert counts[mode]["queries_with_single_page_partial"] == len({r["qid"] for r in one_page})
    assert counts["drop"]["single_page_partials"] == 0
    assert counts["partial"]["single_page_partials"] > 0
    assert counts["partial"]["candidates"] >= counts["drop"]["candidates"]


@pytest.mark.slow
def test_document_level_labels_have_no_pages_and_gold_is_every_condition(
    small_collection: Path, tmp_path: Path, cli
) -> None:
    """--labels document (SourceShift's labels): gold iff g = n anywhere in the document, no page rule, no pages."""
    out = tmp_path / "doc"
    result = cli("build", small_collection, "-o", out, *SMALL_FLAGS, "--queries", "400", "--labels", "document")
    assert result.exit_code == 0, result.output
    problems, _, scores = verify(out)
    assert problems == [], problems
    queries = {q["qid"]: q["conditions"] for q in _rows(out / "queries.jsonl")}
    pages = {(r["condition"], r["doc_id"]): set(r["pages"]) for r in _rows(out / "inventory.jsonl")}
    rows = _rows(out / "qrels.jsonl")
    assert rows and all("pages" not in r for r in rows)
    for r in rows:
        conds = queries[r["qid"]]
        held = [pages.get((c, r["doc_id"]), set()) for c in conds]
        assert r["grade"] == sum(1 for h in held if h)
        assert r["label"] == ("gold" if all(held) else "partial")
    assert scores["oracle.surface_and"]["nclue@10"] == 100.0
    copy = tmp_path / "tampered"
    shutil.copytree(out, copy)
    lines = (copy / "qrels.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["label"] == "gold")
    row = json.loads(lines[at])
    row["label"] = "partial"
    lines[at] = json.dumps(row, sort_keys=True)
    (copy / "qrels.jsonl").write_text("\n".join(lines) + "\n")
    assert any("re-derived gold (document level)" in p for p in verify(copy)[0])


def test_document_labels_ignore_the_page_rules() -> None:
    """Hand-made case: d0 holds both conditions on page 1 only (page rule: candidate dropped), d1 on
    pages 1 and 2 (gold either way), d2 one condition (partial), d3 both on one page (page rule: no
    assignment, so partial-or-drop); at document level d0, d1 and d3 are gold, d2 partial."""
    import numpy as np

    from nclue.bench.compose import evaluate
    from nclue.bench.inventory import Condition, Inventory

    inv = Inventory(
        doc_ids=["d0", "d1", "d2", "d3"],
        n_pages=np.full(4, 5),
        conditions=[Condition(name=f"c{i}", aliases=(f"c{i}",), key=(f"c{i}",), heading_df=1) for i in range(2)],
        pages=[{0: (1,), 1: (1,), 2: (3,), 3: (2,)}, {0: (1,), 1: (2,), 3: (2,)}],
    )
    assert evaluate(inv, (0, 1), max_golds=10) is None  # d0 (and d3) are single-page solvable
    item = evaluate(inv, (0, 1), max_golds=10, label_unit="document")
    assert item is not None and item.labels == {0: "gold", 1: "gold", 2: "partial", 3: "gold"}
    assert item.golds == (0, 1, 3) and item.assignments == {}
    assert evaluate(inv, (0, 1), max_golds=2, label_unit="document") is None  # three golds > max_golds
