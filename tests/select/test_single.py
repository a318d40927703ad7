"""``nclue coverage select`` on real PDFs: the answer, its evidence pages, and every bad input
through the real CLI (one ``error:`` line naming the fix)."""

from __future__ import annotations

import json
import re

import pytest

from nclue.select.single import parse_requirements


def test_requirements_from_flags_or_from_the_query():
    assert parse_requirements("anything", ["a b", " c ", "a b"]) == ("a b", "c")
    assert parse_requirements('"line numbers"; "floating environment"') == ("line numbers", "floating environment")
    assert parse_requirements("loops; comments") == ("loops", "comments")


def error_line(result) -> str:  # noqa: ANN001 - click Result
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_no_requirements_is_one_line_naming_the_fix(cli, lexical_only):
    result = cli("coverage", "select", lexical_only, "--query", "pseudocode for loops")
    assert result.exit_code == 2
    assert re.match(r"error: no requirements: give --require .* or write the query as", error_line(result))


def test_unknown_selector_is_one_line_naming_the_choices(cli, lexical_only):
    result = cli("coverage", "select", lexical_only, "-q", "x", "-r", "pseudocode", "--selector", "greedy")
    assert result.exit_code == 2
    line = error_line(result)
    assert line.startswith("error: unknown selector 'greedy'") and "expected, xquad, pm2, mmr, facility" in line


def test_k_larger_than_the_pool_is_one_line_naming_the_fix(cli, lexical_only):
    result = cli("coverage", "select", lexical_only, "-q", "x", "-r", "pseudocode", "-r", "loop", "--k", "5")
    assert result.exit_code == 2
    line = error_line(result)  # three documents in the collection: the pool cannot hold five
    assert "fewer than k=5" in line and "raise --pool-depth" in line and "lower --k" in line


def test_pool_system_that_is_not_indexed_is_one_line_naming_the_build(cli, lexical_only):
    result = cli(
        "coverage", "select", lexical_only, "-q", "x", "-r", "pseudocode", "--k", "2", "--pool", "dense.joint(max)"
    )
    assert result.exit_code == 2
    line = error_line(result)
    assert "no dense vectors" in line and f"nclue index {lexical_only} --dense" in line


@pytest.mark.slow
def test_select_reads_whole_documents_and_cites_pages_that_hold_the_words(cli, indexed):
    from nclue.corpus.store import PageStore

    result = cli("coverage", "select", indexed, "-q", "writing algorithms in LaTeX", "-r", "floating environment",
                 "-r", "pseudocode", "--k", "2", "--pool-depth", "3", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    # functan mentions neither requirement's words: the BM25 pool holds the other two documents
    assert answer["selector"] == "expected" and answer["pool"]["size"] == 2
    assert [s["rank"] for s in answer["selected"]] == [1, 2]
    assert answer["uncovered"] == []
    store = PageStore.open(indexed)
    texts = {
        (store.doc_ids[store.page_doc[i]], int(store.page_number[i])): store.texts[i].lower()
        for i in range(store.n_pages)
    }
    words = {"floating environment": ("floating", "environment"), "pseudocode": ("pseudocode",)}
    cited = 0
    for doc in answer["selected"]:
        assert doc["path"].endswith(".pdf")
        for requirement, pages in doc["covers"].items():
            for page in pages:
                cited += 1
                assert all(w in texts[(doc["doc_id"], page)] for w in words[requirement]), (doc["doc_id"], page)
    assert cited >= 2
    covers = {r for doc in answer["selected"] for r in doc["covers"]}
    assert covers == {"floating environment", "pseudocode"}
    floating = [d for d in answer["selected"] if "floating environment" in d["covers"]]
    assert floating and floating[0]["doc_id"].endswith("algorithms/algorithms")
    assert set(floating[0]["covers"]["floating environment"]) <= {14, 16}


@pytest.mark.slow
def test_table_form_is_a_requirement_by_document_grid(cli, indexed):
    for selector in ("expected", "dense", "mmr", "xquad", "pm2", "facility", "gated", "retriever"):
        result = cli("coverage", "select", indexed, "-q", '"floating environment"; "pseudocode"', "--k", "2",
                     "--pool-depth", "3", "--selector", selector, "--format", "markdown")  # fmt: skip
        assert result.exit_code == 0, (selector, result.output)
        assert "| Requirement | 1. " in result.output and "| floating environment |" in result.output
        assert "| expected requirements covered |" in result.output


@pytest.mark.slow
def test_a_warm_selector_answers_repeated_queries_identically(indexed):
    from nclue.select.single import CoverageSelector

    warm = CoverageSelector(indexed)
    first = warm.select("algorithms", ["pseudocode", "comments"], k=2, pool_depth=3)
    again = warm.select("algorithms", ["pseudocode", "comments"], k=2, pool_depth=3)
    assert first == again and len(first.selected) == 2


@pytest.mark.slow
def test_verdicts_say_covered_in_the_pool_or_not_found(indexed):
    """Per requirement: covered by the selection, covered only by an unselected pool document (which
    is named with its pages), or covered by no pool document. "chess openings" occurs in none of the
    four manuals (a hand fact about the subset), so it must be "not found in the pool"."""
    from nclue.select.single import COVERED, IN_POOL, NOT_FOUND, CoverageSelector

    selector = CoverageSelector(indexed)
    reqs = ["floating environment", "pseudocode", "chess openings"]
    answer = selector.select("algorithms", reqs, k=1, pool_depth=3)
    assert answer.verdicts["chess openings"] == NOT_FOUND
    assert all(best["doc_id"] in selector.paths for best in answer.pool_best.values())
    (chosen,) = answer.selected
    for req in reqs[:2]:
        if chosen.probability[req] >= 0.5:
            assert answer.verdicts[req] == COVERED and chosen.covers[req]
        else:
            assert answer.verdicts[req] in (IN_POOL, NOT_FOUND)
            if answer.verdicts[req] == IN_POOL:
                best = answer.pool_best[req]
                assert best["doc_id"] != chosen.doc_id and best["probability"] >= 0.5 and best["pages"]
    assert set(answer.uncovered) == {r for r in reqs if answer.verdicts[r] != COVERED}
    assert "not found in the pool" in answer.render("markdown")


@pytest.mark.slow
def test_a_failed_open_waits_for_the_encoder_thread(indexed, tmp_path):
    """The query encoder loads in a thread while the collection opens. When opening fails (here:
    a damaged calibration file), the error must come only once that thread is done: a process
    that exits while the thread is inside ONNX Runtime aborts ("terminate called ...") instead of
    printing one error line."""
    import threading

    from nclue.errors import NclueError
    from nclue.index.duplicates import build_duplicates
    from nclue.select.single import CoverageSelector

    build_duplicates(indexed)  # opening is then fast: the failure comes while the encoder still loads
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(NclueError, match="not a complete calibration file"):
        CoverageSelector(indexed, tmp_path / "bad.json")
    assert not [t for t in threading.enumerate() if t.name == "nclue-encoder"]


@pytest.mark.parametrize(
    ("argument", "value", "said"),
    [
        ("query", None, "query must be a string, got None"),
        ("query", 42, "query must be a string, got int 42"),
        ("requirements", 42, "requirements must be a list of strings, got int 42"),
        ("requirements", "pseudocode", "requirements must be a list of strings, got str 'pseudocode'"),
        ("requirements", [1, 2], "requirements[0] must be a string, got int 1"),
        ("k", "5", "k must be an integer of at least 1, got str '5'"),
        ("k", 2.5, "k must be an integer of at least 1, got float 2.5"),
        ("k", 0, "k must be an integer of at least 1, got int 0"),
        ("pool_depth", None, "pool_depth must be an integer of at least 1, got None"),
        ("pool", 3, "pool must be a string, got int 3"),
        ("selector", None, "selector must be a string, got None"),
    ],
)
def test_python_api_arguments_of_the_wrong_type_are_named(lexical_only, argument, value, said):
    """``select_documents`` used to leak ``TypeError``/``AttributeError`` for these (issue 28)."""
    from nclue.errors import NclueError
    from nclue.select.single import select_documents

    given = {"query": "algorithms", "requirements": ["pseudocode"], "k": 1, "pool_depth": 3} | {argument: value}
    with pytest.raises(NclueError) as caught:
        select_documents(lexical_only, **given)
    assert str(caught.value).startswith(said), str(caught.value)


@pytest.mark.parametrize(
    ("argument", "value", "said"),
    [
        ("collection", None, "collection must be a path"),
        ("collection", 7, "collection must be a path"),
        ("calibration", 3.5, "calibration must be a path"),
        ("near_duplicates", "0.5", "near_duplicates must be a number, got str '0.5'"),
        ("near_duplicates", float("nan"), "near_duplicates must be a number, got float nan"),
    ],
)
def test_opening_arguments_of_the_wrong_type_are_named(lexical_only, argument, value, said):
    from nclue.errors import NclueError
    from nclue.select.single import CoverageSelector

    given = {"collection": lexical_only} | {argument: value}
    with pytest.raises(NclueError) as caught:
        CoverageSelector(**given)
    assert str(caught.value).startswith(said), str(caught.value)
